// Does the configured chat model answer? get_vault_info.capabilities.llm says
// so, and agents call get_vault_info often: the answer is cached for a short
// while (PROBE_TTL_MS), concurrent askers share one probe in flight, and every
// real chat call updates it for free (a success proves the model answers; a
// connection failure proves it does not).
import { probeOllama } from "./ollama";
import type { ChatProvider, EmbeddingProvider } from "./types";
import { envNumber, MAX_TIMER_MS } from "../env-number";

// How long a verdict is kept is measured on the monotonic clock: after the wall clock stepped back an hour, a
// cached "Ollama does not answer" outlived Ollama coming back by that hour.
const monotonic = () => performance.now();

export const PROBE_TTL_MS = 30_000;
const PROBE_TIMEOUT_MS = 1_500;

interface Probe {
  ok: boolean;
  at: number;
  pending: Promise<boolean> | null;
}

const probes = new Map<string, Probe>();
const keyOf = (p: ChatProvider) => `${p.kind}\u0000${p.id}\u0000${(p as { baseUrl?: string; host?: string }).baseUrl ?? (p as { host?: string }).host ?? ""}`;

/** True when the chat model answered a probe (or a real call) within the last PROBE_TTL_MS. */
export async function chatAnswers(provider: ChatProvider | null, now: () => number = monotonic): Promise<boolean> {
  if (!provider) return false;
  const key = keyOf(provider);
  let p = probes.get(key);
  if (p && !p.pending && now() - p.at < PROBE_TTL_MS) return p.ok;
  if (p?.pending) return p.pending;
  p ??= { ok: false, at: 0, pending: null };
  probes.set(key, p);
  const entry = p;
  entry.pending = provider
    .ping(PROBE_TIMEOUT_MS)
    .catch(() => false)
    .then((ok) => {
      entry.ok = ok;
      entry.at = now();
      entry.pending = null;
      return ok;
    });
  return entry.pending;
}

/** Record what a real chat call showed (it answered, or it could not be reached). */
export function noteChatOutcome(provider: ChatProvider, answered: boolean, now: () => number = monotonic): void {
  const key = keyOf(provider);
  const p = probes.get(key);
  if (p?.pending) return;
  probes.set(key, { ok: answered, at: now(), pending: null });
}

// The same for a local embeddings server (Ollama): capabilities.embeddings and the
// semantic tools must say "not configured" while it cannot be reached, and agents
// ask often, so the answer is kept for EMBED_PROBE_TTL_MS (LETTUCE_EMBED_PROBE_TTL_MS) and shared while in flight.
export const EMBED_PROBE_TTL_MS = 10_000;
const embedProbeTtl = () => envNumber("LETTUCE_EMBED_PROBE_TTL_MS", EMBED_PROBE_TTL_MS, { min: 0, max: MAX_TIMER_MS });
const embedProbes = new Map<string, { reason: string | null; at: number; pending: Promise<string | null> | null }>();

/**
 * Null when the embeddings provider can be reached now, else why not. Only Ollama is
 * probed (a local server that may simply not be running); the built-in model is always
 * there, and hosted endpoints answer for themselves on the first call.
 */
export async function embedderReachable(provider: EmbeddingProvider, now: () => number = monotonic): Promise<string | null> {
  if (provider.kind !== "ollama") return null;
  const host = (provider as { host?: string }).host ?? "";
  let p = embedProbes.get(host);
  if (p && !p.pending && now() - p.at < embedProbeTtl()) return p.reason;
  if (p?.pending) return p.pending;
  p ??= { reason: null, at: 0, pending: null };
  embedProbes.set(host, p);
  const entry = p;
  entry.pending = probeOllama(host, PROBE_TIMEOUT_MS)
    .catch(() => null)
    .then((models) => {
      entry.reason = models === null ? `Ollama does not answer at ${host}; start it (\`ollama serve\`) or choose another LETTUCE_EMBED_PROVIDER` : null;
      entry.at = now();
      entry.pending = null;
      return entry.reason;
    });
  return entry.pending;
}
