// Facts about a vault computed straight from its files, with deliberately
// simple code (a directory walk, regexes): the tests compare the server's
// answers with these, so they must not reuse the server's own parser.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";

export interface VaultWalk {
  notes: string[]; // vault-relative .md paths, sorted
  attachments: string[]; // every other file, sorted
  folders: string[]; // every folder, sorted
}

/** Walk a vault the way a person sees it: hidden entries (.obsidian, .lettuce, …) skipped. */
export function walkVault(root: string): VaultWalk {
  const out: VaultWalk = { notes: [], attachments: [], folders: [] };
  const walk = (rel: string) => {
    for (const d of readdirSync(rel ? join(root, rel) : root, { withFileTypes: true })) {
      if (d.name.startsWith(".") || d.name === "node_modules") continue;
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        out.folders.push(p);
        walk(p);
      } else if (d.isFile()) (p.toLowerCase().endsWith(".md") ? out.notes : out.attachments).push(p);
    }
  };
  walk("");
  for (const list of Object.values(out)) list.sort();
  return out;
}

export interface NoteText {
  path: string;
  frontmatter: Record<string, any>;
  body: string; // after the frontmatter block
}

export function readNoteText(root: string, path: string): NoteText {
  const text = readFileSync(join(root, path), "utf8").replace(/\r\n?/g, "\n");
  const m = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(text);
  if (!m) return { path, frontmatter: {}, body: text };
  let fm: Record<string, any> = {};
  try {
    fm = (parseYaml(m[1]!) as Record<string, any>) ?? {};
  } catch {
    fm = {};
  }
  return { path, frontmatter: fm, body: text.slice(m[0].length) };
}

/** Blank out fenced code blocks (``` or ~~~, also inside > quotes) and `inline code`, keeping line numbers. */
export function stripCode(body: string, opts: { inline?: boolean } = {}): string {
  const lines = body.split("\n");
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = /^[ \t>]*(`{3,}|~{3,})/.exec(lines[i]!);
    if (fence) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = null;
      lines[i] = "";
    } else if (m) {
      fence = m[1]!;
      lines[i] = "";
    }
  }
  if (opts.inline === false) return lines.join("\n");
  // A run of N backticks closes only on a run of exactly N (so `` ``` `` is one span).
  return lines.join("\n").replace(/(?<!`)(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g, (s) => s.replace(/[^\n]/g, " "));
}

/** ATX headings (# …) at the start of a line outside code: [level, text]. */
export function atxHeadings(body: string): [number, string][] {
  const out: [number, string][] = [];
  for (const line of stripCode(body, { inline: false }).split("\n")) {
    const m = /^(#{1,6})[ \t]+(.*?)[ \t#]*$/.exec(line);
    if (m) out.push([m[1]!.length, m[2]!]);
  }
  return out;
}

/** Inline #tags outside code, lowercased (not pure numbers, not CSS colours). */
export function inlineTags(body: string): string[] {
  const out = new Set<string>();
  for (const m of stripCode(body).matchAll(/(?:^|\s)#([\p{L}\p{N}_\/-]+)/gu)) {
    const t = m[1]!.replace(/\/+$/, "").toLowerCase();
    if (/^[\d\/]+$/.test(t) || /^(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/.test(t)) continue;
    out.add(t);
  }
  return [...out];
}

/** Wikilinks and embeds outside code whose target (before # and |) is one of `names` (case-insensitive). */
export function countWikilinksTo(body: string, names: string[]): number {
  const want = new Set(names.map((n) => n.toLowerCase()));
  let n = 0;
  for (const m of stripCode(body).matchAll(/!?\[\[([^\[\]\n]+?)\]\]/g)) {
    const target = m[1]!.split(/\\?\||#/)[0]!.replace(/\\$/, "").trim().replace(/\.md$/i, "").toLowerCase();
    if (want.has(target)) n++;
  }
  return n;
}

/** Words as FTS5's unicode61 tokenizer with remove_diacritics sees them: letters and digits, folded. */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Tags of every note, from the files (frontmatter tags + inline #tags), lowercased. */
export function tagsFromFiles(root: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of walkVault(root).notes) {
    const t = readNoteText(root, p);
    const fm = t.frontmatter.tags;
    const list = (Array.isArray(fm) ? fm : typeof fm === "string" ? fm.split(/[,\s]+/) : []).map((x: unknown) => String(x).toLowerCase());
    out.set(p, [...new Set([...list.filter(Boolean), ...inlineTags(t.body)])]);
  }
  return out;
}
