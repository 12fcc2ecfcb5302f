// The person's access to the web UI: one-time login codes and the sessions
// they open. Both live in state.db, hashed, so that `lettuce login` (another
// process) can mint a code that the running server accepts: whoever can write
// the vault's state.db is the vault's owner already. Nothing here knows about
// MCP tokens, and MCP tokens are never looked up here: the two never mix.
import type { Database } from "bun:sqlite";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const LOGIN_CODE_TTL_MS = 10 * 60 * 1000;
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
// A code or session also lapses when its expiry lies further ahead than a fresh one's would: it was made
// while the clock ran ahead (a VM restored, a hardware clock in local time), and a login code made a day
// ahead worked for a day after the clock was put right (the clock audit of 2026-12-05). A minute of slack
// for clocks that differ a little between `lettuce login` and the server.
const CLOCK_SLACK_MS = 60_000;
// A code or cookie longer than this is not one of ours; refuse it before hashing.
const MAX_SECRET_CHARS = 100;

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const secret = () => randomBytes(32).toString("base64url");

/** A fresh one-time login code (shown once; only its hash is stored). Old codes are swept at the same time. */
export function createLoginCode(db: Database, now = Date.now()): { code: string; expiresAt: number } {
  const code = secret();
  const expiresAt = now + LOGIN_CODE_TTL_MS;
  db.transaction(() => {
    db.query("DELETE FROM web_login_codes WHERE expires_at < ? OR used_at IS NOT NULL").run(now - LOGIN_CODE_TTL_MS);
    db.query("INSERT INTO web_login_codes(hash, created_at, expires_at) VALUES (?, ?, ?)").run(sha256(code), now, expiresAt);
  })();
  return { code, expiresAt };
}

/**
 * Spend a login code: true once for a code that exists, is unused and has not
 * expired. The UPDATE is the check, so two requests racing with the same
 * code cannot both win.
 */
export function consumeLoginCode(db: Database, code: string, now = Date.now()): boolean {
  if (!code || code.length > MAX_SECRET_CHARS) return false;
  const res = db
    .query("UPDATE web_login_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? AND expires_at <= ?")
    .run(now, sha256(code), now, now + LOGIN_CODE_TTL_MS + CLOCK_SLACK_MS);
  return res.changes === 1;
}

export interface WebSession {
  csrf: string;
  expiresAt: number;
}

/** Open a session: the cookie value (returned once) and its CSRF token. */
export function createSession(db: Database, now = Date.now()): { cookie: string; session: WebSession } {
  const cookie = secret();
  const csrf = secret();
  const expiresAt = now + SESSION_TTL_MS;
  db.transaction(() => {
    db.query("DELETE FROM web_sessions WHERE expires_at < ?").run(now);
    db.query("INSERT INTO web_sessions(hash, csrf, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)").run(sha256(cookie), csrf, now, expiresAt, now);
  })();
  return { cookie, session: { csrf, expiresAt } };
}

const lastSeen = new Map<string, number>();

/** The live session a cookie value opens, or null. */
export function verifySession(db: Database, cookie: string | undefined, now = Date.now()): WebSession | null {
  if (!cookie || cookie.length > MAX_SECRET_CHARS) return null;
  const h = sha256(cookie);
  const row = db.query("SELECT hash, csrf, expires_at FROM web_sessions WHERE hash = ? AND expires_at > ? AND expires_at <= ?").get(h, now, now + SESSION_TTL_MS + CLOCK_SLACK_MS) as {
    hash: string;
    csrf: string;
    expires_at: number;
  } | null;
  if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(h))) return null;
  // Note the visit at most once a minute: a write per request would cost more than the request.
  if ((lastSeen.get(h) ?? 0) < now - 60_000) {
    lastSeen.delete(h);
    lastSeen.set(h, now);
    // Sessions last a week; the most recently seen thousand are all this cache needs (it grew with every login).
    if (lastSeen.size > 1000) lastSeen.delete(lastSeen.keys().next().value!);
    try {
      db.query("UPDATE web_sessions SET last_seen_at = ? WHERE hash = ?").run(now, h);
    } catch {
      /* a busy state.db must not fail a page */
    }
  }
  return { csrf: row.csrf, expiresAt: row.expires_at };
}

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfMatches(session: WebSession, presented: string | undefined): boolean {
  if (!presented || presented.length !== session.csrf.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(session.csrf));
}

export function endSession(db: Database, cookie: string): void {
  db.query("DELETE FROM web_sessions WHERE hash = ?").run(sha256(cookie));
}

/** Log every browser out (a person who suspects a leaked cookie). Returns how many sessions ended. */
export function endAllSessions(db: Database): number {
  return db.query("DELETE FROM web_sessions").run().changes;
}
