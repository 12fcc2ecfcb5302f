// The link graph, drawn with sigma.js (WebGL) from a graphology graph. The
// server sends positions (ForceAtlas2, cached until the vault changes), so
// drawing is all the browser does: thousands of nodes and every link draw in
// a frame. Nodes are sized by their links and coloured by top-level folder;
// a click opens the note (or, for a cluster, that folder's graph).
import Graph from "graphology";
import Sigma from "sigma";
import { EdgeLineProgram } from "sigma/rendering";
import { get } from "../api";
import { append, clear, h, noteUrl } from "../dom";
import type { DrawGraph } from "../../lib/web/graph-wire";
import type { Page, PageContext } from "../types";

const PALETTE = ["#2f9e44", "#1971c2", "#e8590c", "#9c36b5", "#c2255c", "#0c8599", "#f08c00", "#5f3dc4", "#66a80f", "#d6336c", "#1098ad", "#ae3ec9"];

export async function graphPage(ctx: PageContext): Promise<Page> {
  const center = ctx.url.searchParams.get("center");
  const depth = Math.min(3, Math.max(1, Number(ctx.url.searchParams.get("depth") ?? 1) || 1));
  const folder = ctx.url.searchParams.get("folder");
  const box = h("div", { class: "graph-canvas", id: "graph", role: "img", "aria-label": "Link graph" });
  const info = h("p", { class: "muted small", role: "status" }, "Laying out the graph…");
  const legend = h("ul", { class: "legend", "aria-label": "Colours by folder" });
  const controls = h(
    "div",
    { class: "graph-controls" },
    center
      ? [
          h("span", null, "Local graph of "),
          h("a", { href: noteUrl(center) }, center),
          h("label", null, " depth ", h("select", { "aria-label": "Depth", onchange: (e: Event) => ctx.navigate(`/graph?center=${encodeURIComponent(center)}&depth=${(e.target as HTMLSelectElement).value}`) }, [1, 2, 3].map((d) => h("option", { value: d, selected: d === depth }, String(d))))),
          " · ",
          h("a", { href: "/graph" }, "Whole vault"),
        ]
      : folder
        ? [h("span", null, `Folder ${folder} · `), h("a", { href: "/graph" }, "Whole vault")]
        : h("span", null, "Whole vault"),
  );
  clear(ctx.main, h("section", { class: "page graph-page" }, h("div", { class: "graph-head" }, h("h1", null, "Graph"), controls), info, box, legend));

  const t0 = performance.now();
  const g = await get<DrawGraph>("/api/graph", center ? { center, depth } : { folder });
  if (ctx.stale()) return {};
  const tFetched = performance.now();
  const counts = new Map<string, number>();
  for (const n of g.nodes) counts.set(n.group, (counts.get(n.group) ?? 0) + 1);
  const groups = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  const maxSize = Math.max(1, ...g.nodes.map((n) => n.size));
  const style = getComputedStyle(document.documentElement);
  const fg = style.getPropertyValue("--fg").trim() || "#222";
  const line = style.getPropertyValue("--line").trim() || "#ccc";
  const graph = new Graph({ type: "undirected", multi: false });
  g.nodes.forEach((n, i) => {
    const c = groups.indexOf(n.group);
    graph.addNode(`n${i}`, {
      x: n.x,
      y: -n.y, // screen y grows downwards, the layout's upwards
      size: 2 + 10 * Math.sqrt(n.size / maxSize),
      color: c >= 0 && c < PALETTE.length ? PALETTE[c] : "#868e96",
      label: n.label,
      path: n.path,
      folder: n.cluster?.folder ?? null,
      forceLabel: !!n.cluster || n.path === g.center,
    });
  });
  for (const [a, b] of g.edges) if (a !== b && !graph.hasEdge(`n${a}`, `n${b}`)) graph.addEdge(`n${a}`, `n${b}`, { size: 0.5, color: line });
  // Text, legend and list go in before sigma measures its container, so that the first frame is drawn once at its final size.
  const clustered = g.total - g.shown;
  info.textContent =
    `${g.shown} notes, ${g.edges.length} links` +
    (clustered > 0 ? ` · ${clustered} less-linked notes folded into ${g.nodes.length - g.shown} folder clusters (click one to open it)` : "") +
    (g.truncated ? " · cut at the node limit" : "") +
    " · scroll to zoom, drag to pan, click a node to open it";
  clear(
    legend,
    groups.slice(0, PALETTE.length).map((gr) => h("li", null, h("span", { class: `swatch c${groups.indexOf(gr)}` }), gr || "(vault root)", h("span", { class: "muted small" }, ` ${counts.get(gr)}`))),
  );
  // Keyboard: the graph's notes are also reachable as a list, built when it is opened (500 links
  // made up front cost the first frame more than the graph's own nodes did).
  const items = h("ul", { class: "plain-list" });
  const list = h(
    "details",
    {
      class: "graph-list",
      ontoggle: () => {
        if (items.childElementCount === 0) {
          append(items, g.nodes.slice(0, 500).map((n) => (n.path ? h("li", null, h("a", { href: noteUrl(n.path) }, n.label)) : h("li", null, h("a", { href: `/graph?folder=${encodeURIComponent(n.cluster!.folder)}` }, n.label)))));
        }
      },
    },
    h("summary", null, "Notes in this graph as a list"),
    items,
  );
  box.after(list);
  const tBuilt = performance.now();
  let renderer: Sigma | null = null;
  try {
    renderer = new Sigma(graph, box, {
      labelColor: { color: fg },
      labelSize: 12,
      labelRenderedSizeThreshold: g.nodes.length > 300 ? 7 : 4,
      defaultEdgeColor: line,
      // One-pixel GL lines instead of sigma's default thick-line rectangles: much less to fill per frame.
      edgeProgramClasses: { line: EdgeLineProgram },
      stagePadding: 40,
      zIndex: true,
    });
  } catch (e) {
    // No WebGL in this browser: the list below still lists every note.
    clear(box, h("p", { class: "warn" }, `The graph needs WebGL, which this browser does not offer (${(e as Error).message}). The notes are listed below.`));
  }
  if (renderer) {
    const r = renderer;
    r.on("clickNode", ({ node }) => {
      const a = graph.getNodeAttributes(node);
      if (a.path) ctx.navigate(noteUrl(a.path as string));
      else if (a.folder !== null) ctx.navigate(`/graph?folder=${encodeURIComponent(a.folder as string)}`);
    });
    r.on("enterNode", () => box.classList.add("pointing"));
    r.on("leaveNode", () => box.classList.remove("pointing"));
    // Drawn once sigma has rendered a frame: from here it pans, zooms and takes clicks.
    r.once("afterRender", () => {
      box.dataset.nodeCount = String(graph.order);
      box.dataset.edgeCount = String(graph.size);
      box.dataset.fetchMs = String(Math.round(tFetched - t0));
      box.dataset.buildMs = String(Math.round(tBuilt - tFetched));
      box.dataset.readyMs = String(Math.round(performance.now() - t0));
      box.dataset.startAt = String(Math.round(t0));
      box.dataset.ready = "1";
    });
    r.refresh();
  }
  return {
    dispose() {
      renderer?.kill();
    },
  };
}
