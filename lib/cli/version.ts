// `lettuce --version [--verbose]`. The plain form only prints the build stamp
// (main.ts answers it before loading anything else, so it stays fast); the
// verbose form also says which SQLite and which vector storage this binary
// gets on this machine, and what it carries inside.
import { Database } from "bun:sqlite";
import { versionedCacheDir } from "../platform/cache-dir";
import { embeddedAssets, embeddedFiles, isCompiled } from "../platform/embedded";
import { fingerprintWalkKind, type WalkKind } from "../platform/fingerprint-walk";
import { sqliteInfo } from "../store/sqlite-lib";
import { loadSqliteVec } from "../store/sqlite-vec";
import { plainStorageForced } from "../store/vector-storage";
import { buildInfo, versionLine } from "../version";
import { parse, type Command } from "./command";

export interface VersionReport {
  version: string;
  commit: string | null;
  builtAt: string | null;
  target: string;
  bun: string;
  compiled: boolean;
  sqlite: { version: string; library: string; error: string | null };
  vectors: { storage: "sqlite-vec" | "plain"; sqliteVec: string | null; loadedFrom: string | null; reason: string | null };
  /** How `lettuce search` checks a vault's files against its index when no serve owns it (lib/platform/fingerprint-walk.ts). */
  freshnessWalk: WalkKind;
  cacheDir: string;
  embedded: { name: string; size: number }[];
  /** Files of compile.sh's ASSET_DIRS, by repo path. */
  assets: { path: string; size: number }[];
}

/** What a vault opened now would get: the same choice lib/store/index-db.ts makes, tried on a scratch connection. */
export function versionReport(): VersionReport {
  const b = buildInfo();
  const sqlite = sqliteInfo();
  let vectors: VersionReport["vectors"];
  if (plainStorageForced()) {
    vectors = { storage: "plain", sqliteVec: null, loadedFrom: null, reason: "plain tables forced by LETTUCE_VECTOR_STORAGE=plain (a test switch)" };
  } else {
    const db = new Database(":memory:");
    const v = loadSqliteVec.load(db);
    db.close();
    vectors = v
      ? { storage: "sqlite-vec", sqliteVec: v, loadedFrom: loadSqliteVec.path(), reason: null }
      : { storage: "plain", sqliteVec: null, loadedFrom: null, reason: loadSqliteVec.error() };
  }
  return {
    ...b,
    target: `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`,
    bun: Bun.version,
    compiled: isCompiled(),
    sqlite,
    vectors,
    freshnessWalk: fingerprintWalkKind(),
    cacheDir: versionedCacheDir(),
    embedded: embeddedFiles().map((f) => ({ name: f.name, size: f.size })),
    assets: [...embeddedAssets()].map(([path, f]) => ({ path, size: f.size })),
  };
}

const WALKS: Record<WalkKind, string> = {
  "built-in": "the freshness check's native walk, built into this binary",
  tinycc: "the freshness check's native walk, compiled at start by Bun's TinyCC",
  javascript: "the freshness check walks in JavaScript (no native walk here: another platform, LETTUCE_NO_STATX=1, or an unsafe cache folder)",
};

function formatReport(r: VersionReport): string {
  const vec =
    r.vectors.storage === "sqlite-vec"
      ? `sqlite-vec ${r.vectors.sqliteVec} (loaded from ${r.vectors.loadedFrom})`
      : `plain tables (${r.vectors.reason}); every tool works, vectors are just stored without sqlite-vec`;
  const lines = [
    versionLine(),
    `target:   ${r.target}, Bun ${r.bun}, ${r.compiled ? "compiled binary" : "running from source"}`,
    `SQLite:   ${r.sqlite.version} (${r.sqlite.library})${r.sqlite.error ? `; LETTUCE_SQLITE_LIB failed: ${r.sqlite.error}` : ""}`,
    `vectors:  ${vec}`,
    `walk:     ${WALKS[r.freshnessWalk]}`,
    `cache:    ${r.cacheDir}`,
  ];
  if (r.compiled) lines.push(`embedded: ${r.embedded.length} files (${r.embedded.map((f) => f.name).join(", ")})`);
  if (r.assets.length) lines.push(`assets:   ${r.assets.length} files (${r.assets.map((a) => a.path).join(", ")})`);
  return lines.join("\n");
}

export const versionCommand: Command = {
  name: "version",
  summary: "Print the version, commit and build date (--verbose: SQLite, vector storage, embedded files)",
  usage: ["lettuce --version [--verbose] [--json]", "", "--verbose adds the SQLite library and version, the vector storage this machine gets", "(sqlite-vec or plain tables, and why), the cache folder and the files inside the binary."].join("\n"),
  async run(argv) {
    const { values } = parse(argv, { verbose: { type: "boolean" }, json: { type: "boolean" } });
    if (!values.verbose && !values.json) {
      console.log(versionLine());
      return 0;
    }
    const r = versionReport();
    console.log(values.json ? JSON.stringify(r, null, 2) : formatReport(r));
    return 0;
  },
};
