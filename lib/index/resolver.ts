import { posix } from "node:path";
import { targetKeyOf } from "../vault/parse";

export interface LinkRef {
  target: string;
  kind: "wikilink" | "markdown";
}

function pushTo(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

function removeFrom(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (!list) return;
  const i = list.indexOf(value);
  if (i !== -1) list.splice(i, 1);
  if (list.length === 0) map.delete(key);
}

// Obsidian's tie-break: the shortest path wins, then the alphabetically first.
function best(paths: string[] | undefined): string | null {
  if (!paths || paths.length === 0) return null;
  let b = paths[0]!;
  for (const p of paths) if (p.length < b.length || (p.length === b.length && p < b)) b = p;
  return b;
}

/** What a parse worker needs to resolve links the way the main thread would. */
export interface ResolverSnapshot {
  notes: [string, string[]][];
  files: string[];
}

/**
 * In-memory link resolution, as Obsidian does it: the exact vault path, then
 * the file name (case-insensitive, shortest path wins), then frontmatter aliases.
 * Kept in memory because every indexed link is resolved through it.
 */
export class LinkResolver {
  private byPath = new Map<string, string>(); // lowercased path -> path (notes and attachments)
  private notesByName = new Map<string, string[]>(); // lowercased name without .md
  private filesByName = new Map<string, string[]>(); // lowercased attachment file name
  private byAlias = new Map<string, string[]>();
  private aliasesOf = new Map<string, string[]>();
  // Bare wikilink targets ([[Some Note]]) resolved so far, as written: a vault links to the same
  // notes again and again, and the fast path's lowercasing, concatenation and three lookups cost
  // a cold index's parse worker ~0.4 s per 10k notes. Any change to the names clears it.
  private bareCache = new Map<string, string | null>();

  snapshot(): ResolverSnapshot {
    const files: string[] = [];
    for (const list of this.filesByName.values()) files.push(...list);
    const notes: [string, string[]][] = [];
    for (const list of this.notesByName.values()) for (const p of list) notes.push([p, this.aliasesOf.get(p) ?? []]);
    return { notes, files };
  }

  static fromSnapshot(s: ResolverSnapshot): LinkResolver {
    const r = new LinkResolver();
    for (const [p, aliases] of s.notes) r.addNote(p, aliases);
    for (const f of s.files) r.addFile(f);
    return r;
  }

  addNote(path: string, aliases: string[]): void {
    this.bareCache.clear();
    this.byPath.set(path.toLowerCase(), path);
    pushTo(this.notesByName, targetKeyOf(path), path);
    this.setAliases(path, aliases);
  }

  setAliases(path: string, aliases: string[]): void {
    this.bareCache.clear();
    for (const a of this.aliasesOf.get(path) ?? []) removeFrom(this.byAlias, a.toLowerCase(), path);
    this.aliasesOf.set(path, aliases);
    for (const a of aliases) pushTo(this.byAlias, a.toLowerCase(), path);
  }

  removeNote(path: string): void {
    this.bareCache.clear();
    this.byPath.delete(path.toLowerCase());
    removeFrom(this.notesByName, targetKeyOf(path), path);
    this.setAliases(path, []);
    this.aliasesOf.delete(path);
  }

  addFile(path: string): void {
    this.bareCache.clear();
    this.byPath.set(path.toLowerCase(), path);
    pushTo(this.filesByName, path.slice(path.lastIndexOf("/") + 1).toLowerCase(), path);
  }

  removeFile(path: string): void {
    this.bareCache.clear();
    this.byPath.delete(path.toLowerCase());
    removeFrom(this.filesByName, path.slice(path.lastIndexOf("/") + 1).toLowerCase(), path);
  }

  aliasesFor(path: string): string[] {
    return this.aliasesOf.get(path) ?? [];
  }

  hasNote(path: string): boolean {
    const p = this.byPath.get(path.toLowerCase());
    return p !== undefined && p.toLowerCase().endsWith(".md");
  }

  resolve(link: LinkRef, sourcePath: string): string | null {
    const target = link.target.trim();
    if (target === "") return sourcePath; // [[#Heading]] points into the note itself
    // Fast path for the common case, a bare note name: [[Some Note]].
    if (link.kind === "wikilink" && !target.includes("/") && !target.includes(".")) {
      const hit = this.bareCache.get(target);
      if (hit !== undefined) return hit;
      const lc = target.toLowerCase();
      const r = this.byPath.get(lc + ".md") ?? best(this.notesByName.get(lc)) ?? best(this.byAlias.get(lc)) ?? null;
      this.bareCache.set(target, r);
      return r;
    }
    const withMd = /\.[A-Za-z0-9]{1,8}$/.test(target) && !/\.md$/i.test(target) ? null : target.replace(/\.md$/i, "") + ".md";

    // Markdown links (and ./ or ../ wikilinks) are relative to the linking note's folder first.
    if (link.kind === "markdown" || target.startsWith("./") || target.startsWith("../")) {
      const dir = posix.dirname(sourcePath);
      const rel = posix.normalize(posix.join(dir === "." ? "" : dir, target));
      if (!rel.startsWith("..")) {
        const hit = this.byPath.get(rel.toLowerCase()) ?? (withMd ? this.byPath.get(posix.normalize(posix.join(dir === "." ? "" : dir, withMd)).toLowerCase()) : undefined);
        if (hit) return hit;
      }
    }
    const clean = target.replace(/^\/+/, "").replace(/^\.\//, "");
    const exact = (withMd && this.byPath.get(withMd.replace(/^\/+/, "").toLowerCase())) || this.byPath.get(clean.toLowerCase());
    if (exact) return exact;

    const key = targetKeyOf(clean);
    const isNoteTarget = withMd !== null;
    const candidates = isNoteTarget ? this.notesByName.get(key) : this.filesByName.get(clean.slice(clean.lastIndexOf("/") + 1).toLowerCase());
    if (candidates && candidates.length) {
      if (clean.includes("/")) {
        // A partial path ("Folder/Note") must match the end of the candidate's path.
        const suffix = "/" + (isNoteTarget ? withMd! : clean).toLowerCase();
        const fit = candidates.filter((p) => ("/" + p.toLowerCase()).endsWith(suffix));
        if (fit.length) return best(fit);
      } else {
        return best(candidates);
      }
    }
    if (isNoteTarget) return best(this.byAlias.get(clean.toLowerCase()));
    // No file by that name: "mailbox.org" may name the note "mailbox.org.md", as in Obsidian.
    return this.resolve({ target: clean + ".md", kind: link.kind }, sourcePath);
  }
}
