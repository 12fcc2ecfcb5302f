import { PortInUseError, startHttpServer } from "../server/serve";
import { serveStdio } from "../server/stdio";
import { announceEmbedder, announceServer, liveServer } from "../store/presence";
import { countActiveTokens, createFirstToken, SCOPES, type Scope } from "../store/tokens";
import { markServing, whenQuiet } from "../offload/activity";
import { SemanticService } from "../semantic/service";
import { VaultContext } from "../vault-context";
import { checkVaultDir } from "../vault-dir";
import { clientConfig } from "../web/client-config";
import { createLoginCode } from "../web/sessions";
import { intOption, parse, UsageError, type Command } from "./command";
import { lettuceCommand, shellQuote } from "./invocation";
import { loginUrl } from "./login";
import { endWebStreams } from "../web/events";
import { endDirectiveWaits } from "../work/directive-hub";

// How long a stopping server lets calls under way finish.
const STOP_GRACE_MS = 10_000;

export const DEFAULT_PORT = 51234;

export const serveCommand: Command = {
  name: "serve",
  summary: "Index a vault, keep it current, and serve MCP over HTTP",
  usage: [
    "lettuce serve <vault> [--port 51234] [--host 127.0.0.1] [--allow-host NAME]…",
    "",
    "Serves MCP (Streamable HTTP, stateless) at http://HOST:PORT/mcp. Requests need",
    "`Authorization: Bearer <token>`. On the first run a write token is created and printed",
    "once. --allow-host adds a Host/Origin name (e.g. a tailnet name) besides loopback.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, {
      port: { type: "string", short: "p" },
      host: { type: "string" },
      "allow-host": { type: "string", multiple: true },
    });
    if (positionals.length !== 1) throw new UsageError("serve takes exactly one vault path");
    const port = intOption(values.port, "port", DEFAULT_PORT);
    if (port > 65535) throw new UsageError("--port must be at most 65535");
    // Brackets are URL syntax, not part of the address ("[::1]" binds ::1; the URL adds them again).
    const host = (values.host ?? "127.0.0.1").trim().replace(/^\[(.*)\]$/, "$1");
    // An empty host made Bun listen on every interface, and the start then died on its own URL.
    if (!host) throw new UsageError("--host needs an address or a name, such as 127.0.0.1");
    if (["0.0.0.0", "::", "0", "*"].includes(host)) {
      console.error(`lettuce: --host ${host} listens on every network interface; the bearer token travels as plain HTTP there (use a tunnel or TLS in front, see docs/install.md)`);
    }
    // Asked before the index is opened: a server of an older Lettuce, still running after an upgrade, has
    // an index this version may want to rebuild, and opening it first would try to.
    const other = liveServer(checkVaultDir(positionals[0]!));
    if (other) {
      console.error(`lettuce: this vault is already served by pid ${other.pid} at ${other.url}`);
      return 1;
    }
    const vault = VaultContext.open(positionals[0]!);
    let running;
    try {
      running = startHttpServer(vault, { port, host, allowedHosts: values["allow-host"] });
    } catch (e) {
      vault.close();
      if (e instanceof PortInUseError) {
        console.error(`lettuce: ${e.message}`);
        return 1;
      }
      throw e;
    }
    const withdraw = announceServer(vault.root, running.url, vault.stateDb);
    if (!withdraw) {
      // Another serve started at the same moment and announced itself first.
      const other = liveServer(vault.root);
      await running.stop();
      vault.close();
      console.error(`lettuce: this vault is already served${other ? ` by pid ${other.pid} at ${other.url}` : ""}`);
      return 1;
    }
    console.log(`Lettuce is serving ${vault.root}`);
    console.log(`MCP endpoint: ${running.url}`);
    const cli = `${lettuceCommand()} token create ${shellQuote(vault.root)} --scope read|propose|write --name NAME`;
    const first = createFirstToken(vault.stateDb, "default", "write");
    if (first) {
      const { token } = first;
      console.log("\nFirst run: created a write token named \"default\". It is shown only this once:\n");
      console.log(`  ${token}\n`);
      console.log(clientConfig(running.url, token));
      console.log(`\nMore tokens: ${cli}\n`);
    } else {
      // Tokens are shown once, at creation; a person who lost theirs needs the way to a new one.
      const tokens = countActiveTokens(vault.stateDb);
      console.log(`${tokens} active token${tokens === 1 ? "" : "s"} (a token is printed once, when it is made). A new one: ${cli}`);
    }
    console.log(`Web UI (this link logs you in once, within 10 minutes; \`lettuce login <vault>\` prints a fresh one):\n  ${loginUrl(running.url, createLoginCode(vault.stateDb).code)}`);
    vault.startWatching();
    // Background embedding now leaves a core to requests (one model worker on ≤ 2 cores; docs/semantic.md).
    markServing();
    const t0 = performance.now();
    let lastLog = 0;
    vault.indexer
      .fullScan((s) => {
        const now = performance.now();
        if (s.total > 500 && now - lastLog > 2000) {
          lastLog = now;
          console.log(`Indexing… ${s.done}/${s.total}`);
        }
      })
      .then((c) => {
        const n = (vault.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
        console.log(`Index current: ${n} notes (${c.changed.length} new or changed) in ${Math.round(performance.now() - t0)} ms; ${vault.watchProblem ? `the file watch is incomplete: ${vault.watchProblem}` : "watching for changes"}.`);
        // The scan's listing leaves tens of MB of garbage at 100k notes (~80 MB with the journal's catch-up, which
        // ran here then); collected now, a lint right after start-up (its plan is built in a worker) does not stack
        // on top of it (peak 351 → ~290 MB).
        Bun.gc(true);
        warmNames(vault);
        return SemanticService.for(vault).enableBackground((line) => console.log(line));
      })
      .then((embedder) => {
        if (embedder) announceEmbedder(vault.root, embedder);
      })
      .catch((e) => console.error("lettuce: indexing failed:", e));

    const code = await new Promise<number>((resolve) => {
      const stop = () => resolve(0);
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      whileVaultStays(vault, "serve", () => resolve(1));
    });
    withdraw();
    // Calls under way finish and answer (up to STOP_GRACE_MS; a second signal stops at once); parked long
    // polls answer now.
    endDirectiveWaits(vault);
    endWebStreams(vault);
    const now = () => void running.stop();
    process.once("SIGINT", now);
    process.once("SIGTERM", now);
    await running.stop(code === 0 ? STOP_GRACE_MS : 0);
    vault.close();
    return code;
  },
};

