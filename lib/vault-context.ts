import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { Indexer } from "./index/indexer";
import { VaultWatcher } from "./index/watcher";
import { openIndexDb } from "./store/index-db";
import { getSetting, openStateDb } from "./store/state-db";

export const DEFAULT_IMMUTABLE_PATHS = ["sources/"];

export class VaultError extends Error {}
/** No vault argument at all: a usage mistake (the CLI exits 2 and shows the usage), not a bad vault. */
export class MissingVaultError extends VaultError {}

/** Check a vault argument from the command line; throws VaultError with a message for people. */
export function checkVaultDir(dir: string | undefined): string {
  if (!dir) throw new MissingVaultError("Missing vault: give the path of a folder of Markdown notes");
  const root = resolve(dir);
  let st;
  try {
    st = statSync(root);
  } catch {
    throw new VaultError(`Vault not found: ${root} does not exist`);
  }
  if (!st.isDirectory()) throw new VaultError(`Not a vault: ${root} is not a directory`);
  return root;
}

/**
 * One open vault: its databases, its indexer and (when serving) its watcher.
 * Everything above the index layer reaches the vault through this object.
 */
export class VaultContext {
  readonly indexer: Indexer;
  private watcher: VaultWatcher | null = null;
  private closers: (() => void)[] = [];

  private constructor(
    readonly root: string,
    readonly indexDb: Database,
    readonly stateDb: Database,
  ) {
    this.indexer = new Indexer(root, indexDb);
  }

  static open(dir: string): VaultContext {
    const root = checkVaultDir(dir);
    return new VaultContext(root, openIndexDb(root), openStateDb(root));
  }

  /** Vault-relative prefixes that agents may create under but never change. */
  get immutablePaths(): string[] {
    const raw = getSetting(this.stateDb, "immutablePaths");
    if (!raw) return DEFAULT_IMMUTABLE_PATHS;
    try {
      const v = JSON.parse(raw);
      return Array.isArray(v) ? v.map(String) : DEFAULT_IMMUTABLE_PATHS;
    } catch {
      return DEFAULT_IMMUTABLE_PATHS;
    }
  }

  startWatching(): void {
    if (!this.watcher) {
      this.watcher = new VaultWatcher(this.root, this.indexer);
      this.watcher.start();
    }
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
    this.indexDb.close();
    this.stateDb.close();
  }
}
