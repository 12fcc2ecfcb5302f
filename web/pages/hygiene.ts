// Wiki health: the score and its components, the score over time (one point
// a day, recorded by the server), and lint findings grouped by rule.
import { get } from "../api";
import { append, clear, h, noteUrl, svg } from "../dom";
import type { Page, PageContext } from "../types";

interface Finding {
  rule: string;
  severity: string;
  path: string;
  message: string;
  suggestion: string;
  line?: number;
}

interface HygieneAnswer {
  health: { score: number; noteCount: number; linkHealth: number; lintCleanliness: number; tagCoverage: number; orphans: number; lintWarnings: number };
  history: { day: string; score: number }[];
  rules: { rule: string; severity: string; count: number; items: Finding[] }[];
}

function chart(points: { day: string; score: number }[]): Element {
  const W = 480;
  const H = 120;
  const pad = 24;
  if (points.length === 0) return h("p", { class: "muted" }, "No history yet.");
  const x = (i: number) => pad + (points.length === 1 ? (W - 2 * pad) / 2 : (i * (W - 2 * pad)) / (points.length - 1));
  const y = (s: number) => H - pad - (s / 100) * (H - 2 * pad);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.score).toFixed(1)}`).join(" ");
  const el = svg(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": `Health score over ${points.length} days, latest ${points[points.length - 1]!.score}` },
    svg("line", { x1: pad, y1: y(0), x2: W - pad, y2: y(0), class: "axis" }),
    svg("line", { x1: pad, y1: y(100), x2: W - pad, y2: y(100), class: "grid" }),
    svg("text", { x: 2, y: y(100) + 4, class: "tick" }, "100"),
    svg("text", { x: 8, y: y(0) + 4, class: "tick" }, "0"),
    svg("path", { d, class: "line" }),
    ...points.map((p, i) => svg("circle", { cx: x(i), cy: y(p.score), r: 3, class: "dot" }, svg("title", {}, `${p.day}: ${p.score}`))),
    svg("text", { x: pad, y: H - 4, class: "tick" }, points[0]!.day),
    svg("text", { x: W - pad, y: H - 4, class: "tick end" }, points[points.length - 1]!.day),
  );
  return el;
}

function findingItem(f: Finding): HTMLElement {
  return h(
    "li",
    null,
    h("a", { href: noteUrl(f.path) }, f.path),
    f.line ? h("span", { class: "muted small" }, ` line ${f.line}`) : null,
    ": ",
    f.message,
    f.suggestion ? h("div", { class: "muted small" }, f.suggestion) : null,
  );
}

export async function hygienePage(ctx: PageContext): Promise<Page> {
  const box = h("section", { class: "page hygiene" });
  clear(ctx.main, box);
  const draw = async () => {
    const r = await get<HygieneAnswer>("/api/hygiene");
    if (ctx.stale()) return;
    const pct = (x: number) => `${Math.round(x * 100)} %`;
    clear(
      box,
      h("h1", null, "Health"),
      h(
        "div",
        { class: "health-top" },
        h("div", { class: "score", "aria-label": `Health score ${r.health.score} of 100` }, h("span", { class: "big" }, String(r.health.score)), h("span", { class: "muted" }, " / 100")),
        h(
          "table",
          { class: "components" },
          h(
            "tbody",
            null,
            h("tr", null, h("th", { scope: "row" }, "Link health"), h("td", null, pct(r.health.linkHealth)), h("td", { class: "muted small" }, `${r.health.orphans} orphan${r.health.orphans === 1 ? "" : "s"} of ${r.health.noteCount} notes`)),
            h("tr", null, h("th", { scope: "row" }, "Lint cleanliness"), h("td", null, pct(r.health.lintCleanliness)), h("td", { class: "muted small" }, `${r.health.lintWarnings} warnings`)),
            h("tr", null, h("th", { scope: "row" }, "Tag coverage"), h("td", null, pct(r.health.tagCoverage)), h("td", { class: "muted small" }, "notes with a tag")),
          ),
        ),
        h("figure", null, chart(r.history), h("figcaption", { class: "muted small" }, "Score by day")),
      ),
      h("h2", null, "Lint findings by rule"),
      r.rules.length ? null : h("p", { class: "muted" }, "No findings."),
      r.rules.map((g) => {
        const list = h("ul", { class: "findings" }, g.items.map(findingItem));
        const more = h("div");
        let shown = g.items.length;
        const showMore = async () => {
          const p = await get<{ items: Finding[]; total: number }>("/api/lint", { rule: g.rule, offset: shown, limit: 100 });
          append(list, p.items.map(findingItem));
          shown += p.items.length;
          clear(more, shown < p.total ? h("button", { class: "more", onclick: () => void showMore() }, `${p.total - shown} more`) : null);
        };
        if (shown < g.count) append(more, [h("button", { class: "more", onclick: () => void showMore() }, `${g.count - shown} more`)]);
        return h("details", { class: `rule ${g.severity}`, open: g.severity !== "info" }, h("summary", null, h("code", null, g.rule), ` ${g.count} `, h("span", { class: `pill ${g.severity}` }, g.severity)), list, more);
      }),
    );
  };
  await draw();
  return {};
}
