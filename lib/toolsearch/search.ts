// Tool search over the catalogue: full-text (always), vectors (when an
// embeddings provider is there), or both fused by reciprocal rank, shaped as
// spec/tool-search.md. Only tools the caller's scope may call are returned.
import { ToolError } from "../errors";
import { normalize, type EmbeddingProvider } from "../providers/types";
import { RRF_K } from "../semantic/fusion";
import { toToolError } from "../semantic/tool-error";
import { tagsOf, TOOL_TYPE, toolObject, type ToolRecord } from "./catalogue";
import { ToolFts } from "./fts";

export type SearchMode = "fts" | "vector" | "hybrid";

export interface ToolSearchInput {
  query?: string;
  search_mode?: SearchMode;
  tags?: string[];
  tool_types?: string[];
  limit: number;
}

export interface ToolSearchResult {
  combined_score: number;
  tool: ReturnType<typeof toolObject>;
  embedded_text: string;
  fts_rank?: number;
  vector_rank?: number;
}

const QUERY_CACHE = 256;

export class ToolSearchIndex {
  private fts: ToolFts;
  private docVectors = new Map<string, Promise<Float32Array[]>>();
  // Providers whose catalogue vectors are in: a hybrid search uses vectors only then, and
  // answers by full text meanwhile (it waited behind a background embedding pass: 22 s, or
  // never while requests kept coming).
  private ready = new Set<string>();
  private queryVectors = new Map<string, Float32Array>();

  constructor(readonly records: ToolRecord[]) {
    this.fts = new ToolFts(records);
  }

  /** The catalogue's vectors for one provider, embedded once per process. */
  private vectorsFor(p: EmbeddingProvider): Promise<Float32Array[]> {
    let v = this.docVectors.get(p.id);
    if (!v) {
      v = p
        .embed(
          this.records.map((r) => r.vectorText.slice(0, Math.max(200, p.passageChars))),
          { purpose: "document", urgent: true },
        )
        .then((vs) => vs.map((x) => normalize(Float32Array.from(x))));
      this.docVectors.set(p.id, v);
      v.then(() => this.ready.add(p.id)).catch(() => {});
      v.catch(() => this.docVectors.delete(p.id)); // a failed attempt is retried on the next call
    }
    return v;
  }

  private async queryVector(p: EmbeddingProvider, query: string): Promise<Float32Array> {
    const key = `${p.id}\0${query}`;
    const hit = this.queryVectors.get(key);
    if (hit) return hit;
    const [v] = await p.embed([query], { purpose: "query" });
    const out = normalize(Float32Array.from(v!));
    this.queryVectors.set(key, out);
    if (this.queryVectors.size > QUERY_CACHE) this.queryVectors.delete(this.queryVectors.keys().next().value!);
    return out;
  }

  /** Record indexes by cosine similarity to the query, best first. */
  private async vectorRank(p: EmbeddingProvider, query: string): Promise<{ i: number; score: number }[]> {
    const [docs, q] = await Promise.all([this.vectorsFor(p), this.queryVector(p, query)]);
    return docs
      .map((d, i) => {
        let s = 0;
        for (let k = 0; k < d.length && k < q.length; k++) s += d[k]! * q[k]!;
        return { i, score: s };
      })
      .sort((a, b) => b.score - a.score);
  }

  /**
   * Search. `embedder` gives the provider (or null when there is none); in
   * hybrid mode a missing or failing provider leaves the full-text ranking
   * alone, in vector mode it is the error.
   */
  async search(input: ToolSearchInput, scope: string, embedder: () => Promise<EmbeddingProvider | null>): Promise<ToolSearchResult[]> {
    const mode = input.search_mode ?? "hybrid";
    const tags = input.tags?.map((t) => t.toLowerCase());
    const types = input.tool_types;
    const allowed = (i: number) => {
      const r = this.records[i]!;
      if (!r.scopes.includes(scope)) return false;
      if (tags?.length && !tagsOf(r).some((t) => tags.includes(t.toLowerCase()))) return false;
      if (types?.length && !types.includes(TOOL_TYPE)) return false;
      return true;
    };
    const query = input.query?.trim() ?? "";
    const shape = (i: number, score: number, ftsRank?: number, vectorRank?: number): ToolSearchResult => ({
      combined_score: score,
      tool: toolObject(this.records[i]!, scope),
      embedded_text: this.records[i]!.vectorText,
      ...(ftsRank !== undefined ? { fts_rank: ftsRank } : {}),
      ...(vectorRank !== undefined ? { vector_rank: vectorRank } : {}),
    });
    if (!query) {
      // No query: the catalogue in its own order (tools/list order), filtered.
      return this.records.map((_, i) => i).filter(allowed).slice(0, input.limit).map((i) => shape(i, 0));
    }

    const ftsList = mode === "vector" ? [] : this.fts.rank(query).filter((h) => allowed(h.i));
    let vecList: { i: number; score: number }[] = [];
    if (mode !== "fts") {
      let provider: EmbeddingProvider | null = null;
      try {
        provider = await embedder();
        if (provider && mode === "hybrid" && !this.ready.has(provider.id)) {
          void this.vectorsFor(provider).catch(() => {}); // started now, used from the next call on
        } else if (provider) vecList = (await this.vectorRank(provider, query)).filter((h) => allowed(h.i));
      } catch (e) {
        if (mode === "vector") throw toToolError(e);
      }
      if (!provider && mode === "vector") throw new ToolError("not-configured", "Vector tool search needs an embeddings provider (see docs/semantic.md); use search_mode fts or hybrid");
    }

    if (mode === "fts") return ftsList.slice(0, input.limit).map((h, r) => shape(h.i, h.score, r + 1));
    if (mode === "vector") return vecList.slice(0, input.limit).map((h, r) => shape(h.i, h.score, undefined, r + 1));
    // Hybrid: reciprocal-rank fusion of the two lists (either may be empty).
    const fused = new Map<number, { score: number; fts?: number; vec?: number }>();
    ftsList.forEach((h, r) => fused.set(h.i, { score: 1 / (RRF_K + r + 1), fts: r + 1 }));
    vecList.forEach((h, r) => {
      const cur = fused.get(h.i) ?? { score: 0 };
      fused.set(h.i, { ...cur, score: cur.score + 1 / (RRF_K + r + 1), vec: r + 1 });
    });
    return [...fused.entries()]
      .sort((a, b) => b[1].score - a[1].score || (a[1].fts ?? 1e9) - (b[1].fts ?? 1e9))
      .slice(0, input.limit)
      .map(([i, f]) => shape(i, f.score, f.fts, f.vec));
  }
}
