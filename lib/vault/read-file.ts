import { closeSync, constants as FS, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { ToolError } from "../errors";
import { safeAbsPath } from "./paths";

/**
 * How every vault file is opened for reading: never through a symlink, and O_NONBLOCK, since
 * opening a FIFO for reading otherwise waits for a writer, and the thread that waits is the one
 * answering every caller. On a regular file O_NONBLOCK changes nothing.
 */
export const READ_NOFOLLOW = FS.O_RDONLY | (FS.O_NOFOLLOW ?? 0) | (FS.O_NONBLOCK ?? 0);

/**
 * Opens a file for reading only when it is a regular file, and never through a
 * symlink (the last name included). A FIFO, socket or device at a note's path
 * (put there since the scan, or named AGENTS.md) is refused rather than read:
 * reading one blocks, or never ends.
 */
export function openRegular(abs: string, shown: string): number {
  const fd = openSync(abs, READ_NOFOLLOW);
  try {
    if (!fstatSync(fd).isFile()) throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(shown)}: not a regular file`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/**
 * A vault file's bytes (`rel` vault-relative): no symlink anywhere on the way
 * (safeAbsPath, then O_NOFOLLOW for the last name) and a regular file. With
 * `limit`, at most that many bytes are read and `size` says how big the file is.
 * Errors: ToolError path-invalid, or the filesystem's own (ENOENT, ELOOP, …)
 * for callers that turn a missing file into their own answer.
 */
export function readVaultFile(root: string, rel: string, limit = Infinity): { bytes: Buffer; size: number } {
  const fd = openRegular(safeAbsPath(root, rel), rel);
  try {
    if (limit === Infinity) {
      const bytes = readFileSync(fd);
      return { bytes, size: bytes.length };
    }
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafe(Math.min(size, limit));
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: got === bytes.length ? bytes : bytes.subarray(0, got), size };
  } finally {
    closeSync(fd);
  }
}

/** The file's text (UTF-8), the same way. */
export function readVaultText(root: string, rel: string): string {
  return readVaultFile(root, rel).bytes.toString("utf8");
}
