// The full-text side of tool search: FTS5 in an in-memory SQLite database,
// Porter-stemmed so that "links" finds "link" and "linking". A plain request
// becomes an OR of its content words (each a prefix), ranked by BM25 with the
// tool's name and hints weighing more than its description, its details (the
// longer account tools/list leaves out) and its parameters.
import { Database } from "bun:sqlite";
import type { ToolRecord } from "./catalogue";

// Words that say nothing about which tool is meant.
const STOPWORDS = new Set(
  ("a an the and or but of to in on at by for from with without into onto about as is are was were be been being it its this that these those " +
    "i me my we our you your he she they them their what which whom whose how when where why do does did done can could should would will " +
    "shall may might must just only also some any all every each one ones there here then than so not no yes please want need like get got " +
    "let us show tell give make use using").split(" "),
);

export function queryTerms(query: string): string[] {
  const words = (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w) && w.length > 1);
  return [...new Set(words)].slice(0, 32);
}

export class ToolFts {
  private db = new Database(":memory:");

  constructor(records: ToolRecord[]) {
    this.db.exec("CREATE VIRTUAL TABLE t USING fts5(name, hints, description, details, params, tags, tokenize = 'porter unicode61 remove_diacritics 2')");
    const ins = this.db.query("INSERT INTO t(rowid, name, hints, description, details, params, tags) VALUES (?, ?, ?, ?, ?, ?, ?)");
    records.forEach((r, i) => ins.run(i, `${r.name} ${r.name.replace(/_/g, " ")}`, r.hints, r.description, r.details, r.params, r.family));
  }

  /** Matching records (indexes) best first, with their BM25 score negated (higher = better). */
  rank(query: string): { i: number; score: number }[] {
    const terms = queryTerms(query);
    if (!terms.length) return [];
    const match = terms.map((w) => `"${w}"*`).join(" OR ");
    try {
      return this.db.query("SELECT rowid AS i, -bm25(t, 4.0, 3.0, 1.5, 1.0, 0.5, 1.0) AS score FROM t WHERE t MATCH ? ORDER BY score DESC").all(match) as { i: number; score: number }[];
    } catch {
      return [];
    }
  }
}
