// The digest: a compact Markdown map of the vault for an agent's orientation
// (the spec's "workspace map"): counts, databases, tags, folders, then every
// note with its title and size, so that an agent can pick outline mode before
// its first read. It begins with a `cursor:` line taken before the map was
// built, to pass to get_changes_since. Past a budget it is split into pages
// (lettuce://digest?page=2, …), each with its own cursor line.
import type { Database } from "bun:sqlite";
import { baseRows, listBases, loadBase, type DatabaseRef, type VaultLike } from "../bases";
import { getMeta } from "../store/index-db";
import { tagCounts } from "../retrieval/tags";

/** Bytes of Markdown per page: well under the 32 KB an agent's default answer may take. */
export const DIGEST_PAGE_BYTES = 24 * 1024;
const MAX_TAGS = 60;
const MAX_DATABASES = 60;
const MAX_FOLDERS = 300;

export interface DigestPage {
  text: string;
  page: number;
  pages: number;
}

function size(n: number): string {
  return n < 1000 ? `${n} B` : n < 1_000_000 ? `${(n / 1000).toFixed(1)} kB` : `${(n / 1_000_000).toFixed(1)} MB`;
}

function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i === -1 ? "" : path.slice(0, i);
}

/** One line per database: name, id and row count (or why it has none). */
function databaseLines(vault: VaultLike, bases: DatabaseRef[]): string[] {
  const lines = bases.slice(0, MAX_DATABASES).map(({ id, title }) => {
    try {
      return `- ${title} — \`${id}\` · ${baseRows(vault, loadBase(vault, id)).length} rows`;
    } catch (e) {
      return `- ${title} — \`${id}\` · rows unavailable (${(e as { kind?: string }).kind ?? "error"})`;
    }
  });
  if (bases.length > MAX_DATABASES) lines.push(`- … and ${bases.length - MAX_DATABASES} more (search_workspace finds them)`);
  return lines;
}

function tagLine(db: Database): string[] {
  const { items, total } = tagCounts(db, MAX_TAGS, 0);
  if (!total) return ["(no tags)"];
  const more = total > items.length ? `, … and ${total - items.length} more (list_tags)` : "";
  return [items.map((t) => `#${t.tag} (${t.count})`).join(", ") + more];
}

/**
 * Build the map's pages. `cursor` is the change-feed position the caller took
 * before calling (the map is at least as new as it).
 */
export function buildDigest(vault: VaultLike, cursor: string, vaultName: string): DigestPage[] {
  const db = vault.indexDb;
  const notes = db.query("SELECT path, title, size FROM notes ORDER BY folder, path").all() as { path: string; title: string; size: number }[];
  const folders = new Map<string, { n: number; bytes: number }>();
  for (const n of notes) {
    const f = folderOf(n.path);
    const cur = folders.get(f) ?? { n: 0, bytes: 0 };
    cur.n++;
    cur.bytes += n.size;
    folders.set(f, cur);
  }
  const bases = listBases(vault);
  const dbLines = databaseLines(vault, bases);
  const indexedAt = getMeta(db, "indexedAt") ?? "not yet (the first scan is running)";

  const head = [
    `# Vault map: ${vaultName}`,
    "",
    `${notes.length} notes · ${bases.length} databases · ${folders.size} folders with notes · indexed ${indexedAt}`,
    "Sizes are file sizes: for a long note, read_outline (or get_page with mode \"outline\") first. Pass the cursor above to get_changes_since to learn what changes after this map.",
    "",
    "## Databases",
    ...(dbLines.length ? dbLines : ["(none: a database is an Obsidian .base file)"]),
    "",
    "## Tags",
    ...tagLine(db),
    "",
    "## Folders",
    ...[...folders.entries()].slice(0, MAX_FOLDERS).map(([f, s]) => `- ${f || "(vault root)"}/ — ${s.n} notes, ${size(s.bytes)}`),
    ...(folders.size > MAX_FOLDERS ? [`- … and ${folders.size - MAX_FOLDERS} more (list_folders)`] : []),
    "",
    "## Notes",
  ];

  // The note listing, folder by folder; a title is shown only where it differs from the file name.
  const body: string[] = [];
  let current: string | null = null;
  for (const n of notes) {
    const f = folderOf(n.path);
    if (f !== current) {
      body.push(`### ${f || "(vault root)"}/`);
      current = f;
    }
    const file = n.path.slice(f ? f.length + 1 : 0);
    const title = n.title && n.title !== file.replace(/\.md$/i, "") ? ` — ${n.title.replace(/\s+/g, " ").slice(0, 120)}` : "";
    body.push(`- ${file}${title} · ${size(n.size)}`);
  }

  // Split into pages of at most DIGEST_PAGE_BYTES; a page that ends inside a folder repeats its heading on the next.
  const cursorLine = `cursor: ${cursor}`;
  const pages: string[][] = [];
  let page = [cursorLine, ...head];
  let bytes = page.join("\n").length;
  let folderHeading = "";
  for (const line of body) {
    if (line.startsWith("### ")) folderHeading = line;
    const add = Buffer.byteLength(line) + 1;
    if (bytes + add > DIGEST_PAGE_BYTES - 200 && page.length > 0) {
      pages.push(page);
      page = [cursorLine, `# Vault map: ${vaultName} (continued)`, ""];
      if (!line.startsWith("### ")) page.push(`${folderHeading} (continued)`);
      bytes = page.join("\n").length;
    }
    page.push(line);
    bytes += add;
  }
  pages.push(page);
  return pages.map((lines, i) => {
    const next = i + 1 < pages.length ? ["", `More notes: read lettuce://digest?page=${i + 2} (page ${i + 2} of ${pages.length}).`] : [];
    return { text: [...lines, ...next].join("\n") + "\n", page: i + 1, pages: pages.length };
  });
}

// The pages last built per connection: every agent reads the digest first and then page after page, and
// building it reads every note (~0.3 s at 100k notes). They change with the index (its generation) and the
// change feed's cursor.
const built = new WeakMap<Database, { key: string; pages: DigestPage[] }>();

/** Page `n` of the digest (null past the last) and how many there are, built once per index generation and cursor. */
export function digestPage(vault: VaultLike, cursor: string, vaultName: string, n: number): { text: string | null; pages: number } {
  const key = `${vault.root}\0${getMeta(vault.indexDb, "gen")}\0${getMeta(vault.indexDb, "indexedAt")}\0${cursor}\0${vaultName}`;
  let had = built.get(vault.indexDb);
  if (had?.key !== key) {
    had = { key, pages: buildDigest(vault, cursor, vaultName) };
    built.set(vault.indexDb, had);
  }
  return { text: had.pages[n - 1]?.text ?? null, pages: had.pages.length };
}

/** One page of notes by path, after `after` (resources/list pages with it). */
export function notesAfter(db: Database, after: string, limit: number): { path: string; title: string; size: number }[] {
  return db.query("SELECT path, title, size FROM notes WHERE path > ? ORDER BY path LIMIT ?").all(after, limit) as { path: string; title: string; size: number }[];
}
