// The LLM-wiki layout that hygiene rules know about: AGENTS.md, index.md and
// log.md at the root are scaffolding, sources/ holds raw captured material.

const META_FILES = new Set(["agents.md", "index.md", "log.md"]);

/** The wiki's own scaffolding: AGENTS.md, index.md and log.md at the root. */
export function isMetaNote(path: string): boolean {
  return META_FILES.has(path.toLowerCase());
}

/** Raw sources are captured, not written into the graph: never orphans. */
export function isSourceNote(path: string): boolean {
  return path.toLowerCase().startsWith("sources/");
}
