import { machineFault, ToolError } from "../errors";
import { MissingVaultError, VaultError } from "../vault-dir";
import { VERSION } from "../version";
import { UsageError, type Command } from "./command";

/**
 * Every command by name, with its one-line summary, loaded only when run: a
 * command's module pulls in what it needs (the server, the model, the
 * providers, the web UI), and `lettuce search` should not pay for `serve`'s
 * imports. The summary here must equal the module's own (a test checks).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

const entry = (name: string, summary: string, load: () => Promise<Command>): CommandEntry => ({ name, summary, load });

export const COMMANDS: CommandEntry[] = [
  entry("serve", "Index a vault, keep it current, and serve MCP over HTTP", async () => (await import("./serve")).serveCommand),
  entry("stdio", "Serve MCP over stdin/stdout (for clients that spawn servers)", async () => (await import("./serve")).stdioCommand),
  entry("index", "Build or update the vault's index, then exit", async () => (await import("./index-search")).indexCommand),
  entry("search", "Search notes by keyword, or by meaning with --semantic / --hybrid", async () => (await import("./index-search")).searchCommand),
  entry("token", "Create, list and revoke access tokens", async () => (await import("./token")).tokenCommand),
  entry("config", "Show or change a vault's settings (immutable paths, audit retention, context mode)", async () => (await import("./config")).configCommand),
  entry("lint", "Check the vault's hygiene: broken links, orphans, tag problems", async () => (await import("./hygiene")).lintCommand),
  entry("health", "The vault's 0–100 wiki-health score and its components", async () => (await import("./hygiene")).healthCommand),
  entry("edits", "List the agent-edits timeline (what agents changed, newest first)", async () => (await import("./edits")).editsCommand),
  entry("revert", "Undo one agent edit from the timeline", async () => (await import("./edits")).revertCommand),
  entry("proposals", "Review what propose-only agents suggested: list, show (diff), approve, reject", async () => (await import("./proposals")).proposalsCommand),
  entry("review", "Mark a note human-reviewed at its current content (or list reviews)", async () => (await import("./review")).reviewCommand),
  entry("embed", "Embed new and changed notes for semantic search, prune deleted ones", async () => (await import("./semantic")).embedCommand),
  entry("related", "Notes related in meaning to a note and not yet linked with it", async () => (await import("./semantic")).relatedCommand),
  entry("eval", "Score retrieval against the vault's eval/questions.jsonl", async () => (await import("./semantic")).evalCommand),
  entry("answer", "Ask the wiki a question: an answer from the notes, with sources and quotes", async () => (await import("./answer")).answerCommand),
  entry("audit", "Show the audit log (every agent tool call, newest first)", async () => (await import("./audit")).auditCommand),
  entry("login", "Print a one-time login link to the web UI of the running server", async () => (await import("./login")).loginCommand),
  entry("doctor", "Check the vault, index, SQLite/sqlite-vec, providers, port and watcher; say what to fix", async () => (await import("./doctor")).doctorCommand),
  entry("version", "Print the version, commit and build date (--verbose: SQLite, vector storage, embedded files)", async () => (await import("./version")).versionCommand),
];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `lettuce ${VERSION}: a local-first knowledge server for a folder of Markdown notes`,
    "",
    "Usage: lettuce <command> [options]",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `lettuce help <command>` (or `lettuce <command> --help`) for a command's options.",
    "Exit codes: 0 success, 1 failure (a missing vault folder, a refusal, lint warnings), 2 a usage mistake.",
  ].join("\n");
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    // `lettuce help <command>` is that command's --help, as in git.
    const topic = name === "help" ? rest[0] : undefined;
    const found = topic ? COMMANDS.find((c) => c.name === topic) : undefined;
    if (topic && !found) {
      console.error(`lettuce: unknown command ${JSON.stringify(topic)}\n\n${mainHelp()}`);
      return 2;
    }
    console.log(found ? (await found.load()).usage : mainHelp());
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-V" || name === "-v") return runCli(["version", ...rest]);
  const found = COMMANDS.find((c) => c.name === name);
  if (!found) {
    console.error(`lettuce: unknown command ${JSON.stringify(name)}\n\n${mainHelp()}`);
    return 2;
  }
  const cmd = await found.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(cmd.usage);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof UsageError || e instanceof MissingVaultError) {
      console.error(`lettuce ${cmd.name}: ${e.message}\n\n${cmd.usage}`);
      return 2;
    }
    // A refusal from the engine (a conflict, an unknown id, no provider) or a full disk: its message is for people.
    const fault = machineFault(e);
    const refusal = e instanceof VaultError || e instanceof ToolError ? e : fault?.kind === "disk-full" ? fault : null;
    if (refusal) {
      // A script that asked for JSON gets the refusal as JSON on stdout too, with the kind to branch on.
      if (rest.includes("--json")) console.log(JSON.stringify({ error: refusal.message, kind: refusal instanceof ToolError ? refusal.kind : "vault-error" }));
      console.error(`lettuce ${cmd.name}: ${refusal.message}`);
      return 1;
    }
    // A vault the user may not read or write: say what Lettuce needs there, not just the errno.
    const code = (e as NodeJS.ErrnoException)?.code;
    // SQLite says it in its own words: a store owned by another user (root ran a command once) is
    // "attempt to write a readonly database" or "unable to open database file" (the lifecycle audit).
    const sqliteAccess = /^SQLITE_(READONLY|CANTOPEN)/.test(String(code ?? "")) || /attempt to write a readonly database|unable to open database file/i.test((e as Error)?.message ?? "");
    if (code === "EACCES" || code === "EPERM" || code === "EROFS" || sqliteAccess) {
      const where = (e as NodeJS.ErrnoException).path ?? (sqliteAccess ? "a database in .lettuce/" : "the vault");
      console.error(
        `lettuce ${cmd.name}: cannot use ${where} (${code === "EROFS" ? "read-only file system" : "permission denied"}). ` +
          "Lettuce keeps its index, tokens and timeline in .lettuce/ inside the vault folder: give your user write access to it. `lettuce doctor <vault>` checks this.",
      );
      return 1;
    }
    throw e;
  }
}
