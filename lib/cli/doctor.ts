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
import { inspectIndex } from "../store/inspect";
import { liveServer } from "../store/presence";
import { sqliteInfo } from "../store/sqlite-lib";
import { indexDbPath, lettuceDir } from "../store/index-db";
import { STATE_MIGRATIONS, stateDbPath } from "../store/state-db";
import { schemaVersion } from "../store/migrate";
import { CACHE_SCHEMA_VERSION } from "../semantic/cache";
import { scanVault } from "../vault/scan";
import { checkVaultDir } from "../vault-dir";
import { intOption, parse, UsageError, type Command } from "./command";
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

function indexChecks(root: string, notesOnDisk: number, storageNow: string, out: Check[]): { model: string | null; dim: number | null } {
  const ix = inspectIndex(root);
  if (!ix.exists) {
    out.push({ check: "index", status: "warn", detail: "not built yet", fix: `run \`lettuce index ${root}\`, or just \`lettuce serve ${root}\`, which builds it` });
    return { model: null, dim: null };
  }
  if (ix.error) {
    const access = accessProblem(root, ix.error);
    out.push(
      access
        ? { check: "index", status: "fail", detail: `index.db cannot be opened here: ${access}`, fix: ACCESS_FIX }
        : { check: "index", status: "fail", detail: `index.db cannot be read: ${ix.error}`, fix: `stop Lettuce and delete ${indexDbPath(root)}; it is rebuilt from the notes (embeddings are kept in embeddings.db)` },
    );
    return { model: null, dim: null };
  }
  const behind = ix.notes !== notesOnDisk;
  out.push({
    check: "index",
    status: behind ? "warn" : "ok",
    detail: `${ix.notes} notes indexed (${notesOnDisk} on disk), format ${ix.format ?? "?"}${ix.format && ix.format !== ix.currentFormat ? ` (this Lettuce uses ${ix.currentFormat}: it will rebuild it)` : ""}`,
    ...(behind ? { fix: `run \`lettuce index ${root}\` (a running \`lettuce serve\` catches up by itself)` } : {}),
  });
  if (ix.vectorStorage && ix.vectorStorage !== storageNow) {
    out.push({ check: "index", status: "info", detail: `vectors were stored with ${ix.vectorStorage}; this machine gets ${storageNow}: the next start moves them (from the embeddings cache, nothing is embedded again)` });
  }
  if (ix.embedModel) out.push({ check: "index", status: "info", detail: `${ix.embeddedNotes} notes embedded with ${ix.embedModel}${ix.embedDim ? ` (${ix.embedDim}-d)` : ""}` });
  return { model: ix.embedModel, dim: ix.embedDim };
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

// A store that cannot be opened because of where it is (a read-only file system, another user's folder) is
// not damaged: doctor told such a person to delete index.db and move state.db aside, and following that
// after remounting threw away their tokens, timeline, proposals and audit log (the lifecycle audit).
const ACCESS_FIX = "nothing is damaged: run Lettuce as the user who owns the vault's .lettuce folder, on a file system it may write (a read-only vault needs a writable .lettuce, e.g. a bind mount)";

/** Why the stores in .lettuce cannot be opened by this user here, when that is the reason; null otherwise. */
function accessProblem(root: string, message: string): string | null {
  try {
    accessSync(lettuceDir(root), fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "EROFS") return "the file system is read-only";
    if (code === "EACCES" || code === "EPERM") return `this user may not write ${lettuceDir(root)}`;
  }
  return /readonly database|read-only file system|permission denied/i.test(message) ? message : null;
}

/** Every check, in order; never throws for a problem it is meant to find. */
/**
 * state.db holds what cannot be rebuilt from the notes: tokens, the agent-edits timeline,
 * proposals, the audit log. A damaged one stopped `serve` with only "database disk image is
 * malformed", while doctor said nothing was wrong.
 */
function stateChecks(root: string, out: Check[]): void {
  const path = stateDbPath(root);
  if (!existsSync(path)) return;
  try {
    const db = new Database(path, { readonly: true });
    try {
      db.exec("PRAGMA busy_timeout = 2000");
      const rows = db.query("PRAGMA quick_check").all() as { quick_check: string }[];
      if (rows.length !== 1 || rows[0]!.quick_check !== "ok") throw new Error(rows.map((r) => r.quick_check).slice(0, 3).join("; "));
      // Whole, but written by a newer Lettuce (the person went back a version): every command refuses it.
      const version = schemaVersion(db);
      if (version > STATE_MIGRATIONS.length) {
        out.push({
          check: "state",
          status: "fail",
          detail: `state.db is of schema version ${version}, written by a newer Lettuce than this one (${STATE_MIGRATIONS.length}): every command refuses it`,
          fix: "run the newer Lettuce again; this one cannot read its tokens, timeline or proposals",
        });
        return;
      }
    } finally {
      db.close();
    }
    out.push({ check: "state", status: "ok", detail: "state.db (tokens, the agent-edits timeline, proposals, the audit log) reads back whole" });
  } catch (e) {
    const access = accessProblem(root, (e as Error).message);
    if (access) {
      out.push({ check: "state", status: "fail", detail: `state.db cannot be opened here: ${access}`, fix: ACCESS_FIX });
      return;
    }
    out.push({
      check: "state",
      status: "fail",
      detail: `state.db cannot be read: ${(e as Error).message}`,
      fix: `stop Lettuce and move ${path} aside (with its -wal and -shm files): the next start makes a new one. The notes are untouched; tokens must be created again, and the old timeline, proposals and audit log stay in the file moved aside (\`sqlite3 state.db .recover\` may save them)`,
    });
  }
}

/** embeddings.db from a newer Lettuce: semantic calls still work, without a cache (lib/semantic/cache.ts). */
function cacheCheck(root: string, out: Check[]): void {
  const path = join(lettuceDir(root), "embeddings.db");
  if (!existsSync(path)) return;
  try {
    const db = new Database(path, { readonly: true });
    try {
      const version = schemaVersion(db);
      if (version > CACHE_SCHEMA_VERSION) {
        out.push({
          check: "embeddings",
          status: "warn",
          detail: `embeddings.db is of schema version ${version}, written by a newer Lettuce (this one knows ${CACHE_SCHEMA_VERSION}): left as it is, and this version embeds without a cache (every start embeds again)`,
          fix: "run the newer Lettuce again, or move embeddings.db aside to let this one keep a cache of its own",
        });
      }
    } finally {
      db.close();
    }
  } catch {
    /* unreadable: the semantic layer says so when it is used */
  }
}

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
