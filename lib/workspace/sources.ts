// Knowledge sources: the files (or URLs) a note says it rests on, in its
// frontmatter — `sources:` (a list or one string; items may be strings or
// {resource|path|file|url: …}), `source:`, or OKF's `knowledge.sources`.
// get_related_pages {resource} answers the reverse question: which notes cite
// this file or folder. Matching (docs/workspace.md, "Sources"): case is
// ignored; line anchors (#L10-L40, :42), "./" and backslashes are dropped; an
// absolute path matches by its repo-relative end; a URL only the same URL.
import type { VaultContext } from "../vault-context";
import { classifyNotes } from "./databases";
import { withoutTrailing } from "../text-ends";

type Fm = Record<string, unknown>;

const ITEM_KEYS = ["resource", "path", "file", "url", "href", "source"];

function items(v: unknown): string[] {
  if (typeof v === "string") return v.trim() ? [v.trim()] : [];
  if (Array.isArray(v)) return v.flatMap(items);
  if (v && typeof v === "object") {
    for (const k of ITEM_KEYS) {
      const x = (v as Fm)[k];
      if (typeof x === "string" && x.trim()) return [x.trim()];
    }
  }
  return [];
}

/** The sources a note's frontmatter cites, as written (first occurrence kept). */
export function sourcesOf(fm: Fm): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(fm)) {
    const key = k.toLowerCase();
    if (key === "sources" || key === "source") out.push(...items(v));
    else if (key === "knowledge" && v && typeof v === "object" && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(v as Fm)) if (k2.toLowerCase() === "sources") out.push(...items(v2));
    }
  }
  return [...new Set(out)];
}

interface NormPath {
  url: boolean;
  absolute: boolean;
  segs: string[];
  /** Written with a trailing slash: certainly a folder. */
  folder: boolean;
}

/** Normalise a path or URL for matching (see the header). */
export function normalizeResource(raw: string): NormPath | null {
  let s = raw.trim();
  const link = /^!?\[\[([^\]|#]+)/.exec(s); // a [[wikilink]] in sources: its target
  if (link) s = link[1]!.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) && !/^file:\/\//i.test(s)) {
    return { url: true, absolute: true, segs: [withoutTrailing(s.toLowerCase(), "/")], folder: false };
  }
  s = s.replace(/^file:\/\//i, "").replace(/\\/g, "/");
  s = s.replace(/#L\d+(?:C\d+)?(?:-L?\d+(?:C\d+)?)?$/i, ""); // #L10, #L10-L40
  s = s.replace(/(?<=[^:/]):\d+(?::\d+)?(?:-\d+)?$/, ""); // :42, :42:7, :10-40 (not C: of a drive)
  const absolute = s.startsWith("/") || s.startsWith("~/") || /^[a-z]:\//i.test(s);
  const folder = /\/$/.test(s);
  const segs = s
    .toLowerCase()
    .split("/")
    .filter((p, i) => p !== "" && p !== "." && !(i === 0 && (p === "~" || /^[a-z]:$/.test(p))));
  if (!segs.length) return null;
  return { url: false, absolute, segs, folder };
}

export type SourceMatch = "exact" | "folder" | "inside";

const startsWith = (a: string[], b: string[]) => b.length <= a.length && b.every((x, i) => a[i] === x);

/** How relative paths relate: cited exactly, a folder holding the asked file, or inside the asked folder; with a distance. */
function relate(q: string[], s: string[]): { match: SourceMatch; distance: number } | null {
  if (q.length === s.length && startsWith(q, s)) return { match: "exact", distance: 0 };
  if (startsWith(q, s)) return { match: "folder", distance: q.length - s.length };
  if (startsWith(s, q)) return { match: "inside", distance: s.length - q.length };
  return null;
}

const RANK: Record<SourceMatch, number> = { exact: 0, folder: 1, inside: 2 };

/** The closest relation between an asked resource and one cited source, or null. */
export function matchSource(q: NormPath, s: NormPath): { match: SourceMatch; distance: number } | null {
  if (q.url || s.url) return q.url && s.url && q.segs[0] === s.segs[0] ? { match: "exact", distance: 0 } : null;
  if (q.absolute === s.absolute) return relate(q.segs, s.segs);
  // One absolute, one repo-relative: try the absolute path's ends (longest first) as the repo-relative path.
  const [abs, rel] = q.absolute ? [q.segs, s.segs] : [s.segs, q.segs];
  let best: { match: SourceMatch; distance: number } | null = null;
  for (let k = 1; k < abs.length; k++) {
    const tail = abs.slice(k);
    if (tail[0] !== rel[0]) continue; // the repo-relative path starts where the absolute one's end does
    const r = q.absolute ? relate(tail, rel) : relate(rel, tail);
    if (r && (!best || RANK[r.match] < RANK[best.match] || (r.match === best.match && r.distance < best.distance))) best = r;
  }
  return best;
}

export interface CitingPage {
  id: string;
  title: string;
  type: "page" | "database" | "database_row";
  databaseId?: string;
  match: SourceMatch;
  source: string;
}

export const MAX_CITING = 25;
const TYPE_ORDER = { page: 0, database: 1, database_row: 2 } as const;

/** Notes whose sources cite a file or folder, closest first, up to MAX_CITING (total counts all). */
export function pagesCiting(vault: VaultContext, resource: string): { resource: string; pages: CitingPage[]; total: number; note?: string } {
  const q = normalizeResource(resource);
  // Only notes whose frontmatter mentions a source key at all are parsed (LIKE is a cheap C scan of the JSON text).
  const rows = vault.indexDb
    .query(`SELECT path, title, frontmatter FROM notes WHERE frontmatter LIKE '%"source%' OR frontmatter LIKE '%"knowledge"%'`)
    .all() as { path: string; title: string; frontmatter: string }[];
  let anySources = false;
  const found: (Omit<CitingPage, "type"> & { distance: number })[] = [];
  for (const r of rows) {
    let fm: Fm;
    try {
      fm = JSON.parse(r.frontmatter);
    } catch {
      continue;
    }
    const sources = sourcesOf(fm);
    if (!sources.length) continue;
    anySources = true;
    if (!q) continue;
    let best: { match: SourceMatch; distance: number; source: string } | null = null;
    for (const src of sources) {
      const s = normalizeResource(src);
      const m = s && matchSource(q, s);
      if (m && (!best || RANK[m.match] < RANK[best.match] || (m.match === best.match && m.distance < best.distance))) best = { ...m, source: src };
    }
    if (best) found.push({ id: r.path, title: r.title, match: best.match, source: best.source, distance: best.distance });
  }
  const classes = classifyNotes(
    vault,
    found.map((f) => f.id),
  );
  const pages = found
    .map(({ distance, ...p }) => {
      const cls = classes.get(p.id)!;
      return { page: { ...p, type: cls.type, ...(cls.databaseId ? { databaseId: cls.databaseId } : {}) } as CitingPage, distance };
    })
    .sort(
      (a, b) =>
        RANK[a.page.match] - RANK[b.page.match] ||
        a.distance - b.distance ||
        TYPE_ORDER[a.page.type] - TYPE_ORDER[b.page.type] ||
        a.page.title.localeCompare(b.page.title) ||
        (a.page.id < b.page.id ? -1 : 1),
    )
    .map((x) => x.page);
  const out = { resource, pages: pages.slice(0, MAX_CITING), total: pages.length };
  if (!anySources) {
    return { ...out, note: "No note in this vault records sources in its frontmatter (sources:), so whether anything was written about this file is unknown, not \"nothing\"." };
  }
  return out;
}
