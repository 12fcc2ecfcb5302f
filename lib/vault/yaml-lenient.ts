// The yaml package, as the frontmatter fallback and the .base reader use it, with the two ways a few
// kilobytes of it once held the thread answering requests for seconds to hours (the content audit of
// 2026-12-05) closed:
// - keys that are maps or lists, one inside another (`a: {{{{…`, or `? {{{x: 0}: 0}: 1}`): turning the
//   document into JavaScript spells each such key out as a string, again at every level, about n⁴ in the
//   nesting (500 bytes took 10 s, 1 KB over a minute). Refused before toJS;
// - errors: the parser computes each one's position from the start of the text, so a text full of them
//   (250 KB of `\x` in a quoted string) costs the square of its length. Callers bound the text first.
import type { Document } from "yaml";

type Yaml = typeof import("yaml");
// Loaded on first use (~19 ms of start-up): most notes never need it, and a vault may hold no base.
let yaml: Yaml | null = null;
const lib = (): Yaml => (yaml ??= require("yaml") as Yaml);

/**
 * A key that is a map or a list with such a key inside it, anywhere in the document: the reason to refuse it, or
 * null. One level is what people write (Templater's `created: {{date}}` reads as a map keyed by a map) and costs
 * one string; keys within keys are what costs n⁴. Walked with a stack of its own: the package's visit() copies
 * the path at every level, which made this check itself take seconds on a deeply nested 8 KB text (a review).
 */
function nestedComplexKey(doc: Document): string | null {
  const { isCollection, isMap, isPair, isSeq } = lib();
  const stack: [unknown, boolean][] = [[doc.contents, false]];
  while (stack.length) {
    const [node, inKey] = stack.pop()!;
    if (isMap(node) || isSeq(node)) {
      for (const item of node.items as unknown[]) stack.push([item, inKey]);
    } else if (isPair(node)) {
      if (isCollection(node.key)) {
        if (inKey) return "a key inside a key that is itself a map or a list";
        stack.push([node.key, true]);
      }
      stack.push([node.value, inKey]);
    }
  }
  return null;
}

/**
 * Parse YAML into plain values. `lenient`: the parser's errors are ignored where it could make sense of the
 * text (a plain scalar starting with '@', an unclosed flow list: what people write in frontmatter);
 * otherwise the first error is thrown, as the package's parse() does.
 */
export function parseYamlBounded(text: string, opts: { lenient: boolean; maxAliasCount: number }): unknown {
  const doc = lib().parseDocument(text, { logLevel: "silent" });
  if (!opts.lenient && doc.errors.length) throw doc.errors[0]!;
  const why = nestedComplexKey(doc);
  if (why) throw new Error(`YAML with ${why}`);
  return doc.toJS({ maxAliasCount: opts.maxAliasCount });
}
