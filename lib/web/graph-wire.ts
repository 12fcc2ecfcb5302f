// What GET /api/graph answers: shared by the server (lib/web/graph.ts) and the
// page that draws it (web/pages/graph.ts); no imports, so the browser bundle can use it.

export interface DrawNode {
  label: string;
  /** The note's path; null for a cluster. */
  path: string | null;
  /** Top-level folder ("" at the root): the colour. */
  group: string;
  /** Links in and out (a cluster: the notes folded into it). */
  size: number;
  x: number;
  y: number;
  /** A cluster: its folder and how many notes it holds. */
  cluster?: { folder: string; notes: number };
}

export interface DrawGraph {
  nodes: DrawNode[];
  edges: [number, number][];
  /** Notes in scope (the vault, or the folder asked for). */
  total: number;
  /** Notes drawn as themselves; the rest are in clusters. */
  shown: number;
  center?: string;
  depth?: number;
  truncated?: boolean;
}
