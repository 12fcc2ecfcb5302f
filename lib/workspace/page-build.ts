// The half of get_page / get_pages that reads the files and assembles the
// pages, from what the event loop resolved (page.ts: ids checked, notes found,
// titles and folder listings made). It needs only the vault's root and an index
// connection, so it runs in a read worker (lib/offload/jobs.ts): a token
// asking for fifty 30 KB notes a hundred times a second kept the event loop
// reading, decoding and serialising 100 MB a second, and every other caller's
// cheapest call waited ~0.7 s (docs/security.md, "Limits").
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { noteHeadings } from "../retrieval/notes";
import { splitFrontmatter } from "../vault/parse";
import { readVaultFile } from "../vault/read-file";
import { frontmatterLineCount, outlineOf, renderOutline } from "./outline";

export type PageMode = "full" | "outline";

export interface WorkspacePageContent {
  id: string;
  title: string;
  content: string;
  properties: Record<string, unknown>;
  type: string;
  databaseId?: string;
  mode?: "outline";
  fullContentChars?: number;
}

/** What the event loop resolved for one page: plain data, to cross to a worker. */
export interface PagePlan {
  base: { id: string; title: string; type: string; databaseId?: string };
  kind: "note" | "database" | "folder";
  path: string;
  /** A note's index row id (its headings, for the outline) and frontmatter as JSON. */
  noteId?: number;
  frontmatter?: string;
  /** A folder's page, listed by the event loop (it needs the vault's caches). */
  folderContent?: string;
  /** About what the page weighs: the note's size as the index saw it (ToolContext.reserveAnswer). */
  size: number;
}

export type PageResult = { id: string; ok: true; page: WorkspacePageContent } | { id: string; ok: false; error: string; kind: string };

/** One id of a batch: planned, or already an entry's error. */
export type PlannedPage = { id: string; plan: PagePlan } | { id: string; ok: false; error: string; kind: string };

/** Characters of content a get_pages batch carries in all (a single page may be larger: get_page). */
const GET_PAGES_CHARS = 1_000_000;
/** Headings a page's outline shows (each with its first line); past them it says how many more. */
const OUTLINE_SECTIONS = 200;
/** A database's outline: its first lines (a .base file is short YAML). */
const DATABASE_OUTLINE_LINES = 40;
/** A .base file is a few hundred bytes of YAML; anything past this is no database definition. */
const MAX_DATABASE_BYTES = 1024 * 1024;

function readText(root: string, path: string, limit = Infinity): { text: string; size: number } {
  try {
    const { bytes, size } = readVaultFile(root, path, limit);
    return { text: bytes.toString("utf8"), size };
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError("note-not-found", `Not found: ${path} (it was removed)`);
  }
}

/** The page a plan names, read from disk now. */
export function buildPage(root: string, db: Database, plan: PagePlan, mode: PageMode): WorkspacePageContent {
  const base = { ...plan.base };
  let content: string;
  let properties: Record<string, unknown> = {};
  let outline: string | null = null;
  if (plan.kind === "note") {
    const { text } = readText(root, plan.path);
    const fm = splitFrontmatter(text);
    content = fm.body;
    try {
      properties = JSON.parse(plan.frontmatter ?? "{}") ?? {};
    } catch {
      properties = {};
    }
    // Bounded like everything an agent pays for: a 50,000-heading log's outline was as big as the log.
    if (mode === "outline") outline = renderOutline(outlineOf(text, noteHeadings(db, plan.noteId!), frontmatterLineCount(fm.raw)), OUTLINE_SECTIONS);
  } else if (plan.kind === "database") {
    // Read at most one byte past the bound: a 2 GB file named .base is not read to be refused.
    const { text, size } = readText(root, plan.path, MAX_DATABASE_BYTES + 1);
    if (size > MAX_DATABASE_BYTES) throw new ToolError("too-large", `${plan.path} is over ${MAX_DATABASE_BYTES} bytes: not read as a database`);
    content = text;
    if (mode === "outline") outline = content.split(/\r?\n/).slice(0, DATABASE_OUTLINE_LINES).join("\n");
  } else {
    content = plan.folderContent ?? "";
    if (mode === "outline") outline = content;
  }
  if (outline === null) return { ...base, content, properties };
  return { ...base, content: outline, properties, mode: "outline", fullContentChars: content.length };
}

/** At most what a batch's answer weighs: its largest page whole, the rest up to GET_PAGES_CHARS (buildPages). */
export function pagesAnswerSize(planned: PlannedPage[]): number {
  let sum = 0;
  let largest = 0;
  for (const p of planned) {
    if (!("plan" in p)) continue;
    sum += p.plan.size;
    largest = Math.max(largest, p.plan.size);
  }
  return Math.min(sum, largest + GET_PAGES_CHARS);
}

/** A batch's pages; one that is missing or unreadable is an entry with ok: false, never a failed call. */
export function buildPages(root: string, db: Database, planned: PlannedPage[], mode: PageMode): PageResult[] {
  // The batch's pages together stop at GET_PAGES_CHARS (eight 2 MB notes made a 23 MB answer):
  // a page that would pass it is an entry with kind too-large, to get on its own.
  let chars = 0;
  return planned.map((p) => {
    if (!("plan" in p)) return p;
    const { id } = p;
    try {
      const page = buildPage(root, db, p.plan, mode);
      if (chars > 0 && chars + page.content.length > GET_PAGES_CHARS) {
        throw new ToolError("too-large", `with the pages before it this batch would pass ${GET_PAGES_CHARS} characters; get_page it on its own`);
      }
      chars += page.content.length;
      return { id, ok: true, page };
    } catch (e) {
      return { id, ...pageError(id, e) };
    }
  });
}

/** One page's failure as a batch entry: a refusal as it is, anything else logged and said to be internal. */
export function pageError(id: string, e: unknown): { ok: false; error: string; kind: string } {
  if (e instanceof ToolError) return { ok: false, error: e.message, kind: e.kind };
  // Whatever went wrong with one page (a file unreadable mid-read), the others still come back.
  console.error(`lettuce: get_pages ${JSON.stringify(id)} failed:`, e);
  return { ok: false, error: "Internal error reading this page; see the server log", kind: "internal" };
}
