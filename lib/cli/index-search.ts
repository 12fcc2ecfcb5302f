import type { Database } from "bun:sqlite";
import type { IndexChange } from "../index/indexer";
import { indexMatchesDisk, startDiskFingerprint } from "../index/freshness";
import { searchNotes, type SearchPage } from "../retrieval/search";
import { openIndexIfCurrent } from "../store/index-db";
import { liveServer, type ServerPresence } from "../store/presence";
import type { VaultContext } from "../vault-context";
import { checkVaultDir } from "../vault-dir";
import { intOption, parse, UsageError, type Command } from "./command";
import { shownInTerminal } from "../control-chars";

/**
 * Open a vault and bring its index up to date, with a progress bar on a terminal.
 * When `lettuce serve` is running on the vault its watcher keeps the index
 * current, and a scan from here would go behind its back: read as it is
 * (`change` is then null).
 */
async function openAndScan(dir: string | undefined, quiet: boolean): Promise<{ vault: VaultContext; change: IndexChange | null; served: ServerPresence | null }> {
  // Loaded here, not at the top: a search of an unchanged vault never needs the indexer, the parser or the progress bar.
  const [{ VaultContext }, { indexProgress }] = await Promise.all([import("../vault-context"), import("./progress")]);
  // The server asked first: one of an older Lettuce may have an index this version would rebuild (openIndexDb
  // then refuses, naming it), and a current one keeps the index up to date itself.
  const served = liveServer(checkVaultDir(dir));
  const vault = VaultContext.open(dir as string);
  if (served) return { vault, change: null, served };
  const bar = quiet ? null : indexProgress("Indexing");
  try {
    return { vault, change: await vault.indexer.fullScan((s) => bar?.update(s)), served: null };
  } finally {
    bar?.stop();
  }
}

/**
 * A keyword search of a vault that needs no indexing, on its index opened to query and changing
 * nothing: a `serve` owns it, or every file matches it exactly (indexMatchesDisk). On Linux the
 * check's walk runs on native threads while this thread opens the index and searches; the result is
 * kept only if the check then says the index is current. null when there is no current index or
 * something changed: then the caller indexes and searches again.
 */
function searchIfFresh(dir: string | undefined, query: string, limit: number): SearchPage | null {
  const root = checkVaultDir(dir);
  const served = liveServer(root) !== null;
  const disk = served ? null : startDiskFingerprint(root);
  let db: Database | null = null;
  try {
    db = openIndexIfCurrent(root);
    if (!db) return null;
    const res = searchNotes(db, query, limit);
    return !disk || indexMatchesDisk(root, db, disk.get()) ? res : null;
  } catch {
    return null; // anything unexpected (a vanished folder, a busy file, a query in error): the full path decides, and says
  } finally {
    disk?.settle(); // the walk's threads are waited for on every path
    db?.close();
  }
}

export async function openIndexed(dir: string | undefined, quiet = false): Promise<VaultContext> {
  return (await openAndScan(dir, quiet)).vault;
}

export const indexCommand: Command = {
  name: "index",
  summary: "Build or update the vault's index, then exit",
  usage:
    "lettuce index <vault> [--json]\n\nScans the vault and indexes new or changed notes (unchanged ones are not re-read).\n" +
    "--json prints {notes, changed, deleted, ms}; while `lettuce serve` runs on the vault (it keeps the index current), {served: {pid, url}, indexed: false}.",
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("index takes exactly one vault path");
    const t0 = performance.now();
    const { vault, change, served } = await openAndScan(positionals[0], false);
    if (!change) {
      const server = served!;
      vault.close();
      if (values.json) console.log(JSON.stringify({ served: { pid: server.pid, url: server.url }, indexed: false }));
      else console.log(`A Lettuce server (pid ${server.pid}, ${server.url}) is serving this vault and keeps its index current.`);
      return 0;
    }
    const notes = (vault.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    const summary = { notes, changed: change.changed.length, deleted: change.deleted.length, ms: Math.round(performance.now() - t0) };
    vault.close();
    if (values.json) console.log(JSON.stringify(summary));
    else console.log(`Indexed ${summary.notes} note${summary.notes === 1 ? "" : "s"} (${summary.changed} new or changed, ${summary.deleted} removed) in ${summary.ms} ms`);
    return 0;
  },
};

