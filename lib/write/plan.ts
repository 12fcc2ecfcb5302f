// A write operation is planned before it is committed: the plan names every
// file change with the bytes it was computed from. A write token commits the
// plan at once; a propose token stores the operation as a proposal and
// re-plans it on approval against the notes as they are then.
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { foldName, normalizeVaultPath } from "../vault/paths";
import type { FileChange } from "./commit";

/** Notes an operation must find unchanged: path -> hash (null: must not exist). */
export type Base = Record<string, string | null>;

export interface Plan {
  changes: FileChange[];
  /** The notes this plan rests on and their hashes when planned; stored with a proposal. */
  base: Base;
  /** The note the result's `hash` describes; null when the operation leaves no note (delete). */
  primary: string | null;
  /** One line for people: timelines, proposal lists. */
  summary: string;
  /** Extra fields for the tool's result. */
  result: Record<string, unknown>;
}

export interface WriteOp<A = any> {
  name: string;
  /** Paths to lock before planning; a best guess from the arguments (the service re-locks if the plan names more). */
  lockPaths(vault: VaultContext, args: A): string[];
  /**
   * Read the notes, check the rules and compute the change. `base` pins notes to the hashes a proposal saw.
   * A plan that reads many notes may give other callers turns meanwhile (a promise): the commit checks
   * every note it changes against what the plan read.
   */
  plan(vault: VaultContext, args: A, base?: Base): Plan | Promise<Plan>;
  /** True when the caller pinned a version (expectedHash): a concurrent change is then a conflict, not a retry. */
  pinned(args: A): boolean;
}

/**
 * The expectation for one note: a proposal's base wins over the agent's expectedHash. The path may resolve
 * to another spelling at approval than when the proposal was made (the person renamed Plan.md to plan.md,
 * or created plan.md where the agent proposed Plan.md): that file is held to the base all the same. A path
 * the base does not name at all is some other file, never one to change unchecked.
 */
export function expectationFor(base: Base | undefined, path: string, expectedHash: string | undefined): string | null | undefined {
  if (!base) return expectedHash;
  if (Object.prototype.hasOwnProperty.call(base, path)) return base[path];
  const key = foldName(path);
  const twin = Object.keys(base).find((k) => foldName(k) === key);
  if (twin !== undefined) return base[twin];
  throw new ToolError("conflict", `${path} is not the note this proposal was made against (${Object.keys(base).join(", ")}); look at it and propose the edit again`, {
    path,
  });
}

/** An operation on the one note its `path` names, pinned when the caller passed expectedHash. */
export function singleNoteOp<A extends { path: string; expectedHash?: string }>(name: string, plan: WriteOp<A>["plan"]): WriteOp<A> {
  return { name, lockPaths: (_v, a) => guessPath(a.path), pinned: (a) => a.expectedHash !== undefined, plan };
}

/** A lock key from a raw path argument (".md" added the way the resolvers add it); [] when it is not a valid path. */
export function guessPath(input: string | undefined): string[] {
  if (!input) return [];
  try {
    const rel = normalizeVaultPath(input);
    return [/\.md$/i.test(rel) ? rel : rel + ".md"];
  } catch {
    return [];
  }
}

export function planPaths(plan: Plan): string[] {
  const out: string[] = [];
  for (const c of plan.changes) {
    out.push(c.path);
    if (c.from) out.push(c.from);
    if (c.trash) out.push(c.trash);
  }
  return out;
}
