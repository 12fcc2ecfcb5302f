// A note's frontmatter YAML to a value: fast where it can be, lenient where people are, and bounded on
// hostile text. Kept apart from parse.ts, which reads the rest of the note.
import { parseYamlBounded } from "./yaml-lenient";

/** The largest frontmatter that Bun's parser refuses and the lenient one still reads (4 KB of errors: ~35 ms). */
const LENIENT_YAML_MAX = 4 * 1024;

/**
 * Bun's built-in YAML parser is ~20× faster than the yaml package and agrees
 * with it on the corpora's frontmatter, but it is strict where people are not
 * (a plain scalar starting with '@', say): on any error the lenient yaml
 * package decides. Frontmatter parsing was a seventh of the cold index's CPU.
 */
export function parseFrontmatterYaml(text: string): unknown {
  let value: unknown;
  try {
    value = Bun.YAML.parse(text);
  } catch (e) {
    // The lenient parser's errors cost the square of the text's length (lib/vault/yaml-lenient.ts): a
    // frontmatter Bun refuses gets the second opinion only when it is of a size people write by hand.
    if (text.length > LENIENT_YAML_MAX) throw e;
    value = parseYamlBounded(text, { lenient: true, maxAliasCount: 100 });
  }
  // Only an alias (`*name`) makes two places of the value one node. Without one, the value is a tree
  // whose every node and character comes from its own part of the text: it cannot cost the walk more than
  // a few times the text's length (a key like `~` or `.inf` spelt out as "null" or "Infinity" is the most:
  // random texts of either parser measured at most 6×), under the walk's 10× plus 10,000. So the walk,
  // ~3 % of a cold parse of obsidian-hub (run once per note, and compiled again for each new value shape),
  // runs only where the text has a '*'.
  if (text.includes("*")) refuseExpansion(value, text.length);
  return value;
}

/**
 * Aliases come back as shared references, which JSON (the index row, read_note) spells out
 * in full: 6 levels of 9 aliases in a 4.7 KB frontmatter became 300 MB, built on the request
 * thread. A frontmatter whose expansion is more than ten times its text (plus room for small
 * ones) is a frontmatter error, as invalid YAML is. The walk stops as soon as it is over.
 */
export function refuseExpansion(value: unknown, textLength: number): void {
  let budget = 10 * textLength + 10_000;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    budget -= typeof v === "string" ? v.length + 1 : 1;
    if (budget < 0) throw new Error("its aliases expand to more than ten times its text");
    if (v && typeof v === "object") {
      if (Array.isArray(v)) for (const x of v) stack.push(x);
      else if (!(v instanceof Date)) {
        for (const [k, x] of Object.entries(v)) {
          budget -= k.length;
          stack.push(x);
        }
      }
    }
  }
}
