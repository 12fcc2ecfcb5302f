// The catalogue tool search indexes: Lettuce's own tools, each as the
// spec's Tool object (spec/tool-search.md) plus the text that is matched.
// The tools are registered by tools/index.ts (lib code does not import the
// tools layer); each carries its family, which becomes its tag.
import { z } from "zod";
import { compactSchema } from "../tool-schema";
import { hintsFor } from "./hints";

/** What tool search needs of a tool definition (tools/types.ts ToolDef fits). */
export interface CatalogueTool {
  name: string;
  description: string;
  /** The longer account of the tool, matched but not shown (tools/types.ts ToolDef.details). */
  details?: string;
  proposeDescription?: string;
  scopes: readonly string[];
  input: z.ZodObject;
  annotations?: Record<string, boolean | string>;
}

export interface ToolRecord {
  name: string;
  family: string;
  scopes: readonly string[];
  readOnly: boolean;
  description: string;
  details: string;
  proposeDescription?: string;
  argsSchema: Record<string, unknown>;
  /** Parameter names and descriptions, as indexed. */
  params: string;
  hints: string;
  /** All the text the full-text side matches (name, hints, description, parameters). */
  text: string;
  /**
   * What the vector side embeds, returned as embedded_text: the name, the hints
   * and the description's first sentence. Small models read only the first ~128
   * tokens, and the full description's return shapes and error kinds drown the purpose.
   */
  vectorText: string;
}

/** The spec's tool_type for every Lettuce tool: they are tools of an MCP server. */
export const TOOL_TYPE = "external_mcp";

export function buildRecords(tools: readonly CatalogueTool[], families: Record<string, readonly { name: string }[]>): ToolRecord[] {
  const familyOf = new Map<string, string>();
  for (const [family, list] of Object.entries(families)) for (const t of list) familyOf.set(t.name, family);
  return tools.map((t) => {
    const { $schema: _s, ...argsSchema } = compactSchema(z.toJSONSchema(t.input, { io: "input", unrepresentable: "any" })) as Record<string, unknown>;
    const props = (argsSchema.properties ?? {}) as Record<string, { description?: string }>;
    const params = Object.entries(props)
      .map(([k, v]) => `${k}: ${v.description ?? ""}`.trim())
      .join("\n");
    const readOnly = t.annotations?.readOnlyHint === true;
    const hints = hintsFor(t.name);
    const family = familyOf.get(t.name) ?? "other";
    const text = [`${t.name} (${t.name.replace(/_/g, " ")})`, hints, t.description, t.details ?? "", params ? `Parameters:\n${params}` : ""].filter(Boolean).join("\n");
    // The longer account's opening says what the tool is for in plain words; the terse description is mostly shape.
    const lead = t.details || t.description;
    const firstSentence = /^[\s\S]*?[.:](?=\s|$)/.exec(lead)?.[0] ?? lead;
    const vectorText = [`${t.name.replace(/_/g, " ")}.`, hints ? `${hints}.` : "", firstSentence].filter(Boolean).join(" ");
    return { name: t.name, family, scopes: t.scopes, readOnly, description: t.description, details: t.details ?? "", proposeDescription: t.proposeDescription, argsSchema, params, hints, text, vectorText };
  });
}

/** The tags of a tool: its family, and whether it only reads or may write. */
export function tagsOf(r: ToolRecord): string[] {
  return [r.family, r.readOnly ? "read-only" : "writes"];
}

/** A record as the spec's Tool object, described as the caller's scope sees it. */
export function toolObject(r: ToolRecord, scope: string) {
  const description = (scope === "propose" && r.proposeDescription) || r.description;
  return {
    id: `tool-${r.name}`,
    name: r.name,
    description,
    tool_type: TOOL_TYPE,
    tags: tagsOf(r),
    // The arguments' schema once: the spec's json_schema (name, description and the same parameters again)
    // is optional, and sending both doubled every result (~1.6 KB a tool).
    args_json_schema: r.argsSchema,
    default_requires_approval: scope === "propose" && !r.readOnly,
    enable_parallel_execution: r.readOnly,
    metadata_: { family: r.family, scopes: r.scopes, readOnly: r.readOnly },
  };
}
