import type { Database } from "bun:sqlite";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processStamp, recordedProcessAlive } from "../platform/pid";
import { lettuceDir } from "./index-db";

// A running `serve` owns the vault's index: its watcher keeps it current and
// its link resolver lives in memory. Other processes (the CLI) must not write
// the index behind its back, so serve announces itself in .lettuce/serve.json.

export interface ServerPresence {
  pid: number;
  /** processStamp() of the server: a pid a crashed server left may since belong to another program. */
  stamp?: string | null;
  url: string;
  startedAt: string;
  /** The embedding model the server keeps the vectors current with in the background (absent: none, or not chosen yet). */
  embedder?: string;
}

function presenceFile(root: string): string {
  return join(lettuceDir(root), "serve.json");
}

/** The live server of this vault, if any (a stale file from a crashed server is ignored). */
export function liveServer(root: string): ServerPresence | null {
  try {
    const p = JSON.parse(readFileSync(presenceFile(root), "utf8")) as ServerPresence;
    return typeof p.pid === "number" && p.pid !== process.pid && recordedProcessAlive(p.pid, p.stamp) ? p : null;
  } catch {
    return null;
  }
}

/**
 * Announce this process as the vault's server; returns the function that withdraws it, or null when another
 * live server announced itself first. Decided under state.db's write lock (`lock`): two servers started at
 * once both found none by liveServer() and both served, each watching and indexing; and over a file a crashed
 * server left, each took the other's fresh file for that one and replaced it (19 of 40; the multi-process
 * audit and its review).
 */
export function announceServer(root: string, url: string, lock: Database): (() => void) | null {
  const file = presenceFile(root);
  const body = JSON.stringify({ pid: process.pid, stamp: processStamp(), url, startedAt: new Date().toISOString() });
  // Under the lock no other server can come between the check and the write: a dead server's file is replaced.
  const announced = lock
    .transaction(() => {
      if (liveServer(root)) return false;
      writeFileSync(file, body);
      return true;
    })
    .immediate();
  if (!announced) return null;
  return () => {
    try {
      const p = JSON.parse(readFileSync(file, "utf8")) as ServerPresence;
      if (p.pid === process.pid) rmSync(file, { force: true });
    } catch {
      /* already gone */
    }
  };
}

/** Say in serve.json which model this server embeds with in the background, so that the CLI waits for it instead of embedding the same passages twice. */
export function announceEmbedder(root: string, embedder: string): void {
  const file = presenceFile(root);
  try {
    const p = JSON.parse(readFileSync(file, "utf8")) as ServerPresence;
    if (p.pid === process.pid) writeFileSync(file, JSON.stringify({ ...p, embedder }));
  } catch {
    /* withdrawn meanwhile */
  }
}
