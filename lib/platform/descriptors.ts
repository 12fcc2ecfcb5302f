import { readdirSync, readFileSync } from "node:fs";
import { ToolError } from "../errors";

/** File descriptors this process may still open (its soft limit less those open); Infinity where that cannot be told. */
export function descriptorsFree(): number {
  if (process.platform !== "linux") return Infinity;
  try {
    // Read each time: the limit can be changed under a running process (prlimit).
    const m = readFileSync("/proc/self/limits", "utf8").match(/Max open files\s+(\d+|unlimited)/);
    if (!m || m[1] === "unlimited") return Infinity;
    // Less one: the listing's own descriptor.
    return Number(m[1]) - (readdirSync("/proc/self/fd").length - 1);
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === "EMFILE" || code === "ENFILE" ? 0 : Infinity;
  }
}

// A Bun worker takes three descriptors once running, more while it starts.
const WORKER_DESCRIPTORS = 16;

/**
 * A Worker, when the process has the descriptors one needs. Bun ends the whole process when a worker cannot
 * get them ("ProcessFdQuotaExceeded"): at the descriptor limit (idle connections filling it), the first
 * read_note took the server down (the limits audit of 2026-12-05). The call is refused instead, to be retried.
 */
export function startWorker(entry: string | URL, options?: WorkerOptions): Worker {
  if (descriptorsFree() < WORKER_DESCRIPTORS) {
    throw new ToolError("rate-limited", "The server has nearly all the files and connections open that its limit allows (ulimit -n), too many to start a worker: try again in a moment", {
      retry_after_ms: 1000,
    });
  }
  return new Worker(entry, options);
}
