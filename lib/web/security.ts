// Headers every web UI answer carries, and how engine refusals become HTTP answers.
import type { Context } from "hono";
import { machineFault, ToolError } from "../errors";

/**
 * No inline script or style, nothing from another origin: a note that slipped
 * a <script> or an onerror= past the sanitiser still runs nothing. Images come
 * from the vault (/api/file) or data: URLs; connections only back here.
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** For vault files served as they are (an SVG opened directly must not run its script in this origin). */
export const FILE_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

export function pageHeaders(c: Context): void {
  c.header("Content-Security-Policy", CSP);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "no-referrer");
  c.header("X-Frame-Options", "DENY");
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  c.header("Cross-Origin-Resource-Policy", "same-origin");
}

const STATUS: Record<string, 400 | 403 | 404 | 409 | 413 | 429 | 503 | 507> = {
  "path-invalid": 400,
  "invalid-input": 400,
  "not-a-note": 400,
  "no-change": 409,
  "note-not-found": 404,
  "attachment-not-found": 404,
  "edit-not-found": 404,
  "proposal-not-found": 404,
  "token-not-found": 404,
  conflict: 409,
  "proposal-not-pending": 409,
  "already-exists": 409,
  "immutable-path": 409,
  "too-large": 413,
  "rate-limited": 429,
  "not-configured": 503,
  "index-not-ready": 503,
  "disk-full": 507,
  "read-only": 503,
  "permission-denied": 403,
};

/** A refusal from the engine as JSON {error, kind, ...data} with a fitting status; anything else is a 500 with no detail. */
export function errorResponse(c: Context, e: unknown): Response {
  // A refusal, or a fault of the machine the person can act on (a full disk: errors.ts machineFault).
  const refusal = e instanceof ToolError ? e : machineFault(e);
  if (refusal) {
    if (refusal !== e) console.error("lettuce web:", (e as Error).message);
    return c.json({ ...(refusal.data ?? {}), error: refusal.message, kind: refusal.kind }, STATUS[refusal.kind] ?? 400);
  }
  console.error("lettuce web:", e);
  return c.json({ error: "Internal error (see the server's log)", kind: "internal" }, 500);
}

export function badRequest(c: Context, message: string): Response {
  return c.json({ error: message, kind: "invalid-input" }, 400);
}
