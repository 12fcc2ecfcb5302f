// The rename system calls Node's fs does not offer, through bun:ffi:
// Linux renameat2() and macOS renameatx_np(). Two of their flags close the
// gaps a plain rename leaves in the write path:
//
// - exchange (RENAME_EXCHANGE / RENAME_SWAP): swap the new file with the note
//   in one step, so that the file displaced is in our hands and can be
//   checked — and swapped back if it is a person's save made after our last
//   check (commit.ts). A plain rename would simply have destroyed it.
// - no-replace (RENAME_NOREPLACE / RENAME_EXCL): create a note only if no file
//   of that name appeared since the check.
//
// Both take directory file descriptors, so that a folder swapped for a
// symlink after we opened it cannot redirect the rename outside the vault.
// Where neither call exists (Windows, other Unixes, a filesystem that refuses
// the flag), callers fall back to a plain rename; `available` says which.
import { dlopen, FFIType, read, type Pointer } from "bun:ffi";

export interface NativeRename {
  available: boolean;
  /** The "current directory" file descriptor, for path arguments relative to nothing. */
  atFdcwd: number;
  exchangeFlag: number;
  noReplaceFlag: number;
  /** renameat2/renameatx_np: 0 on success, else the errno. */
  renameAt(oldDir: number, oldName: string, newDir: number, newName: string, flags: number): number;
}

const unavailable: NativeRename = { available: false, atFdcwd: -100, exchangeFlag: 0, noReplaceFlag: 0, renameAt: () => 38 /* ENOSYS */ };

function cstr(s: string): Buffer {
  return Buffer.from(s + "\0", "utf8");
}

function load(): NativeRename {
  if (process.env.LETTUCE_NO_NATIVE_RENAME === "1") return unavailable;
  try {
    if (process.platform === "linux") {
      const lib = dlopen("libc.so.6", {
        renameat2: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
        __errno_location: { args: [], returns: FFIType.ptr },
      });
      const errno = () => read.i32(lib.symbols.__errno_location() as Pointer, 0);
      return {
        available: true,
        atFdcwd: -100,
        exchangeFlag: 2, // RENAME_EXCHANGE
        noReplaceFlag: 1, // RENAME_NOREPLACE
        renameAt(oldDir, oldName, newDir, newName, flags) {
          return lib.symbols.renameat2(oldDir, cstr(oldName), newDir, cstr(newName), flags) === 0 ? 0 : errno();
        },
      };
    }
    if (process.platform === "darwin") {
      const lib = dlopen("libSystem.B.dylib", {
        renameatx_np: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
        __error: { args: [], returns: FFIType.ptr },
      });
      const errno = () => read.i32(lib.symbols.__error() as Pointer, 0);
      return {
        available: true,
        atFdcwd: -2,
        exchangeFlag: 0x2, // RENAME_SWAP
        noReplaceFlag: 0x4, // RENAME_EXCL
        renameAt(oldDir, oldName, newDir, newName, flags) {
          return lib.symbols.renameatx_np(oldDir, cstr(oldName), newDir, cstr(newName), flags) === 0 ? 0 : errno();
        },
      };
    }
  } catch {
    /* no such library or symbol (musl, an old macOS): plain renames */
  }
  return unavailable;
}

export const nativeRename: NativeRename = load();

/** errno values that mean "this filesystem or kernel cannot do that flag": fall back to a plain rename. */
export function flagUnsupported(errno: number): boolean {
  // ENOSYS 38, EINVAL 22, EOPNOTSUPP 95 (Linux) / 45 (macOS), ENOTSUP 45 (macOS)
  return errno === 38 || errno === 22 || errno === 95 || (process.platform === "darwin" && (errno === 45 || errno === 78));
}

export const ERRNO = { EEXIST: 17, ENOENT: 2 } as const;

// errno values by name where Linux and macOS agree, and the two that differ (EDQUOT).
const ERRNO_CODES: Record<number, string> = { 1: "EPERM", 13: "EACCES", 28: "ENOSPC", 30: "EROFS", ...(process.platform === "darwin" ? { 69: "EDQUOT" } : { 122: "EDQUOT" }) };

/** An Error for a failed native rename, with the `code` a Node fs error would have (errors.ts machineFault reads it). */
export function renameError(what: string, errno: number): Error {
  return Object.assign(new Error(`${what} failed (errno ${errno})`), { errno, code: ERRNO_CODES[errno] });
}
