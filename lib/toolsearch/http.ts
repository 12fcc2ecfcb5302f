// POST /v1/tools/search (spec/tool-search.md): the same search as the
// search_tools MCP tool, for HTTP clients, behind the same bearer token.
import { ToolError } from "../errors";
import { searchTools, toolSearchInput } from "./index";

const STATUS: Record<string, number> = { "invalid-input": 400, "not-configured": 400, "rate-limited": 429, "provider-unavailable": 503, "provider-error": 502 };

/** Answer one request body for a caller of this scope: [status, JSON body]. */
export async function toolSearchHttp(rawBody: string, scope: string): Promise<[number, unknown]> {
  let body: unknown;
  try {
    body = rawBody.trim() ? JSON.parse(rawBody) : {};
  } catch {
    return [400, { error: "The body is not valid JSON", kind: "invalid-input" }];
  }
  const parsed = toolSearchInput.safeParse(body);
  if (!parsed.success) return [400, { error: `Invalid request: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`, kind: "invalid-input" }];
  try {
    return [200, await searchTools(parsed.data, scope)];
  } catch (e) {
    if (e instanceof ToolError) return [STATUS[e.kind] ?? 500, { error: e.message, kind: e.kind, ...(e.data ?? {}) }];
    console.error("lettuce: tool search failed:", e);
    return [500, { error: "Internal error in tool search; see the server log", kind: "internal" }];
  }
}
