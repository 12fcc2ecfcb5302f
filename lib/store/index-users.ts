// Which processes have a vault's index open: one empty file per process in
// .lettuce/users/, named by its pid. A process about to delete an index it
// cannot use (another format, a crash between the two files' commits) must
// not do it under one that has it open and is writing it (a `serve`, a
// `lettuce stdio` all day long under a desktop client): that one would write
// on into unlinked files, and everyone else would see an empty index.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive, pidHoldsFile, processStamp, recordedProcessAlive } from "../platform/pid";

const held = new Map<string, number>(); // users folder -> how many opens in this process

function usersDir(root: string): string {
  return join(root, ".lettuce", "users");
}


/** Note that this process has the index open; the returned function withdraws it (once per call). */
export function holdIndex(root: string): () => void {
  const dir = usersDir(root);
  const n = held.get(dir) ?? 0;
  held.set(dir, n + 1);
  if (n === 0) {
    try {
      mkdirSync(dir, { recursive: true });
      // The file holds this run's stamp: after a crash its pid may go to another program (recordedProcessAlive).
      writeFileSync(join(dir, String(process.pid)), processStamp() ?? "");
    } catch {
      /* a read-only .lettuce: nothing here can be deleted by anyone either */
    }
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (held.get(dir) ?? 1) - 1;
    if (left > 0) return void held.set(dir, left);
    held.delete(dir);
    rmSync(join(dir, String(process.pid)), { force: true });
  };
}

/** Live processes other than this one that have the index open (the files of dead ones are removed). */
export function otherIndexUsers(root: string): number[] {
  const dir = usersDir(root);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    let stamp = "";
    try {
      stamp = readFileSync(join(dir, name), "utf8").trim();
    } catch {
      continue; // withdrawn meanwhile
    }
    // A file with no stamp was left by a version before stamps: on Linux, its pid counts only while it has the index open.
    const alive = stamp ? recordedProcessAlive(pid, stamp) : pidAlive(pid) && pidHoldsFile(pid, join(root, ".lettuce", "index.db")) !== false;
    if (alive) out.push(pid);
    else rmSync(join(dir, name), { force: true });
  }
  return out;
}
