// The provider clients against a real HTTP server speaking the Ollama and
// OpenAI wire formats, failures included; and how providers are chosen.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { OllamaChat, OllamaEmbedder, ollamaHost, probeOllama } from "../lib/providers/ollama";
import { OpenAIChat, OpenAIEmbedder, openAiBase } from "../lib/providers/openai";
import type { RetryPolicy } from "../lib/providers/retry";
import { selectChat, selectEmbedder } from "../lib/providers/select";
import { ProviderError } from "../lib/providers/types";
import { startModelServer, type ModelServer } from "./helpers/model-server";

// Short deadlines so that "slow" and "down" cases finish quickly; generous enough for a loaded machine.
const FAST: RetryPolicy = { attempts: 3, timeoutMs: 2_000, baseDelayMs: 20, maxDelayMs: 200 };
const ONE_TRY_SHORT: RetryPolicy = { attempts: 2, timeoutMs: 300, baseDelayMs: 10, maxDelayMs: 50 };

let srv: ModelServer;
beforeAll(() => {
  srv = startModelServer({ dim: 32 });
});
afterAll(() => srv.stop());

function reset() {
  srv.state.delayMs = 0;
  srv.state.failNext = { count: 0, status: 500 };
  srv.state.wrongDim = null;
  srv.state.requests = [];
  srv.state.models = ["nomic-embed-text:latest", "llama3.2:latest"];
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProviderError) return e;
    throw e;
  }
  throw new Error("expected a ProviderError");
}

/** A port where nothing listens: a server started and stopped. */
async function deadUrl(): Promise<string> {
  const s = startModelServer();
  const url = s.url;
  await s.stop();
  return url;
}

test("Ollama: embeds over /api/embed with the model's task prefixes, one vector per text", async () => {
  reset();
  const e = new OllamaEmbedder(srv.url, "nomic-embed-text", FAST);
  const v = await e.embed(["frost dates for lettuce", "compost heap"], { purpose: "document" });
  expect(v).toHaveLength(2);
  expect(v[0]).toBeInstanceOf(Float32Array);
  expect(v[0]!.length).toBe(32);
  expect(e.dimension).toBe(32);
  const req = srv.state.requests.find((r) => r.path === "/api/embed")!;
  expect(req.body.model).toBe("nomic-embed-text");
  expect(req.body.input[0]).toBe("search_document: frost dates for lettuce");
  await e.embed(["query"], { purpose: "query" });
  expect(srv.state.requests.at(-1)!.body.input[0]).toBe("search_query: query");
});

test("Ollama: a model that is not installed is a provider-error that says how to fix it", async () => {
  reset();
  const err = await failure(new OllamaEmbedder(srv.url, "mxbai-embed-large", FAST).embed(["x"]));
  expect(err.kind).toBe("provider-error");
  expect(err.message).toContain("ollama pull mxbai-embed-large");
  // Not retryable: one request only.
  expect(srv.state.requests.filter((r) => r.path === "/api/embed")).toHaveLength(1);
});

test("Ollama: down is provider-unavailable naming the host, after retrying", async () => {
  const url = await deadUrl();
  const err = await failure(new OllamaEmbedder(url, "nomic-embed-text", FAST).embed(["x"]));
  expect(err.kind).toBe("provider-unavailable");
  expect(err.message).toContain(url);
  expect(err.message).toContain("after 3 tries");
});

test("Ollama: a 500 is retried with back-off and then succeeds", async () => {
  reset();
  srv.state.failNext = { count: 2, status: 500 };
  const v = await new OllamaEmbedder(srv.url, "nomic-embed-text", FAST).embed(["x"]);
  expect(v).toHaveLength(1);
  expect(srv.state.requests.filter((r) => r.path === "/api/embed")).toHaveLength(3);
});

