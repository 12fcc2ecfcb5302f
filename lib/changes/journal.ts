// The change journal behind get_changes_since: fed by the indexer (the start-up
// scan and the watcher, so a person's edits in any editor count, and so do
// the write tools, which re-index what they wrote). It keeps one row per item
// with the content hash last reported, so it records a change only when an
// item's content really differs from what the feed already said: a rebuilt
// index.db, a touched file or a second scan add nothing.
import type { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { basesContainingNote, baseName, isBasePath, listBases, type VaultLike } from "../bases";
import { rowsOf, tryLoadBase } from "../bases/rows";
import type { IndexChange, Indexer } from "../index/indexer";
import { contentHash } from "../index/parse-job";
import { getMeta } from "../store/index-db";
import { whenQuiet } from "../offload/activity";
import { safeAbsPath } from "../vault/paths";

export interface JournalVault extends VaultLike {
  /** The journal is written after each index pass, on the request thread: through the connection that does not fsync. */
  stateDbNoSync: Database;
  indexer: Indexer;
  onClose(fn: () => void): void;
}

/** The current state of one item, as the index (or the disk, for a base) has it. */
interface LiveItem {
  id: string;
  kind: "note" | "base";
  title: string;
  hash: string;
  mtime: number;
  databaseId: string | null;
}

interface JournalRow {
  id: string;
  kind: "note" | "base";
  change: "created" | "updated" | "deleted";
  hash: string | null;
  title: string;
}

// Above this many notes in one pass, row membership is computed base by base
// (one evaluation per base over every note) instead of note by note.
const BULK_MEMBERSHIP = 200;

export class ChangeJournal {
  private readonly db: Database;

  constructor(private readonly vault: JournalVault) {
    // A power cut that drops its last rows also drops the hashes they recorded: the next pass reports those changes again.
    this.db = vault.stateDbNoSync;
  }

  private noteItems(paths: string[] | null): LiveItem[] {
    const idx = this.vault.indexDb;
    const rows = (
      paths === null
        ? idx.query("SELECT path, title, hash, mtime FROM notes").all()
        : paths.flatMap((p) => (idx.query("SELECT path, title, hash, mtime FROM notes WHERE path = ?").all(p) as unknown[]))
    ) as { path: string; title: string; hash: string; mtime: number }[];
    const membership = rows.length > BULK_MEMBERSHIP ? this.membershipMap() : null;
    return rows.map((r) => ({
      id: r.path,
      kind: "note",
      title: r.title,
      hash: r.hash,
      mtime: r.mtime,
      databaseId: membership ? (membership.get(r.path) ?? null) : (basesContainingNote(this.vault, r.path)[0]?.id ?? null),
    }));
  }

  /** note path → the first base (by path) it is a row of. */
  private membershipMap(): Map<string, string> {
    const out = new Map<string, string>();
    const bases = listBases(this.vault);
    // Every note as a row (and cached with the index generation: ~100 MB held at 100k notes) only when a base exists.
    if (!bases.length) return out;
    for (const { id } of bases) {
      const base = tryLoadBase(this.vault.root, id);
      if (!base || base.filterError) continue;
      let rows;
      try {
        rows = rowsOf(this.vault, base); // cached per index generation, an unsupported or too costly base too
      } catch {
        continue; // an unsupported formula inside the filter: this base has no known rows
      }
      for (const n of rows) if (!out.has(n.path)) out.set(n.path, id);
    }
    return out;
  }

  private baseItem(path: string): LiveItem | null {
    try {
      const abs = safeAbsPath(this.vault.root, path);
      const st = statSync(abs);
      if (!st.isFile()) return null;
      return { id: path, kind: "base", title: baseName(path), hash: contentHash(readFileSync(abs)), mtime: st.mtimeMs, databaseId: null };
    } catch {
      return null;
    }
  }

  private journalRows(ids: string[] | null): Map<string, JournalRow> {
    const sql = "SELECT id, kind, change, hash, title FROM change_journal";
    const rows = (ids === null ? this.db.query(sql).all() : ids.flatMap((id) => this.db.query(`${sql} WHERE id = ?`).all(id))) as JournalRow[];
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Compare live items with what the journal last said and record the
   * differences in one transaction. `ids` are the journal rows to compare with (null: all of them);
   * `goneOf` names, from those rows, the ids known to be deleted.
   */
  private apply(live: LiveItem[], ids: string[] | null, goneOf: (known: Map<string, JournalRow>) => string[]): number {
    let written = 0;
    this.db.transaction(() => {
      // Read under the write lock: a `serve` and a `stdio` both record a save they both saw, and the one
      // that read the journal before the other's commit wrote the change a second time.
      const known = this.journalRows(ids);
      const gone = goneOf(known);
      let seq = (this.db.query("SELECT coalesce(max(seq), 0) AS s FROM change_journal").get() as { s: number }).s;
      const upsert = this.db.query(
        `INSERT INTO change_journal(id, kind, seq, change, title, hash, database_id, updated_at, seen_at, created_seq, created_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?9)
         ON CONFLICT(id) DO UPDATE SET kind = ?2, seq = ?3, change = ?4, title = ?5, hash = ?6, database_id = ?7, updated_at = ?8, seen_at = ?9,
           created_seq = CASE WHEN ?4 = 'created' THEN ?10 ELSE created_seq END,
           created_seen_at = CASE WHEN ?4 = 'created' THEN ?9 ELSE created_seen_at END`,
      );
      const tombstone = this.db.query("UPDATE change_journal SET seq = ?, change = 'deleted', hash = NULL, updated_at = ?, seen_at = ? WHERE id = ?");
      // The feed is chronological (the spec): updatedAt never goes back along it. A change is dated by its
      // file's mtime, in mtime order within a pass, unless that mtime is older than the last change already
      // dated (a note moved or copied with its old time, git checking out an old file): then by when it was
      // seen. A moved note's "created" said six minutes before the `since` it was asked for (an audit).
      const held = this.db.query("SELECT coalesce(max(updated_at), 0) AS t, coalesce(max(seen_at), 0) AS s FROM change_journal").get() as { t: number; s: number };
      let last = held.t;
      // Never before what the feed already holds: after the wall clock stepped back, a change was dated an
      // hour before the one listed ahead of it, and a sync by `since` missed it for good (the clock audit).
      const now = Math.max(Date.now(), held.t, held.s);
      const changed = live.filter((item) => {
        const prev = known.get(item.id);
        return !(prev && prev.change !== "deleted" && prev.hash === item.hash);
      });
      // Those dated by their mtime first, in its order; then those older than the feed's last date, dated now.
      const start = last;
      const old = (i: LiveItem) => (Math.min(now, Math.round(i.mtime)) < start ? 1 : 0);
      changed.sort((a, b) => old(a) - old(b) || a.mtime - b.mtime);
      for (const item of changed) {
        const prev = known.get(item.id);
        const change = !prev || prev.change === "deleted" ? "created" : "updated";
        const mtime = Math.min(now, Math.round(item.mtime));
        const at = mtime >= last ? mtime : now;
        last = Math.max(last, at);
        seq++;
        upsert.run(item.id, item.kind, seq, change, item.title, item.hash, item.databaseId, at, now, seq);
        written++;
      }
      for (const id of gone) {
        const prev = known.get(id);
        if (!prev || prev.change === "deleted") continue;
        tombstone.run(++seq, now, now, id);
        written++;
      }
    }).immediate();
    return written;
  }

  /** Record what one index pass changed. */
  record(change: IndexChange): number {
    const bases = change.attachments.filter(isBasePath);
    if (!change.changed.length && !change.deleted.length && !bases.length) return 0;
    const live: LiveItem[] = [...this.noteItems(change.changed)];
    const gone = [...change.deleted];
    for (const p of bases) {
      const item = this.baseItem(p);
      if (item) live.push(item);
      else gone.push(p);
    }
    return this.apply(live, [...live.map((l) => l.id), ...gone], () => gone);
  }

  /**
   * Bring the journal in line with the whole index: what the feed missed
   * (a crash between the index commit and the journal's, an index built by
   * `lettuce index` while no server ran). Deletions only once the index has
   * completed a scan: an index being rebuilt from nothing is not a vault
   * whose notes were all deleted.
   */
  reconcile(): number {
    const live = this.noteItems(null);
    for (const { id } of listBases(this.vault)) {
      const item = this.baseItem(id);
      if (item) live.push(item);
    }
    const complete = getMeta(this.vault.indexDb, "indexedAt") !== null;
    const here = new Set(live.map((l) => l.id));
    return this.apply(live, null, (known) =>
      complete ? [...known.values()].filter((r) => r.change !== "deleted" && !here.has(r.id)).map((r) => r.id) : [],
    );
  }

  /** The position after every change recorded so far. */
  maxSeq(): number {
    return (this.db.query("SELECT coalesce(max(seq), 0) AS s FROM change_journal").get() as { s: number }).s;
  }
}

const journals = new WeakMap<object, ChangeJournal>();
// Journals attached to an already-built index that have not caught up with it yet.
const behind = new WeakSet<object>();
const report = (e: unknown) => console.error("lettuce: change journal:", e);

/**
 * The vault's journal, attached to its indexer on first use: it records every
 * later index pass and reconciles after every full scan. When the index is
 * already built it catches up on the first read or the next full scan,
 * whichever comes first: not at attach time, which is server start-up (a
 * whole-vault pass, ~0.1-0.5 s at 10k notes, before the port opened).
 */
export function changeJournal(vault: JournalVault): ChangeJournal {
  let j = journals.get(vault);
  if (j) {
    if (behind.has(vault)) {
      behind.delete(vault);
      try {
        j.reconcile();
      } catch (e) {
        report(e);
      }
    }
    return j;
  }
  const journal = new ChangeJournal(vault);
  journals.set(vault, journal);
  const offChange = vault.indexer.onChange((c) => {
    try {
      journal.record(c);
    } catch (e) {
      report(e); // the next full scan's reconcile fills the gap
    }
  });
  // After a full scan the journal catches up in the background, once the server is quiet
  // (lib/offload/activity.ts): a request arriving meanwhile is not kept behind a whole-vault
  // pass. A read of the feed before then catches up first (above), as a request's own work.
  let closed = false;
  const offScan = vault.indexer.onScanned(() => {
    behind.add(vault);
    void whenQuiet().then(() => {
      if (closed || !behind.has(vault)) return;
      behind.delete(vault);
      try {
        journal.reconcile();
      } catch (e) {
        report(e);
      }
    });
  });
  vault.onClose(() => {
    closed = true;
    offChange();
    offScan();
  });
  if (getMeta(vault.indexDb, "indexedAt") !== null) behind.add(vault);
  return journal;
}
