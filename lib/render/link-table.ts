// The links a note's render can meet, with where each resolves: read from the
// index, which parsed and resolved them when it indexed the note (and keeps
// them current as names come and go). The render runs in a read worker, away
// from the index's in-memory resolver; parsing the note again for its links
// on the request thread cost ~0.7 s for a 20 MB note, on every view of any
// page that embeds it.
import type { IndexedLink } from "../retrieval/links";

export type LinkKind = "wikilink" | "markdown";
/** Resolves a link as the index does: the note or file it names, or null. */
export type ResolveLink = (link: { target: string; kind: LinkKind }, from: string) => string | null;

/**
 * A ResolveLink that answers from the index's rows for a note and the notes it embeds. A link the rows do not
 * hold (text saved a moment ago, before the index saw it; a link marked reads that the parser does not) shows
 * as unresolved: the note page brings the index up to date before it renders.
 */
export function resolveFromIndexed(rows: IndexedLink[]): ResolveLink {
  const map = new Map(rows.map((r) => [`${r.source}\n${r.kind}\n${r.target}`, r.resolved]));
  return ({ target, kind }, from) => map.get(`${from}\n${kind}\n${target}`) ?? null;
}
