// Does the configured chat model answer? get_vault_info.capabilities.llm says
// so, and agents call get_vault_info often: the answer is cached for a short
// while (PROBE_TTL_MS), concurrent askers share one probe in flight, and every
// real chat call updates it for free (a success proves the model answers; a
// connection failure proves it does not).
import type { ChatProvider } from "./types";

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
export async function chatAnswers(provider: ChatProvider | null, now: () => number = Date.now): Promise<boolean> {
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
export function noteChatOutcome(provider: ChatProvider, answered: boolean, now: () => number = Date.now): void {
  const key = keyOf(provider);
  const p = probes.get(key);
  if (p?.pending) return;
  probes.set(key, { ok: answered, at: now(), pending: null });
}
