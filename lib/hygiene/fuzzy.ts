// "Did you mean" support for lint: a bounded edit distance, and a trigram
// index that narrows thousands of names down to a few worth measuring.

/** Levenshtein distance between a and b, or max + 1 as soon as it must exceed max. */
export function boundedDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a.length > b.length) [a, b] = [b, a];
  let prev = new Array<number>(a.length + 1);
  let cur = new Array<number>(a.length + 1);
  for (let i = 0; i <= a.length; i++) prev[i] = i;
  for (let j = 1; j <= b.length; j++) {
    cur[0] = j;
    let rowMin = j;
    const cb = b.charCodeAt(j - 1);
    for (let i = 1; i <= a.length; i++) {
      const cost = a.charCodeAt(i - 1) === cb ? 0 : 1;
      const v = Math.min(prev[i]! + 1, cur[i - 1]! + 1, prev[i - 1]! + cost);
      cur[i] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[a.length]!;
}

/** How far apart two names may be and still count as "the same name, mistyped". */
export function typoBudget(len: number): number {
  if (len < 4) return 0;
  if (len < 8) return 1;
  if (len < 16) return 2;
  return Math.floor(len / 6);
}

/**
 * The distinct trigrams of a padded key, each as one exact number (three UTF-16 units, 16 bits each).
 * Told apart by a Set: `out.includes` was the square of the length, and an unresolved link's target of
 * 600,000 characters kept every lint past its 30 s budget (the review of 2026-12-07).
 */
function trigramCodes(s: string): number[] {
  const padded = `  ${s} `;
  const out = new Set<number>();
  for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.charCodeAt(i) * 4294967296 + padded.charCodeAt(i + 1) * 65536 + padded.charCodeAt(i + 2));
  return [...out];
}

/**
 * Closest-name lookup over many (key, value) pairs. Keys are compared
 * lowercased; among candidates within the typo budget the smallest distance
 * wins, then the value the caller ranked first (insertion order).
 *
 * Built for 100,000 names and more: the trigram index is made on the first
 * lookup, as one posting array (CSR: an offset per trigram into a flat
 * Int32Array of key ids), not a JS array per trigram, which cost ~160 MB and
 * seconds to build on a 100k-note vault.
 */
export class NameMatcher<T> {
  private keys: string[] = [];
  private values: T[] = [];
  private gramIndex: Map<number, number> | null = null; // trigram code → its row in offsets
  private offsets = new Int32Array(1);
  private postings = new Int32Array(0);
  private shared = new Int32Array(0);

  /** The longest key: a query too long to be any key mistyped is answered without a lookup. */
  private longest = 0;

  add(key: string, value: T): void {
    this.keys.push(key.toLowerCase());
    if (key.length > this.longest) this.longest = key.length;
    this.values.push(value);
    this.gramIndex = null;
  }

  private build(): Map<number, number> {
    const index = new Map<number, number>();
    let counts = new Int32Array(1024);
    // Each key's trigram rows, flat, with a start per key.
    const starts = new Int32Array(this.keys.length + 1);
    let rows = new Int32Array(Math.max(16, this.keys.length * 8));
    let n = 0;
    for (let id = 0; id < this.keys.length; id++) {
      starts[id] = n;
      for (const g of trigramCodes(this.keys[id]!)) {
        let r = index.get(g);
        if (r === undefined) {
          r = index.size;
          index.set(g, r);
          if (r >= counts.length) {
            const c = new Int32Array(counts.length * 2);
            c.set(counts);
            counts = c;
          }
        }
        counts[r]!++;
        if (n === rows.length) {
          const c = new Int32Array(rows.length * 2);
          c.set(rows);
          rows = c;
        }
        rows[n++] = r;
      }
    }
    starts[this.keys.length] = n;
    const offsets = new Int32Array(index.size + 1);
    for (let r = 0; r < index.size; r++) offsets[r + 1] = offsets[r]! + counts[r]!;
    const fill = offsets.slice(0, index.size);
    const postings = new Int32Array(n);
    // Ids go in ascending order, so each posting list is sorted.
    for (let id = 0; id < this.keys.length; id++) for (let i = starts[id]!; i < starts[id + 1]!; i++) postings[fill[rows[i]!]!++] = id;
    this.offsets = offsets;
    this.postings = postings;
    this.gramIndex = index;
    return index;
  }

  closest(query: string, maxCandidates = 30): T | null {
    const q = query.toLowerCase();
    const budget = typoBudget(q.length);
    if (budget === 0 || q.length - budget > this.longest) return null;
    const index = this.gramIndex ?? this.build();
    // Shared trigrams per key, in a typed array reused across lookups (a Map here was most of a cached lint
    // page's time at 100k notes), and the keys it touched.
    if (this.shared.length !== this.keys.length) this.shared = new Int32Array(this.keys.length);
    const shared = this.shared;
    const touched: number[] = [];
    let most = 0;
    for (const g of trigramCodes(q)) {
      const r = index.get(g);
      if (r === undefined) continue;
      const lo = this.offsets[r]!;
      const hi = this.offsets[r + 1]!;
      // A trigram shared by a third of all names says nothing; skip it.
      if (hi - lo > Math.max(50, this.keys.length / 3)) continue;
      for (let i = lo; i < hi; i++) {
        const id = this.postings[i]!;
        const c = ++shared[id]!;
        if (c === 1) touched.push(id);
        if (c > most) most = c;
      }
    }
    // The maxCandidates keys sharing the most trigrams (ties: the lower id), without sorting every touched key.
    const byCount = new Int32Array(most + 2);
    for (const id of touched) byCount[shared[id]!]!++;
    let cut = most;
    for (let have = byCount[most]!; cut > 1 && have < maxCandidates; ) have += byCount[--cut]!;
    const picked = touched.filter((id) => shared[id]! >= cut).map((id) => [id, shared[id]!] as const);
    for (const id of touched) shared[id] = 0;
    const ranked = picked.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, maxCandidates);
    let best: { id: number; d: number } | null = null;
    for (const [id] of ranked) {
      const d = boundedDistance(q, this.keys[id]!, budget);
      if (d <= budget && (!best || d < best.d || (d === best.d && id < best.id))) best = { id, d };
    }
    return best ? this.values[best.id]! : null;
  }
}
