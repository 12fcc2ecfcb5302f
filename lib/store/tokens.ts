import type { Database } from "bun:sqlite";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { DISGUISING } from "../control-chars";

const MAX_TOKEN_NAME_CHARS = 100;

export type Scope = "read" | "propose" | "write";
export const SCOPES: readonly Scope[] = ["read", "propose", "write"];

export interface TokenInfo {
  id: number;
  name: string;
  scope: Scope;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** A new token: URL-safe base64 of 32 random bytes. Only its hash is stored; the caller shows it once. */
export function createToken(db: Database, name: string, scope: Scope): { token: string; info: TokenInfo } {
  if (!SCOPES.includes(scope)) throw new Error(`Unknown scope ${JSON.stringify(scope)}; use read, propose or write`);
  if (!name.trim()) throw new Error("A token needs a name");
  // The name is printed to a person's terminal (token list) and stored with every audit entry: a control
  // sequence in it set the window title and cleared the screen (the configuration audit).
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name) || DISGUISING.test(name)) throw new Error("A token name may not hold control or invisible characters");
  if (name.length > MAX_TOKEN_NAME_CHARS) throw new Error(`A token name has at most ${MAX_TOKEN_NAME_CHARS} characters`);
  const existing = db.query("SELECT id FROM tokens WHERE name = ?").get(name);
  if (existing) throw new Error(`A token named ${JSON.stringify(name)} already exists; revoke it or pick another name`);
  const token = randomBytes(32).toString("base64url");
  const createdAt = new Date().toISOString();
  const row = db
    .query("INSERT INTO tokens(name, scope, hash, created_at) VALUES (?, ?, ?, ?) RETURNING id")
    .get(name, scope, hashToken(token), createdAt) as { id: number };
  return { token, info: { id: row.id, name, scope, createdAt, lastUsedAt: null, revokedAt: null } };
}

/**
 * A vault's first token, made only when it has no active one, decided under the write lock: two servers
 * started at once both counted none, and the second died on the name (the multi-process audit). Null when
 * there is one already.
 */
export function createFirstToken(db: Database, name: string, scope: Scope): { token: string; info: TokenInfo } | null {
  return db.transaction(() => (countActiveTokens(db) === 0 ? createToken(db, name, scope) : null)).immediate();
}

function toInfo(r: Record<string, unknown>): TokenInfo {
  return {
    id: r.id as number,
    name: r.name as string,
    scope: r.scope as Scope,
    createdAt: r.created_at as string,
    lastUsedAt: (r.last_used_at as string) ?? null,
    revokedAt: (r.revoked_at as string) ?? null,
  };
}

export function listTokens(db: Database, includeRevoked = false): TokenInfo[] {
  const rows = db
    .query(`SELECT * FROM tokens ${includeRevoked ? "" : "WHERE revoked_at IS NULL"} ORDER BY id`)
    .all() as Record<string, unknown>[];
  return rows.map(toInfo);
}

export function countActiveTokens(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM tokens WHERE revoked_at IS NULL").get() as { n: number }).n;
}

/** Revoke by name or numeric id. Returns false when no active token matched. */
export function revokeToken(db: Database, nameOrId: string): boolean {
  const res = db
    .query("UPDATE tokens SET revoked_at = ? WHERE revoked_at IS NULL AND (name = ? OR CAST(id AS TEXT) = ?)")
    .run(new Date().toISOString(), nameOrId, nameOrId);
  return res.changes > 0;
}

/** Revoke exactly the token with this id (the web UI's button; a name that looks like a number cannot be hit by mistake). */
export function revokeTokenById(db: Database, id: number): boolean {
  return db.query("UPDATE tokens SET revoked_at = ? WHERE revoked_at IS NULL AND id = ?").run(new Date().toISOString(), id).changes > 0;
}

const lastTouched = new Map<number, number>();

/**
 * The active token matching a presented bearer value, or null. Looked up on
 * every request (a revocation from the CLI takes effect at once); the
 * hash comparison is constant-time.
 */
export function verifyToken(db: Database, presented: string): TokenInfo | null {
  if (!presented || presented.length > 200) return null;
  const h = hashToken(presented);
  const row = db.query("SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL").get(h) as Record<string, unknown> | null;
  if (!row || !timingSafeEqual(Buffer.from(row.hash as string), Buffer.from(h))) return null;
  const info = toInfo(row);
  // Record use at most once a minute per token: a write on every request would cost more than the request.
  // A server passes its connection that does not fsync (VaultContext.stateDbNoSync): this write is inside a request.
  // Monotonic: after a wall-clock step back, last_used_at stopped moving for the length of the step.
  const now = performance.now();
  if ((lastTouched.get(info.id) ?? -Infinity) < now - 60_000) {
    lastTouched.set(info.id, now);
    try {
      db.query("UPDATE tokens SET last_used_at = ? WHERE id = ?").run(new Date().toISOString(), info.id);
    } catch {
      /* a busy state.db must not fail a read */
    }
  }
  return info;
}
