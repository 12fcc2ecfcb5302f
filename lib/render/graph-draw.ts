// The link graph as a picture: which nodes to draw and where, for the web UI's
// graph page (lib/web/graph.ts asks for it). The layout is computed here
// (ForceAtlas2 from graphology, Barnes-Hut above a few hundred nodes), so the
// page only draws: a browser laying out thousands of nodes itself would take
// seconds. Past `cap` notes the least-linked ones are folded into one node per
// folder. It reads the whole vault's graph (~0.2 s at 100k notes) and lays out
// up to thousands of nodes, so it runs in a read worker (lib/offload), which
// keeps the graph and each picture until the index changes.
import type { Database } from "bun:sqlite";
import type Graph from "graphology";
import type forceAtlas2 from "graphology-layout-forceatlas2";
import { linkGraph, vaultGraph, type VaultGraph } from "../retrieval/graph";
import { getMeta } from "../store/index-db";
import type { DrawGraph, DrawNode } from "../web/graph-wire";

export const DEFAULT_GRAPH_CAP = 2000;
export const MAX_GRAPH_CAP = 5000;
export const LOCAL_GRAPH_MAX_NODES = 600;
const KEPT_PICTURES = 16;

/** What the web UI asks for: the whole vault (or a folder), capped; or the notes around one note. */
export type GraphAsk = { cap?: number; folder?: string } | { center: string; depth: number };

const topFolder = (folder: string) => folder.split("/")[0] ?? "";

interface Drawn {
  gen: string | null;
  graph: VaultGraph;
  degree: Map<string, number>;
  pictures: Map<string, DrawGraph>;
}

// One copy of the whole graph per connection, until the index's generation moves.
const kept = new WeakMap<Database, Drawn>();

function drawn(db: Database): Drawn {
  const gen = getMeta(db, "gen");
  let c = kept.get(db);
  if (!c || c.gen !== gen) {
    const graph = vaultGraph(db);
    const degree = new Map<string, number>();
    for (const [a, b] of graph.edges) {
      const pa = graph.nodes[a]!.path;
      const pb = graph.nodes[b]!.path;
      degree.set(pa, (degree.get(pa) ?? 0) + 1);
      degree.set(pb, (degree.get(pb) ?? 0) + 1);
    }
    c = { gen, graph, degree, pictures: new Map() };
    kept.set(db, c);
  }
  return c;
}

/** The picture asked for; `center` must be a note's path (the caller found it). */
export function drawGraph(db: Database, ask: GraphAsk): DrawGraph {
  const c = drawn(db);
  if ("center" in ask) return drawLocal(db, c, ask.center, ask.depth);
  const cap = Math.min(MAX_GRAPH_CAP, Math.max(10, ask.cap ?? DEFAULT_GRAPH_CAP));
  const folder = ask.folder ?? "";
  const key = `${cap}\0${folder}`;
  let picture = c.pictures.get(key);
  if (!picture) {
    picture = drawWhole(c, cap, folder);
    // A few kept (the whole vault, the folders a person opens): any folder name makes a new one.
    if (c.pictures.size >= KEPT_PICTURES) c.pictures.delete(c.pictures.keys().next().value!);
    c.pictures.set(key, picture);
  }
  return picture;
}

const SLICE = 4;

/** Place nodes: seeded on a circle per group (so one folder starts together), then ForceAtlas2. */
function layout(nodes: DrawNode[], edges: [number, number][]): void {
  // Loaded on first use: only the web UI's graph page lays nodes out.
  const GraphClass = require("graphology") as typeof Graph;
  const fa2 = require("graphology-layout-forceatlas2") as typeof forceAtlas2;
  const g = new GraphClass({ type: "undirected", multi: false });
  const groups = [...new Set(nodes.map((n) => n.group))].sort();
  const angleOf = new Map(groups.map((gname, i) => [gname, (2 * Math.PI * i) / Math.max(1, groups.length)]));
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  nodes.forEach((n, i) => {
    const a = angleOf.get(n.group)!;
    const r = 100 + rand() * 60;
    g.addNode(String(i), { x: Math.cos(a) * r + (rand() - 0.5) * 60, y: Math.sin(a) * r + (rand() - 0.5) * 60, size: n.size });
  });
  for (const [a, b] of edges) if (a !== b && !g.hasEdge(String(a), String(b))) g.addEdge(String(a), String(b));
  if (nodes.length > 1) {
    const big = nodes.length > 400;
    const settings = { ...fa2.inferSettings(g), barnesHutOptimize: big, scalingRatio: 10, gravity: 1 };
    const total = nodes.length > 1500 ? 40 : nodes.length > 400 ? 80 : 200;
    // Four iterations a call, as when this ran in slices on the event loop: the same picture as then.
    for (let done = 0; done < total; done += SLICE) fa2.assign(g, { iterations: SLICE, settings });
  }
  // ForceAtlas2's scale depends on the graph; the page draws nodes 4–26 units wide,
  // so spread the picture to about 70 units per √node whatever the layout chose.
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  g.forEachNode((_k, a) => {
    minX = Math.min(minX, a.x); maxX = Math.max(maxX, a.x);
    minY = Math.min(minY, a.y); maxY = Math.max(maxY, a.y);
  });
  const span = Math.max(maxX - minX, maxY - minY) || 1;
  const scale = Math.max(300, 70 * Math.sqrt(nodes.length)) / span;
  nodes.forEach((n, i) => {
    const a = g.getNodeAttributes(String(i));
    n.x = Math.round((a.x - minX) * scale);
    n.y = Math.round((a.y - minY) * scale);
  });
}

