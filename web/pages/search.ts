// Search as you type: keyword (BM25) always, hybrid when the server has an embeddings provider.
import { get } from "../api";
import { clear, debounce, h, noteUrl } from "../dom";
import type { Page, PageContext } from "../types";

interface Hit {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

/**
 * A snippet as a person reads it: the server's is the note's Markdown (what an agent wants); here links show
 * their text, and emphasis, code ticks, HTML tags and heading marks go.
 */
export function readable(md: string): string {
  return md
    // [[Note|alias]] → alias, [[Folder/Note#Part]] → Note, ![[img.png|300]] → img.png (a size is not a name).
    .replace(/!?\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]/g, (_, target: string, part?: string, alias?: string) =>
      (alias && !/^\d+(x\d+)?$/.test(alias.trim()) ? alias : target.split("/").pop() || part || "").trim(),
    )
    // A snippet cut inside a link keeps half of it.
    .replace(/\[\[|\]\]/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]{0,200}>/g, "")
    .replace(/(^|\s)#{1,6}\s+/g, "$1")
    .replace(/(\*\*|__|==|~~|`)/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** The query's words marked in a snippet (<mark>), as text nodes: nothing in a note becomes markup. */
function marked(text: string, query: string): (string | HTMLElement)[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])].filter((w) => !["or", "and", "not"].includes(w));
  if (!words.length) return [text];
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`(${escaped.join("|")})[\\p{L}\\p{N}]*`, "giu");
  const out: (string | HTMLElement)[] = [];
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index! > at) out.push(text.slice(at, m.index));
    out.push(h("mark", null, m[0]));
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

export async function searchPage(ctx: PageContext): Promise<Page> {
  const q0 = ctx.url.searchParams.get("q") ?? "";
  let mode = ctx.url.searchParams.get("mode") === "hybrid" && ctx.session.hybrid ? "hybrid" : "keyword";
  const input = h("input", { type: "search", class: "big-search", value: q0, placeholder: "Words, \"a phrase\", -exclude, OR", "aria-label": "Search query", autocomplete: "off" });
  const status = h("p", { class: "muted small", role: "status" });
  const results = h("ol", { class: "results" });
  const more = h("div");
  let ctl: AbortController | null = null;

  const run = async (q: string, offset = 0) => {
    ctl?.abort();
    ctl = new AbortController();
    if (!q.trim()) {
      clear(results);
      clear(more);
      status.textContent = "Type to search.";
      return;
    }
    const t0 = performance.now();
    let r: { items: Hit[]; total: number; mode: string; fallback?: { reason: string } };
    try {
      r = await get("/api/search", { q, mode, offset, limit: 20 }, ctl.signal);
    } catch (e) {
      if ((e as Error).name === "AbortError") return;
      status.textContent = (e as Error).message;
      return;
    }
    if (ctx.stale()) return;
    const ms = Math.round(performance.now() - t0);
    status.textContent = `${r.total} notes · ${r.mode}${r.fallback ? ` (hybrid unavailable: ${r.fallback.reason})` : ""} · ${ms} ms`;
    if (offset === 0) clear(results);
    results.append(
      ...r.items.map((hit) =>
        h("li", null, h("a", { href: noteUrl(hit.path), class: "result-title" }, hit.title || hit.path), h("div", { class: "muted small" }, hit.path), h("p", { class: "snippet" }, ...marked(readable(hit.snippet), q))),
      ),
    );
    const next = offset + r.items.length;
    clear(more, next < r.total ? h("button", { class: "more", onclick: () => void run(q, next) }, `More (${r.total - next} left)`) : null);
  };

  const go = () => {
    const url = new URL(location.href);
    url.searchParams.set("q", input.value);
    history.replaceState(null, "", url);
    void run(input.value);
  };
  // A keyword search costs the server a few ms and a newer keystroke aborts the older request, so it
  // waits only for a typing pause; a hybrid one embeds the query, so it waits for a longer pause.
  const keywordUpdate = debounce(go, 50);
  const hybridUpdate = debounce(go, 200);
  input.addEventListener("input", () => (mode === "hybrid" ? hybridUpdate() : keywordUpdate()));

  const modes = ctx.session.hybrid
    ? h(
        "div",
        { class: "modes", role: "radiogroup", "aria-label": "Search mode" },
        ["keyword", "hybrid"].map((m) =>
          h(
            "label",
            null,
            h("input", {
              type: "radio",
              name: "mode",
              value: m,
              checked: m === mode,
              onchange: () => {
                mode = m;
                const url = new URL(location.href);
                url.searchParams.set("mode", m);
                history.replaceState(null, "", url);
                void run(input.value);
              },
            }),
            m === "keyword" ? " Keyword" : " Hybrid (keyword + meaning)",
          ),
        ),
      )
    : h("p", { class: "muted small" }, "Keyword search (no embeddings provider for hybrid search).");

  clear(ctx.main, h("section", { class: "page search-page" }, h("h1", null, "Search"), input, modes, status, results, more));
  const global = document.getElementById("global-search") as HTMLInputElement | null;
  // Typing started in the header: carry on there; otherwise type here.
  if (global && document.activeElement === global) global.value = q0;
  else input.focus();
  await run(q0);
  return {
    dispose() {
      ctl?.abort();
    },
  };
}
