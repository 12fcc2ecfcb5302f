import { ToolError } from "../errors";
import { ProviderError } from "../providers/types";

/** A provider failure as the tool error an agent sees (same kind; retry_after_ms when the provider gave one). */
export function toToolError(e: unknown): unknown {
  if (e instanceof ProviderError) {
    return new ToolError(e.kind, e.message, e.retryAfterMs !== undefined ? { retry_after_ms: Math.ceil(e.retryAfterMs) } : undefined);
  }
  return e;
}
