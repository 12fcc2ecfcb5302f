// A chat model for tests, over HTTP in the real wire formats: OpenAI
// (/v1/chat/completions, /v1/models, /v1/embeddings) and Ollama (/api/chat,
// /api/tags, /api/embed), plus the common /rerank shape. What it says is
// scripted per test (`reply`), so it can play an unreliable model: cite a page
// it was never shown, invent or misattribute a quote, answer broken JSON,
// answer slowly, answer 429. Every request is recorded for inspection.
// Embeddings are feature-hashed (./model-server.ts), so hybrid retrieval runs
// for real and fast.
import type { Server } from "bun";
import { hashEmbed } from "./model-server";

export interface ChatRequest {
  wire: "openai" | "ollama";
  body: any;
  system: string;
  /** The last user message. */
  user: string;
}

/** A reply: the assistant's text, or an HTTP failure. */
export type Reply = string | { status: number; body?: string; headers?: Record<string, string> };

export interface ChatServerState {
  models: string[];
  dim: number;
  /** Answer every chat request after this many ms. */
  delayMs: number;
  reply: (req: ChatRequest) => Reply | Promise<Reply>;
  /** Scores for a /rerank request's documents (null: 404, no reranker here). */
  rerank: ((query: string, documents: string[]) => number[]) | null;
  requests: { path: string; body: any; auth: string | null }[];
  chats: ChatRequest[];
}

export interface ChatServer {
  url: string;
  state: ChatServerState;
  stop(): Promise<void>;
}

export function startChatServer(init: Partial<ChatServerState> = {}): ChatServer {
  const state: ChatServerState = {
    models: ["llama3.2:latest", "nomic-embed-text:latest"],
    dim: 64,
    delayMs: 0,
    reply: () => "{}",
    rerank: null,
    requests: [],
    chats: [],
    ...init,
  };
  const chat = async (wire: "openai" | "ollama", body: any): Promise<Response> => {
    const messages: { role: string; content: string }[] = Array.isArray(body?.messages) ? body.messages : [];
    const req: ChatRequest = {
      wire,
      body,
      system: messages.filter((m) => m.role === "system").map((m) => m.content).join("\n"),
      user: messages.filter((m) => m.role === "user").at(-1)?.content ?? "",
    };
    state.chats.push(req);
    if (state.delayMs) await Bun.sleep(state.delayMs);
    const r = await state.reply(req);
    if (typeof r !== "string") return new Response(r.body ?? JSON.stringify({ error: `status ${r.status}` }), { status: r.status, headers: { "content-type": "application/json", ...r.headers } });
    if (wire === "ollama") return Response.json({ model: body.model, created_at: new Date().toISOString(), message: { role: "assistant", content: r }, done: true, done_reason: "stop" });
    return Response.json({ id: "c1", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: r }, finish_reason: "stop" }] });
  };
  const server: Server<unknown> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body: any = req.method === "POST" ? await req.json().catch(() => null) : null;
      state.requests.push({ path, body, auth: req.headers.get("authorization") });
      const embed = (t: string) => hashEmbed(t, state.dim);
      switch (path) {
        case "/api/tags":
          return Response.json({ models: state.models.map((name) => ({ name, model: name, size: 1, digest: "x", details: {} })) });
        case "/v1/models":
          return Response.json({ object: "list", data: state.models.map((id) => ({ id, object: "model" })) });
        case "/api/chat":
          return chat("ollama", body);
        case "/v1/chat/completions":
          return chat("openai", body);
        case "/api/embed": {
          const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
          return Response.json({ model: body.model, embeddings: input.map(embed) });
        }
        case "/v1/embeddings": {
          const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
          return Response.json({ object: "list", model: body.model, data: input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })) });
        }
        case "/rerank":
        case "/v1/rerank": {
          if (!state.rerank) return Response.json({ error: "not found" }, { status: 404 });
          const scores = state.rerank(body.query, body.documents);
          const results = scores.map((relevance_score, index) => ({ index, relevance_score })).sort((a, b) => b.relevance_score - a.relevance_score);
          return Response.json({ results: results.slice(0, body.top_n ?? results.length) });
        }
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

export interface ShownItem {
  id: string;
  attrs: Record<string, string>;
  text: string;
}

/**
 * What the model was shown: the items of the delimited reference block in a
 * message (the fences carry a nonce; items start with "[S1] path: … | …").
 */
export function parseReference(message: string): { open: string; close: string; items: ShownItem[] } | null {
  const open = message.match(/<<<REFERENCE DATA ([0-9a-f]+):[^\n]*>>>/);
  if (!open) return null;
  const close = `<<<END REFERENCE DATA ${open[1]}>>>`;
  const start = open.index! + open[0].length;
  const end = message.indexOf(close, start);
  if (end < 0) return null;
  const inner = message.slice(start, end);
  const items: ShownItem[] = [];
  const re = /^\[([A-Z]\d+)\] (.*)$/gm;
  const heads = [...inner.matchAll(re)];
  heads.forEach((h, i) => {
    const attrs: Record<string, string> = {};
    for (const part of h[2]!.split(" | ")) {
      const at = part.indexOf(": ");
      if (at > 0) attrs[part.slice(0, at)] = part.slice(at + 2);
    }
    const from = h.index! + h[0].length + 1;
    const to = i + 1 < heads.length ? heads[i + 1]!.index! : inner.length;
    items.push({ id: h[1]!, attrs, text: inner.slice(from, to).trim() });
  });
  return { open: open[0], close, items };
}
