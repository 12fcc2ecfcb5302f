// What examples/vault holds, written down by hand (the vault is small and
// hand-made): the example-vault tests compare the server's answers with this.

/** Every note, in path order. */
export const ALL_NOTES = [
  "AGENTS.md",
  "Concepts/Local First.md",
  "Concepts/Model Context Protocol.md",
  "Concepts/Tags.md",
  "Concepts/Wikilinks.md",
  "Garden/Compost.md",
  "Garden/Frost Dates.md",
  "Garden/Garden Plan.md",
  "Garden/Lettuce Varieties.md",
  "Inbox/Meeting Notes 2026-03-02.md",
  "Inbox/quick-thought.md",
  "Projects/2026/Lettuce Roadmap 2026.md",
  "Projects/2026/Q1 Retro.md",
  "Projects/Lettuce.md",
  "Recipes/Caesar Salad.md",
  "Recipes/Lettuce Soup.md",
  "Recipes/Menemen.md",
  "index.md",
  "log.md",
  "sources/Growing Lettuce in Containers.md",
  "sources/Ink and Switch - Local-first software.md",
];
/** Notes with no link in or out. */
export const ISOLATED = ["Garden/Frost Dates.md", "sources/Growing Lettuce in Containers.md"];
