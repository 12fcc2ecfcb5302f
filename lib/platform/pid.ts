import { readdirSync, readlinkSync, realpathSync } from "node:fs";

/** Whether a process with this pid exists (one we may not signal still counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
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
  const out: number[] = [];
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${name}/fd/${fd}`);
      } catch {
        continue;
      }
      if (link === target) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}
