// Context runs: the short-lived ids prepare_context hands out, which write
// tools accept as proof that the agent gathered context first. A run belongs
// to one token of one open vault and lasts 30 minutes. They live in memory:
// a restart forgets them (an agent then calls prepare_context again), and
// issuing one costs no disk write, which matters on a call whose budget is
// tens of milliseconds.
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { getSetting } from "./state-db";

export const CONTEXT_RUN_TTL_MS = 30 * 60 * 1000;
/** Live runs kept per vault; past this the oldest go first (an agent looping on prepare_context cannot grow memory without bound). */
const MAX_RUNS = 10_000;

export const CONTEXT_MODES = ["off", "smart", "strict"] as const;
export type ContextMode = (typeof CONTEXT_MODES)[number];

export interface ContextRun {
  id: string;
  token: string;
  createdAt: number;
  expiresAt: number;
}

const registries = new WeakMap<object, Map<string, ContextRun>>();

function registry(owner: object): Map<string, ContextRun> {
  let m = registries.get(owner);
  if (!m) {
    m = new Map();
    registries.set(owner, m);
  }
  return m;
}

function sweep(m: Map<string, ContextRun>, now: number): void {
  // Insertion order is expiry order (every run lives as long): stop at the first live one.
  for (const [id, r] of m) {
    if (r.expiresAt > now && m.size <= MAX_RUNS) break;
    m.delete(id);
  }
}

/** A new run for this token; `owner` is the open vault the run belongs to. */
export function issueContextRun(owner: object, token: string, now = Date.now()): ContextRun {
  const m = registry(owner);
  sweep(m, now);
  const run = { id: `ctx_${randomBytes(16).toString("base64url")}`, token, createdAt: now, expiresAt: now + CONTEXT_RUN_TTL_MS };
  m.set(run.id, run);
  return run;
}

export type RunCheck = { ok: true; run: ContextRun } | { ok: false; reason: "missing" | "unknown" | "expired" };

/**
 * Is this a live run of this token? Another token's run reads as unknown
 * (a run id is no capability to pass around).
 */
export function checkContextRun(owner: object, token: string, id: string | undefined, now = Date.now()): RunCheck {
  if (id === undefined || id === "") return { ok: false, reason: "missing" };
  const run = registry(owner).get(id);
  if (!run || run.token !== token) return { ok: false, reason: "unknown" };
  if (run.expiresAt <= now) return { ok: false, reason: "expired" };
  return { ok: true, run };
}

/** The vault's contextMode setting (default off). */
export function contextMode(stateDb: Database): ContextMode {
  const raw = getSetting(stateDb, "contextMode");
  return (CONTEXT_MODES as readonly string[]).includes(raw ?? "") ? (raw as ContextMode) : "off";
}