test("Ollama: slow answers time out as provider-unavailable", async () => {
  reset();
  srv.state.delayMs = 1_500;
  const err = await failure(new OllamaEmbedder(srv.url, "nomic-embed-text", ONE_TRY_SHORT).embed(["x"]));
  expect(err.kind).toBe("provider-unavailable");
  expect(err.message).toContain("did not answer within 300 ms");
  srv.state.delayMs = 0;
});

test("Ollama: vectors of another dimension than before are refused", async () => {
  reset();
  const e = new OllamaEmbedder(srv.url, "nomic-embed-text", FAST);
  await e.embed(["first"]);
  srv.state.wrongDim = 48;
  const err = await failure(e.embed(["second"]));
  expect(err.kind).toBe("provider-error");
  expect(err.message).toContain("48-dimensional");
  expect(err.message).toContain("32");
});

test("Ollama: chat over /api/chat, JSON mode passed as format", async () => {
  reset();
  srv.state.chatReply = (m) => `echo: ${m.at(-1)!.content}`;
  const c = new OllamaChat(srv.url, "llama3.2", FAST);
  expect(await c.chat([{ role: "user", content: "hi" }], { json: true })).toBe("echo: hi");
  const req = srv.state.requests.find((r) => r.path === "/api/chat")!;
  expect(req.body.format).toBe("json");
  expect(req.body.stream).toBe(false);
});

test("Ollama: probe lists installed models; a dead host answers null", async () => {
  reset();
  expect(await probeOllama(srv.url)).toEqual(["nomic-embed-text:latest", "llama3.2:latest"]);
  expect(await probeOllama(await deadUrl(), 500)).toBeNull();
  expect(ollamaHost(undefined)).toBe("http://127.0.0.1:11434");
  expect(ollamaHost("0.0.0.0")).toBe("http://127.0.0.1:11434");
  expect(ollamaHost("example.org:9999")).toBe("http://example.org:9999");
});

test("a thread held past a call's deadline still takes the answer waiting for it; a server slower than the deadline is still given up on", async () => {
  reset();
  // The thread is busy (a long synchronous step) for longer than the deadline while the server could answer:
  // the timer fires late, and the call gets its time again rather than blaming the server.
  const probe = probeOllama(srv.url, 400);
  Bun.sleepSync(1_200);
  expect(await probe).toEqual(["nomic-embed-text:latest", "llama3.2:latest"]);
  const ping = new OpenAIChat(openAiBase(srv.url), "m", undefined, ONE_TRY_SHORT).ping(400);
  Bun.sleepSync(1_200);
  expect(await ping).toBe(true);
  const embed = new OllamaEmbedder(srv.url, "nomic-embed-text", { ...ONE_TRY_SHORT, attempts: 1, timeoutMs: 400 }).embed(["x"]);
  Bun.sleepSync(1_200);
  expect((await embed)[0]!.length).toBe(32);
  // A server that is slow while this thread waits idle: the deadline holds, with no grace.
  srv.state.delayMs = 3_000;
  const t0 = performance.now();
  expect(await probeOllama(srv.url, 400)).toBeNull();
  expect(await new OpenAIChat(openAiBase(srv.url), "m", undefined, ONE_TRY_SHORT).ping(400)).toBe(false);
  expect(performance.now() - t0).toBeLessThan(2_500);
  srv.state.delayMs = 0;
});

test("OpenAI: embeddings in input order (the answer is shuffled), with the API key", async () => {
  reset();
  const e = new OpenAIEmbedder(openAiBase(srv.url), "text-embedding-3-small", "sk-test", FAST);
  const [a, b] = await e.embed(["alpha beta", "gamma delta"]);
  const again = await e.embed(["gamma delta"]);
  expect(Array.from(b!)).toEqual(Array.from(again[0]!));
  expect(Array.from(a!)).not.toEqual(Array.from(b!));
  const req = srv.state.requests.find((r) => r.path === "/v1/embeddings")!;
  expect(req.auth).toBe("Bearer sk-test");
  expect(req.body.model).toBe("text-embedding-3-small");
  expect(openAiBase("http://localhost:1234")).toBe("http://localhost:1234/v1");
  expect(openAiBase("https://api.example.com/openai/v1/")).toBe("https://api.example.com/openai/v1");
});

