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

function trigrams(s: string): Set<string> {
  const padded = `  ${s} `;
  const out = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  return out;
}

/**
 * Closest-name lookup over many (key, value) pairs. Keys are compared
 * lowercased; among candidates within the typo budget the smallest distance
 * wins, then the value the caller ranked first (insertion order).
 */
export class NameMatcher<T> {
  private keys: string[] = [];
  private values: T[] = [];
  private byGram = new Map<string, number[]>();

  add(key: string, value: T): void {
    const k = key.toLowerCase();
    const id = this.keys.length;
    this.keys.push(k);
    this.values.push(value);
    for (const g of trigrams(k)) {
      const list = this.byGram.get(g);
      if (list) list.push(id);
      else this.byGram.set(g, [id]);
    }
  }

  closest(query: string, maxCandidates = 30): T | null {
    const q = query.toLowerCase();
    const budget = typoBudget(q.length);
    if (budget === 0) return null;
    const shared = new Map<number, number>();
    for (const g of trigrams(q)) {
      const ids = this.byGram.get(g);
      // A trigram shared by a third of all names says nothing; skip it.
      if (!ids || ids.length > Math.max(50, this.keys.length / 3)) continue;
      for (const id of ids) shared.set(id, (shared.get(id) ?? 0) + 1);
    }
    const ranked = [...shared.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, maxCandidates);
    let best: { id: number; d: number } | null = null;
    for (const [id] of ranked) {
      const d = boundedDistance(q, this.keys[id]!, budget);
      if (d <= budget && (!best || d < best.d || (d === best.d && id < best.id))) best = { id, d };
    }
    return best ? this.values[best.id]! : null;
  }
}