export const searchCommand: Command = {
  name: "search",
  summary: "Search notes by keyword, or by meaning with --semantic / --hybrid",
  usage:
    [
      "lettuce search <vault> <query…> [--semantic | --hybrid] [--limit N] [--json]",
      "",
      'Keyword search by default, with the search tool\'s query language: words AND\'d as prefixes, "phrases",',
      "OR, NOT, -exclude; each hit shows its BM25 rank (lower is better). A -word after the query's first word",
      "is part of the query (`lettuce search notes quick -fox`); after `--` every word is (`-- -h`, `-- --json`).",
      "--semantic ranks by meaning (embeddings; the score is a cosine, higher is better), --hybrid fuses",
      "meaning and keywords (higher is better). Both embed new and changed notes first (see docs/semantic.md).",
      "",
      "Freshness: when `lettuce serve` runs on the vault, its watcher keeps the index current and the index is",
      "read as it is. Otherwise every note's and attachment's size, modification time and status change time",
      "are compared with the index first (each file is stat'ed, none is read; folder times alone would miss a note",
      "saved in place; the change time catches an edit whose modification time a tool put back), and new,",
      "changed, renamed or deleted files are indexed before searching.",
    ].join("\n"),
  async run(argv) {
    const { args, words } = holdQueryDashes(argv);
    const parsed = parse(args, { json: { type: "boolean" }, limit: { type: "string" }, semantic: { type: "boolean" }, hybrid: { type: "boolean" } });
    const { values } = parsed;
    const positionals = parsed.positionals.map((p) => words.get(p) ?? p);
    if (positionals.length < 2 || !positionals.slice(1).join(" ").trim()) throw new UsageError("search needs a vault and a query");
    if (values.semantic && values.hybrid) throw new UsageError("give --semantic or --hybrid, not both");
    if (values.semantic || values.hybrid) {
      const opts = { hybrid: !!values.hybrid, limit: intOption(values.limit, "limit", 10, 1), json: !!values.json };
      // The semantic stack (providers, the model, the vector index) loads only here.
      const { semanticSearchCli } = await import("./semantic");
      return semanticSearchCli(positionals[0]!, positionals.slice(1).join(" "), opts);
    }
    const limit = intOption(values.limit, "limit", 10, 1);
    const query = positionals.slice(1).join(" ");
    let res = searchIfFresh(positionals[0], query, limit);
    if (!res) {
      const vault = await openIndexed(positionals[0], true);
      try {
        res = searchNotes(vault.indexDb, query, limit);
      } finally {
        vault.close();
      }
    }
    if (values.json) console.log(JSON.stringify(res));
    else if (!res.items.length) console.log("No matches.");
    else {
      // partial: the substring scan (Chinese, Greek without accents…) stopped at its budget, so more notes may match.
      console.log(`${res.total}${res.partial ? "+" : ""} match${res.total === 1 ? "" : "es"}, best first (score: BM25 rank, lower is better)`);
      // Three significant digits: on a small vault BM25 ranks are tiny (-0.0000021 showed as -0.00 for every hit).
      for (const h of res.items) console.log(`${shownInTerminal(h.path)}  (${h.score.toPrecision(3)})\n    ${shownInTerminal(h.snippet.replace(/\s+/g, " "))}`);
    }
    return 0;
  },
};

/**
 * The query language excludes a word with a leading "-", which the option parser took for an option
 * (`lettuce search notes quick -fox`: "unknown option f"). A "-word" after the vault and the query's first
 * word is held out of the parser, under a stand-in positional, and put back in its place. "-h" stays help;
 * past "--" the parser itself reads every word as a positional.
 */
function holdQueryDashes(argv: string[]): { args: string[]; words: Map<string, string> } {
  const words = new Map<string, string>();
  const args: string[] = [];
  let positionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      args.push(...argv.slice(i));
      break;
    }
    if (a === "--limit") {
      args.push(a, ...argv.slice(i + 1, i + 2));
      i++;
      continue;
    }
    if (!a.startsWith("-") || a === "-") positionals++;
    else if (positionals >= 2 && /^-[^-]/.test(a) && a !== "-h") {
      const stand = `\u0000${words.size}`;
      words.set(stand, a);
      args.push(stand);
      continue;
    }
    args.push(a);
  }
  return { args, words };
}
