// Where the built-in model runs: a worker thread, or (passage work while
// serving, on Linux) a child process of its own. The process is
// there to be stopped: a request that comes while the model is inside a chunk
// would otherwise share the cores with it until the chunk ends (tens to
// hundreds of ms of matrix products that cannot be interrupted, docs/performance-log.md
// "Search during a build"), while a process takes SIGSTOP at once and SIGCONT
// when the server is quiet again. A thread cannot be stopped alone (a stop
// signal stops every thread of its process).
import { fileURLToPath } from "node:url";
import { isCompiled, keepAlive, workerEntry } from "../platform/embedded";
import type { HostStarted, WorkerReply, WorkerRequest } from "./builtin-worker";
import { startWorker } from "../platform/descriptors";

export type ModelRole = "bulk" | "query";

export interface ModelHost {
  send(m: WorkerRequest): void;
  /** Whether the host keeps this process alive: yes while it has work in hand (see keepAlive in embedded.ts). */
  keepAlive(busy: boolean): void;
  /** Stop computing now, mid-chunk (a process; a thread cannot be stopped, and goes on). */
  pause(): void;
  resume(): void;
  stop(): void;
  readonly kind: "thread" | "process";
}

export interface HostEvents {
  message(m: WorkerReply): void;
  /** The host died (crashed or was killed by someone else); not called after stop(). */
  error(message: string): void;
}

/** The variable that makes the lettuce binary run as a model host (read by main.ts and builtin-worker.ts, which load nothing of this module). */
const MODEL_HOST_VAR = "LETTUCE_MODEL_HOST";

/**
 * Where passage work runs: on Linux, LETTUCE_EMBED_HOST=thread|process if set, otherwise a process
 * while serving, so that requests can stop it; a thread elsewhere (the CLI's `embed` has no requests
 * to make way for, and a thread starts faster and shares the runtime).
 */
export function hostKind(role: ModelRole, serving: boolean): "thread" | "process" {
  // Only where the kernel kills a stopped host with its parent (parent-death.ts): elsewhere a server
  // killed mid-request would leave a stopped process holding ~130 MB behind.
  if (role === "query" || process.platform !== "linux") return "thread";
  const set = process.env.LETTUCE_EMBED_HOST;
  if (set === "thread" || set === "process") return set;
  return serving ? "process" : "thread";
}

export function startModelHost(role: ModelRole, kind: "thread" | "process", on: HostEvents): ModelHost {
  return kind === "process" ? processHost(role, on) : threadHost(role, on);
}

function threadHost(role: ModelRole, on: HostEvents): ModelHost {
  // In a compiled binary every module's import.meta.url is the binary's own; compile.sh embeds the
  // worker under its source path. The environment as it is now (a worker otherwise sees the
  // process's environment at start-up).
  const worker = startWorker(workerEntry("lib/providers/builtin-worker.ts", import.meta.url, "./builtin-worker.ts"), { env: { ...process.env, LETTUCE_EMBED_ROLE: role } } as WorkerOptions);
  let stopped = false;
  worker.onmessage = (ev: MessageEvent<WorkerReply>) => on.message(ev.data);
  worker.onerror = (e) => {
    if (stopped) return;
    stopped = true;
    worker.terminate();
    on.error(e.message);
  };
  return {
    kind: "thread",
    send: (m) => worker.postMessage(m),
    keepAlive: (busy) => keepAlive(worker, busy),
    pause: () => undefined,
    resume: () => undefined,
    stop: () => {
      stopped = true;
      worker.terminate();
    },
  };
}

/** The command that starts a model host: the binary itself (main.ts sees MODEL_HOST_VAR), or Bun and the worker's source. */
function hostCommand(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, fileURLToPath(new URL("./builtin-worker.ts", import.meta.url))];
}

function processHost(role: ModelRole, on: HostEvents): ModelHost {
  let stopped = false;
  let paused = false;
  // Stopped only once it has told us the kernel will kill it with us ("started"); a stop asked before then waits.
  let stoppable = false;
  let wantPause = false;
  const child = Bun.spawn(hostCommand(), {
    env: { ...process.env, [MODEL_HOST_VAR]: "1", LETTUCE_MODEL_HOST_PARENT: String(process.pid), LETTUCE_EMBED_ROLE: role },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
    serialization: "advanced",
    ipc: (m: WorkerReply | HostStarted) => {
      if (m.type !== "started") return on.message(m);
      stoppable = m.stoppable;
      if (wantPause) host.pause();
    },
    onExit: (_p, code, signal) => {
      if (stopped) return;
      stopped = true;
      on.error(`the model process exited (${signal ?? `code ${code}`})`);
    },
  });
  const signal = (s: NodeJS.Signals) => {
    try {
      child.kill(s);
    } catch {
      /* already gone: onExit reports it */
    }
  };
  const host: ModelHost = {
    kind: "process",
    send: (m) => child.send(m),
    keepAlive: (busy) => (busy ? child.ref() : child.unref()),
    pause: () => {
      wantPause = true;
      if (stoppable && !paused && !stopped) {
        paused = true;
        signal("SIGSTOP");
      }
    },
    resume: () => {
      wantPause = false;
      if (paused && !stopped) {
        paused = false;
        signal("SIGCONT");
      }
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      // SIGKILL: a stopped process would hold a SIGTERM until it is continued.
      signal("SIGKILL");
    },
  };
  return host;
}
