import type { Database } from "bun:sqlite";
import { setFtsGeneration } from "../store/fts-db";
import { BULK_LOAD_INDEXES, getMeta, setMeta } from "../store/index-db";
import { targetKeyOf } from "../vault/parse";
import { foldName, lstatInVault } from "../vault/paths";
import { scanVaultYielding, type FileEntry } from "../vault/scan";
import type { ParseRequest, ParseResult } from "./parse-job";
import { bulkThreshold, isColdStart, restoreFirstSeenTimes, startEarly, type EarlyStart } from "./cold-start";
import { coldTrace } from "./cold-trace";
import { FtsSink } from "./fts-sink";
import { NoteRows } from "./note-rows";
import { reresolveColdStart, reresolveKeysInTurns, RERESOLVE_PENDING, settleInterruptedResolution } from "./reresolve";
import { BIG_NOTE_BYTES, parseAll } from "./parse-pool";
import { diffListing, hashLookup, knownNotes, resolverFrom, resolverInSlices, type KnownNote } from "./known-rows";
import { beginWriting, BUSY_RETRY_WAITS_MS, isBusy } from "../store/write-lock";
import { OtherWriters } from "./other-writers";
import { comparePaths } from "./path-diff";
import type { LinkResolver } from "./resolver";

export interface IndexStatus {
  state: "starting" | "scanning" | "ready";
  total: number;
  done: number;
  indexedAt: string | null;
}

/** What one index pass changed; listeners (directives, embeddings) react to it. */
export interface IndexChange {
  changed: string[]; // notes created or whose content changed
  deleted: string[]; // notes removed
  attachments: string[]; // attachments added, changed or removed
}

// Commit at least this often during a long scan so that a crash keeps most of the work.
const COMMIT_EVERY = 2000;

/** apply()'s answer when another process committed while this pass was planned: plan it again. */
const STALE = Symbol("stale plan");

export class Indexer {
  private _resolver: LinkResolver | null = null;
  status: IndexStatus = { state: "starting", total: 0, done: 0, indexedAt: null };
  private queue: Promise<unknown> = Promise.resolve();
  private listeners = new Set<(c: IndexChange) => void>();
  private scanListeners = new Set<() => void>();
  private rows: NoteRows;
  private ftsSink: FtsSink | null = null;
  private generations = 0;
  private others: OtherWriters;

  constructor(
    readonly root: string,
    readonly db: Database,
  ) {
    this.rows = new NoteRows(db);
    this.others = new OtherWriters(db);
    this.status.indexedAt = getMeta(db, "indexedAt");
  }

  /** At the start of a pass: what another process committed since the last one makes the name list stale. */
  private catchUpWithOthers(): boolean {
    if (!this.others.wroteSince()) return false;
    this.resetResolver();
    return true;
  }

  /**
   * Every note name and alias, for resolving links. Loaded on first use: a CLI
   * `search` on an unchanged vault never needs it (JSON-parsing every note's
   * aliases cost ~10 ms per 10k notes on each start).
   */
  get resolver(): LinkResolver {
    if (!this._resolver) this._resolver = resolverFrom(this.db);
    return this._resolver;
  }

  /**
   * Build the name list ahead of the first change, in slices between which requests are answered: after an
   * unchanged restart (which loads no name list) the first save or write built it in one stretch, ~0.2 s of
   * the request thread at 100k notes. Queued as a pass, so that no pass changes the notes meanwhile.
   */
  warmResolver(): Promise<void> {
    return this.serial(async () => {
      if (this._resolver) return;
      const built = await resolverInSlices(this.db);
      this._resolver ??= built;
    });
  }

