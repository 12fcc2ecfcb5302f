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
  return null;
}
