// The built-in model's SentencePiece tokenizer, the same algorithm as
// @energetic-ai/embeddings' Tokenizer (a Viterbi pass over vocabulary pieces
// found by walking a trie), with the same output token for token. Why our
// own: the library's copies the rest of the input (`symbols.slice(i)`) at
// every position, O(n²) in the text's length; on obsidian-hub's passages that
// was 2.8 ms a passage, 46 s of a worker's time for the vault. Here each
// position walks the trie in place: O(n × longest piece).
// tests/semantic-background-model.test.ts checks it against the library's.

interface TrieNode {
  children: Map<string, TrieNode>;
  /** A vocabulary piece ends here: its score, index and length in code points. */
  piece: { score: number; index: number; len: number } | null;
}

const SEPARATOR = "\u2581";
const RESERVED_SYMBOLS = 6;

export class PieceTokenizer {
  private root: TrieNode = { children: new Map(), piece: null };

  constructor(private readonly vocabulary: [string, number][]) {
    for (let i = RESERVED_SYMBOLS; i < vocabulary.length; i++) {
      const [word, score] = vocabulary[i]!;
      let node = this.root;
      let len = 0;
      for (const ch of word) {
        let next = node.children.get(ch);
        if (!next) {
          next = { children: new Map(), piece: null };
          node.children.set(ch, next);
        }
        node = next;
        len++;
      }
      if (len) node.piece = { score, index: i, len };
    }
  }

  encode(text: string): number[] {
    const normalized = text.normalize("NFKC");
    const input = normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
    const symbols = Array.from(input);
    const n = symbols.length;
    // Pieces ending at each position, in the order the library visits them (by start, ascending).
    const ending: { len: number; score: number; index: number }[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      let node = this.root.children.get(symbols[i]!);
      let found = false;
      for (let k = i; k < n && node; k++) {
        if (node.piece) {
          ending[i + node.piece.len]!.push(node.piece);
          found = true;
        }
        node = k + 1 < n ? node.children.get(symbols[k + 1]!) : undefined;
      }
      // No piece starts here: the library's unknown symbol (index 0, score 0, one code point).
      if (!found) ending[i + 1]!.push({ len: 1, score: 0, index: 0 });
    }
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    for (let end = 0; end <= n; end++) {
      for (const w of ending[end]!) {
        const score = w.score + best[end - w.len]!;
        // The library's rule, quirks included: 0 means "not set yet", and a tie goes to the later piece.
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          words[end] = w.index;
        }
      }
    }
    const results: number[] = [];
    // The library steps back by the piece's length in UTF-16 units; kept, so that the output is the same.
    for (let at = n; at > 0; at -= this.vocabulary[words[at]!]![0].length) results.push(words[at]!);
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of results) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  }
}
