// The link graph, drawn with cytoscape.js on a canvas. The server sends
// positions (ForceAtlas2, cached until the vault changes), so drawing is all
// the browser does. Nodes are sized by their links and coloured by top-level
// folder; a click opens the note (or, for a cluster, that folder's graph).
import cytoscape from "cytoscape";
import { get } from "../api";
import { clear, h, noteUrl } from "../dom";
import type { Page, PageContext } from "../types";

interface DrawNode {
  id: string;
  label: string;
  path: string | null;
  group: string;
  size: number;
  x: number;
  y: number;
  cluster?: { folder: string; notes: number };
}

interface DrawGraph {
  nodes: DrawNode[];
  edges: [number, number][];
  total: number;
  shown: number;
  center?: string;
  depth?: number;
  truncated?: boolean;
}

const PALETTE = ["#2f9e44", "#1971c2", "#e8590c", "#9c36b5", "#c2255c", "#0c8599", "#f08c00", "#5f3dc4", "#66a80f", "#d6336c", "#1098ad", "#ae3ec9"];

function colourOf(group: string, groups: string[]): string {
  const i = groups.indexOf(group);
  return i >= 0 && i < PALETTE.length ? PALETTE[i]! : "#868e96";
}

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
  const counts = new Map<string, number>();
  for (const n of g.nodes) counts.set(n.group, (counts.get(n.group) ?? 0) + 1);
  const groups = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  const maxSize = Math.max(1, ...g.nodes.map((n) => n.size));
  const big = g.nodes.length > 800;
  const dark = getComputedStyle(document.documentElement).getPropertyValue("--fg").trim() || "#222";
  // cytoscape adds a <style> element for its container unless one with this id
  // exists; the CSP would block it (style-src 'self'), and style.css has the rule.
  if (!document.getElementById("__________cytoscape_stylesheet")) document.head.appendChild(h("meta", { id: "__________cytoscape_stylesheet" }));
  const cy = cytoscape({
    container: box,
    elements: [
      ...g.nodes.map((n, i) => ({
        group: "nodes" as const,
        data: { id: `n${i}`, label: n.label, path: n.path, folder: n.cluster?.folder ?? null, w: 4 + 22 * Math.sqrt(n.size / maxSize), colour: colourOf(n.group, groups), center: n.path === g.center ? 1 : 0 },
        position: { x: n.x, y: n.y },
        classes: n.cluster ? "cluster" : "",
      })),
      ...g.edges.map(([a, b], i) => ({ group: "edges" as const, data: { id: `e${i}`, source: `n${a}`, target: `n${b}` } })),
    ],
    layout: { name: "preset", fit: true, padding: 20 },
    style: [
      {
        selector: "node",
        style: {
          width: "data(w)",
          height: "data(w)",
          "background-color": "data(colour)",
          label: "data(label)",
          "font-size": 10,
          color: dark,
          "min-zoomed-font-size": big ? 14 : 8,
          "text-valign": "bottom",
          "text-margin-y": 2,
        },
      },
      { selector: "node.cluster", style: { shape: "round-rectangle", "border-width": 2, "border-color": dark, "background-opacity": 0.6 } },
      { selector: "node[center = 1]", style: { "border-width": 3, "border-color": dark } },
      { selector: "edge", style: { width: 0.6, "line-color": "#adb5bd", opacity: 0.5, "curve-style": "haystack" } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#f03e3e" } },
    ],
    minZoom: 0.02,
    maxZoom: 8,
    textureOnViewport: big,
    hideEdgesOnViewport: big,
    pixelRatio: 1,
  });
  cy.on("tap", "node", (e) => {
    const d = e.target.data();
    if (d.path) ctx.navigate(noteUrl(d.path));
    else if (d.folder !== null) ctx.navigate(`/graph?folder=${encodeURIComponent(d.folder)}`);
  });
  cy.ready(() => {
    box.dataset.nodeCount = String(cy.nodes().length);
    box.dataset.edgeCount = String(cy.edges().length);
    box.dataset.ready = "1";
    box.dataset.readyMs = String(Math.round(performance.now() - t0));
  });
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
  // Keyboard: the graph's notes are also reachable as a list.
  const list = h(
    "details",
    { class: "graph-list" },
    h("summary", null, "Notes in this graph as a list"),
    h("ul", { class: "plain-list" }, g.nodes.slice(0, 500).map((n) => (n.path ? h("li", null, h("a", { href: noteUrl(n.path) }, n.label)) : h("li", null, h("a", { href: `/graph?folder=${encodeURIComponent(n.cluster!.folder)}` }, n.label))))),
  );
  box.after(list);
  return {
    dispose() {
      cy.destroy();
    },
  };
}
