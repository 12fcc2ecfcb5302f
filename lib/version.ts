import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

// compile.sh stamps the binary with `--define`; from source these globals do not exist.
declare const LETTUCE_BUILD_COMMIT: string;
declare const LETTUCE_BUILD_DATE: string;

export interface BuildInfo {
  version: string;
  /** The git commit built (with -dirty when the tree had changes), or null when unknown. */
  commit: string | null;
  /** When the binary was built (ISO 8601), or null when running from source. */
  builtAt: string | null;
}

let cached: BuildInfo | null = null;

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  if (typeof LETTUCE_BUILD_COMMIT === "string") {
    cached = { version: VERSION, commit: LETTUCE_BUILD_COMMIT === "unknown" ? null : LETTUCE_BUILD_COMMIT, builtAt: LETTUCE_BUILD_DATE };
  } else {
    // From source: ask git, briefly (a checkout without git just has no commit).
    let commit: string | null = null;
    try {
      // Bun.spawnSync, not node:child_process: importing that module costs every command's start-up ~3 ms.
      const r = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stdout: "pipe", stderr: "ignore", timeout: 2000 });
      if (r.exitCode === 0) commit = r.stdout.toString().trim() || null;
    } catch {
      commit = null;
    }
    cached = { version: VERSION, commit, builtAt: null };
  }
  return cached;
}

/** `lettuce 0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-30T15:00:00Z)` */
export function versionLine(): string {
  const b = buildInfo();
  return `lettuce ${b.version} (commit ${b.commit ?? "unknown"}, ${b.builtAt ? `built ${b.builtAt}` : "running from source"})`;
}
