import { basename, resolve } from "node:path";

const PROJECT_ROOT = resolve(import.meta.dir, "../..");

/** Single-quote for a POSIX shell when needed. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * How a person types this lettuce at a shell, so that printed hints work as
 * printed: the compiled binary by its path; from a checkout, `npx lettuce`
 * (package.json's bin), which needs the project folder as the working directory.
 */
export function lettuceCommand(): string {
  const exe = process.execPath;
  if (!/^bun(\.exe)?$/i.test(basename(exe))) return shellQuote(exe);
  return process.cwd() === PROJECT_ROOT ? "npx lettuce" : `cd ${shellQuote(PROJECT_ROOT)} && npx lettuce`;
}