  onChange(fn: (c: IndexChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Called after each completed full scan, when the index matches the disk as a
   * whole (the change journal reconciles then: a rebuilt index reports no
   * deletions, but a note deleted while the server was down is gone from it).
   */
  onScanned(fn: () => void): () => void {
    this.scanListeners.add(fn);
    return () => this.scanListeners.delete(fn);
  }

  /** Passes queued or running (serial). */
  private queued = 0;

  /** Whether no pass is queued or running: a caller that must not wait behind one (read_note) asks first. */
  get idle(): boolean {
    return this.queued === 0;
  }

  /** Run index mutations one at a time: the watcher, write tools and scans all come through here. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    this.queued++;
    const run = this.queue.then(fn, fn).finally(() => this.queued--);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Bring the whole index in line with the disk; only new or changed files are read. */
  fullScan(onProgress?: (s: IndexStatus) => void): Promise<IndexChange> {
    return this.serial(async () => {
      const was = this.status.state;
      this.status = { ...this.status, state: "scanning", total: 0, done: 0 };
      coldTrace("scan start");
      // Yielding now and then: requests that arrive meanwhile (the server starts with this scan) are answered.
      // A listing that fails (the folder unreadable for a moment) leaves the state as it was, not "scanning" for good.
      const listing = await scanVaultYielding(this.root).catch((e) => {
        this.status.state = was;
        throw e;
      });
      coldTrace("scan done");
      let change: IndexChange | typeof STALE;
      let unchanged: boolean;
      for (let attempt = 0; ; attempt++) {
        // A plan made again (STALE) is so because another process committed: its changes count as foreign.
        const foreign = this.catchUpWithOthers() || attempt > 0;
        const known = knownNotes(this.db);
        const early = startEarly(this.root, this.db, known, listing.notes.length);
        const { todo, deleted, attachments, goneFiles } = diffListing(this.db, listing, known);
        this.status.total = todo.length;
        onProgress?.(this.status);
        // Nothing to change (a restart on an unchanged vault, a CLI search): no write transaction at all.
        unchanged = !todo.length && !deleted.length && !attachments.length && !goneFiles.length;
        if (unchanged) early?.discard();
        // A pass that died after an intermediate commit (see apply): its links are retried even if nothing changed since.
        if (unchanged && getMeta(this.db, RERESOLVE_PENDING) === "1") this.db.transaction(() => settleInterruptedResolution(this.db, this.rows, this.resolver))();
        change = unchanged ? { changed: [], deleted: [], attachments: [] } : await this.apply(todo, deleted, attachments, goneFiles, known, { onProgress, early, foreign, last: attempt >= 2 });
        if (change !== STALE) break;
      }
      restoreFirstSeenTimes(this.db);
      // An unchanged vault whose index was complete before: current in memory, and the file is not
      // written at all (a CLI search would otherwise commit, and checkpoint at close, every time).
      this.markCurrent(unchanged && this.status.indexedAt !== null);
      for (const fn of this.scanListeners) {
        try {
          fn();
        } catch (err) {
          console.error("index scan listener failed:", err);
        }
      }
      return change;
    });
  }

  /**
   * Re-index specific vault-relative paths (files or folders, existing or gone).
   * The watcher and the write tools call this; it resolves once the index reflects the disk.
   */
  update(paths: string[], opts: { noWait?: boolean } = {}): Promise<IndexChange> {
    return this.serial(async () => {
      // The vault folder itself gone (an unmounted drive, a sync client's rename): every path would look deleted.
      // An error instead, as the full scan's; the index keeps its notes until the folder is back.
      if (!lstatInVault(this.root, "")?.isDirectory()) throw new Error(`cannot list the vault folder ${this.root}`);
      // attempt: plans made again because another process committed; a pass started again after SQLITE_BUSY is not one.
      for (let attempt = 0, busyWaits = 0; ; ) {
        // A plan made again (STALE) is so because another process committed: its changes count as foreign.
        const foreign = this.catchUpWithOthers() || attempt > 0;
        const { known, diff } = await comparePaths(this.root, this.db, paths, foreign);
        const { todo, deleted, attachments, goneFiles } = diff;
        if (!todo.length && !deleted.length && !attachments.length && !goneFiles.length) {
          return { changed: [], deleted: [], attachments: [] };
        }
        let change: IndexChange | typeof STALE;
        try {
          change = await this.apply(todo, deleted, attachments, goneFiles, known, { foreign, last: attempt >= 2, noWait: opts.noWait });
        } catch (e) {
          // SQLITE_BUSY at once (a read gone stale: seen after a bulk scan for 50-500 ms); a new pass gets past it.
          if (opts.noWait || !isBusy(e) || busyWaits >= BUSY_RETRY_WAITS_MS.length) throw e;
          await Bun.sleep(BUSY_RETRY_WAITS_MS[busyWaits++]!);
          continue;
        }
        if (change === STALE) {
          attempt++;
          continue;
        }
        if (this.status.state === "ready") this.markCurrent();
        return change;
      }
    });
  }

  private markCurrent(inMemoryOnly = false): void {
    const now = new Date().toISOString();
    if (!inMemoryOnly) setMeta(this.db, "indexedAt", now);
    this.status = { ...this.status, state: "ready", indexedAt: now };
  }

  private async apply(
    todo: FileEntry[],
    deleted: string[],
    attachments: FileEntry[],
    goneFiles: string[],
    known: Map<string, KnownNote>,
    opts: { onProgress?: (s: IndexStatus) => void; early?: EarlyStart; foreign?: boolean; last?: boolean; noWait?: boolean } = {},
  ): Promise<IndexChange | typeof STALE> {
    const { onProgress, early, foreign } = opts;
    const db = this.db;
    beginWriting(db, opts.noWait);
    // Another process committed between the read of `known` and the lock (it indexed the same saves): the
    // plan may insert a note it added (a UNIQUE failure) or miss its changes. Planned again, a few times.
    if (this.others.wroteSince() && !opts.last) {
      db.exec("ROLLBACK");
      early?.discard();
      this.resetResolver();
      return STALE;
    }
    // Load the resolver now, from the index as it is before this pass writes anything.
    void this.resolver;
    // update() passes only the rows it needs, so an empty map alone does not mean an empty index.
    const coldStart = isColdStart(db, known);
    const affectedKeys = new Set<string>();
    const changed: string[] = [];

    const bulk = coldStart && todo.length >= bulkThreshold();
    // A big cold scan writes the full-text rows from a second thread into fts.db; so does a
    // batch with a huge note (tokenising 50 MB takes seconds: not on the request thread). A
    // note that was huge counts too: deleting its full-text row tokenises its old text, and a
    // person's 30 MB note replaced by a short one held the request thread ~300 ms doing it.
    const wasHuge = (path: string) => (known.get(path)?.size ?? 0) >= BIG_NOTE_BYTES;
    const huge = !bulk && (todo.some((e) => e.size >= BIG_NOTE_BYTES || wasHuge(e.path)) || deleted.some(wasHuge));
    if (early && !bulk) early.discard();
    this.ftsSink = bulk ? (early?.sink ?? new FtsSink(this.root)) : huge ? new FtsSink(this.root, { incremental: true }) : null;
    // parseAll owns (and terminates) the early workers from here on; until it runs, a failure terminates them.
    let earlyWorkers = bulk ? (early?.workers ?? []) : [];
    let committed = false;
    let ftsDone: Promise<void> | undefined;
    const interrupted = getMeta(db, RERESOLVE_PENDING) === "1";
    let sinceStart = 0;
    try {
      if (bulk) for (const name of Object.keys(BULK_LOAD_INDEXES)) db.exec(`DROP INDEX IF EXISTS ${name}`);
      for (const path of deleted) {
        const k = known.get(path)!;
        for (const a of this.resolver.aliasesFor(path)) affectedKeys.add(foldName(a));
        affectedKeys.add(targetKeyOf(path));
        this.resolver.removeNote(path);
        this.rows.delete(k.id, this.ftsSink);
      }
      for (const path of goneFiles) {
        this.resolver.removeFile(path);
        this.rows.deleteFile(path);
        affectedKeys.add(targetKeyOf(path));
      }
      for (const a of attachments) {
        if (!this.resolver.hasNote(a.path)) this.resolver.addFile(a.path);
        this.rows.upsertFile(a);
        affectedKeys.add(targetKeyOf(a.path));
      }
      // Every new name is known before any link is resolved, so name resolution is right first time.
      for (const e of todo) {
        if (!known.has(e.path)) {
          this.resolver.addNote(e.path, []);
          // On a cold start no older link can point at the new name: only aliases need a second pass.
          if (!coldStart) affectedKeys.add(targetKeyOf(e.path));
        }
      }
      const knownHash = hashLookup(db);
      const requests: ParseRequest[] = todo.map((entry) => ({ entry, knownHash: knownHash(known.get(entry.path)) }));
      // A bulk load starts from an empty notes table, so ids can be chosen now: parse workers
      // then send each full-text row to the writer themselves (see parse-worker.ts).
      const requestIds = new Map<string, number>();
      if (bulk) requests.forEach((r, i) => requestIds.set(r.entry.path, (r.ftsId = i + 1)));
      const sink = this.ftsSink;
      const takeEarly = () => {
        const w = earlyWorkers;
        earlyWorkers = [];
        return w;
      };
      let sinceCommit = 0;
      coldTrace("parse start");
      await parseAll(this.root, requests, this.resolver, (results) => {
        let direct = 0;
        for (const r of results) {
          // After another process's commits, a note that comes out unchanged may be one it indexed first:
          // a change all the same to this process's listeners (await_directives, the web UI's events).
          if (this.writeResult(r, known, affectedKeys, bulk ? requestIds.get(r.entry.path) : undefined) || (foreign && !r.missing)) changed.push(r.entry.path);
          if (r.ftsSent) direct++;
          if (this.status.state === "scanning") this.status.done++; // a scan's progress; a later update() is not part of it
        }
        sink?.sentDirectly(direct);
        sinceCommit += results.length;
        sinceStart += results.length;
        if (!bulk && sinceCommit >= COMMIT_EVERY) {
          this.stampGeneration();
          // Older notes' links to the new names are re-resolved only at the end of this pass: a crash
          // before then must not leave them unresolved for good (the next pass retries them all).
          setMeta(db, RERESOLVE_PENDING, "1");
          db.exec("COMMIT");
          db.exec("BEGIN");
          sinceCommit = 0;
        }
        onProgress?.(this.status);
      }, bulk && sink ? () => sink.port() : undefined, takeEarly(), !bulk);
      coldTrace("parse+insert done");
      // Every full-text row is written by now: the writer thread commits fts.db while this
      // thread rebuilds indexes, re-resolves and commits index.db (the two commits overlap:
      // ~0.1-0.3 s off a cold index's wall time). A crash (or a failure) between the two
      // commits leaves the generations apart, and the next open rebuilds.
      // Outside a cold start the links are re-resolved in slices, before the new generation is stamped: what
      // is cached by generation (lint, the bases' rows) must not be worked out from a half-resolved pass.
      if (!coldStart) await reresolveKeysInTurns(this.rows, this.resolver, affectedKeys);
      const gen = this.stampGeneration();
      ftsDone = this.ftsSink?.finish(gen);
      ftsDone?.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      if (bulk) for (const sql of Object.values(BULK_LOAD_INDEXES)) db.exec(sql);
      coldTrace("indexes built");
      if (coldStart) reresolveColdStart(this.rows, this.resolver, affectedKeys);
      // This pass's own partial commits are covered by the re-resolution just done; a dead pass's are not.
      if (interrupted) settleInterruptedResolution(db, this.rows, this.resolver);
      else if (sinceStart > sinceCommit) setMeta(db, RERESOLVE_PENDING, "0");
      coldTrace("reresolved");
      db.exec("COMMIT");
      committed = true;
      coldTrace("committed");
      await ftsDone;
      coldTrace("fts finished");
    } catch (e) {
      for (const w of earlyWorkers) w.terminate();
      await ftsDone?.catch(() => undefined);
      await this.ftsSink?.abort();
      // SQLite rolls back by itself on some errors (a full disk): the pass's own error is the one to report.
      if (!committed && db.inTransaction) db.exec("ROLLBACK");
      // Memory may now disagree with the database: rebuild the resolver from what was committed.
      this.resetResolver();
      throw e;
    } finally {
      this.ftsSink = null;
    }
    const change: IndexChange = { changed, deleted, attachments: [...attachments.map((a) => a.path), ...goneFiles] };
    if (changed.length || deleted.length || change.attachments.length) {
      for (const fn of this.listeners) {
        try {
          fn(change);
        } catch (err) {
          console.error("index listener failed:", err);
        }
      }
    }
    return change;
  }

  /**
   * Write a new generation into both index files in the open transaction (the
   * full-text writer thread stamps fts.db itself); openIndexDb compares them.
   */
  private stampGeneration(): string {
    const gen = `${Date.now().toString(36)}.${(++this.generations).toString(36)}`;
    setMeta(this.db, "gen", gen);
    if (!this.ftsSink) setFtsGeneration(this.db, gen);
    return gen;
  }

  private resetResolver(): void {
    this._resolver = null;
  }

  /** Store one parse result; returns true when the note's content changed. */
  private writeResult(r: ParseResult, known: Map<string, KnownNote>, affectedKeys: Set<string>, newId?: number): boolean {
    const { entry } = r;
    const k = known.get(entry.path);
    if (r.missing) return false; // deleted between scan and read: the watcher reports it next
    if (!r.parsed) {
      if (k) this.rows.touch(k.id, entry);
      return false;
    }
    const p = r.parsed;
    const oldAliases = this.resolver.aliasesFor(entry.path);
    if (oldAliases.length || p.aliases.length) {
      for (const a of oldAliases) affectedKeys.add(foldName(a));
      for (const a of p.aliases) affectedKeys.add(foldName(a));
      this.resolver.setAliases(entry.path, p.aliases);
    }
    const resolved = r.resolved ?? p.links.map((l) => this.resolver.resolve(l, entry.path));
    // A full-text row a parse worker already sent is not written again.
    const id = this.rows.write(k?.id, entry, r.hash, p, resolved, this.ftsSink, newId, r.ftsSent ? "sent" : r.hugeBody);
    known.set(entry.path, { id, size: entry.size, mtime: entry.mtimeMs, chg: entry.changeMs, hash: r.hash });
    return true;
  }
}
