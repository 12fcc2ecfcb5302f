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
