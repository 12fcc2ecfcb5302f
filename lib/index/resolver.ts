import { posix } from "node:path";
import { targetKeyOf } from "../vault/parse";
import { foldName as fold } from "../vault/paths";

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

const folderOf = (p: string) => fold(p.slice(0, p.lastIndexOf("/") + 1));

/**
 * Obsidian's rule for a name several files share (observed on Obsidian 1.13.7 through getFirstLinkpathDest;
 * the exact vault path, checked before this, wins over both): a file in the linking note's own folder (not an
 * ancestor's), else the shortest path. Shortest-only sent `[[Dup]]` in `B/src.md` to `A/Dup.md` beside
 * `B/Dup.md`, and move_note then rewrote the link for the wrong note.
 */
function nearest(paths: string[], sourcePath: string): string | null {
  if (paths.length > 1) {
    const dir = folderOf(sourcePath);
    const here = paths.filter((p) => folderOf(p) === dir);
    if (here.length) return best(here);
  }
  return best(paths);
}

/** What a parse worker needs to resolve links the way the main thread would. */
export interface ResolverSnapshot {
  notes: [string, string[]][];
  files: string[];
}

/**
 * In-memory link resolution, as Obsidian does it: the exact vault path, then
 * the file name (case-insensitive; among several, the linking note's folder, then the shortest path),
 * then frontmatter aliases.
 * Kept in memory because every indexed link is resolved through it.
 */
export class LinkResolver {
  // Keys are folded (foldName: NFC, lower case): a link typed composed finds a note a Mac wrote decomposed,
  // and a link in any letter case finds its note (Obsidian's rule), in every script.
  private byPath = new Map<string, string[]>(); // folded path -> paths (notes and attachments; twins share a key)
  private notesByName = new Map<string, string[]>(); // folded name without .md
  private filesByName = new Map<string, string[]>(); // folded attachment file name
  private byAlias = new Map<string, string[]>();
  private aliasesOf = new Map<string, string[]>();
  // Bare wikilink targets ([[Some Note]]) resolved so far, as written: a vault links to the same
  // notes again and again, and the fast path's lowercasing, concatenation and three lookups cost
  // a cold index's parse worker ~0.4 s per 10k notes. Any change to the names clears it.
  private bareCache = new Map<string, string | null>();
  // A name several notes share resolves by the linking note's folder: per name, its notes by folded folder,
  // built on first need. Folding every candidate for every link cost a cold index of 4,000 folders each
  // holding an index.md 16 s instead of 0.9 s (review of the change).
  private byFolder = new Map<string, Map<string, string[]>>();

  private forget(): void {
    this.bareCache.clear();
    this.byFolder.clear();
  }

