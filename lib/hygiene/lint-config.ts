// The `lint:` block of index.md's frontmatter: the wiki's tag schema and lint
// switches, written by the person who keeps the wiki. Format: docs/hygiene.md.
import { normalizeTag } from "../vault/parse";

export const RULES = [
  "lint-config",
  "unresolved-link",
  "tag-typo",
  "deprecated-tag",
  "unknown-tag",
  "missing-required-tag",
  "orphan-note",
  "no-inbound",
  "orphan-tag",
  "untagged-note",
] as const;
export type Rule = (typeof RULES)[number];

/** A tag pattern: an exact tag ("project") or a family ("area/*": any tag under area/). Lowercased. */
export type TagPattern = string;

export interface Requirement {
  anyOf: TagPattern[];
  paths: string[] | null; // folder prefixes ("Projects/") or note paths; null = every note
}

export interface LintConfig {
  allowed: TagPattern[] | null; // null: no vocabulary declared, unknown-tag is off
  required: Requirement[];
  deprecated: Map<string, string | null>; // old tag (lowercased) -> replacement
  exclude: string[];
  disabled: Set<Rule>;
  errors: string[]; // problems in the block itself, reported as lint-config findings
}

const KNOWN_KEYS = new Set(["tags", "required", "deprecated", "exclude", "disable"]);

export function emptyConfig(): LintConfig {
  return { allowed: null, required: [], deprecated: new Map(), exclude: [], disabled: new Set(), errors: [] };
}

export function matchesPattern(tagLc: string, pattern: TagPattern): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith("/*")) return tagLc.startsWith(pattern.slice(0, -1));
  return tagLc === pattern;
}

export function matchesAny(tagLc: string, patterns: TagPattern[]): boolean {
  return patterns.some((p) => matchesPattern(tagLc, p));
}

/** Folder prefixes end in "/" ("Templates" and "Templates/" mean the same); note paths stay as they are. */
function pathPrefix(p: string): string {
  const clean = p.trim().replace(/^\/+/, "");
  return /\.md$/i.test(clean) || clean.endsWith("/") ? clean : clean + "/";
}

export function underAny(path: string, prefixes: string[]): boolean {
  return prefixes.some((p) => (p.endsWith("/") ? path.startsWith(p) : path === p));
}

function stringList(v: unknown, what: string, errors: string[]): string[] | null {
  if (typeof v === "string") return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number")) return v.map(String);
  errors.push(`${what} must be a string or a list of strings`);
  return null;
}

function patterns(v: unknown, what: string, errors: string[]): TagPattern[] | null {
  const list = stringList(v, what, errors);
  return list && list.map((t) => normalizeTag(t.trim()).toLowerCase()).filter(Boolean);
}

/** Read the block; a malformed part is skipped and described in `errors`, the rest still applies. */
export function parseLintConfig(frontmatter: Record<string, unknown> | null): LintConfig {
  const cfg = emptyConfig();
  const raw = frontmatter?.lint;
  if (raw === undefined || raw === null) return cfg;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    cfg.errors.push("lint must be a mapping with keys tags, required, deprecated, exclude, disable");
    return cfg;
  }
  const block = raw as Record<string, unknown>;
  for (const k of Object.keys(block)) {
    if (!KNOWN_KEYS.has(k)) cfg.errors.push(`lint.${k} is not a known key (expected one of: ${[...KNOWN_KEYS].join(", ")})`);
  }
  if (block.tags !== undefined) cfg.allowed = patterns(block.tags, "lint.tags", cfg.errors);
  if (block.required !== undefined) {
    const list = Array.isArray(block.required) ? block.required : [block.required];
    list.forEach((entry, i) => {
      const what = `lint.required[${i}]`;
      if (typeof entry === "string") cfg.required.push({ anyOf: patterns(entry, what, cfg.errors)!, paths: null });
      else if (entry && typeof entry === "object" && !Array.isArray(entry) && "anyOf" in entry) {
        const e = entry as { anyOf: unknown; paths?: unknown };
        const anyOf = patterns(e.anyOf, `${what}.anyOf`, cfg.errors);
        const paths = e.paths === undefined ? null : stringList(e.paths, `${what}.paths`, cfg.errors);
        if (anyOf && anyOf.length && (e.paths === undefined || paths)) cfg.required.push({ anyOf, paths: paths && paths.map(pathPrefix) });
      } else cfg.errors.push(`${what} must be a tag pattern or {anyOf: [tags], paths: [folders]}`);
    });
  }
  if (block.deprecated !== undefined) {
    const d = block.deprecated;
    if (Array.isArray(d) || typeof d === "string") {
      for (const t of patterns(d, "lint.deprecated", cfg.errors) ?? []) cfg.deprecated.set(t, null);
    } else if (d && typeof d === "object") {
      for (const [old, rep] of Object.entries(d as Record<string, unknown>)) {
        if (rep !== null && typeof rep !== "string") {
          cfg.errors.push(`lint.deprecated.${old} must name the replacement tag, or be null`);
          continue;
        }
        cfg.deprecated.set(normalizeTag(old.trim()).toLowerCase(), rep === null ? null : normalizeTag(rep.trim()));
      }
    } else cfg.errors.push("lint.deprecated must map old tags to replacements (or null), or list old tags");
  }
  if (block.exclude !== undefined) cfg.exclude = (stringList(block.exclude, "lint.exclude", cfg.errors) ?? []).map(pathPrefix);
  if (block.disable !== undefined) {
    for (const r of stringList(block.disable, "lint.disable", cfg.errors) ?? []) {
      if ((RULES as readonly string[]).includes(r) && r !== "lint-config") cfg.disabled.add(r as Rule);
      else cfg.errors.push(`lint.disable: unknown rule ${JSON.stringify(r)}`);
    }
  }
  return cfg;
}
