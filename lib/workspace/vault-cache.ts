// Values derived from the index, kept per open vault until the index changes:
// an index pass in this process (the indexer's change events) or a commit by
// another connection (SQLite's data_version). Each cache is named by a key
// object owned by the module that uses it.
import type { VaultContext } from "../vault-context";

interface Slot {
  seq: number;
  builtSeq: number;
  dataVersion: number;
  values: Map<object, unknown>;
  /** What was cached before the last change, for caches that can reuse parts of it. */
  previous: Map<object, unknown>;
}

const slots = new WeakMap<VaultContext, Slot>();

function slotOf(vault: VaultContext): Slot {
  let s = slots.get(vault);
  if (!s) {
    const slot: Slot = { seq: 0, builtSeq: -1, dataVersion: -1, values: new Map(), previous: new Map() };
    const off = vault.indexer.onChange(() => slot.seq++);
    vault.onClose(off);
    slots.set(vault, slot);
    s = slot;
  }
  const dv = (vault.indexDb.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  if (s.builtSeq !== s.seq || s.dataVersion !== dv) {
    s.previous = s.values;
    s.values = new Map();
    s.builtSeq = s.seq;
    s.dataVersion = dv;
  }
  return s;
}

/** The cached value for `key`, made by `make` when the index changed since (or it was never made). */
export function indexMemo<T>(vault: VaultContext, key: object, make: (previous: T | undefined) => T): T {
  const s = slotOf(vault);
  if (s.values.has(key)) return s.values.get(key) as T;
  const v = make(s.previous.get(key) as T | undefined);
  s.previous.delete(key);
  s.values.set(key, v);
  return v;
}
