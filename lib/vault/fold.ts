// Text folded the way the full-text index's tokenizer (unicode61,
// remove_diacritics 2) compares it. Lives at the bottom layer because the
// indexer stores folded name keys (lib/index/note-rows.ts) that search
// (lib/retrieval/search.ts) looks up with the same function.

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
/** Whether `s` is all ASCII: the fast path of every fold (most text, most of the time). */
export const isAscii = (s: string): boolean => ASCII.test(s);

/** Lower case, diacritics removed. ASCII takes the fast path. */
export function foldText(s: string): string {
  if (isAscii(s)) return s.toLowerCase();
  return s.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

/** Words of a name or query for comparison: folded, punctuation as single spaces ("Zettelkasten (draft)" → "zettelkasten draft"). */
export function nameKey(s: string): string {
  return (foldText(s).match(/[\p{L}\p{N}]+/gu) ?? []).join(" ");
}

/**
 * Fold for substring matching in JS: Unicode-decompose, drop combining marks, lowercase, and map Turkish
 * ı to i (İ decomposes to I + a dot and folds to i on its own), which unicode61 leaves alone.
 * "Çözüm" → "cozum", "İstanbul" → "istanbul", "Işık" → "isik".
 */
export function foldMatch(s: string): string {
  return s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().replace(/ı/g, "i");
}