test("OpenAI: 429 is retried after Retry-After, and reported as rate-limited when it persists", async () => {
  reset();
  srv.state.failNext = { count: 1, status: 429, retryAfter: "0" };
  expect(await new OpenAIEmbedder(openAiBase(srv.url), "m", undefined, FAST).embed(["x"])).toHaveLength(1);
  srv.state.failNext = { count: 10, status: 429, retryAfter: "1" };
  const err = await failure(new OpenAIEmbedder(openAiBase(srv.url), "m", undefined, { ...FAST, attempts: 2, maxDelayMs: 1_000 }).embed(["x"]));
  expect(err.kind).toBe("rate-limited");
  expect(err.retryAfterMs).toBe(1000);
  // A Retry-After longer than the client will wait is handed straight to the caller.
  reset();
  srv.state.failNext = { count: 10, status: 429, retryAfter: "120" };
  const long = await failure(new OpenAIEmbedder(openAiBase(srv.url), "m", undefined, FAST).embed(["x"]));
  expect(long.kind).toBe("rate-limited");
  expect(long.retryAfterMs).toBe(120_000);
  expect(srv.state.requests).toHaveLength(1);
});

test("OpenAI: a bad key is a provider-error (not retried); down and slow are provider-unavailable", async () => {
  reset();
  srv.state.failNext = { count: 1, status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided" } }) };
  const bad = await failure(new OpenAIEmbedder(openAiBase(srv.url), "m", "wrong", FAST).embed(["x"]));
  expect(bad.kind).toBe("provider-error");
  expect(bad.message).toContain("Incorrect API key");
  expect(bad.message).toContain("LETTUCE_API_KEY");
  const down = await failure(new OpenAIEmbedder(openAiBase(await deadUrl()), "m", undefined, FAST).embed(["x"]));
  expect(down.kind).toBe("provider-unavailable");
  srv.state.delayMs = 1_500;
  const slow = await failure(new OpenAIChat(openAiBase(srv.url), "m", undefined, ONE_TRY_SHORT).chat([{ role: "user", content: "hi" }]));
  expect(slow.kind).toBe("provider-unavailable");
  srv.state.delayMs = 0;
});

test("OpenAI: wrong dimension and malformed answers are provider-errors", async () => {
  reset();
  const e = new OpenAIEmbedder(openAiBase(srv.url), "m", undefined, FAST);
  await e.embed(["x"]);
  srv.state.wrongDim = 16;
  expect((await failure(e.embed(["y"]))).kind).toBe("provider-error");
  reset();
  srv.state.failNext = { count: 1, status: 200, body: JSON.stringify({ data: "nope" }) };
  expect((await failure(e.embed(["z"]))).message).toContain("without a data array");
});

test("OpenAI: chat completions, JSON mode as response_format", async () => {
  reset();
  srv.state.chatReply = () => '{"ok": true}';
  const c = new OpenAIChat(openAiBase(srv.url), "gpt-test", "k", FAST);
  expect(await c.chat([{ role: "user", content: "hi" }], { json: true, maxTokens: 10 })).toBe('{"ok": true}');
  const req = srv.state.requests.find((r) => r.path === "/v1/chat/completions")!;
  expect(req.body.response_format).toEqual({ type: "json_object" });
  expect(req.body.max_tokens).toBe(10);
});

test("selection: auto uses Ollama when it has the model, else the built-in model; none and typos are explained", async () => {
  reset();
  const withModel = await selectEmbedder({ OLLAMA_HOST: srv.url });
  expect(withModel.provider?.kind).toBe("ollama");
  expect(withModel.provider?.id).toBe("ollama:nomic-embed-text");
  const otherModel = await selectEmbedder({ OLLAMA_HOST: srv.url, LETTUCE_EMBED_MODEL: "bge-m3" });
  expect(otherModel.provider?.kind).toBe("builtin");
  expect(otherModel.reason).toContain("does not have bge-m3");
  const noOllama = await selectEmbedder({ OLLAMA_HOST: await deadUrl() });
  expect(noOllama.provider?.kind).toBe("builtin");
  expect(noOllama.provider?.dimension).toBe(512);
  const openai = await selectEmbedder({ LETTUCE_EMBED_BASE_URL: srv.url, LETTUCE_EMBED_MODEL: "e5" });
  expect(openai.provider?.id).toBe("openai:e5");
  const none = await selectEmbedder({ LETTUCE_EMBED_PROVIDER: "none" });
  expect(none.provider).toBeNull();
  expect(none.reason).toContain("LETTUCE_EMBED_PROVIDER=none");
  const typo = await selectEmbedder({ LETTUCE_EMBED_PROVIDER: "olama" });
  expect(typo.provider).toBeNull();
  expect(typo.reason).toContain("not one of");
});

test("selection: chat comes from Ollama's first chat model, an OpenAI-compatible URL, or nowhere", async () => {
  reset();
  const viaOllama = await selectChat({ OLLAMA_HOST: srv.url });
  expect(viaOllama.provider?.id).toBe("ollama:llama3.2:latest");
  const viaUrl = await selectChat({ LETTUCE_LLM_BASE_URL: srv.url, LETTUCE_LLM_MODEL: "qwen" });
  expect(viaUrl.provider?.id).toBe("openai:qwen");
  const nothing = await selectChat({ OLLAMA_HOST: await deadUrl() });
  expect(nothing.provider).toBeNull();
  expect(nothing.reason).toContain("No LLM provider configured");
});

test("a reply without end (or too large) is a provider-error at the size cap, not memory until the timeout", async () => {
  // A "model server" that streams a 200 OK forever, and one that sends a 3 MB reply at once.
  let hits = 0;
  const endless = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      hits++;
      if (new URL(req.url).pathname.endsWith("/big")) return new Response("x".repeat(3_000_000));
      const chunk = new TextEncoder().encode('{"x":"' + "y".repeat(65_536));
      return new Response(new ReadableStream({ pull: (ctl) => ctl.enqueue(chunk) }), { headers: { "content-type": "application/json" } });
    },
  });
  const before = process.env.LETTUCE_MAX_PROVIDER_REPLY_BYTES;
  process.env.LETTUCE_MAX_PROVIDER_REPLY_BYTES = "1000000";
  try {
    const url = `http://127.0.0.1:${endless.port}`;
    for (const run of [
      () => new OpenAIChat(openAiBase(url), "m", undefined, FAST).chat([{ role: "user", content: "hi" }]),
      () => new OllamaChat(url, "llama3.2", FAST).chat([{ role: "user", content: "hi" }]),
      () => new OllamaEmbedder(url, "nomic-embed-text", FAST).embed(["x"]),
    ]) {
      hits = 0;
      const e = await failure(run());
      expect(e.kind, e.message).toBe("provider-error"); // a timeout would be provider-unavailable
      expect(e.message).toContain("larger than 1000000 bytes");
      expect(hits).toBe(1); // not retried: the next try would be the same
    }
    const { postJson } = await import("../lib/providers/openai");
    const big = (await postJson("test", `${url}/big`, {}, undefined, AbortSignal.timeout(2000), () => false, 2000).catch((x: unknown) => x)) as Error;
    expect(String(big.message)).toContain("larger than");
  } finally {
    if (before === undefined) delete process.env.LETTUCE_MAX_PROVIDER_REPLY_BYTES;
    else process.env.LETTUCE_MAX_PROVIDER_REPLY_BYTES = before;
    endless.stop(true);
  }
});
