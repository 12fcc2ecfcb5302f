// Reading the vault in the browser: the folder tree, a note (rendered), its
// links, tags, attachments, and search. Queries live in lib/retrieval and
// lib/semantic; these handlers validate, call and shape. Every list pages.
import { statSync } from "node:fs";
import type { Hono } from "hono";
import { ToolError } from "../errors";
import { contentHash } from "../index/parse-job";
import { backlinks, outgoingLinks } from "../retrieval/links";
import { childFolders, findNote, noteHeadings } from "../retrieval/notes";
import { semanticSearch } from "../semantic/search";
import { SemanticService } from "../semantic/service";
import { mimeTypeOf } from "../vault/mime";
import { isIgnoredPath, normalizeVaultPath, safeAbsPath } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import type { WebEnv } from "./auth";
import { offloaded } from "../offload/offloaded";
import { plainNoteHtml } from "../render/note-html";
import { paging } from "./request";
import { errorResponse, FILE_CSP } from "./security";
import { readVaultFile } from "../vault/read-file";
import { normalizeTag } from "../vault/parse";

/** Links listed with a note; more page through /api/links. */
const LINKS_WITH_NOTE = 100;
/** How long the note page waits for its render before showing the text as it is. */
const RENDER_BUDGET_MS = 3000;
const INLINE_TYPES = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml|x-icon|vnd\.microsoft\.icon)$/;

function folderArg(raw: string | undefined): string {
  return raw ? normalizeVaultPath(raw, { allowRoot: true }) : "";
}

