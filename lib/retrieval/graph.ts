import type { Database } from "bun:sqlite";

export interface LinkGraph {
  center: string;
  depth: number;
  nodes: { path: string; name: string }[];
  edges: { from: string; to: string }[];
  truncated?: boolean;
}

/**
 * Hard bounds on one graph, whatever the caller asks: a hub note of a big
 * vault reaches every note within two hops (obsidian-hub: 6,195 nodes and
 * 25,604 edges, 3 MB of JSON), and the walk is work the server pays for.
 */
export const MAX_GRAPH_NODES = 2000;
export const MAX_GRAPH_EDGES = 10_000;

/**
 * Breadth-first walk over note-to-note links in both directions (outbound
 * wikilinks and inbound backlinks). Attachments are not nodes. `maxNodes`
 * bounds the answer on dense vaults (never above MAX_GRAPH_NODES), and at most
 * MAX_GRAPH_EDGES edges are returned; `truncated` says when either cut it short.
 */
export function linkGraph(db: Database, center: string, depth: number, maxNodes: number): LinkGraph {
  maxNodes = Math.min(maxNodes, MAX_GRAPH_NODES);
  const out = db.query(
    "SELECT DISTINCT l.resolved AS p FROM links l JOIN notes n ON n.id = l.note_id JOIN notes t ON t.path = l.resolved WHERE n.path = ? AND l.resolved != n.path",
  );
  const inbound = db.query(
    "SELECT DISTINCT n.path AS p FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ? AND n.path != l.resolved",
  );
  const name = db.query("SELECT name FROM notes WHERE path = ?");
  const seen = new Set([center]);
  const edges = new Map<string, { from: string; to: string }>();
  let frontier = [center];
  let truncated = false;
  for (let d = 0; d < depth && frontier.length && !truncated; d++) {
    const next: string[] = [];
    // Only edges between kept nodes are answered, so an edge to a node over the cap is never stored.
    const visit = (q: string, edge: { from: string; to: string }) => {
      if (!seen.has(q)) {
        if (seen.size >= maxNodes) {
          truncated = true;
          return;
        }
        seen.add(q);
        next.push(q);
      }
      if (edges.size >= MAX_GRAPH_EDGES) truncated = true;
      else edges.set(`${edge.from}\0${edge.to}`, edge);
    };
    for (const p of frontier) {
      for (const { p: q } of out.all(p) as { p: string }[]) visit(q, { from: p, to: q });
      for (const { p: q } of inbound.all(p) as { p: string }[]) visit(q, { from: q, to: p });
    }
    frontier = next;
  }
  const nodes = [...seen].map((p) => ({ path: p, name: (name.get(p) as { name: string } | null)?.name ?? p }));
  const result: LinkGraph = {
    center,
    depth,
    nodes,
    edges: [...edges.values()].filter((e) => seen.has(e.from) && seen.has(e.to)),
  };
  if (truncated) result.truncated = true;
  return result;
}

export interface VaultGraph {
  nodes: { path: string; title: string; folder: string }[];
  /** Distinct note-to-note links (self-links dropped), as indexes into `nodes`. */
  edges: [number, number][];
}

/** Every note and every resolved note-to-note link: the whole-vault picture of the web UI's graph. */
export function vaultGraph(db: Database): VaultGraph {
  const rows = db.query("SELECT id, path, title, folder FROM notes ORDER BY path").all() as { id: number; path: string; title: string; folder: string }[];
  const index = new Map<string, number>();
  const nodes = rows.map((r, i) => {
    index.set(r.path, i);
    return { path: r.path, title: r.title, folder: r.folder };
  });
  const pairs = db
    .query("SELECT DISTINCT n.path AS src, l.resolved AS dst FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved IS NOT NULL AND l.resolved != n.path")
    .all() as { src: string; dst: string }[];
  const edges: [number, number][] = [];
  for (const p of pairs) {
    const a = index.get(p.src);
    const b = index.get(p.dst);
    if (a !== undefined && b !== undefined) edges.push([a, b]);
  }
  return { nodes, edges };
}
