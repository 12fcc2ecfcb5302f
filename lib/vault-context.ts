import type { Database } from "bun:sqlite";
import { lstatSync } from "node:fs";
import { Indexer } from "./index/indexer";
import { VaultWatcher } from "./index/watcher";
import { checkpointOffThread, unwatchWal, watchWal } from "./store/checkpointer";
import { ftsPath } from "./store/fts-db";
import { indexDbPath, openIndexDb } from "./store/index-db";
import { holdIndex } from "./store/index-users";
import { getSetting, openStateDb, openStateDbNoSync, stateDbPath } from "./store/state-db";
import { checkVaultDir } from "./vault-dir";
import { normalizeVaultPath } from "./vault/paths";

export const DEFAULT_IMMUTABLE_PATHS = ["sources/"];
// More prefixes than any person sets by hand: a row of 200,000 (state.db may come from a synced folder) made
// every get_vault_info 3.7 MB and every write ~75 ms slower (the configuration audit of 2026-12-05).
export const MAX_IMMUTABLE_PATHS = 1000;

/**
 * The immutablePaths setting as it is enforced: each prefix in the form `lettuce config` writes ("sources/"),
 * whatever the row holds. A row written by hand or another tool ("./sources/") was shown as set while the
 * folder went unprotected; one that was not a list was shown by nothing (config crashed) and enforced as
 * the default.
 */
export function immutablePathsIn(stateDb: Database): string[] {
  const raw = getSetting(stateDb, "immutablePaths");
  if (!raw) return DEFAULT_IMMUTABLE_PATHS;
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    return DEFAULT_IMMUTABLE_PATHS;
  }
  if (!Array.isArray(list)) return DEFAULT_IMMUTABLE_PATHS;
  const out = new Set<string>();
  for (const item of list.slice(0, MAX_IMMUTABLE_PATHS)) {
    if (typeof item !== "string") continue;
    try {
      const p = normalizeVaultPath(item.trim().replace(/^(\.\/|\/)+/, ""));
      if (p) out.add(`${p}/`);
    } catch {
      /* not a vault path: protects nothing, and is not shown as if it did */
    }
  }
  return [...out];
}

export { checkVaultDir, MissingVaultError, VaultError } from "./vault-dir";

/**
 * One open vault: its databases, its indexer and (when serving) its watcher.
 * Everything above the index layer reaches the vault through this object.
 */
export class VaultContext {
  readonly indexer: Indexer;
  private watcher: VaultWatcher | null = null;
  private closers: (() => void)[] = [];
  private noSyncState: Database | null = null;
  private watching = false;

  // The vault folder and state.db as they were opened (device and inode): see gone().
  private readonly opened: { root: string | null; state: string | null; index: string | null; fts: string | null };
  /** Withdraws this process from the index's users (lib/store/index-users.ts). */
  private readonly releaseIndex: () => void;

  private constructor(
    readonly root: string,
    readonly indexDb: Database,
    readonly stateDb: Database,
  ) {
    this.indexer = new Indexer(root, indexDb);
    this.opened = { root: identity(root), state: identity(stateDbPath(root)), index: identity(indexDbPath(root)), fts: identity(ftsPath(root)) };
    this.releaseIndex = holdIndex(root);
  }

  /**
   * Why this vault's files are no longer the ones it opened, or null. A vault folder removed (or
   * .lettuce deleted) while serving leaves the open databases writing to deleted files: tokens,
   * timeline entries and audit rows made from then on were lost at the next start, and the index
   * went stale. A server asks this now and then and stops rather than go on that way.
   */
  gone(): string | null {
    if (identity(this.root) !== this.opened.root) return `the vault folder ${this.root} was removed or replaced`;
    if (identity(stateDbPath(this.root)) !== this.opened.state) return `${stateDbPath(this.root)} was removed or replaced (was the .lettuce folder deleted?)`;
    // The index files replaced under the server (deleted by hand, or by another process): its writes went to
    // unlinked files, whose WAL no checkpoint reached any more, and every other process saw an empty index.
    for (const [file, was] of [[indexDbPath(this.root), this.opened.index], [ftsPath(this.root), this.opened.fts]] as const) {
      if (identity(file) !== was) return `${file} was removed or replaced; start the server again to rebuild the index`;
    }
    return null;
  }

  static open(dir: string): VaultContext {
    const root = checkVaultDir(dir);
    return new VaultContext(root, openIndexDb(root), openStateDb(root));
  }

  /** Vault-relative prefixes that agents may create under but never change. */
  get immutablePaths(): string[] {
    return immutablePathsIn(this.stateDb);
  }

  /**
   * state.db through a connection that does not fsync its commits, for the rows a server writes as it
   * goes: the edits timeline, the audit log, the change journal, a token's last use, the health score
   * (see openStateDbNoSync). One per vault, opened on first use.
   */
  get stateDbNoSync(): Database {
    if (!this.noSyncState) {
      this.noSyncState = openStateDbNoSync(this.root);
      if (this.watching) watchWal(this.noSyncState, stateDbPath(this.root));
    }
    return this.noSyncState;
  }

  startWatching(): void {
    // A process that watches a vault serves it for long: the WALs its request thread writes are checkpointed off it.
    checkpointOffThread();
    this.watching = true;
    watchWal(this.indexDb, indexDbPath(this.root));
    watchWal(this.indexDb, ftsPath(this.root));
    watchWal(this.stateDb, stateDbPath(this.root));
    if (this.noSyncState) watchWal(this.noSyncState, stateDbPath(this.root));
    if (!this.watcher) {
      this.watcher = new VaultWatcher(this.root, this.indexer);
      this.watcher.start();
    }
  }

  /** Why the file watch may miss changes (the system refused a watch; a periodic scan stands in), or null. */
  get watchProblem(): string | null {
    return this.watcher?.problem ?? null;
  }

  /** Paths for the watcher's next pass (when serving): a write's own re-index failed. */
  indexLater(paths: string[]): void {
    this.watcher?.later(paths);
  }

  /** Wait until file events seen so far are indexed. */
  async settle(): Promise<void> {
    await this.watcher?.idle();
  }

  /** Register cleanup for services hung on this vault (long-polls, embedders). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  close(): void {
    this.watcher?.stop();
    for (const fn of this.closers.splice(0)) {
      try {
        fn();
      } catch {
        /* closing anyway */
      }
    }
    unwatchWal(this.indexDb);
    unwatchWal(this.stateDb);
    if (this.noSyncState) {
      unwatchWal(this.noSyncState);
      this.noSyncState.close();
    }
    this.indexDb.close();
    this.stateDb.close();
    this.releaseIndex();
  }
}

// lstat: the vault folder moved away and a symlink to it put in its place (`mv v v.real; ln -s v.real v`)
// has the same identity through the link, and was taken for the same folder: every index pass then failed on
// the link, writes went on, and the state said "scanning" for good (the limits audit of 2026-12-05). The root
// is the real path (checkVaultDir), so a vault opened through a link is not affected.
function identity(path: string): string | null {
  try {
    const st = lstatSync(path, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}