  /** Of the notes sharing a name (key), the one in `sourcePath`'s folder, else the shortest path. */
  private nearestNamed(key: string, named: string[], sourcePath: string): string | null {
    let folders = this.byFolder.get(key);
    if (!folders) {
      folders = new Map();
      for (const p of named) pushTo(folders, folderOf(p), p);
      this.byFolder.set(key, folders);
    }
    return best(folders.get(folderOf(sourcePath))) ?? best(named);
  }

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
    this.forget();
    pushTo(this.byPath, fold(path), path);
    pushTo(this.notesByName, targetKeyOf(path), path);
    this.setAliases(path, aliases);
  }

  setAliases(path: string, aliases: string[]): void {
    this.forget();
    for (const a of this.aliasesOf.get(path) ?? []) removeFrom(this.byAlias, fold(a), path);
    this.aliasesOf.set(path, aliases);
    for (const a of aliases) pushTo(this.byAlias, fold(a), path);
  }

  removeNote(path: string): void {
    this.forget();
    removeFrom(this.byPath, fold(path), path);
    removeFrom(this.notesByName, targetKeyOf(path), path);
    this.setAliases(path, []);
    this.aliasesOf.delete(path);
  }

  addFile(path: string): void {
    this.forget();
    pushTo(this.byPath, fold(path), path);
    pushTo(this.filesByName, fold(path.slice(path.lastIndexOf("/") + 1)), path);
  }

  removeFile(path: string): void {
    this.forget();
    removeFrom(this.byPath, fold(path), path);
    removeFrom(this.filesByName, fold(path.slice(path.lastIndexOf("/") + 1)), path);
  }

  /** The notes whose file name is this one's in any letter case or normalisation (the note itself too). */
  notesNamed(path: string): string[] {
    return this.notesByName.get(targetKeyOf(path)) ?? [];
  }

  aliasesFor(path: string): string[] {
    return this.aliasesOf.get(path) ?? [];
  }

  hasNote(path: string): boolean {
    const p = this.atPath(path);
    return p !== undefined && p.toLowerCase().endsWith(".md");
  }

  /**
   * The file at a vault path, in any letter case and normalisation: the path exactly as written when it
   * exists (on a case-sensitive disk `Plan.md` and `plan.md` can both be there), else the first of its twins.
   */
  private atPath(path: string): string | undefined {
    const list = this.byPath.get(fold(path));
    if (!list) return undefined;
    return list.includes(path) ? path : (best(list) ?? undefined);
  }

  /**
   * Where `link` (in the note at `sourcePath`, as it will be) resolves once the note at `from` is at `to`: the
   * plan of a move, to find the links to other notes the moved note would take over. Changes the maps and
   * puts them back before returning, with no turn for another caller in between.
   */
  resolveAfterMove(link: LinkRef, sourcePath: string, from: string, to: string): string | null {
    const aliases = this.aliasesFor(from);
    this.removeNote(from);
    this.addNote(to, aliases);
    try {
      return this.resolve(link, sourcePath);
    } finally {
      this.removeNote(to);
      this.addNote(from, aliases);
    }
  }

  resolve(link: LinkRef, sourcePath: string): string | null {
    const target = link.target.trim();
    if (target === "") return sourcePath; // [[#Heading]] points into the note itself
    // Fast path for the common case, a bare note name: [[Some Note]].
    if (link.kind === "wikilink" && !target.includes("/") && !target.includes(".")) {
      const hit = this.bareCache.get(target);
      if (hit !== undefined) return hit;
      const key = fold(target);
      const named = this.notesByName.get(key);
      // A name several notes share resolves by the linking note's folder: not cached under the name alone.
      if (named && named.length > 1 && !this.atPath(target + ".md")) return this.nearestNamed(key, named, sourcePath);
      const r = this.atPath(target + ".md") ?? best(named) ?? best(this.byAlias.get(key)) ?? null;
      this.bareCache.set(target, r);
      return r;
    }
    const withMd = /\.[A-Za-z0-9]{1,8}$/.test(target) && !/\.md$/i.test(target) ? null : target.replace(/\.md$/i, "") + ".md";

    // Markdown links (and ./ or ../ wikilinks) are relative to the linking note's folder first.
    if (link.kind === "markdown" || target.startsWith("./") || target.startsWith("../")) {
      const dir = posix.dirname(sourcePath);
      const rel = posix.normalize(posix.join(dir === "." ? "" : dir, target));
      if (!rel.startsWith("..")) {
        const hit = this.atPath(rel) ?? (withMd ? this.atPath(posix.normalize(posix.join(dir === "." ? "" : dir, withMd))) : undefined);
        if (hit) return hit;
      }
    }
    const clean = target.replace(/^\/+/, "").replace(/^\.\//, "");
    const exact = (withMd && this.atPath(withMd.replace(/^\/+/, ""))) || this.atPath(clean);
    if (exact) return exact;

    const key = targetKeyOf(clean);
    const isNoteTarget = withMd !== null;
    const candidates = isNoteTarget ? this.notesByName.get(key) : this.filesByName.get(fold(clean.slice(clean.lastIndexOf("/") + 1)));
    if (candidates && candidates.length) {
      if (clean.includes("/")) {
        // A partial path ("Folder/Note") must match the end of the candidate's path.
        const suffix = "/" + fold(isNoteTarget ? withMd! : clean);
        const fit = candidates.filter((p) => ("/" + fold(p)).endsWith(suffix));
        if (fit.length) return nearest(fit, sourcePath);
      } else {
        return nearest(candidates, sourcePath);
      }
    }
    if (isNoteTarget) return best(this.byAlias.get(fold(clean)));
    // No file by that name: "mailbox.org" may name the note "mailbox.org.md", as in Obsidian.
    return this.resolve({ target: clean + ".md", kind: link.kind }, sourcePath);
  }
}