/**
 * The whole vault (or one folder and below) as nodes to draw. Up to `cap`
 * notes are drawn as themselves (the most linked first); the rest are folded
 * into one cluster node per folder one level under the scope.
 */
function drawWhole(c: Drawn, cap: number, folder: string): DrawGraph {

  const { graph, degree } = c;
  const inScope = (f: string) => !folder || f === folder || f.startsWith(folder + "/");
  const scoped = graph.nodes.map((n, i) => ({ n, i })).filter(({ n }) => inScope(n.folder));
  const ranked = [...scoped].sort((a, b) => (degree.get(b.n.path) ?? 0) - (degree.get(a.n.path) ?? 0) || a.n.path.localeCompare(b.n.path));
  const kept = ranked.slice(0, cap);
  const folded = ranked.slice(cap);
  // A cluster is the folder one level below the scope ("" = the scope's own notes).
  const clusterOf = (f: string) => {
    const rest = folder ? f.slice(folder.length + 1) : f;
    const first = rest.split("/")[0] ?? "";
    return folder ? (first ? `${folder}/${first}` : folder) : first;
  };

  const nodes: DrawNode[] = [];
  const at = new Map<number, number>(); // vault-graph index -> drawn index
  for (const { n, i } of kept) {
    at.set(i, nodes.length);
    nodes.push({ label: n.title || n.path, path: n.path, group: topFolder(n.folder), size: degree.get(n.path) ?? 0, x: 0, y: 0 });
  }
  const clusters = new Map<string, number>();
  for (const { n, i } of folded) {
    const cf = clusterOf(n.folder);
    let ci = clusters.get(cf);
    if (ci === undefined) {
      ci = nodes.length;
      clusters.set(cf, ci);
      nodes.push({ label: `${cf || "(vault root)"} …`, path: null, group: topFolder(cf), size: 0, x: 0, y: 0, cluster: { folder: cf, notes: 0 } });
    }
    const cn = nodes[ci]!;
    cn.cluster!.notes++;
    cn.size++;
    at.set(i, ci);
  }
  for (const cn of clusters.values()) nodes[cn]!.label = `${nodes[cn]!.cluster!.folder || "(vault root)"} (+${nodes[cn]!.cluster!.notes} notes)`;

  const seen = new Set<string>();
  const edges: [number, number][] = [];
  for (const [a, b] of graph.edges) {
    const x = at.get(a);
    const y = at.get(b);
    if (x === undefined || y === undefined || x === y) continue;
    const k = x < y ? `${x},${y}` : `${y},${x}`;
    if (seen.has(k)) continue;
    seen.add(k);
    edges.push([x, y]);
  }
  layout(nodes, edges);
  return { nodes, edges, total: scoped.length, shown: kept.length };
}


/** The notes within `depth` links of one note (both directions), laid out around it. */
function drawLocal(db: Database, c: Drawn, center: string, depth: number): DrawGraph {
  const d = Math.min(3, Math.max(1, Math.floor(depth)));
  const lg = linkGraph(db, center, d, LOCAL_GRAPH_MAX_NODES);
  const { degree, graph } = c;
  const titleOf = new Map(graph.nodes.map((n) => [n.path, n.title]));
  const index = new Map(lg.nodes.map((n, i) => [n.path, i]));
  const nodes: DrawNode[] = lg.nodes.map((n) => ({
    label: titleOf.get(n.path) || n.name,
    path: n.path,
    group: topFolder(n.path.includes("/") ? n.path.slice(0, n.path.lastIndexOf("/")) : ""),
    size: degree.get(n.path) ?? 0,
    x: 0,
    y: 0,
  }));
  const edges = lg.edges.map((e) => [index.get(e.from)!, index.get(e.to)!] as [number, number]);
  layout(nodes, edges);
  return { nodes, edges, total: nodes.length, shown: nodes.length, center, depth: d, ...(lg.truncated ? { truncated: true } : {}) };
}
