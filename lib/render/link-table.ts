// The links a note's render can meet, resolved on the thread that holds the
// index's resolver, so that the render itself can run in a read worker
// (note-html.ts). Kept apart from the renderer: building the table needs no
// marked and no sanitizer, which the server's request thread never loads for it.
import { readFileSync } from "node:fs";
import { parseNote } from "../vault/parse";
import { safeAbsPath } from "../vault/paths";

export type LinkKind = "wikilink" | "markdown";
/** Resolves a link as the index does: the note or file it names, or null. */
export type ResolveLink = (link: { target: string; kind: LinkKind }, from: string) => string | null;

/** The key of one link in a LinkTable. */
const linkKey = (from: string, kind: string, target: string) => `${from}\n${kind}\n${target}`;

/**
 * Every link a render of the note can meet, resolved: the note's own and those of the notes it embeds (one
 * level, as rendering does). Found by the index's parser (linear in the text; marked is not), so a render
 * elsewhere answers the same as one here; a link marked reads that the parser does not (a reference-style
 * link) shows as unresolved.
 */
export function linkTable(root: string, resolve: ResolveLink, path: string, content: string): [string, string | null][] {
  const out = new Map<string, string | null>();
  const add = (from: string, text: string, embeds: boolean) => {
    for (const l of parseNote(from, text).links) {
      const hit = resolve({ target: l.target, kind: l.kind }, from);
      out.set(linkKey(from, l.kind, l.target), hit);
      if (!embeds || !l.embed || !hit || !/\.md$/i.test(hit) || out.has(linkKey(hit, "", ""))) continue;
      out.set(linkKey(hit, "", ""), null);
      try {
        add(hit, readFileSync(safeAbsPath(root, hit), "utf8"), false);
      } catch {
        /* gone: the render shows it unresolved */
      }
    }
  };
  add(path, content, true);
  return [...out];
}

/** A ResolveLink that answers from a LinkTable (null for a link the table does not hold). */
export function resolveFromTable(table: [string, string | null][]): ResolveLink {
  const map = new Map(table);
  return ({ target, kind }, from) => map.get(linkKey(from, kind, target)) ?? null;
}
