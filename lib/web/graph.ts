// The web UI's graph page: the pictures come from a read worker
// (lib/render/graph-draw.ts), which keeps them until the index changes.
import { findNote } from "../retrieval/notes";
import { offloaded } from "../offload/offloaded";
import type { VaultContext } from "../vault-context";
import type { DrawGraph } from "./graph-wire";

/**
 * The whole vault (or one folder and below) as nodes to draw. Up to `cap`
 * notes are drawn as themselves (the most linked first); the rest are folded
 * into one cluster node per folder one level under the scope.
 */
export function wholeGraph(vault: VaultContext, opts: { cap?: number; folder?: string } = {}): Promise<DrawGraph> {
  return offloaded.drawGraph(vault, { cap: opts.cap, folder: opts.folder });
}

/** The notes within `depth` links of one note (both directions), laid out around it. */
export function localGraph(vault: VaultContext, path: string, depth: number): Promise<DrawGraph> {
  const center = findNote(vault.indexDb, vault.root, path).path;
  return offloaded.drawGraph(vault, { center, depth });
}
