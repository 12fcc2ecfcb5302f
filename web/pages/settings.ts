// A read-only view of how this server is set up: vault settings (changed with
// `lettuce config`), the providers the environment selected, the index.
import { get } from "../api";
import { clear, h, when } from "../dom";
import type { Page, PageContext } from "../types";

interface SettingsAnswer {
  root: string;
  version: string;
  immutablePaths: string[];
  contextMode: string;
  providers: { embeddings: { name: string | null; reason: string }; llm: { name: string | null; reason: string } };
  vectorSearch: string | null;
  index: { state: string; done: number; total: number; indexedAt: string | null };
  env: Record<string, string | null>;
}

export async function settingsPage(ctx: PageContext): Promise<Page> {
  const s = await get<SettingsAnswer>("/api/settings");
  if (ctx.stale()) return {};
  const row = (k: string, ...v: (Node | string)[]) => [h("dt", null, k), h("dd", null, ...v)];
  clear(
    ctx.main,
    h(
      "section",
      { class: "page settings" },
      h("h1", null, "Settings"),
      h("p", { class: "muted" }, "Read-only. Vault settings change with ", h("code", null, "lettuce config <vault> KEY VALUE"), "; providers with environment variables (see the README)."),
      h("h2", null, "Vault"),
      h(
        "dl",
        { class: "facts" },
        row("Folder", h("code", null, s.root)),
        row("Immutable paths", s.immutablePaths.length ? s.immutablePaths.join(", ") : "none"),
        row("Context mode", s.contextMode),
        row("Index", `${s.index.state}${s.index.state !== "ready" ? ` (${s.index.done}/${s.index.total})` : ""}, last current ${when(s.index.indexedAt)}`),
        row("Lettuce", s.version),
      ),
      h("h2", null, "Providers in use"),
      h(
        "dl",
        { class: "facts" },
        row("Embeddings", s.providers.embeddings.name ?? "none", h("div", { class: "muted small" }, s.providers.embeddings.reason)),
        row("LLM", s.providers.llm.name ?? "none", h("div", { class: "muted small" }, s.providers.llm.reason)),
        row("Vector storage", s.vectorSearch ? `sqlite-vec ${s.vectorSearch}` : "plain tables (sqlite-vec not loaded; vector search works)"),
      ),
      h("h2", null, "Environment"),
      h("dl", { class: "facts" }, Object.entries(s.env).flatMap(([k, v]) => row(k, v === null ? h("span", { class: "muted" }, "not set") : h("code", null, v)))),
    ),
  );
  return {};
}
