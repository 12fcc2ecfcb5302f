import { parseArgs, type ParseArgsConfig } from "node:util";

export interface Command {
  name: string; // "token" or "serve"
  summary: string; // one line for the command list
  usage: string; // full help text
  run(argv: string[]): Promise<number>; // exit code
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
  } catch (e) {
    const { code, message } = e as { code?: string; message: string };
    // Node's text for a mistyped flag advises on positional arguments that start with '-' and ends on an
    // unbalanced quote; the person mistyped a flag, so say which ones there are.
    const unknown = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /Unknown option '([^']+)'/.exec(message)?.[1] : undefined;
    if (unknown) {
      const known = Object.entries(options).map(([name, o]) => `--${name}${o.type === "string" ? " VALUE" : ""}`);
      throw new UsageError(`unknown option ${unknown}; ${known.length ? `the options are ${known.join(", ")}` : "this command takes no options"} (and --help)`);
    }
    throw new UsageError(message);
  }
}

export function intOption(v: string | undefined, name: string, def: number, min = 0): number {
  if (v === undefined) return def;
  // Decimal digits only: Number() read "" as 0 (--port "" served on a random port), "0x1F90" as 8080 and
  // "1e308" as a number SQLite then refused ("datatype mismatch"); the configuration audit.
  const t = v.trim();
  const n = /^\d+$/.test(t) ? Number(t) : Number.NaN;
  // An upper-case name is a positional argument (the edit ID), not a --flag.
  const what = name === name.toUpperCase() ? name : `--${name}`;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${what} needs a whole number${min > 0 ? ` of at least ${min}` : ""}, got ${JSON.stringify(v)}`);
  return n;
}
