// Which embedding and chat providers this process uses, decided from the
// environment once (per distinct configuration) and shared by every vault.
import { BuiltinEmbedder } from "./builtin";
import { DEFAULT_OLLAMA_EMBED_MODEL, OllamaChat, OllamaEmbedder, ollamaHost, probeOllama, sameOllamaModel } from "./ollama";
import { DEFAULT_OPENAI_CHAT_MODEL, DEFAULT_OPENAI_EMBED_MODEL, OpenAIChat, OpenAIEmbedder, openAiBase } from "./openai";
import type { ChatProvider, EmbeddingProvider } from "./types";

export const EMBED_PROVIDERS = ["auto", "ollama", "openai", "builtin", "none"] as const;
export const LLM_PROVIDERS = ["auto", "ollama", "openai", "none"] as const;
const OPENAI_DEFAULT_BASE = "https://api.openai.com/v1";

export interface Selected<T> {
  provider: T | null;
  /** Why there is none (for the "not configured" error), or how this one was chosen. */
  reason: string;
}

type Env = Record<string, string | undefined>;

const setting = (env: Env, name: string) => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

// Names of embedding-only models, so that `auto` does not pick one for chat.
const EMBEDDING_MODEL = /embed|minilm|bge-|e5-|gte-|arctic-embed|paraphrase/i;

/** The value of `key` in `cache`, made by `make` the first time it is asked for. */
function once<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
}

const probes = new Map<string, Promise<string[] | null>>();
const probe = (host: string) => once(probes, host, () => probeOllama(host));

let builtin: BuiltinEmbedder | null = null;
/** The one built-in model of this process (its workers are shared by every vault). */
export function builtinEmbedder(): BuiltinEmbedder {
  builtin ??= new BuiltinEmbedder();
  return builtin;
}

/**
 * Why a base URL setting cannot be used, or null. One that did not parse threw from deep in the choice, and
 * get_vault_info (the tool agents call first) answered internal to every agent (the configuration audit).
 */
function badBase(name: string, base: string | undefined): string | null {
  if (base === undefined) return null;
  try {
    openAiBase(base);
    return null;
  } catch {
    return `${name}=${JSON.stringify(base.slice(0, 80))} is not a URL (e.g. http://localhost:8080/v1)`;
  }
}

async function chooseEmbedder(env: Env): Promise<Selected<EmbeddingProvider>> {
  const choice = (setting(env, "LETTUCE_EMBED_PROVIDER") ?? "auto").toLowerCase();
  const model = setting(env, "LETTUCE_EMBED_MODEL");
  const base = setting(env, "LETTUCE_EMBED_BASE_URL");
  const unusable = (choice === "openai" || choice === "auto") && badBase("LETTUCE_EMBED_BASE_URL", base);
  if (unusable) return { provider: null, reason: unusable };
  const key = setting(env, "LETTUCE_API_KEY");
  const host = ollamaHost(env.OLLAMA_HOST);
  switch (choice) {
    case "none":
      return { provider: null, reason: "embeddings are switched off (LETTUCE_EMBED_PROVIDER=none)" };
    case "builtin":
      return { provider: builtinEmbedder(), reason: "LETTUCE_EMBED_PROVIDER=builtin" };
    case "ollama":
      return { provider: new OllamaEmbedder(host, model ?? DEFAULT_OLLAMA_EMBED_MODEL), reason: "LETTUCE_EMBED_PROVIDER=ollama" };
    case "openai":
      return { provider: new OpenAIEmbedder(openAiBase(base ?? OPENAI_DEFAULT_BASE), model ?? DEFAULT_OPENAI_EMBED_MODEL, key), reason: "LETTUCE_EMBED_PROVIDER=openai" };
    case "auto": {
      if (base) return { provider: new OpenAIEmbedder(openAiBase(base), model ?? DEFAULT_OPENAI_EMBED_MODEL, key), reason: "LETTUCE_EMBED_BASE_URL is set" };
      const wanted = model ?? DEFAULT_OLLAMA_EMBED_MODEL;
      const installed = await probe(host);
      if (installed?.some((m) => sameOllamaModel(m, wanted))) return { provider: new OllamaEmbedder(host, wanted), reason: `Ollama at ${host} has ${wanted}` };
      const why = installed ? `Ollama at ${host} does not have ${wanted}` : `no Ollama at ${host}`;
      return { provider: builtinEmbedder(), reason: `${why}; using the built-in model` };
    }
    default:
      return { provider: null, reason: `LETTUCE_EMBED_PROVIDER=${choice} is not one of ${EMBED_PROVIDERS.join(", ")}` };
  }
}

