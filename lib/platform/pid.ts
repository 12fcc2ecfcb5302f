import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";

/** Whether a process with this pid exists (one we may not signal still counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

let bootId: string | null | undefined;

/**
 * What tells this run of a process from a later one given the same pid (after a crash, or a reboot):
 * the boot's id and the process's start time, from /proc (Linux). Null elsewhere, or when it cannot be
 * read: then a pid is all there is to go by.
 */
export function processStamp(pid: number = process.pid): string | null {
  if (process.platform !== "linux") return null;
  try {
    bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name in parentheses may hold spaces and parentheses: the fields after its last ')' start at field 3.
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return start ? `${bootId}:${start}` : null;
  } catch {
    return null;
  }
}

let own: string | null | undefined;
let ownNamespace: string | null | undefined;

/** The PID namespace this process sees pids in (its inode), or null when it cannot be read. */
function pidNamespace(): string | null {
  if (ownNamespace === undefined) {
    try {
      ownNamespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? null;
    } catch {
      ownNamespace = null;
    }
  }
  return ownNamespace;
}

/**
 * This process's stamp as it records it beside its pid with work in flight (state.db's owner columns): its
 * processStamp and the PID namespace that pid belongs to. Read once. (.lettuce/users and serve.json keep
 * processStamp alone: an older Lettuce compares those whole, and would take a live process for a dead one.)
 */
export function ownStamp(): string | null {
  if (own === undefined) {
    const stamp = processStamp();
    const ns = pidNamespace();
    own = stamp && ns ? `${stamp}:${ns}` : stamp;
  }
  return own;
}

/** The start-time part of a stamp (ticks since boot): short enough for a file name. */
export const startOfStamp = (stamp: string | null | undefined): string | null => (stamp ? (stamp.split(":")[1] ?? null) : null);

/**
 * Whether the process that recorded `stamp` (processStamp) under `pid` still runs. A pid alone is not
 * enough: a file a crashed process left names a pid that the system may since have given to an unrelated
 * program, which would pass for it for as long as that runs. No stamp (recorded by an older version, or
 * off Linux): the pid decides.
 */
export function recordedProcessAlive(pid: number, stamp: string | null | undefined): boolean {
  if (!pidAlive(pid)) return false;
  if (!stamp) return true;
  const [boot, start, ns] = stamp.split(":");
  // Recorded in another PID namespace (a containerised serve and a host CLI on one vault): pids here are not
  // that process's, and its start time cannot be looked up. The pid is all there is, as before stamps; by
  // the stamp, the host's pid 1 (a container's serve is often pid 1 in its own) read as a dead process.
  if (ns !== undefined && ns !== pidNamespace()) return true;
  const now = processStamp(pid);
  return now === null || now === `${boot}:${start}`;
}

/**
 * Other processes that have `file` open, found through /proc (Linux; elsewhere, and for processes
 * of other users, nothing is found). For processes that announce nothing: a Lettuce older than the
 * .lettuce/users registry, still running after an upgrade, has its index open and unannounced.
 * Reads every process's fd table, so only for rare decisions (deleting an index).
 */
export function pidsHoldingFile(file: string): number[] {
  if (process.platform !== "linux") return [];
  let target: string;
  let pids: string[];
  try {
    target = realpathSync(file);
    pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  return pids.map(Number).filter((pid) => pid !== process.pid && holds(pid, target) === true);
}

/** Whether process `pid` has `file` open; null when that cannot be told (off Linux, another user's process). */
export function pidHoldsFile(pid: number, file: string): boolean | null {
  if (process.platform !== "linux") return null;
  let target: string;
  try {
    target = realpathSync(file);
  } catch {
    return false; // no such file: nobody holds it
  }
  return holds(pid, target);
}

function holds(pid: number, target: string): boolean | null {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (e) {
    return (e as { code?: string }).code === "ENOENT" ? false : null; // gone, or another user's
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return true;
    } catch {
      /* closed meanwhile */
    }
  }
  return false;
}
