// One write service per open vault: the per-note locks, and execute(), which
// plans an operation under those locks, commits it, re-indexes and reports.
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { foldName } from "../vault/paths";
import { scanVault } from "../vault/scan";
import { KeyedLock, sweepOrphanTemps } from "./atomic";
import { commitChanges, StaleError, type CommitMeta, type CommitResult } from "./commit";
import { recoverAtStart } from "./recover";
import { emitWrite } from "./events";
import { readState } from "./notes";
import { planPaths, type Base, type Plan, type WriteOp } from "./plan";
import { fileStamp, waitForEmptiedNotes } from "./save-quiet";

// How often an unpinned write re-reads and retries when a person's editor
// saved the note between our read and our rename.
const MAX_ATTEMPTS = 5;

export interface WriteOutcome {
  path: string | null;
  hash: string | null;
  editId: number | null;
  [k: string]: unknown;
}

/** The primary note's hash after the commit: that of the last change that wrote it (the commit hashed every change). */
function hashOfPrimary(plan: Plan, { afterHashes }: CommitResult): string | null {
  if (plan.primary === null) return null;
  for (let i = plan.changes.length - 1; i >= 0; i--) {
    const c = plan.changes[i]!;
    if (c.action !== "delete" && c.path === plan.primary && c.after) return afterHashes[i]!;
  }
  return null;
}

/** Paths whose last write by this server is remembered (./save-quiet.ts); a forgotten one costs its next edit a short wait. */
const OURS_KEPT = 4096;

export class WriteService {
  readonly locks = new KeyedLock();
  /** What this server's own last write left at each path it touched (./save-quiet.ts): no wait for those. */
  private readonly ours = new Map<string, string>();

  private noteOurs(path: string): void {
    const s = fileStamp(this.vault.root, path);
    this.ours.delete(path);
    if (s) this.ours.set(path, s.key);
    if (this.ours.size > OURS_KEPT) this.ours.delete(this.ours.keys().next().value!);
  }
  /** state.db through the vault's connection for rows written as the server goes (VaultContext.stateDbNoSync). */
  readonly db: Database;

  constructor(
    readonly vault: VaultContext,
    /** Re-index before returning (the server). The CLI leaves it to the running server's watcher or the next scan. */
    private reindex: boolean,
  ) {
    this.db = vault.stateDbNoSync;
    const touched = recoverAtStart(vault.root, this.db);
    // Files changed after the start-up scan read them: indexed now (a watcher would not hear of them if it starts later).
    if (touched.length) void vault.indexer.update(touched).catch(() => vault.indexLater(touched));
    // Temp files no pending row names (a crash between its steps): swept now, not at some later write.
    const pending = new Set((this.db.query("SELECT tmp FROM agent_edits WHERE state = 'pending' AND tmp IS NOT NULL").all() as { tmp: string }[]).map((r) => r.tmp));
    sweepOrphanTemps(vault.root, scanVault(vault.root, { foldersOnly: true }).folders, (rel) => pending.has(rel));
  }

  /**
   * Plan and commit `op` under the locks of every note it touches. A change
   * made on disk between the plan and the rename is retried when the caller
   * pinned nothing, and is a conflict when it did (expectedHash, or a
   * proposal's base).
   */
  async execute<A>(op: WriteOp<A>, args: A, meta: CommitMeta, base?: Base): Promise<WriteOutcome> {
    const lockPaths = op.lockPaths(this.vault, args);
    // Folded as twin detection folds names (foldName): two creates of Café.md, one NFC and one NFD, each found
    // no note and both wrote one when their keys differed.
    const keys = new Set(lockPaths.map(foldName));
    // commit: null when the plan changed nothing.
    let done: { plan: Plan; commit: CommitResult | null } | null = null;
    for (let attempt = 1; !done; attempt++) {
      const release = await this.locks.acquire(keys);
      try {
        // A person's editor may be in the middle of an in-place save of one of these notes (./save-quiet.ts).
        await waitForEmptiedNotes(this.vault.root, lockPaths, this.ours);
        const plan = await op.plan(this.vault, args, base);
        const missing = planPaths(plan).filter((p) => !keys.has(foldName(p)));
        if (missing.length) {
          // The plan reaches notes we did not lock (a backlink added meanwhile): lock them too and plan again.
          for (const p of missing) keys.add(foldName(p));
          if (attempt >= MAX_ATTEMPTS) throw busy(plan.primary ?? missing[0]!);
          continue;
        }
        if (!plan.changes.length) {
          done = { plan, commit: null };
          break;
        }
        done = { plan, commit: await commitChanges({ root: this.vault.root, timelineDb: this.db }, plan.changes, meta) };
      } catch (e) {
        if (!(e instanceof StaleError)) throw e;
        if (base || op.pinned(args)) {
          throw new ToolError("conflict", `${e.path} changed while the edit was being made; read it again and redo the edit`, { path: e.path });
        }
        if (attempt >= MAX_ATTEMPTS) throw busy(e.path);
      } finally {
        release();
      }
    }
    const { plan, commit } = done;
    // Only the last OURS_KEPT are kept: a stat for each of a big move's 20,000 notes held other callers ~0.3 s.
    for (const p of (commit?.touched ?? []).slice(-OURS_KEPT)) this.noteOurs(p);
    if (this.reindex && commit?.touched.length) {
      try {
        await this.vault.indexer.update(commit.touched);
      } catch (e) {
        // The write landed and is on the timeline: say so. The index catches up with the
        // watcher's next pass (a database held locked by another process, for a moment).
        console.error(`lettuce: re-indexing after ${meta.tool} failed, will retry: ${(e as Error).message}`);
        this.vault.indexLater(commit.touched);
      }
    }
    const hash = commit === null ? (plan.primary ? readState(this.vault, plan.primary).hash : null) : hashOfPrimary(plan, commit);
    const outcome: WriteOutcome = { path: plan.primary, hash, editId: commit?.editId ?? null, ...plan.result };
    if (commit !== null) {
      emitWrite({
        vault: this.vault,
        tool: meta.tool,
        editId: commit.editId,
        touched: commit.touched,
        path: plan.primary,
        result: outcome,
        agent: meta.agent,
        token: meta.token,
        proposalId: meta.proposalId ?? null,
      });
    }
    return outcome;
  }
}

function busy(path: string): ToolError {
  return new ToolError("conflict", `${path} kept changing on disk while Lettuce tried to edit it; try again in a moment`, { path });
}

const services = new WeakMap<VaultContext, WriteService>();

/** The vault's write service, created (and the timeline recovered) on first use. */
export function writeService(vault: VaultContext, opts: { reindex?: boolean } = {}): WriteService {
  let s = services.get(vault);
  if (!s) {
    s = new WriteService(vault, opts.reindex ?? true);
    services.set(vault, s);
  }
  return s;
}
