// Wikilink facts counted straight from a vault's files with simple regexes,
// independent of the server's parser and resolver: the hygiene tests compare
// lint's findings with these.
import { readNoteText, stripCode, walkVault } from "./vault-facts";

export interface WikilinkFacts {
  notes: string[];
  /** "path\0target" for every wikilink whose target names no note, alias or file. */
  broken: Set<string>;
  /** Wikilinks into each note from other notes, counted by unambiguous names only. */
  inbound: Map<string, number>;
  /** Notes with at least one wikilink to another existing note (by unambiguous name). */
  linksOut: Set<string>;
  /** Notes whose basename another note shares (links to them are not attributed). */
  ambiguous: Set<string>;
}

const WIKILINK = /!?\[\[([^\[\]\n]+?)\]\]/g;
const base = (p: string) => p.slice(p.lastIndexOf("/") + 1);
const noMd = (p: string) => p.replace(/\.md$/i, "");

export function wikilinkFacts(root: string): WikilinkFacts {
  const { notes, attachments } = walkVault(root);
  const texts = notes.map((p) => readNoteText(root, p));
  // name (lowercased) -> notes it may mean
  const byName = new Map<string, Set<string>>();
  const addName = (name: string, path: string) => {
    const k = name.toLowerCase();
    if (!byName.has(k)) byName.set(k, new Set());
    byName.get(k)!.add(path);
  };
  for (const t of texts) {
    addName(noMd(base(t.path)), t.path);
    addName(noMd(t.path), t.path);
    const al = t.frontmatter.aliases ?? t.frontmatter.alias;
    for (const a of Array.isArray(al) ? al : typeof al === "string" ? [al] : []) if (a != null) addName(String(a), t.path);
  }
  const fileNames = new Set(attachments.map((a) => base(a).toLowerCase()));
  const filePaths = attachments.map((a) => a.toLowerCase());
  const notePathsLc = notes.map((n) => noMd(n).toLowerCase());

  const broken = new Set<string>();
  const inbound = new Map<string, number>(notes.map((n) => [n, 0]));
  const linksOut = new Set<string>();
  const ambiguous = new Set<string>();
  const baseCount = new Map<string, number>();
  for (const n of notes) baseCount.set(noMd(base(n)).toLowerCase(), (baseCount.get(noMd(base(n)).toLowerCase()) ?? 0) + 1);
  for (const n of notes) if (baseCount.get(noMd(base(n)).toLowerCase())! > 1) ambiguous.add(n);

  for (const t of texts) {
    for (const m of stripCode(t.body).matchAll(WIKILINK)) {
      const target = m[1]!.split(/\\?\||#/)[0]!.replace(/\\$/, "").trim();
      if (!target) continue;
      const lc = noMd(target).toLowerCase();
      const targets = new Set<string>(byName.get(lc) ?? []);
      if (lc.includes("/")) for (let i = 0; i < notes.length; i++) if (notePathsLc[i]!.endsWith("/" + lc)) targets.add(notes[i]!);
      const isFile = fileNames.has(target.toLowerCase()) || filePaths.some((f) => f === target.toLowerCase() || f.endsWith("/" + target.toLowerCase()));
      if (!targets.size && !isFile) broken.add(`${t.path}\u0000${target}`);
      if (targets.size === 1) {
        const to = [...targets][0]!;
        if (to !== t.path) {
          inbound.set(to, inbound.get(to)! + 1);
          linksOut.add(t.path);
        }
      }
    }
  }
  return { notes, broken, inbound, linksOut, ambiguous };
}

/** lint's unresolved wikilink findings in the same "path\0target" form. */
export function lintBrokenWikilinks(findings: any[]): Set<string> {
  const out = new Set<string>();
  for (const f of findings) {
    if (f.rule !== "unresolved-link") continue;
    const m = /^Unresolved link !?\[\[(.*)\]\] on line \d+/.exec(f.message);
    if (m) out.add(`${f.path}\u0000${m[1]}`);
  }
  return out;
}
