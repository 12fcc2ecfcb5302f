// A small HTTP server that speaks the real Ollama (/api/tags, /api/embed,
// /api/chat) and OpenAI (/v1/embeddings, /v1/chat/completions) wire formats,
// for testing the provider clients and everything above them, with switchable
// failures. Its "model" embeds by feature hashing (each word adds to a few
// dimensions), so texts that share words get similar vectors.
import type { Server } from "bun";

export interface ModelServerState {
  /** Ollama model names /api/tags lists. */
  models: string[];
  dim: number;
  /** Answer every request after this many ms. */
  delayMs: number;
  /** Answer embedding requests (only) after this many ms more: a slow model whose /api/tags still answers at once. */
  embedDelayMs?: number;
  /** Fail the next N requests with this status (then behave). */
  failNext: { count: number; status: number; retryAfter?: string; body?: string };
  /** Embedding answers carry vectors of this length instead of `dim` (a model swapped behind the name). */
  wrongDim: number | null;
  /** What chat requests answer (the assistant message text). */
  chatReply: (messages: { role: string; content: string }[]) => string;
  /** Words the embedder skips (like an IDF weight of zero for the commonest words). */
  ignoreWords?: Set<string>;
  requests: { path: string; body: any; auth: string | null }[];
}

export interface ModelServer {
  url: string;
  state: ModelServerState;
  stop(): Promise<void>;
}

function hashWord(w: string, seed: number): number {
  let h = 2166136261 ^ seed;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Feature-hashing embedding: deterministic, and similar for texts sharing words (other than `ignore`d ones). */
export function hashEmbed(text: string, dim: number, ignore?: Set<string>): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (ignore?.has(w)) continue;
    for (let k = 0; k < 3; k++) {
      const h = hashWord(w, k);
      v[h % dim]! += h & 0x80000000 ? 1 : -1;
    }
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

export function startModelServer(init: Partial<ModelServerState> = {}): ModelServer {
  const state: ModelServerState = {
    models: ["nomic-embed-text:latest", "llama3.2:latest"],
    dim: 64,
    delayMs: 0,
    failNext: { count: 0, status: 500 },
    wrongDim: null,
    chatReply: () => "ok",
    requests: [],
    ...init,
  };
  const server: Server<unknown> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body: any = req.method === "POST" ? await req.json().catch(() => null) : null;
      state.requests.push({ path, body, auth: req.headers.get("authorization") });
      if (state.delayMs) await Bun.sleep(state.delayMs);
      if (state.embedDelayMs && (path === "/api/embed" || path === "/v1/embeddings")) await Bun.sleep(state.embedDelayMs);
      if (state.failNext.count > 0) {
        state.failNext.count--;
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (state.failNext.retryAfter) headers["retry-after"] = state.failNext.retryAfter;
        return new Response(state.failNext.body ?? JSON.stringify({ error: `injected failure ${state.failNext.status}` }), { status: state.failNext.status, headers });
      }
      const dim = state.wrongDim ?? state.dim;
      const embed = (t: string) => hashEmbed(t, dim, state.ignoreWords);
      switch (path) {
        case "/api/tags":
          return Response.json({ models: state.models.map((name) => ({ name, model: name, size: 1, digest: "x", details: {} })) });
        case "/api/embed": {
          if (!state.models.some((m) => m === body?.model || m === `${body?.model}:latest`)) {
            return Response.json({ error: `model "${body?.model}" not found, try pulling it first` }, { status: 404 });
          }
          const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
          return Response.json({ model: body.model, embeddings: input.map(embed), total_duration: 1, load_duration: 1, prompt_eval_count: input.length });
        }
        case "/api/chat":
          return Response.json({ model: body.model, created_at: new Date().toISOString(), message: { role: "assistant", content: state.chatReply(body.messages) }, done: true, done_reason: "stop" });
        case "/v1/embeddings": {
          const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
          // Out of order on purpose: clients must sort by index.
          const data = input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })).reverse();
          return Response.json({ object: "list", model: body.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } });
        }
        case "/v1/chat/completions":
          return Response.json({ id: "c1", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: state.chatReply(body.messages) }, finish_reason: "stop" }] });
        default:
          return Response.json({ error: "not found" }, { status: 404 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    state,
    async stop() {
      await server.stop(true);
    },
  };
}
