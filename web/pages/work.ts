// Work waiting for agents: pending [!ai] directives (and who holds a lease
// on each), @mentions, the log.md ledger, and sources nothing compiles yet.
import { get } from "../api";
import { clear, h, noteUrl, when } from "../dom";
import type { Page, PageContext } from "../types";

interface WorkAnswer {
  directives: { items: { path: string; line: number; title: string; body: string; lease: { worker: string; expiresAt: string } | null }[]; total: number };
  mentions: { items: { path: string; handle: string; line: number; context: string }[] };
  log: { items: { date: string; op: string; title: string; line: number }[]; total: number };
  uncompiledSources: { items: string[]; total: number };
}

const shownOf = (n: number, total: number) => (total > n ? ` (showing ${n} of ${total})` : ` (${total})`);

export async function workPage(ctx: PageContext): Promise<Page> {
  const box = h("section", { class: "page work" });
  clear(ctx.main, box);
  const draw = async () => {
    const w = await get<WorkAnswer>("/api/work");
    if (ctx.stale()) return;
    clear(
      box,
      h("h1", null, "Work"),
      h("h2", null, `Pending directives${shownOf(w.directives.items.length, w.directives.total)}`),
      w.directives.items.length
        ? h(
            "ul",
            { class: "cards", id: "directives" },
            w.directives.items.map((d) =>
              h(
                "li",
                { class: "card" },
                h("div", null, h("a", { href: noteUrl(d.path) }, d.path), h("span", { class: "muted small" }, ` line ${d.line}`)),
                h("strong", null, d.title || "(no title)"),
                d.body ? h("p", { class: "muted" }, d.body) : null,
                d.lease ? h("p", { class: "pill leased" }, `leased to ${d.lease.worker} until ${when(d.lease.expiresAt)}`) : h("p", { class: "pill" }, "waiting for an agent"),
              ),
            ),
          )
        : h("p", { class: "muted" }, "No pending > [!ai] directives."),
      h("h2", null, `@mentions (${w.mentions.items.length})`),
      w.mentions.items.length
        ? h("ul", { class: "plain-list" }, w.mentions.items.map((m) => h("li", null, h("strong", null, `@${m.handle}`), " in ", h("a", { href: noteUrl(m.path) }, m.path), h("span", { class: "muted small" }, ` line ${m.line}: `), m.context)))
        : h("p", { class: "muted" }, "No mentions."),
      h("h2", null, `Recent log.md activity${shownOf(w.log.items.length, w.log.total)}`),
      w.log.items.length
        ? h("ul", { class: "plain-list" }, w.log.items.map((e) => h("li", null, h("span", { class: "muted" }, e.date), " ", h("code", null, e.op), " ", e.title)))
        : h("p", { class: "muted" }, "No log.md entries (## [YYYY-MM-DD] op | Title)."),
      h("h2", null, `Uncompiled sources${shownOf(w.uncompiledSources.items.length, w.uncompiledSources.total)}`),
      w.uncompiledSources.items.length ? h("ul", { class: "plain-list" }, w.uncompiledSources.items.map((p) => h("li", null, h("a", { href: noteUrl(p) }, p)))) : h("p", { class: "muted" }, "Every source is linked from a page."),
    );
  };
  await draw();
  return {
    onEvent(e) {
      if (e.kind === "index") void draw();
    },
  };
}
