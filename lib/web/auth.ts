// Who may use the web UI: the holder of a session cookie, opened by a
// one-time login link (lib/web/sessions.ts). The cookie is HttpOnly,
// SameSite=Strict and scoped to this server's port (two vaults served on two
// ports of 127.0.0.1 would otherwise overwrite each other's cookie, since
// cookies ignore ports). Every state-changing request also carries the
// session's CSRF token in X-CSRF-Token. MCP bearer tokens are never looked at.
import type { Context, MiddlewareHandler } from "hono";
import { getConnInfo } from "hono/bun";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { VaultContext } from "../vault-context";
import { requestStarted } from "../offload/activity";
import { plainPage } from "./assets";
import { pageHeaders } from "./security";
import { consumeLoginCode, createSession, csrfMatches, endSession, SESSION_TTL_MS, verifySession, type WebSession } from "./sessions";

export type WebEnv = { Variables: { session: WebSession; sessionCookie: string } };

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
// Failed login attempts a minute before they are answered 429 (codes are 256-bit: guessing is not the risk).
const MAX_FAILED_LOGINS_PER_MINUTE = 30;

export function cookieName(c: Context): string {
  const port = new URL(c.req.url).port || (c.req.url.startsWith("https:") ? "443" : "80");
  return `lettuce_session_${port}`;
}

// The person at this machine is told the exact command; a browser elsewhere (a server bound to a LAN
// address with --host) is not told where the vault lives on disk.
const HOW_TO_LOG_IN = (vault: VaultContext, local: boolean) =>
  (local
    ? `<h1>Lettuce</h1><p>You are not logged in to the web UI of <code>${escapeText(vault.root)}</code>.</p>` +
      `<p>Get a one-time login link from the terminal where the vault is served:</p>` +
      `<pre>lettuce login ${escapeText(shellQuote(vault.root))}</pre>`
    : `<h1>Lettuce</h1><p>You are not logged in to this web UI.</p>` +
      `<p>Get a one-time login link on the machine that serves the vault: <code>lettuce login &lt;vault&gt;</code>.</p>`) +
  `<p><code>lettuce serve</code> also prints one when it starts. A link works once, for 10 minutes.</p>`;

function fromThisMachine(c: Context): boolean {
  try {
    const addr = getConnInfo(c).remote.address ?? "";
    return /^(127\.|::1$|::ffff:127\.)/.test(addr);
  } catch {
    return false; // not served by Bun.serve (no address to go on): say less
  }
}

function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The 401 page for a browser without a session: how to get a link. */
export async function loginHelp(c: Context, vault: VaultContext, extra = ""): Promise<Response> {
  pageHeaders(c);
  c.header("Cache-Control", "no-store");
  return c.html(await plainPage("Lettuce: log in", (extra ? `<p class="error">${escapeText(extra)}</p>` : "") + HOW_TO_LOG_IN(vault, fromThisMachine(c))), 401);
}

export function loginRoutes(vault: VaultContext) {
  let failures = { start: performance.now(), count: 0 }; // monotonic: a clock step back kept the window shut
  const login = async (c: Context) => {
    // A page on another site can make the browser fetch /login (an <img>, a link) with no Origin
    // header: the browser still says where the request came from. A link from `lettuce login`
    // opened from a terminal arrives as "none"; curl sends no such header.
    const site = c.req.header("sec-fetch-site");
    if (site === "cross-site" || site === "same-site") return c.json({ error: "forbidden: a login link works only opened directly", kind: "forbidden" }, 403);
    const code = c.req.query("code") ?? "";
    // A valid code always logs in: were the limit checked first, anyone able to send failures
    // (any local process, once any page could) would lock the person out of their fresh link.
    // The lookup by hash writes nothing for a wrong code; the count only slows what a flood hears.
    if (!consumeLoginCode(vault.stateDb, code)) {
      if (performance.now() - failures.start > 60_000) failures = { start: performance.now(), count: 0 };
      if (++failures.count > MAX_FAILED_LOGINS_PER_MINUTE) {
        pageHeaders(c);
        c.header("Retry-After", "60");
        return c.html(await plainPage("Lettuce: slow down", "<h1>Too many failed logins</h1><p>Wait a minute, then use a fresh link from <code>lettuce login</code>.</p>"), 429);
      }
      return loginHelp(c, vault, "This login link is not valid: it was already used, it expired (links last 10 minutes), or it belongs to another server.");
    }
    const { cookie } = createSession(vault.stateDb);
    setCookie(c, cookieName(c), cookie, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure: c.req.url.startsWith("https:"),
      maxAge: Math.floor(SESSION_TTL_MS / 1000),
    });
    pageHeaders(c);
    c.header("Cache-Control", "no-store");
    return c.redirect("/", 303);
  };
  return { login };
}

/**
 * Require a session. API paths answer 401 JSON, pages the login help. A
 * request that changes something must also carry the CSRF token.
 */
export function requireSession(vault: VaultContext, kind: "api" | "page"): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const cookie = getCookie(c, cookieName(c));
    const session = verifySession(vault.stateDb, cookie);
    if (!session || !cookie) {
      if (kind === "page") return loginHelp(c, vault);
      pageHeaders(c);
      return c.json({ error: "Not logged in: open a login link from `lettuce login <vault>`", kind: "unauthorized" }, 401);
    }
    if (!SAFE_METHODS.has(c.req.method) && !csrfMatches(session, c.req.header("x-csrf-token"))) {
      pageHeaders(c);
      return c.json({ error: "Missing or wrong CSRF token (reload the page)", kind: "csrf" }, 403);
    }
    c.set("session", session);
    c.set("sessionCookie", cookie);
    // The person is using the page: background work gives way (lib/offload/activity.ts).
    const done = requestStarted();
    try {
      await next();
    } finally {
      done();
    }
  };
}

export function logout(vault: VaultContext) {
  return (c: Context<WebEnv>) => {
    endSession(vault.stateDb, c.get("sessionCookie"));
    deleteCookie(c, cookieName(c), { path: "/" });
    return c.json({ ok: true });
  };
}
