// Tool failures carry a machine-dispatchable `kind` (spec: "Standard errors").
// They travel to the client as a normal tools/call result with isError: true,
// never as a JSON-RPC error, so agents can branch on `kind`.
export type ErrorKind =
  | "path-invalid"
  | "note-not-found"
  | "attachment-not-found"
  | "attachment-too-large"
  | "not-a-note"
  | "invalid-input"
  | "forbidden"
  | "conflict"
  | "immutable-path"
  | "too-large"
  | "too-long"
  | "not-configured"
  | "rate-limited"
  | "index-not-ready"
  | "query-too-complex"
  | "timeout"
  | "disk-full"
  | "read-only"
  | "permission-denied"
  | "internal";

export class ToolError extends Error {
  constructor(
    public readonly kind: ErrorKind | string,
    message: string,
    public readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ToolError";
  }
}

/**
 * A fault of the machine, not of the call, that the caller can still act on: the disk (or the
 * user's quota) is full, or the vault's folder cannot be written. Such a failure happens before a
 * note's rename (the atomic step), so the note is as it was; the kind says so instead of "internal".
 * null for anything else, which stays an internal error with no detail.
 */
export function machineFault(e: unknown): ToolError | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") {
    return new ToolError("disk-full", "The disk holding the vault is full: nothing was changed. Free some space and try again.");
  }
  if (code === "EROFS" || code === "SQLITE_READONLY") {
    return new ToolError("read-only", `The server cannot write to the vault (${code === "EROFS" ? "a read-only file system" : "a read-only database"}): nothing was changed.`);
  }
  if (code === "EACCES" || code === "EPERM") {
    return new ToolError("permission-denied", "The server's user may not read or change this file or folder (permission denied): nothing was changed.");
  }
  // A moment's shortage, not the call's fault: answered "internal" (with a stack in the log per call) before.
  if (code === "EMFILE" || code === "ENFILE") {
    return new ToolError("rate-limited", "The server has all the files and connections open that its limit allows (ulimit -n): nothing was changed; try again in a moment.", { retry_after_ms: 1000 });
  }
  return null;
}

/**
 * A note that could not be read: not found only when it is not there (or not a regular file). Anything else
 * (permission denied, no descriptors left) says what it is: "not found" of a note that exists told an agent
 * it was gone, and it may create it again (the limits audit of 2026-12-05).
 */
export function noteReadError(e: unknown, path: string): ToolError {
  const code = (e as { code?: unknown } | null)?.code;
  // A ToolError here says the path leads to no regular file (a folder, a FIFO, a symlink on the way).
  if (e instanceof ToolError || code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return new ToolError("note-not-found", `Note not found: ${path}`);
  return machineFault(e) ?? new ToolError("note-not-found", `Note not found: ${path}`);
}
