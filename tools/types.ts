import { z } from "zod";
import type { Scope } from "../lib/store/tokens";
import type { VaultContext } from "../lib/vault-context";

export interface ToolContext {
  vault: VaultContext;
  /** The calling token. stdio sessions get a synthetic one named "stdio". */
  token: { name: string; scope: Scope };
  /** Who is acting: the client's name or an X-Lettuce-Agent label; for the timeline and audit. */
  agent: string;
  signal?: AbortSignal;
  /**
   * Call before making an answer the size of a note (`bytes` of it): resolves when this token's earlier big
   * answers have been read far enough (lib/server/answer-budget.ts). Absent where nothing holds answers (stdio, tests).
   */
  reserveAnswer?: (bytes: number) => Promise<void>;
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  /**
   * The longer account of the tool (return fields, errors, limits): indexed by
   * tool search so that a plain-language request finds it, never sent in
   * tools/list, which every agent pays for on every connect.
   */
  details?: string;
  /** What tools/list says to a propose token, when the call does something else for it (write tools queue proposals). */
  proposeDescription?: string;
  /** Token scopes that see this tool in tools/list and may call it. */
  scopes: readonly Scope[];
  input: S;
  /** MCP tool annotations (readOnlyHint etc.) so clients can tell reads from writes. */
  annotations?: Record<string, boolean | string>;
  /** True for a read whose work legitimately runs long (embedding or evaluating a whole vault): no time budget. */
  longRunning?: boolean;
  handler: (args: z.output<S>, ctx: ToolContext) => unknown;
}

export const ALL_SCOPES: readonly Scope[] = ["read", "propose", "write"];
// Only the hints clients act on: openWorldHint is left at its default (true, the cautious reading), because
// every byte of tools/list is paid for by every agent on every connect.
export const READ_ONLY = { readOnlyHint: true } as const;

/** Identity function that keeps the schema's type flowing into the handler. */
export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

// Paging fields carry no description: their names, defaults and bounds say it (tools/list is paid for by every agent).
// A limit past the maximum is clamped, not refused: the specs give no maximum, so an agent written against them
// must get a page (the answer's limit, total or hasMore say there is more), not a protocol error.
export const limitField = (def: number, max = 1000) =>
  z
    .number()
    .int()
    .min(1)
    .default(def)
    .transform((n) => Math.min(n, max));
export const offsetField = z.number().int().min(0).default(0);
// No minimum length: an empty path is the tool's path-invalid (the spec's kind for a malformed path), not a protocol error.
export const notePathField = z.string().describe('e.g. "Projects/Lettuce.md"');

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

export function page<T>(all: T[], offset: number, limit: number): Page<T> {
  return { items: all.slice(offset, offset + limit), total: all.length, offset, limit };
}

/**
 * A result made of MCP content parts of its own, not one JSON text part: an image a model can see
 * (read_attachment's `view`). The dispatcher sends the parts as they are.
 */
export class ContentParts {
  constructor(readonly parts: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[]) {}
}
