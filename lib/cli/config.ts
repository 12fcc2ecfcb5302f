import type { Database } from "bun:sqlite";
import { DEFAULT_MAX_ROWS, DEFAULT_RETENTION_DAYS, MAX_MAX_ROWS, maxRows, MIN_MAX_ROWS, retentionDays } from "../audit/log";
import { CONTEXT_MODES, contextMode } from "../store/context-runs";
import { openStateDb, setSetting } from "../store/state-db";
import { checkVaultDir, immutablePathsIn, MAX_IMMUTABLE_PATHS } from "../vault-context";
import { normalizeVaultPath } from "../vault/paths";
import { parse, UsageError, type Command } from "./command";

/**
 * Vault settings a person may change; each knows how to check a new value and show the one in force (what
 * the server enforces, not the raw row: a row written by hand showed "Strict" or 0 while the server used
 * off or the default; the configuration audit).
 */
const SETTINGS: Record<string, { help: string; parse(v: string): string; show(db: Database): string }> = {
  immutablePaths: {
    help: "comma-separated folder prefixes agents may create notes under but never change, move or delete (default: sources/); \"\" for none",
    parse(v) {
      const list = v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => {
          try {
            return normalizeVaultPath(p) + "/";
          } catch (e) {
            throw new UsageError((e as Error).message);
          }
        });
      const unique = [...new Set(list)];
      if (unique.length > MAX_IMMUTABLE_PATHS) throw new UsageError(`immutablePaths takes at most ${MAX_IMMUTABLE_PATHS} prefixes; a parent folder covers those under it`);
      return JSON.stringify(unique);
    },
    show: (db) => immutablePathsIn(db).join(",") || '""',
  },
  auditRetentionDays: {
    help: `days the audit log keeps each agent tool call (default ${DEFAULT_RETENTION_DAYS}); older entries are pruned`,
    parse(v) {
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < 1 || n > 36500) throw new UsageError(`auditRetentionDays must be a whole number of days from 1 to 36500, got ${JSON.stringify(v)}`);
      return String(n);
    },
    show: (db) => String(retentionDays(db)),
  },
  auditMaxRows: {
    help: `the most audit log entries kept (default ${DEFAULT_MAX_ROWS}, ~120 bytes each); the oldest go first`,
    parse(v) {
      const n = Number(v.trim().replace(/_/g, ""));
      if (!Number.isInteger(n) || n < MIN_MAX_ROWS || n > MAX_MAX_ROWS) throw new UsageError(`auditMaxRows must be a whole number from ${MIN_MAX_ROWS} to ${MAX_MAX_ROWS}, got ${JSON.stringify(v)}`);
      return String(n);
    },
    show: (db) => String(maxRows(db)),
  },
  contextMode: {
    help: "off (default) | smart (writes without a prepare_context contextRunId are answered with a recommendation) | strict (they are refused)",
    parse(v) {
      const mode = v.trim().toLowerCase();
      if (!(CONTEXT_MODES as readonly string[]).includes(mode)) throw new UsageError(`contextMode is one of ${CONTEXT_MODES.join(", ")}, not ${JSON.stringify(v)}`);
      return mode;
    },
    show: (db) => contextMode(db),
  },
};

export const configCommand: Command = {
  name: "config",
  summary: "Show or change a vault's settings (immutable paths, audit retention, context mode)",
  usage: [
    "lettuce config <vault>                 show every setting",
    "lettuce config <vault> KEY             show one",
    "lettuce config <vault> KEY VALUE       change one (a running server sees it at once)",
    "",
    "Settings:",
    ...Object.entries(SETTINGS).map(([k, s]) => `  ${k}: ${s.help}`),
  ].join("\n"),
  async run(argv) {
    const { positionals } = parse(argv, {});
    const [dir, key, value] = positionals;
    const root = checkVaultDir(dir);
    if (key !== undefined && !SETTINGS[key]) throw new UsageError(`unknown setting ${JSON.stringify(key)}; known: ${Object.keys(SETTINGS).join(", ")}`);
    if (positionals.length > 3) throw new UsageError("config takes a vault, a key and a value");
    const db = openStateDb(root);
    try {
      if (key !== undefined && value !== undefined) {
        setSetting(db, key, SETTINGS[key]!.parse(value));
      }
      for (const [k, s] of Object.entries(SETTINGS)) {
        if (key === undefined || key === k) console.log(`${k}=${s.show(db)}`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};