async function chooseChat(env: Env): Promise<Selected<ChatProvider>> {
  const choice = (setting(env, "LETTUCE_LLM_PROVIDER") ?? "auto").toLowerCase();
  const model = setting(env, "LETTUCE_LLM_MODEL");
  const base = setting(env, "LETTUCE_LLM_BASE_URL");
  const key = setting(env, "LETTUCE_API_KEY");
  const host = ollamaHost(env.OLLAMA_HOST);
  const unusable = (choice === "openai" || choice === "auto") && badBase("LETTUCE_LLM_BASE_URL", base);
  if (unusable) return { provider: null, reason: unusable };
  const noModel = { provider: null, reason: "No LLM provider configured: set LETTUCE_LLM_BASE_URL and LETTUCE_LLM_MODEL (any OpenAI-compatible endpoint), or run Ollama with a chat model" };
  switch (choice) {
    case "none":
      return { provider: null, reason: "No LLM provider configured (LETTUCE_LLM_PROVIDER=none)" };
    case "openai":
      return { provider: new OpenAIChat(openAiBase(base ?? OPENAI_DEFAULT_BASE), model ?? DEFAULT_OPENAI_CHAT_MODEL, key), reason: "LETTUCE_LLM_PROVIDER=openai" };
    case "ollama":
    case "auto": {
      if (choice === "auto" && base) return { provider: new OpenAIChat(openAiBase(base), model ?? DEFAULT_OPENAI_CHAT_MODEL, key), reason: "LETTUCE_LLM_BASE_URL is set" };
      if (choice === "ollama" && model) return { provider: new OllamaChat(host, model), reason: "LETTUCE_LLM_PROVIDER=ollama" };
      const installed = await probe(host);
      if (!installed) return choice === "ollama" ? { provider: null, reason: `No LLM provider: Ollama does not answer at ${host}` } : noModel;
      const pick = model ? installed.find((m) => sameOllamaModel(m, model)) : installed.find((m) => !EMBEDDING_MODEL.test(m));
      if (!pick) return model ? { provider: null, reason: `No LLM provider: Ollama at ${host} does not have ${model}; run \`ollama pull ${model}\`` } : noModel;
      return { provider: new OllamaChat(host, pick), reason: `Ollama at ${host} has ${pick}` };
    }
    default:
      return { provider: null, reason: `LETTUCE_LLM_PROVIDER=${choice} is not one of ${LLM_PROVIDERS.join(", ")}` };
  }
}

const KEYS = ["LETTUCE_EMBED_PROVIDER", "LETTUCE_EMBED_MODEL", "LETTUCE_EMBED_BASE_URL", "LETTUCE_LLM_PROVIDER", "LETTUCE_LLM_MODEL", "LETTUCE_LLM_BASE_URL", "LETTUCE_API_KEY", "OLLAMA_HOST"];
const embedChoices = new Map<string, Promise<Selected<EmbeddingProvider>>>();
const chatChoices = new Map<string, Promise<Selected<ChatProvider>>>();

function configKey(env: Env): string {
  return KEYS.map((k) => env[k] ?? "").join("\u0000");
}

/** The embedding provider for this configuration (decided once; `auto` probes Ollama for up to 1.5 s). */
export function selectEmbedder(env: Env = process.env): Promise<Selected<EmbeddingProvider>> {
  return once(embedChoices, configKey(env), () => chooseEmbedder(env));
}

/** The chat provider for this configuration, or none (with the reason). */
export function selectChat(env: Env = process.env): Promise<Selected<ChatProvider>> {
  return once(chatChoices, configKey(env), () => chooseChat(env));
}

/** A short human description of a provider, for logs and the CLI. */
export function describeEmbedder(p: EmbeddingProvider): string {
  return p.kind === "builtin" ? `built-in model (${p.model}, ${p.dimension}-d)` : `${p.kind} (${p.model})`;
}