export function noteRoutes(app: Hono<WebEnv>, vault: VaultContext): void {
  const db = vault.indexDb;

  app.get("/api/tree", async (c) => {
    try {
      const folder = folderArg(c.req.query("folder"));
      if (folder) safeAbsPath(vault.root, folder);
      const { limit, offset } = paging((k) => c.req.query(k), 200);
      // From the index (folders with notes in them): walking the disk for every click costs too much on a big vault.
      const folders = childFolders(db, folder);
      const notes = await offloaded.notePage(vault, { folder, recursive: false }, limit, offset, c.req.raw.signal);
      return c.json({ folder, folders: offset === 0 ? folders : [], notes: { ...notes, limit, offset } });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.get("/api/recent", async (c) => {
    const { limit, offset } = paging((k) => c.req.query(k), 30);
    return c.json({ ...(await offloaded.notePage(vault, { recent: true }, limit, offset, c.req.raw.signal)), limit, offset });
  });

  // Rendered in a read worker with a budget: a note a person (or an agent with a write token) saved can be text
  // that marked takes minutes over, and the thread that renders it would hold every request meanwhile.
  const noteHtml = async (path: string, content: string): Promise<string> => {
    try {
      return await offloaded.renderNote(vault, path, content, AbortSignal.timeout(RENDER_BUDGET_MS));
    } catch (e) {
      if (e instanceof ToolError && e.kind === "timeout") return plainNoteHtml(content, `This note is shown as plain text: rendering it took longer than ${RENDER_BUDGET_MS / 1000} s.`);
      // The renderer's stack overflowed on this text (many thousands of nested callouts): the page answered 500. Other faults
      // (a locked or damaged index, a worker that cannot start) are not about the note, and stay errors.
      if (e instanceof ToolError || !/Maximum call stack|too much recursion/.test((e as Error).message)) throw e;
      console.error(`lettuce: rendering ${path} failed: ${(e as Error).message.split("\n")[0]}`);
      return plainNoteHtml(content, "This note is shown as plain text: it could not be rendered (the server log says why).");
    }
  };

  app.get("/api/note", async (c) => {
    try {
      let row = findNote(db, vault.root, c.req.query("path") ?? "");
      const abs = safeAbsPath(vault.root, row.path);
      let bytes: Buffer;
      let modified: string;
      try {
        bytes = readVaultFile(vault.root, row.path).bytes;
        modified = statSync(abs).mtime.toISOString();
      } catch {
        throw new ToolError("note-not-found", `Note not found: ${row.path}`);
      }
      const content = bytes.toString("utf8");
      const hash = contentHash(bytes);
      // Saved since the index last read it (the watcher has not caught up): index it now, so that the render's
      // links (read from the index) and the headings and links listed here are those of the text shown.
      if (hash !== row.hash) {
        await vault.indexer.update([row.path]).catch(() => undefined);
        row = findNote(db, vault.root, row.path);
      }
      return c.json({
        path: row.path,
        title: row.title,
        tags: JSON.parse(row.tags),
        aliases: JSON.parse(row.aliases),
        frontmatter: JSON.parse(row.frontmatter),
        html: await noteHtml(row.path, content),
        hash,
        size: bytes.length,
        modified,
        headings: noteHeadings(db, row.id).map(({ level, title, id }) => ({ level, title, id })),
        outgoing: outgoingLinks(db, row.id, LINKS_WITH_NOTE),
        backlinks: backlinks(db, row.path, row.id, LINKS_WITH_NOTE),
      });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.get("/api/links", (c) => {
    try {
      const row = findNote(db, vault.root, c.req.query("path") ?? "");
      const { limit, offset } = paging((k) => c.req.query(k));
      const page = c.req.query("dir") === "out" ? outgoingLinks(db, row.id, limit, offset) : backlinks(db, row.path, row.id, limit, offset);
      return c.json({ ...page, limit, offset });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.get("/api/tags", async (c) => {
    const { limit, offset } = paging((k) => c.req.query(k), 200);
    return c.json({ ...(await offloaded.tagCounts(vault, limit, offset, c.req.raw.signal)), limit, offset });
  });

  app.get("/api/tag", async (c) => {
    const tag = normalizeTag(c.req.query("tag") ?? "").toLowerCase();
    const { limit, offset } = paging((k) => c.req.query(k));
    return c.json({ tag, ...(await offloaded.notePage(vault, { tag }, limit, offset, c.req.raw.signal)), limit, offset });
  });

  // An attachment's bytes: images inline (for <img>), anything else as a download. Never a note, never a hidden file.
  app.get("/api/file", (c) => {
    try {
      const rel = normalizeVaultPath(c.req.query("path") ?? "");
      if (isIgnoredPath(rel) || /\.md$/i.test(rel)) throw new ToolError("path-invalid", `Not an attachment: ${rel}`);
      const abs = safeAbsPath(vault.root, rel);
      let st;
      try {
        st = statSync(abs);
      } catch {
        st = null;
      }
      if (!st?.isFile()) throw new ToolError("attachment-not-found", `Attachment not found: ${rel}`);
      const type = mimeTypeOf(rel);
      const headers: Record<string, string> = {
        "Content-Type": INLINE_TYPES.test(type) ? type : "application/octet-stream",
        "Content-Security-Policy": FILE_CSP,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "private, max-age=60",
      };
      if (!INLINE_TYPES.test(type)) headers["Content-Disposition"] = `attachment; filename*=UTF-8''${encodeURIComponent(rel.slice(rel.lastIndexOf("/") + 1))}`;
      return new Response(Bun.file(abs), { headers });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  // Search as you type: keyword (BM25), or hybrid when an embeddings provider is there.
  app.get("/api/search", async (c) => {
    const q = (c.req.query("q") ?? "").slice(0, 500);
    const { limit, offset } = paging((k) => c.req.query(k), 20);
    if (c.req.query("mode") === "hybrid" && q.trim()) {
      try {
        const svc = SemanticService.for(vault);
        const res = await semanticSearch(svc, { query: q, hybrid: true, limit, offset, signal: c.req.raw.signal });
        return c.json({ mode: "hybrid", ...res, limit, offset });
      } catch (e) {
        if (!(e instanceof ToolError)) return errorResponse(c, e);
        // Not configured, or still embedding: say why and answer by keyword.
        try {
          return c.json({ mode: "keyword", fallback: { kind: e.kind, reason: e.message }, ...(await keyword(q, limit, offset, c.req.raw.signal)), limit, offset });
        } catch (e2) {
          return errorResponse(c, e2);
        }
      }
    }
    try {
      return c.json({ mode: "keyword", ...(await keyword(q, limit, offset, c.req.raw.signal)), limit, offset });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  // In a read worker, as the search tool does: a costly full-text statement (dozens of common
  // words OR'd over a big vault) would otherwise hold every MCP caller while it runs.
  async function keyword(q: string, limit: number, offset: number, signal: AbortSignal): Promise<{ items: unknown[]; total: number }> {
    return JSON.parse((await offloaded.search(vault, q, limit, offset, signal)).text);
  }
}
