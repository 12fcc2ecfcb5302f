// Every tool the server lists, called with each of its arguments set to hostile or mistyped values,
// through the real HTTP endpoint. The targeted hardening tests cover the attacks we know of; this
// sweep catches a tool added or changed later that answers bad input with an exception (the server
// then says "internal"), a stack trace or a dead server instead of a kind the caller can act on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { leakIn } from "./helpers/leaks";
import { startTestServer, type TestServer } from "./helpers/server";

// An existing note for the arguments that name one, so that a call gets past "not found" to the rest.
const NOTE = "Garden/Compost.md";

/** A value a well-meaning caller might send for an argument, from its JSON schema and its name. */
function plausible(name: string, schema: any): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if (schema?.enum) return schema.enum[0];
  if (type === "string") {
    if (/^(to|dest|destination|newPath)$/i.test(name)) return "Garden/Compost moved.md";
    if (/path|note|from|source/i.test(name)) return NOTE;
    if (/tag/i.test(name)) return "garden";
    return "compost";
  }
  if (type === "integer" || type === "number") return 1;
  if (type === "boolean") return false;
  if (type === "array") return [plausible(name, schema.items)];
  if (type === "object") return {};
  return "compost";
}

const HOSTILE: unknown[] = [
  "",
  "../../../etc/passwd",
  "/etc/passwd",
  ".lettuce/index.db",
  "a\u0000b",
  "x".repeat(100_000),
  '"NEAR(((*',
  "[[",
  "🥬".repeat(500),
  -1,
  1e15,
  2.5,
  null,
  true,
  [],
  {},
  ["a", 1, null],
];


describe("every tool against hostile arguments", () => {
  let s: TestServer;
  let tools: { name: string; inputSchema: any }[] = [];
  beforeAll(async () => {
    s = await startTestServer();
    const list = (await (await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" })).json()) as any;
    tools = list.result.tools;
  });
  afterAll(() => s?.close());

  test("the server lists its tools", () => {
    expect(tools.length).toBeGreaterThan(40);
  });

  test("each argument's hostile values get a kind, or a JSON-RPC error for a malformed call: never internal, a stack or a dead server", async () => {
    const problems: string[] = [];
    const kinds = new Map<string, number>();
    let calls = 0;
    for (const tool of tools) {
      const props: Record<string, any> = tool.inputSchema?.properties ?? {};
      const base: Record<string, unknown> = {};
      for (const k of tool.inputSchema?.required ?? []) base[k] = plausible(k, props[k]);
      const cases: [string, Record<string, unknown>][] = [["plausible", base], ["an unknown argument", { ...base, notAnArgument: 1 }]];
      for (const k of Object.keys(props)) for (const v of HOSTILE) cases.push([`${k} = ${JSON.stringify(v)?.slice(0, 24)}`, { ...base, [k]: v }]);
      for (const [label, args] of cases) {
        calls++;
        const res = await s.rpc({ jsonrpc: "2.0", id: calls, method: "tools/call", params: { name: tool.name, arguments: args } });
        const text = await res.text();
        const where = `${tool.name} (${label})`;
        if (res.status >= 500) problems.push(`${where}: HTTP ${res.status}`);
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          problems.push(`${where}: not JSON: ${text.slice(0, 120)}`);
          continue;
        }
        const leak = leakIn(text);
        if (leak) problems.push(`${where}: ${leak} in ${text.slice(0, 200)}`);
        if (body.error) {
          if (![-32600, -32601, -32602].includes(body.error.code)) problems.push(`${where}: JSON-RPC error ${body.error.code}`);
          kinds.set(`json-rpc ${body.error.code}`, (kinds.get(`json-rpc ${body.error.code}`) ?? 0) + 1);
        } else if (body.result?.isError) {
          const kind = body.result.kind;
          if (typeof kind !== "string" || !/^[a-z]+(-[a-z]+)*$/.test(kind) || kind === "internal") problems.push(`${where}: kind ${kind}: ${body.result.content?.[0]?.text?.slice(0, 160)}`);
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        } else if (!Array.isArray(body.result?.content)) {
          problems.push(`${where}: neither a result nor an error`);
        }
      }
      // Still answering others after this tool's calls.
      const ping = await s.rpc({ jsonrpc: "2.0", id: "ping", method: "ping" });
      if (ping.status !== 200) problems.push(`${tool.name}: the server no longer answers a ping`);
    }
    expect(problems).toEqual([]);
    // The sweep reached the tools' own checks, not only the schema's.
    expect(calls).toBeGreaterThan(1500);
    for (const kind of ["path-invalid", "note-not-found", "invalid-input"]) expect(kinds.get(kind) ?? 0, kind).toBeGreaterThan(0);
    expect(kinds.get("json-rpc -32602") ?? 0).toBeGreaterThan(0);
  }, 240_000);
});
