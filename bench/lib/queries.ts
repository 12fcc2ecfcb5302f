// A varied, reproducible query set drawn from the vault's own vocabulary
// (FTS5's fts5vocab over the index), so it fits any vault: common and rare
// words, two-word AND, phrases taken from real note text, OR, -exclusion and
// truncated prefixes, in turn.
import type { Database } from "bun:sqlite";
import { rng } from "./stats";

export const QUERY_KINDS = ["common", "rare", "and", "phrase", "or", "exclude", "prefix"] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export interface BenchQuery {
  kind: QueryKind;
  q: string;
}

const WORD = /^\p{L}{3,}$/u;

export function makeQueries(db: Database, n: number, seed = 7): BenchQuery[] {
  const rand = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab USING fts5vocab(ftsdb, fts, row)");
  const notes = (db.query("SELECT count(*) AS n FROM fts").get() as { n: number }).n;
  const terms = (db.query("SELECT term, doc FROM temp.bench_vocab ORDER BY doc DESC").all() as { term: string; doc: number }[]).filter((t) =>
    WORD.test(t.term),
  );
  const common = terms.slice(0, 60).map((t) => t.term);
  const mid = terms.filter((t) => t.doc >= notes * 0.005 && t.doc <= notes * 0.1).map((t) => t.term);
  const rare = terms.filter((t) => t.doc <= 3).map((t) => t.term);
  const midOrCommon = mid.length ? mid : common;
  const maxRow = (db.query("SELECT max(rowid) AS m FROM fts").get() as { m: number }).m;
  const bodyOf = db.query("SELECT body FROM fts WHERE rowid >= ? ORDER BY rowid LIMIT 1");

  const phrase = (): string => {
    for (let tries = 0; tries < 50; tries++) {
      const row = bodyOf.get(1 + Math.floor(rand() * maxRow)) as { body: string } | null;
      const words = (row?.body ?? "").match(/\p{L}+/gu)?.filter((w) => w.length >= 3) ?? [];
      if (words.length < 4) continue;
      const i = Math.floor(rand() * (words.length - 1));
      return `"${words[i]} ${words[i + 1]}"`.toLowerCase();
    }
    return `"${pick(common)} ${pick(common)}"`;
  };
  const make: Record<QueryKind, () => string> = {
    common: () => pick(common),
    rare: () => pick(rare.length ? rare : midOrCommon),
    and: () => `${pick(midOrCommon)} ${pick(common)}`,
    phrase,
    or: () => `${pick(midOrCommon)} OR ${pick(midOrCommon)}`,
    exclude: () => `${pick(common)} -${pick(midOrCommon)}`,
    prefix: () => {
      const w = pick(midOrCommon.filter((t) => t.length >= 6).length ? midOrCommon.filter((t) => t.length >= 6) : common);
      return w.slice(0, Math.max(3, w.length - 3));
    },
  };
  const out: BenchQuery[] = [];
  for (let i = 0; i < n; i++) {
    const kind = QUERY_KINDS[i % QUERY_KINDS.length]!;
    out.push({ kind, q: make[kind]() });
  }
  db.exec("DROP TABLE IF EXISTS temp.bench_vocab");
  return out;
}

/**
 * Queries for the semantic benches: note titles without their number, and runs of 2–6 words
 * from note bodies (`notes` in id order, as the benches list them).
 */
export function titleAndPhraseQueries(db: Database, notes: { id: number; title: string }[], n = 200, seed = 7): string[] {
  const rand = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const note = notes[Math.floor(rand() * notes.length)]!;
    if (i % 2 === 0) return note.title.replace(/\s*\d+$/, "");
    const body = db.query("SELECT body FROM fts WHERE rowid = ?").get(note.id) as { body: string };
    const words = body.body.match(/[a-z]+/g) ?? ["search"];
    const at = Math.floor(rand() * Math.max(1, words.length - 6));
    return words.slice(at, at + 2 + Math.floor(rand() * 5)).join(" ");
  });
}