export const stdioCommand: Command = {
  name: "stdio",
  summary: "Serve MCP over stdin/stdout (for clients that spawn servers)",
  usage: [
    "lettuce stdio <vault> [--scope read|propose|write]",
    "",
    "Speaks MCP on stdin/stdout. No token is needed (whoever starts the process owns it);",
    "the scope defaults to read.",
  ].join("\n"),
  async run(argv) {
    // Read first: a client that exits while the vault opens (a slow first index) is then seen too.
    const parent = process.ppid;
    const { values, positionals } = parse(argv, { scope: { type: "string" } });
    if (positionals.length !== 1) throw new UsageError("stdio takes exactly one vault path");
    const scope = (values.scope ?? "read") as Scope;
    if (!SCOPES.includes(scope)) throw new UsageError("--scope must be read, propose or write");
    const vault = VaultContext.open(positionals[0]!);
    // With `serve` running on the same vault, its watcher keeps the index current.
    if (!liveServer(vault.root)) {
      vault.startWatching();
      await vault.indexer.fullScan();
      warmNames(vault);
    }
    // Its client may keep it for days: a vault replaced meanwhile (a re-clone) got writes whose timeline went to the old one.
    whileVaultStays(vault, "stdio", () => process.exit(1));
    const clientGone = new AbortController();
    whileClientLives(parent, () => clientGone.abort());
    await serveStdio(vault, scope, { clientGone: clientGone.signal });
    vault.close();
    return 0;
  },
};

/** Once the server is quiet, the name list the first change needs, in slices (Indexer.warmResolver). */
function warmNames(vault: VaultContext): void {
  let closed = false;
  vault.onClose(() => (closed = true));
  void whenQuiet()
    .then(() => (closed ? undefined : vault.indexer.warmResolver()))
    .catch((e) => closed || console.error("lettuce: loading note names failed:", e));
}

/** Every 2 s, `problem()`; the first time it names one, say it and call `stop`. */
function stopWhen(problem: () => string | null, stop: () => void): void {
  const guard = setInterval(() => {
    const why = problem();
    if (!why) return;
    clearInterval(guard);
    console.error(`lettuce: ${why}`);
    stop();
  }, 2000);
  guard.unref();
}

/**
 * The client that started this process has exited: `stop`. A client that exits with an answer unread in the
 * pipe (stdin closed, stdout closed unread) leaves this process no event at all: it ran on for good as an
 * orphan holding the index, its users/ file blocking every rebuild (the lifecycle audit of 2026-12-05).
 */
function whileClientLives(parent: number, stop: () => void): void {
  stopWhen(() => (process.ppid === parent ? null : "the client that started `lettuce stdio` has exited; stopping once the calls under way are done."), stop);
}

/** The vault folder or its stores are no longer the ones opened (VaultContext.gone): say so and `stop`. */
function whileVaultStays(vault: VaultContext, command: string, stop: () => void): void {
  stopWhen(() => {
    const why = vault.gone();
    return why && `${why} while serving; stopping, so that nothing more is written to deleted files. Start \`lettuce ${command}\` again.`;
  }, stop);
}
