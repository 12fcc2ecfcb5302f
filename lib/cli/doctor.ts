// `lettuce doctor <vault>`: check what Lettuce needs on this machine (the
// vault, its index, SQLite and sqlite-vec, the model providers, the port, the
// watcher) and say what to do about each problem. It reads and probes; it
// changes nothing (the index is opened read-only).
import { Database } from "bun:sqlite";
import { accessSync, constants as fsConstants, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { caseTwins, isCaseInsensitive } from "../platform/case";
import { MODEL_FILES } from "../providers/builtin-assets";
import { ollamaHost, probeOllama, sameOllamaModel, DEFAULT_OLLAMA_EMBED_MODEL } from "../providers/ollama";
import { selectChat, selectEmbedder } from "../providers/select";
import { liveServer } from "../store/presence";
import { sqliteInfo } from "../store/sqlite-lib";
import { lettuceDir } from "../store/index-db";
import { scanVault } from "../vault/scan";
import { checkVaultDir } from "../vault-dir";
import { intOption, parse, UsageError, type Command } from "./command";
import { cacheCheck, indexChecks, stateChecks } from "./doctor-stores";
import { DEFAULT_PORT } from "./serve";
import { versionReport } from "./version";

export type Status = "ok" | "warn" | "fail" | "info";

export interface Check {
  check: string;
  status: Status;
  detail: string;
  /** What to do about it (warn and fail only). */
  fix?: string;
}

type Env = Record<string, string | undefined>;

function vaultChecks(root: string, out: Check[]): { folders: number; notes: number } {
  const listing = scanVault(root);
  const caseNote = isCaseInsensitive(root) ? "case-insensitive file system: names differing only in case are one file" : "case-sensitive file system";
  out.push({ check: "vault", status: listing.notes.length ? "ok" : "warn", detail: `${listing.notes.length} notes, ${listing.attachments.length} other files in ${root} (${caseNote})`, ...(listing.notes.length ? {} : { fix: "this folder holds no .md notes: is it the right vault?" }) });
  const twins = caseTwins([...listing.notes, ...listing.attachments].map((f) => f.path));
  if (twins.length) {
    const shown = twins.slice(0, 3).map((g) => g.join(" / ")).join("; ");
    out.push({
      check: "vault",
      status: "warn",
      detail: `${twins.length} group${twins.length > 1 ? "s" : ""} of files differ only in letter case (${shown}${twins.length > 3 ? "; …" : ""})`,
      fix: "rename one of each: on macOS and Windows, and in most sync tools, they are one file and one would be lost",
    });
  }
  // Notes this user may not read are never indexed: without this line doctor said "run lettuce index" for
  // them, and the advice never went away (the lifecycle audit).
  const unreadable = listing.notes.filter((n) => {
    try {
      accessSync(join(root, n.path), fsConstants.R_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (unreadable.length) {
    out.push({
      check: "vault",
      status: "warn",
      detail: `${unreadable.length} note${unreadable.length > 1 ? "s" : ""} this user may not read (${unreadable.slice(0, 3).map((n) => n.path).join(", ")}${unreadable.length > 3 ? ", …" : ""}): never indexed`,
      fix: "give the user who runs Lettuce read access to them, or leave them out on purpose",
    });
  }
  // A probe file (a dot-file, which the index ignores) in .lettuce/, or in the vault when .lettuce/ is not made yet.
  const where = existsSync(lettuceDir(root)) ? lettuceDir(root) : root;
  const probe = join(where, `.lettuce-doctor-${process.pid}.tmp`);
  try {
    writeFileSync(probe, "", { flag: "wx" });
    rmSync(probe);
    out.push({ check: "vault", status: "ok", detail: `${where} is writable (Lettuce keeps its index and state in .lettuce/)` });
  } catch (e) {
    out.push({ check: "vault", status: "fail", detail: `cannot write in ${where}: ${(e as Error).message}`, fix: "give your user write access to the vault folder (Lettuce keeps its databases in .lettuce/ inside it)" });
  }
  return { folders: listing.folders.length, notes: listing.notes.length - unreadable.length };
}

function sqliteChecks(out: Check[]): string {
  const s = sqliteInfo();
  let fts = true;
  try {
    const db = new Database(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(x)");
    db.close();
  } catch {
    fts = false;
  }
  if (s.error) out.push({ check: "sqlite", status: "fail", detail: `LETTUCE_SQLITE_LIB could not be used: ${s.error}`, fix: "point LETTUCE_SQLITE_LIB at a SQLite shared library (libsqlite3.dylib), or unset it" });
  out.push({ check: "sqlite", status: fts ? "ok" : "fail", detail: `SQLite ${s.version} (${s.library})${fts ? ", FTS5 available" : ", no FTS5"}`, ...(fts ? {} : { fix: "this SQLite lacks FTS5, which search needs: unset LETTUCE_SQLITE_LIB or use a SQLite built with FTS5" }) });
  const v = versionReport().vectors;
  if (v.storage === "sqlite-vec") {
    out.push({ check: "sqlite-vec", status: "ok", detail: `sqlite-vec ${v.sqliteVec} loads (from ${v.loadedFrom})` });
  } else {
    const forced = /LETTUCE_VECTOR_STORAGE/.test(v.reason ?? "");
    const fix =
      process.platform === "darwin"
        ? "nothing is required (vectors go to plain tables). To use sqlite-vec: `brew install sqlite` and set LETTUCE_SQLITE_LIB=$(brew --prefix sqlite)/lib/libsqlite3.dylib"
        : /another user|writable by other|symbolic link|not a (folder|regular file)/.test(v.reason ?? "")
          ? "nothing is required (vectors go to plain tables). To use sqlite-vec, fix the cache folder's ownership/permissions or set LETTUCE_CACHE_DIR to a folder only you can write"
          : "nothing is required: vectors go to plain tables and every tool works";
    out.push({ check: "sqlite-vec", status: forced ? "info" : "warn", detail: `not used: ${v.reason}`, ...(forced ? {} : { fix }) });
  }
  return v.storage;
}

async function providerChecks(env: Env, index: { model: string | null; dim: number | null }, out: Check[]): Promise<void> {
  const host = ollamaHost(env.OLLAMA_HOST);
  const embedChoice = (env.LETTUCE_EMBED_PROVIDER?.trim() || "auto").toLowerCase();
  const wanted = env.LETTUCE_EMBED_MODEL?.trim() || DEFAULT_OLLAMA_EMBED_MODEL;
  const usesOllama = embedChoice === "ollama" || (embedChoice === "auto" && !env.LETTUCE_EMBED_BASE_URL?.trim());
  const models = await probeOllama(host);
  if (!models) {
    out.push({
      check: "ollama",
      status: embedChoice === "ollama" ? "fail" : usesOllama ? "warn" : "info",
      detail: `no answer at ${host}`,
      ...(usesOllama ? { fix: `start Ollama (\`ollama serve\`) or set OLLAMA_HOST to where it runs${embedChoice === "auto" ? "; until then the built-in model embeds (slower, works offline)" : ""}` } : {}),
    });
  } else {
    out.push({ check: "ollama", status: "ok", detail: `reachable at ${host}: ${models.length} models (${models.slice(0, 6).join(", ")}${models.length > 6 ? ", …" : ""})` });
    if (usesOllama && !models.some((m) => sameOllamaModel(m, wanted))) {
      out.push({ check: "ollama", status: embedChoice === "ollama" ? "fail" : "warn", detail: `the embedding model ${wanted} is not pulled`, fix: `run \`ollama pull ${wanted}\`` });
    }
  }

  const sel = await selectEmbedder(env);
  if (!sel.provider) {
    out.push({ check: "embeddings", status: "warn", detail: `none: ${sel.reason}`, fix: "semantic_search, related_notes and the other meaning-based tools need one: unset LETTUCE_EMBED_PROVIDER to use the built-in model, or run Ollama" });
  } else if (sel.provider.kind === "builtin") {
    const missing = [MODEL_FILES.modelJson, MODEL_FILES.vocabJson, ...Object.values(MODEL_FILES.shards)].filter((f) => !existsSync(f));
    out.push(
      missing.length
        ? { check: "embeddings", status: "fail", detail: `built-in model: ${missing.length} model files missing (${missing[0]})`, fix: "reinstall (npm ci) or download the binary again" }
        : { check: "embeddings", status: "ok", detail: `built-in model, ${sel.provider.dimension}-d (${sel.reason})` },
    );
    dimensionCheck(sel.provider.id, sel.provider.dimension, index, out);
  } else {
    try {
      const [v] = await sel.provider.embed(["lettuce doctor"], { purpose: "query", signal: AbortSignal.timeout(20_000) });
      out.push({ check: "embeddings", status: "ok", detail: `${sel.provider.id} answers with ${v!.length}-d vectors (${sel.reason})` });
      dimensionCheck(sel.provider.id, v!.length, index, out);
    } catch (e) {
      out.push({ check: "embeddings", status: "fail", detail: `${sel.provider.id} failed: ${(e as Error).message}`, fix: "fix the provider named above, or unset LETTUCE_EMBED_PROVIDER/LETTUCE_EMBED_BASE_URL to fall back to the built-in model" });
    }
    sel.provider.close();
  }

  const chat = await selectChat(env);
  out.push(
    chat.provider
      ? { check: "llm", status: "ok", detail: `${chat.provider.id} (${chat.reason})` }
      : { check: "llm", status: "info", detail: `none: ${chat.reason}. Only answer, lint_semantic, suggest_tags, query expansion (expand) and eval's faithfulness score need one` },
  );
}

function dimensionCheck(id: string, dim: number | null, index: { model: string | null; dim: number | null }, out: Check[]): void {
  if (!index.model || !index.dim || !dim) return;
  if (index.model !== id) {
    out.push({ check: "embeddings", status: "info", detail: `the index holds ${index.model} vectors; the first semantic call re-embeds the vault with ${id}` });
  } else if (index.dim !== dim) {
    out.push({ check: "embeddings", status: "fail", detail: `${id} now answers ${dim}-d vectors but the index holds ${index.dim}-d ones of the same name (the model changed behind it)`, fix: "run `lettuce embed --rebuild <vault>`" });
  }
}

async function portCheck(root: string, port: number, out: Check[]): Promise<void> {
  const server = liveServer(root);
  if (server) {
    out.push({ check: "port", status: "ok", detail: `this vault is being served by pid ${server.pid} at ${server.url}` });
    return;
  }
  try {
    const s = Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response(null) });
    await s.stop(true);
    out.push({ check: "port", status: "ok", detail: `127.0.0.1:${port} is free for \`lettuce serve\`` });
  } catch (e) {
    out.push({ check: "port", status: "fail", detail: `127.0.0.1:${port} is taken by another program (${(e as Error).message})`, fix: `serve on another port: \`lettuce serve ${root} --port ${port + 1}\`` });
  }
}

/**
 * Every folder Bun's recursive watch takes a watch for: hidden and ignored ones too (.git's objects, node_modules),
 * which the index leaves out and the count here used to (a vault of 21 indexed folders and 300 in .git said ✓).
 * Symlinks are not followed, as the watch does not follow them. Stops counting past `enough`.
 */
function foldersToWatch(root: string, enough: number): number {
  let n = 1;
  const stack = [root];
  while (stack.length && n <= enough) {
    let entries;
    try {
      entries = readdirSync(stack.pop()!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      n++;
      stack.push(join(e.parentPath, e.name));
    }
  }
  return n;
}

function readLimit(path: string): number {
  try {
    return Number(readFileSync(path, "utf8").trim()) || 0;
  } catch {
    return 0; // not readable: no limit known from here
  }
}

function watcherCheck(root: string, out: Check[]): void {
  if (process.platform !== "linux") {
    out.push({ check: "watcher", status: "info", detail: `Bun's recursive fs.watch (${process.platform === "darwin" ? "FSEvents" : "ReadDirectoryChangesW"})` });
    return;
  }
  // The system-wide setting, and the one of this user namespace (a container's may be lower).
  const limit = Math.min(...[readLimit("/proc/sys/fs/inotify/max_user_watches"), readLimit("/proc/sys/user/max_inotify_watches")].map((l) => l || Infinity));
  const need = foldersToWatch(root, Number.isFinite(limit) ? limit * 2 : 1_000_000);
  if (Number.isFinite(limit) && need > limit * 0.8) {
    out.push({
      check: "watcher",
      status: "warn",
      detail: `${need} folders to watch (hidden ones such as .git count too); inotify allows ${limit} per user, shared with every other program that watches: past it, changes are found by a full scan every 15 s or more`,
      fix: `raise it: \`sudo sysctl fs.inotify.max_user_watches=${Math.max(524288, need * 2)}\``,
    });
  } else {
    out.push({ check: "watcher", status: "ok", detail: `inotify: ${need} folders to watch${Number.isFinite(limit) ? ` (limit ${limit})` : ""}` });
  }
}

/** Every check, in order; never throws for a problem it is meant to find. */
export async function runDoctor(dir: string, opts: { port?: number; env?: Env } = {}): Promise<Check[]> {
  const env = opts.env ?? process.env;
  const out: Check[] = [];
  let root: string;
  try {
    root = checkVaultDir(dir);
  } catch (e) {
    out.push({ check: "vault", status: "fail", detail: (e as Error).message, fix: "give the path of your notes folder" });
    return out;
  }
  const { notes } = vaultChecks(root, out);
  const storage = sqliteChecks(out);
  const index = indexChecks(root, notes, storage, out);
  stateChecks(root, out);
  cacheCheck(root, out);
  await providerChecks(env, index, out);
  await portCheck(root, opts.port ?? DEFAULT_PORT, out);
  watcherCheck(root, out);
  return out;
}

const MARK: Record<Status, string> = { ok: "✓", warn: "!", fail: "✗", info: "·" };

export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the vault, index, SQLite/sqlite-vec, providers, port and watcher; say what to fix",
  usage: [
    "lettuce doctor <vault> [--port 51234] [--json]",
    "",
    "Checks what Lettuce needs and prints what to do about each problem. Exit code 1 when",
    "something is broken (✗), 0 otherwise (warnings (!) have workarounds). Changes nothing.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { port: { type: "string", short: "p" }, json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("doctor takes exactly one vault path");
    const port = intOption(values.port, "port", DEFAULT_PORT);
    const checks = await runDoctor(positionals[0]!, { port });
    const ok = !checks.some((c) => c.status === "fail");
    if (values.json) {
      console.log(JSON.stringify({ ok, checks }, null, 2));
    } else {
      const width = Math.max(...checks.map((c) => c.check.length));
      for (const c of checks) {
        console.log(`${MARK[c.status]} ${c.check.padEnd(width)}  ${c.detail}`);
        if (c.fix) console.log(`  ${" ".repeat(width)}  → ${c.fix}`);
      }
      console.log(ok ? "\nNo problems that stop Lettuce." : "\nFix the ✗ lines above.");
    }
    return ok ? 0 : 1;
  },
};
