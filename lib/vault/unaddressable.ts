// Files whose names no tool can address: a backslash (a path separator to
// agents, and on Windows), a control character (a newline in a name would
// break every line-based answer: the digest, the workspace map, the CLI), or
// bytes that are not UTF-8 (the name cannot even be stat'ed as decoded). They
// stay out of the index, as hidden files do, and the person is told once per
// name on stderr instead of finding a note no agent can read.

const UNADDRESSABLE = /[\\\u0000-\u001f\u007f]/;
const TELL_AT_MOST = 20;
const told = new Set<string>();
let untold = 0;

/** Whether one name (no '/') is one no tool path can spell. */
export function isUnaddressableName(name: string): boolean {
  return UNADDRESSABLE.test(name);
}

function why(rel: string): string {
  if (rel.includes("\\")) return "a backslash";
  if (/[\u0000-\u001f\u007f]/.test(rel)) return "a control character";
  return "bytes that are not UTF-8";
}

/** Say on stderr, once per path and for the first 20 paths, that a file was left out and why. */
export function tellUnaddressable(rel: string): void {
  if (told.has(rel)) return;
  if (told.size >= TELL_AT_MOST) {
    if (++untold === 1) console.error("lettuce: more files with names agents cannot use were left out (not listed)");
    return;
  }
  told.add(rel);
  console.error(`lettuce: left out ${JSON.stringify(rel)}: its name has ${why(rel)}, which no agent can use in a path; rename it to index it`);
}
