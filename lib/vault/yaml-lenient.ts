// The yaml package, as the frontmatter fallback and the .base reader use it, with the two ways a few
// kilobytes of it once held the thread answering requests for seconds to hours (the content audit of
// 2026-12-05) closed:
// - a key that is itself a map or a list (`a: {{{{…`, or `? {{{x: 0}: 0}: 1}`): turning the document into
//   JavaScript spells each such key out as a string, again at every level, about n⁴ in the nesting (500
//   bytes took 10 s, 1 KB over a minute). Frontmatter and bases never have one: refused before toJS;
// - errors: the parser computes each one's position from the start of the text, so a text full of them
//   (250 KB of `\x` in a quoted string) costs the square of its length. Callers bound the text first.
import type { Document } from "yaml";

type Yaml = typeof import("yaml");
// Loaded on first use (~19 ms of start-up): most notes never need it, and a vault may hold no base.
let yaml: Yaml | null = null;
const lib = (): Yaml => (yaml ??= require("yaml") as Yaml);

/** A key that is a map or a list, anywhere in the document: the reason to refuse it, or null. */
function complexKey(doc: Document): string | null {
  const { visit, isCollection } = lib();
  let found: string | null = null;
  visit(doc, {
    Pair(_, pair) {
      if (isCollection(pair.key)) {
        found = "a key that is itself a map or a list";
        return visit.BREAK;
      }
    },
  });
  return found;
}

/**
 * Parse YAML into plain values. `lenient`: the parser's errors are ignored where it could make sense of the
 * text (a plain scalar starting with '@', an unclosed flow list: what people write in frontmatter);
 * otherwise the first error is thrown, as the package's parse() does.
 */
export function parseYamlBounded(text: string, opts: { lenient: boolean; maxAliasCount: number }): unknown {
  const doc = lib().parseDocument(text, { logLevel: "silent" });
  if (!opts.lenient && doc.errors.length) throw doc.errors[0]!;
  const why = complexKey(doc);
  if (why) throw new Error(`YAML with ${why}`);
  return doc.toJS({ maxAliasCount: opts.maxAliasCount });
}
