// Platform path rules, kept apart from the vault logic so that Windows rules
// can be tested on Linux: every function takes a flavor (node's path.win32 or
// path.posix, and whether the file system ignores case). Agents always send
// vault-relative paths with '/'; the vault root may be C:\Users\…\Notes or a
// \\server\share path on Windows.
import { posix, win32 } from "node:path";

export interface Flavor {
  name: "windows" | "posix";
  path: typeof posix;
}

export const WINDOWS: Flavor = { name: "windows", path: win32 };
export const POSIX: Flavor = { name: "posix", path: posix };
export const HOST: Flavor = process.platform === "win32" ? WINDOWS : POSIX;

/** The absolute path of a vault-relative ('/'-separated) path under `root`. */
export function toAbsolute(root: string, rel: string, f: Flavor = HOST): string {
  return rel ? f.path.join(root, ...rel.split("/")) : f.path.normalize(root);
}

/**
 * The vault-relative '/'-path of `abs`, or null when it is not inside `root`
 * (another drive, a parent, a sibling that merely shares a prefix). On Windows
 * the comparison ignores case, as path.win32.relative does.
 */
export function toVaultRelative(root: string, abs: string, f: Flavor = HOST): string | null {
  const r = f.path.relative(root, abs);
  if (r === "") return "";
  if (f.path.isAbsolute(r) || r === ".." || r.startsWith(`..${f.path.sep}`)) return null;
  return r.split(f.path.sep).join("/");
}

/** A name reported relative to the vault by the OS (watcher events, readdir walks) as a vault path. On POSIX a backslash is part of a name. */
export function nativeToVault(name: string, f: Flavor = HOST): string {
  return f.name === "windows" ? name.split("\\").join("/") : name;
}

// Names Windows maps to devices in every folder, with any extension (CON.md opens the console).
const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;
// 8.3 short names (SOURCE~1) are a second name for a long one: they would let a path dodge a prefix rule.
const SHORT_NAME = /^[^.~]{1,6}~[0-9]+(\.[^.]{0,3})?$/;

/**
 * Why a vault path cannot name a file safely on Windows, or null. Windows
 * drops trailing dots and spaces ("sources./a.md" is "sources/a.md", which
 * would slip past the immutable prefix), reads "a.md:x" as an alternate data
 * stream, maps CON, NUL, COM1… to devices, and has 8.3 aliases.
 */
export function windowsNameProblem(rel: string): string | null {
  for (const seg of rel.split("/")) {
    if (!seg) continue;
    if (/[<>:"|?*]/.test(seg)) return `"${seg}" contains a character Windows does not allow in names (< > : " | ? *)`;
    if (/[. ]$/.test(seg)) return `"${seg}" ends with a dot or space, which Windows drops`;
    if (DEVICE.test(seg)) return `"${seg}" is a device name on Windows`;
    if (SHORT_NAME.test(seg)) return `"${seg}" looks like a Windows 8.3 short name`;
  }
  return null;
}

/** Platform reasons to refuse an agent's vault path on this machine (none on POSIX: any name is a name there). */
export function platformPathProblem(rel: string, f: Flavor = HOST): string | null {
  return f.name === "windows" ? windowsNameProblem(rel) : null;
}
