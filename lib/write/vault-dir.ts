// How a write puts a file in place. Vault folders are held open by
// descriptor (VaultDir), so that a folder swapped for a symlink mid-write
// cannot send a file outside the vault; a note is replaced by a verified
// atomic exchange (swapInChecked) and a new name is taken only if free
// (renameNoReplace), so that a person's save made after the last check is
// never destroyed. See docs/security.md.
import { closeSync, constants as FS, fsync, existsSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { ToolError } from "../errors";
import { osPathError, safeAbsPath } from "../vault/paths";
import { READ_NOFOLLOW } from "../vault/read-file";
import { absOf, refuseIfNotNoteSized, sameInode } from "./atomic";
import { ERRNO, flagUnsupported, nativeRename, renameError } from "./native-rename";
import { isMomentaryFault } from "../platform/io-faults";

// On Linux a held folder is reached as /proc/self/fd/N/<name>: the kernel resolves N to the
// folder we opened, whatever now sits at its path.
const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

/** Which file a name pointed at: a save by rename changes the inode, an in-place save the size or mtime. */
export interface KeptFile {
  mode: number;
  uid: number;
  gid: number;
}

export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

export function sameFile(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return !!a && !!b && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

export function identityOfFd(fd: number): FileIdentity {
  const st = fstatSync(fd, { bigint: true });
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs };
}


/** False for a folder (read as absent, as before); path-invalid for a pipe, socket or device. */
function isRegular(fd: number, name: string): boolean {
  const st = fstatSync(fd);
  if (st.isFile()) return true;
  if (st.isDirectory()) return false;
  throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(name)}: not a regular file (a pipe, socket or device is never read or replaced)`);
}

function pathErr(e: unknown, rel: string): unknown {
  return osPathError(e, rel) ?? e;
}

/**
 * A vault folder opened by descriptor, walking from the root one name at a
 * time without following symlinks (a symlink or a file in the way is
 * path-invalid), creating missing folders when asked. Close it when done.
 */
export class VaultDir {
  private constructor(
    readonly root: string,
    readonly rel: string,
    readonly fd: number | null,
  ) {}

  get abs(): string {
    return absOf(this.root, this.rel);
  }

  /** The path to hand to fs calls for an entry of this folder. */
  entry(name: string): string {
    return this.fd !== null ? `/proc/self/fd/${this.fd}/${name}` : join(this.abs, name);
  }

  static open(root: string, rel: string, opts: { create?: boolean } = {}): VaultDir {
    if (!PROC_FD) {
      // No descriptor-relative paths here: check the path (no symlinks) and make the folders.
      safeAbsPath(root, rel);
      if (opts.create) {
        try {
          mkdirSync(absOf(root, rel), { recursive: true });
        } catch (e) {
          throw pathErr(e, rel);
        }
        safeAbsPath(root, rel);
      }
      return new VaultDir(root, rel, null);
    }
    let fd = openSync(root, FS.O_RDONLY | FS.O_DIRECTORY);
    try {
      for (const part of rel ? rel.split("/") : []) {
        const at = `/proc/self/fd/${fd}/${part}`;
        let next: number;
        try {
          next = openSync(at, FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW);
        } catch (e) {
          const code = (e as { code?: string }).code;
          if (code !== "ENOENT" || !opts.create) {
            if (code === "ENOENT") throw Object.assign(new Error(`${rel}: no such folder`), { code });
            if (code === "ELOOP" || code === "ENOTDIR") {
              throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(rel)}: ${part} is a symbolic link or a file, not a folder`);
            }
            throw pathErr(e, rel);
          }
          try {
            mkdirSync(at);
          } catch (e2) {
            if ((e2 as { code?: string }).code !== "EEXIST") throw pathErr(e2, rel);
          }
          try {
            next = openSync(at, FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW);
          } catch (e3) {
            const c3 = (e3 as { code?: string }).code;
            if (c3 === "ELOOP" || c3 === "ENOTDIR") throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(rel)}: ${part} is a symbolic link or a file, not a folder`);
            throw pathErr(e3, rel);
          }
        }
        closeSync(fd);
        fd = next;
      }
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    return new VaultDir(root, rel, fd);
  }

  /** The same folder through a descriptor of its own (it stays that folder if the folder is renamed or moved). */
  reopen(): VaultDir {
    if (this.fd === null) return new VaultDir(this.root, this.rel, null);
    return new VaultDir(this.root, this.rel, openSync(`/proc/self/fd/${this.fd}`, FS.O_RDONLY | FS.O_DIRECTORY));
  }

  /** fsync the folder so that a rename in it survives a power cut; some filesystems refuse, which is fine. */
  sync(): void {
    try {
      if (this.fd !== null) fsyncSync(this.fd);
      else {
        const fd = openSync(this.abs, FS.O_RDONLY);
        try {
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    } catch {
      /* the rename is still atomic */
    }
  }

  /** sync() on the file system's thread pool: a folder's fsync can wait for a journal commit (tens of ms under load), which should not hold other callers. */
  syncAsync(): Promise<void> {
    if (this.fd === null) return Promise.resolve(this.sync());
    const fd = this.fd;
    return new Promise((done) => fsync(fd, () => done()));
  }

  close(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
    }
  }

  /** Bytes and identity of a file in this folder; null when absent. A symlink there reads as "changed" (never followed). */
  read(name: string): { bytes: Buffer; id: FileIdentity } | { symlink: true } | null {
    let fd: number;
    try {
      fd = openSync(this.entry(name), READ_NOFOLLOW);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      if (code === "ELOOP") return { symlink: true };
      if (code === "EISDIR") return null;
      throw e;
    }
    try {
      if (!isRegular(fd, name)) return null;
      const before = identityOfFd(fd);
      refuseIfNotNoteSized(name, Number(before.size));
      const bytes = readFileSync(fd);
      const after = identityOfFd(fd);
      // Written to while we read (an in-place save): report it as changed, never as what we half-read.
      if (!sameFile(before, after)) return { bytes, id: { ...after, mtimeNs: -1n } };
      return { bytes, id: after };
    } catch (e) {
      if ((e as { code?: string }).code === "EISDIR") return null;
      throw e;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * identity(), but a file that could not be opened for a reason other than its absence (a shortage of
   * descriptors or memory) is an error, not a file that is not there: a swap read such a failure as a person's
   * save and reported a conflict that never happened.
   */
  identityOrFault(name: string): FileIdentity | null {
    let fd: number;
    try {
      fd = openSync(this.entry(name), READ_NOFOLLOW);
    } catch (e) {
      if (isMomentaryFault(e)) throw e;
      return null;
    }
    try {
      return identityOfFd(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Identity of the file at `name`, without reading it; null when absent (or a link), or when it cannot be opened. */
  identity(name: string): FileIdentity | null {
    try {
      return this.identityOrFault(name);
    } catch (e) {
      if (isMomentaryFault(e)) return null;
      throw e;
    }
  }


  /**
   * Create `name` with `data`, fsynced, failing if it exists (temp files). Returns the new file's identity.
   * `kept`: the file it will replace, whose mode, group and (where the system allows) owner it takes.
   */
  async writeNew(name: string, data: Uint8Array, kept: KeptFile | null): Promise<FileIdentity> {
    const fh = await open(this.entry(name), FS.O_WRONLY | FS.O_CREAT | FS.O_EXCL | FS.O_NOFOLLOW, kept?.mode ?? 0o644);
    try {
      // The replacement is a new file: created by this process, under its umask. On a vault shared through a
      // group, alice's `664 alice:notes` note came back `644 bob:notes` (umask 077: `600 bob`) after bob's
      // server edited it, and alice could no longer write it, or read it (the lifecycle audit of 2026-12-05).
      if (kept) {
        await fh.chown(kept.uid, kept.gid).catch(() => fh.chown(-1, kept.gid).catch(() => {}));
        await fh.chmod(kept.mode).catch(() => {}); // a file system without modes (vfat, some FUSE mounts) keeps its own
      }
      await fh.writeFile(data);
      await fh.sync();
      return identityOfFd(fh.fd);
    } catch (e) {
      await fh.close().catch(() => {});
      this.remove(name);
      throw e;
    } finally {
      await fh.close().catch(() => {});
    }
  }

  remove(name: string): void {
    try {
      unlinkSync(this.entry(name));
    } catch {
      /* already gone */
    }
  }

  /** What a replacement of `name` keeps of it (its mode bits, a read-only bit too; its owner and group); null when it is not there. */
  keptOf(name: string): KeptFile | null {
    try {
      const st = statSync(this.entry(name));
      return { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
    } catch {
      return null;
    }
  }
}

/** How often a replacement went in by exchange, and how often a person's save had to be swapped back (for tests and benchmarks). */
export const swapStats = { exchanged: 0, swappedBack: 0 };

function dirArgs(d: VaultDir, name: string): [number, string] {
  return d.fd !== null ? [d.fd, name] : [nativeRename.atFdcwd, join(d.abs, name)];
}

/**
 * Put temp file `tmp` in place of the existing `name`, which must still be the
 * file `expect` identifies (what the last check read). With an atomic
 * exchange the displaced file is checked after the swap: if it is not the
 * expected one (a person saved in between), it is swapped straight back and
 * the answer is "stale"; if the person saved yet again in that instant, their
 * newer file is put back. Without exchange support: a plain rename, whose
 * microseconds-wide gap after the check remains. Returns "ok" or "stale".
 */
export function swapInChecked(
  dir: VaultDir,
  tmp: string,
  name: string,
  expect: FileIdentity,
  ours: FileIdentity,
  /** Given the displaced file, open and already unnamed, when nothing but this descriptor leads to it. */
  onDisplaced?: (fd: number) => void,
): "ok" | "stale" {
  const [fd, a] = dirArgs(dir, tmp);
  const [, b] = dirArgs(dir, name);
  if (nativeRename.available) {
    let err = nativeRename.renameAt(fd, a, fd, b, nativeRename.exchangeFlag);
    if (err === 0) {
      swapStats.exchanged++;
      let displaced: FileIdentity | null;
      try {
        displaced = dir.identityOrFault(tmp);
      } catch (e) {
        // Whose file was displaced cannot be told (no descriptor to spare, say): as it was, and the change fails.
        nativeRename.renameAt(fd, a, fd, b, nativeRename.exchangeFlag);
        dir.remove(tmp);
        throw e;
      }
      if (sameFile(displaced, expect)) {
        // The version we planned from, now replaced: unnamed, but watched a while for an editor still writing to it.
        let held: number | null = null;
        try {
          held = openSync(dir.entry(tmp), READ_NOFOLLOW);
        } catch {
          /* gone already: nothing to watch */
        }
        dir.remove(tmp);
        if (held !== null) {
          // Still reachable by another name (a hard link: another note): writes to it are that note's, not lost.
          let unnamed = false;
          try {
            unnamed = fstatSync(held).nlink === 0;
          } catch {
            /* cannot tell: not handed on */
          }
          if (unnamed && onDisplaced) onDisplaced(held);
          else closeSync(held);
        }
        return "ok";
      }
      // Not the file we checked: a person's save. Put it back at once.
      swapStats.swappedBack++;
      err = nativeRename.renameAt(fd, a, fd, b, nativeRename.exchangeFlag);
      if (err === ERRNO.ENOENT) {
        // Our file was removed from the note's place meanwhile: move theirs back without replacing anything.
        nativeRename.renameAt(fd, a, fd, b, nativeRename.noReplaceFlag);
        dir.remove(tmp);
        return "stale";
      }
      if (err !== 0) throw renameError("swap back", err);
      if (!sameFile(dir.identity(tmp), ours)) {
        // What came back is not ours: the person saved again over our bytes in that instant, and
        // that newer save goes back in place of the older one.
        nativeRename.renameAt(fd, a, fd, b, nativeRename.exchangeFlag);
      }
      dir.remove(tmp);
      return "stale";
    }
    if (err === ERRNO.ENOENT) return "stale"; // the note vanished since the check
    if (!flagUnsupported(err)) throw renameError("rename", err);
  }
  renameSync(dir.entry(tmp), dir.entry(name));
  return "ok";
}

/** Rename `from` (in `src`) to `to` (in `dst`) only if nothing is at `to`; "stale" when something is. */
export function renameNoReplace(src: VaultDir, from: string, dst: VaultDir, to: string): "ok" | "stale" {
  const [sfd, a] = dirArgs(src, from);
  const [dfd, b] = dirArgs(dst, to);
  // A case-only rename in one folder: on a case-insensitive disk the "existing" file is the same one.
  // Only then: a twin that differs in case (a case-sensitive disk) must stop the rename like any file.
  const caseOnly = src.rel === dst.rel && from !== to && from.toLowerCase() === to.toLowerCase() && sameInode(src.entry(from), dst.entry(to));
  if (nativeRename.available && !caseOnly) {
    const err = nativeRename.renameAt(sfd, a, dfd, b, nativeRename.noReplaceFlag);
    if (err === 0) return "ok";
    if (err === ERRNO.EEXIST) return "stale";
    if (err === ERRNO.ENOENT) return "stale";
    if (!flagUnsupported(err)) throw renameError("rename", err);
  }
  if (!caseOnly && from !== to) {
    // A hard link fails if the name exists, atomically, on every POSIX filesystem that has links.
    try {
      linkSync(src.entry(from), dst.entry(to));
      unlinkSync(src.entry(from));
      return "ok";
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "EEXIST") return "stale";
      if (code === "ENOENT") return "stale";
      /* no hard links here (EPERM, ENOTSUP…): a plain rename after the check */
    }
  }
  renameSync(src.entry(from), dst.entry(to));
  return "ok";
}
