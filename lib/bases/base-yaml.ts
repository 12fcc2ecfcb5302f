// A `.base` file's YAML to a value, bounded in time: a base is anybody's file, and it is parsed where
// requests wait.
import { parseYamlBounded } from "../vault/yaml-lenient";
import { refuseExpansion } from "../vault/frontmatter-yaml";

/**
 * Up to this size the yaml package reads a base, as it always has (its messages name the line, and it
 * refuses duplicate keys). Past it, its cost was the review's finding: 32 KB of valid but hostile YAML
 * (`a: a: a: …`, tabs, a bad escape repeated, 3,000 anchors) held the thread 0.3–0.5 s per parse, and its
 * errors cost the square of the text's length. 4 KB of errors is ~35 ms.
 */
const YAML_PACKAGE_MAX = 4 * 1024;

/** The parsed document, or an Error whose first line says why the YAML is refused. */
export function parseBaseYaml(text: string): unknown {
  if (text.length <= YAML_PACKAGE_MAX) return parseYamlBounded(text, { lenient: false, maxAliasCount: 100 });
  // Bun's parser is ~20× faster and linear on every shape tried (32 KB in under 30 ms); it overflows
  // the stack on deep flow nesting, which is an answer too.
  let value: unknown;
  try {
    value = Bun.YAML.parse(text);
  } catch (e) {
    if (e instanceof RangeError) throw new Error("it is nested too deeply");
    throw new Error(String((e as Error).message ?? e).replace(/^YAML Parse error: /, ""));
  }
  // Bun hands back an alias as a shared reference, which every later walk (schema, JSON answers) spells out.
  refuseExpansion(value, text.length);
  return value;
}
