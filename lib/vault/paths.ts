import { realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { ToolError } from "../errors";
import { platformPathProblem, toVaultRelative } from "../platform/paths";

// Directories that are never part of the vault's content. `.lettuce` holds our
// own databases; the others belong to editors, sync tools and package managers.
export const IGNORED_DIRS = new Set([".lettuce", ".obsidian", ".trash", ".git", "node_modules"]);

/** True when a vault-relative path lies in a directory we never index. */
export function isIgnoredPath(rel: string): boolean {
  for (const part of rel.split("/")) {
    if (IGNORED_DIRS.has(part) || (part.startsWith(".") && part.length > 1)) return true;
  }
  return false;
}

function invalid(input: string, why: string): never {
  throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(input)}: ${why}`);
}

/**
 * Turn an agent-supplied path into a canonical vault-relative one, or refuse it.
 * Agents send paths from many sources (URLs, other tools, their own guesses),
 * so percent-encoded traversal is decoded and checked like the literal form.
 * `allowRoot` lets folder arguments name the vault root as "" or "/".
 */
export function normalizeVaultPath(input: string, opts: { allowRoot?: boolean } = {}): string {
  if (typeof input !== "string") invalid(String(input), "not a string");
  let p = input;
  // Decode repeatedly so that %252e%252e cannot smuggle "..", but stop on bad escapes.
  for (let i = 0; i < 3 && /%[0-9a-fA-F]{2}/.test(p); i++) {
    try {
      p = decodeURIComponent(p);
    } catch {
      invalid(input, "malformed percent-encoding");
    }
  }
  if (p.includes("\0")) invalid(input, "contains a NUL byte");
  if (p.includes("\\")) invalid(input, "backslashes are not allowed; use '/'");
  if (/^[a-zA-Z]:/.test(p)) invalid(input, "absolute paths are not allowed");
  if (p.startsWith("/")) {
    if (opts.allowRoot && p === "/") return "";
    invalid(input, "absolute paths are not allowed; use a vault-relative path");
  }
  if (p.startsWith("~")) invalid(input, "home-relative paths are not allowed");
  const parts: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") invalid(input, "'..' is not allowed");
    if (/[\u0000-\u001f]/.test(part)) invalid(input, "control characters are not allowed");
    parts.push(part);
  }
  const rel = parts.join("/");
  if (rel === "" && !opts.allowRoot) invalid(input, "empty path");
  if (parts[0] === ".lettuce") invalid(input, "the .lettuce directory is private to the server");
  const why = platformPathProblem(rel); // Windows: device names, trailing dots, streams (lib/platform/paths.ts)
  if (why) invalid(input, why);
  return rel;
}

/**
 * Absolute filesystem path for a vault-relative path, refusing any that
 * escapes the vault through a symlink. Missing files are fine (the caller
 * decides between not-found and create); their nearest existing parent is checked.
 */
export function safeAbsPath(root: string, rel: string): string {
  const abs = rel ? join(root, ...rel.split("/")) : root;
  const realRoot = realRootOf(root);
  let probe = abs;
  for (;;) {
    try {
      const real = realpathSync(probe);
      const realRel = toVaultRelative(realRoot, real);
      if (realRel === null) {
        throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(rel)}: it leaves the vault through a symlink`);
      }
      if (realRel.split("/")[0] === ".lettuce") {
        throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(rel)}: it points into .lettuce`);
      }
      return abs;
    } catch (e) {
      if (e instanceof ToolError) throw e;
      const parent = probe.slice(0, probe.lastIndexOf(sep));
      if (!parent || parent === probe || parent.length < root.length) return abs;
      probe = parent;
    }
  }
}

const realRoots = new Map<string, string>();
function realRootOf(root: string): string {
  let r = realRoots.get(root);
  if (!r) {
    r = realpathSync(root);
    realRoots.set(root, r);
  }
  return r;
}
