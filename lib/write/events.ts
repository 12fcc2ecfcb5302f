// Other parts of Lettuce react to committed writes without the write path
// importing them: the directive lease table (released by complete_directive),
// live views, the audit trail. Listeners run after the index reflects the write.
import type { VaultContext } from "../vault-context";

export interface WriteEvent {
  vault: VaultContext;
  tool: string;
  editId: number;
  /** Every vault path that appeared, changed or vanished. */
  touched: string[];
  /** The note the call was about (null for a delete) and the tool's result fields. */
  path: string | null;
  result: Record<string, unknown>;
  agent: string;
  token: string;
  proposalId: number | null;
}

const listeners = new Set<(e: WriteEvent) => void>();

/** Subscribe to committed writes (every vault in this process); returns the unsubscribe function. */
export function onWrite(fn: (e: WriteEvent) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function emitWrite(e: WriteEvent): void {
  for (const fn of listeners) {
    try {
      fn(e);
    } catch (err) {
      console.error("lettuce: write listener failed:", err);
    }
  }
}
