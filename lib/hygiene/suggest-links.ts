// Unlinked mentions: other notes' names and aliases written as plain prose in a
// note. Names are matched word by word (case-insensitive, punctuation between
// words ignored), longest name first, outside frontmatter, code and links.
import type { Database } from "bun:sqlite";
import { foldText } from "../vault/fold";
import { proseOf } from "../vault/parse";

export interface LinkSuggestion {
  targetPath: string;
  name: string;
  count: number;
}

interface NameEntry {
  paths: Set<string>;
  name: string; // as the note or alias spells it
  exact: string | null; // short all-caps names (MCP) match only in that exact case
}

// A combining mark belongs to its word (a decomposed "Café", a Devanagari vowel sign): the fold drops it.
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;
// Between two words of one name the text may have spaces or a single joiner
// ("Local-first", "Ink and Switch - Local-first software", "Q&A"), not a sentence break.
const JOINER = /^(?:[ \t]+|[ \t]*[-–—_:'’&+/][ \t]*)$/;
const MIN_NAME_CHARS = 4;
const ACRONYM = /^(?=.*\p{L})[\p{Lu}\p{N}]{2,3}$/u;
const MAX_NAME_WORDS = 12;

// Names and text folded as the index folds them (case, accents, composed or decomposed): "zurich" in a note
// mentions Zürich. Lowercasing alone made "İstanbul" "i̇stanbul", a word split by its dot, never matched.
function words(s: string): string[] {
  return (s.match(WORD) ?? []).map(foldText);
}

/**
 * Blank (same length) what must not count as a mention: links, URLs, HTML tags, #tags, callout markers.
 * No part runs over an opener of its own kind, and a URL's scheme is at most 32 characters: from every
 * '[' or '<' of a line without a closer (or every word of "a-a-a…") a part that did scanned on to the
 * line's end, 10 s for 128 KB (in a read worker, which the call then held until its budget ran out).
 */
function maskLinks(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, " ");
  return text
    .replace(/!?\[\[[^[\]\n]*\]\]/g, blank)
    .replace(/!?\[[^[\]\n]*\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)/g, blank)
    .replace(/\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}:\/\/[^\s<>()]+/g, blank)
    .replace(/<[^<>\n]+>/g, blank)
    .replace(/(^|\s)#[\p{L}\p{M}\p{N}_\-/]+/gu, (m) => blank(m))
    .replace(/\[![\w-]+\]/g, blank);
}

function nameIndex(db: Database): { byKey: Map<string, NameEntry>; prefixes: Set<string> } {
  const byKey = new Map<string, NameEntry>();
  const prefixes = new Set<string>();
  const addName = (name: string, path: string) => {
    const ws = words(name);
    if (!ws.length || ws.length > MAX_NAME_WORDS) return;
    const key = ws.join(" ");
    const acronym = ACRONYM.test(name.trim());
    if (key.replace(/ /g, "").length < MIN_NAME_CHARS && !acronym) return;
    let e = byKey.get(key);
    if (!e) {
      e = { paths: new Set(), name: name.trim(), exact: acronym ? name.trim() : null };
      byKey.set(key, e);
      for (let i = 1; i < ws.length; i++) prefixes.add(ws.slice(0, i).join(" "));
    }
    e.paths.add(path);
  };
  for (const r of db.query("SELECT path, name, aliases FROM notes").all() as { path: string; name: string; aliases: string }[]) {
    addName(r.name, r.path);
    if (r.aliases !== "[]") for (const a of JSON.parse(r.aliases) as string[]) addName(String(a), r.path);
  }
  return { byKey, prefixes };
}

/** Suggestions for one note (given its path and content), most mentioned first. */
export function suggestLinks(db: Database, notePath: string, content: string): LinkSuggestion[] {
  const { byKey, prefixes } = nameIndex(db);
  const linked = new Set(
    (db.query("SELECT DISTINCT l.resolved AS p FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = ? AND l.resolved IS NOT NULL").all(notePath) as { p: string }[]).map(
      (r) => r.p,
    ),
  );
  const text = maskLinks(proseOf(content).masked);
  const toks: { w: string; raw: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(WORD)) toks.push({ w: foldText(m[0]), raw: m[0], start: m.index!, end: m.index! + m[0].length });

  const counts = new Map<string, LinkSuggestion>();
  for (let i = 0; i < toks.length; ) {
    let key = toks[i]!.w;
    let hit: { e: NameEntry; n: number } | null = null;
    for (let n = 1; ; n++) {
      const e = byKey.get(key);
      if (e && (!e.exact || (n === 1 && toks[i]!.raw === e.exact))) hit = { e, n };
      const next = toks[i + n];
      if (!next || !prefixes.has(key) || !JOINER.test(text.slice(toks[i + n - 1]!.end, next.start))) break;
      key += " " + next.w;
    }
    if (!hit) {
      i++;
      continue;
    }
    i += hit.n;
    const { e } = hit;
    if (e.paths.size !== 1) continue; // ambiguous: shared by two or more notes
    const target = [...e.paths][0]!;
    if (target === notePath || linked.has(target)) continue;
    const id = `${target}\u0000${e.name}`;
    const s = counts.get(id);
    if (s) s.count++;
    else counts.set(id, { targetPath: target, name: e.name, count: 1 });
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
