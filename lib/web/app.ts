// The web UI, mounted on the server's Hono app next to /mcp. Routes here
// only ever answer to a browser session (lib/web/auth.ts); /mcp keeps its
// bearer tokens and never sees a session. Host and Origin were already
// checked by the app's first middleware (lib/server/http.ts).
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import { countPendingDirectives } from "../work/directives";
import { pendingCount } from "../write/proposals";
import { noteCount } from "../retrieval/notes";
import { VERSION } from "../version";
import type { VaultContext } from "../vault-context";
import { asCaller } from "../offload/caller";
import { plainPage, shellHtml, webBundle } from "./assets";
import { loginRoutes, logout, requireSession, type WebEnv } from "./auth";
import { WebEvents } from "./events";
import { wholeGraph } from "./graph";
import { startHealthRecorder } from "./health-history";
import { adminRoutes } from "./routes-admin";
import { noteRoutes } from "./routes-notes";
import { reviewRoutes } from "./routes-review";
import { pageHeaders } from "./security";
import { SemanticService } from "../semantic/service";

const MAX_UI_BODY_BYTES = 64 * 1024;

/** Client-side routes: each answers with the app shell (with a session) or the login help. */
export const PAGE_ROUTES = ["/", "/notes/*", "/tags/*", "/tags", "/search", "/graph", "/proposals", "/proposals/*", "/timeline", "/work", "/hygiene", "/tokens", "/settings"];

export function mountWebUi(app: Hono<any>, vault: VaultContext): void {
  const web = app as unknown as Hono<WebEnv>;
  const events = new WebEvents(vault);
  vault.onClose(startHealthRecorder(vault));
  const { login } = loginRoutes(vault);

  web.get("/login", login);
  web.get("/favicon.ico", (c) => c.body(null, 204));
  // The person's page is a caller of its own: its reads take turns with each token's in the read workers.
  web.use("/api/*", (_c, next) => asCaller("web", next));

  web.get("/assets/:name", async (c) => {
    const a = (await webBundle()).assets.get(c.req.param("name"));
    if (!a) return c.text("Not found", 404);
    pageHeaders(c);
    if (c.req.header("if-none-match") === a.etag) return c.body(null, 304);
    return c.body(a.body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": a.type, ETag: a.etag, "Cache-Control": "no-cache" });
  });

  // The session first: the body limit reads a chunked body to its end before it lets a request on, so
  // a caller with no session could hold a request open by never ending one.
  web.use("/api/*", requireSession(vault, "api"));
  web.use("/api/*", bodyLimit({ maxSize: MAX_UI_BODY_BYTES, onError: (c) => c.json({ error: `Request body over ${MAX_UI_BODY_BYTES} bytes`, kind: "too-large" }, 413) }));
  web.use("/api/*", async (c, next) => {
    await next();
    // Page headers on every answer, without replacing a stricter one a route set (attachments are sandboxed).
    const own = c.res.headers;
    const keep = new Map([...own.entries()]);
    pageHeaders(c);
    for (const [k, v] of keep) c.res.headers.set(k, v);
    if (!own.has("Cache-Control")) c.header("Cache-Control", "no-store");
  });
  web.use("/api/graph", compress());

  web.get("/api/session", async (c) => {
    let hybrid = false;
    try {
      hybrid = await SemanticService.for(vault).hasEmbedder();
    } catch {
      hybrid = false;
    }
    return c.json({
      csrf: c.get("session").csrf,
      version: VERSION,
      vault: { root: vault.root, name: vault.root.split("/").filter(Boolean).pop() ?? vault.root },
      noteCount: noteCount(vault.indexDb),
      pendingProposals: pendingCount(vault.stateDb),
      pendingDirectives: countPendingDirectives(vault.indexDb),
      index: vault.indexer.status,
      hybrid,
    });
  });
  web.post("/api/logout", logout(vault));
  web.get("/api/events", (c) => events.stream(c));
  noteRoutes(web, vault);
  reviewRoutes(web, vault);
  adminRoutes(web, vault);
  web.all("/api/*", (c) => c.json({ error: `No such API: ${c.req.method} ${new URL(c.req.url).pathname}`, kind: "not-found" }, 404));

  let warmed = false;
  const page = requireSession(vault, "page");
  for (const route of PAGE_ROUTES) {
    web.get(route, page, async (c) => {
      // The person is here: lay out the graph now, so the Graph page opens at once.
      if (!warmed && vault.indexer.status.state === "ready") {
        warmed = true;
        void wholeGraph(vault).catch(() => (warmed = false));
      }
      pageHeaders(c);
      c.header("Cache-Control", "no-store");
      return c.html(await shellHtml(`Lettuce — ${vault.root.split("/").filter(Boolean).pop() ?? "vault"}`));
    });
  }
  // A mistyped address in a browser: a page with a way back, not a bare "404 Not Found". Programs keep the plain 404.
  web.notFound(async (c) => {
    if (c.req.method !== "GET" || !(c.req.header("accept") ?? "").includes("text/html")) return c.text("404 Not Found", 404);
    pageHeaders(c);
    c.header("Cache-Control", "no-store");
    return c.html(await plainPage("Lettuce: no such page", `<h1>No such page</h1><p>Nothing is at this address.</p><p><a href="/">Back to the notes</a></p>`), 404);
  });
}
