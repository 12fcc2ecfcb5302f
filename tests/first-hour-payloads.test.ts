// An agent pays for every byte: on a real, big vault (obsidian-hub, 6,571
// notes) every read tool called with its default arguments answers in at
// most 32 KB, and tools/list for a write token stays small.
//
// Embeddings come from the in-test model server (the Ollama wire format), so
// the semantic tools run on all 6,571 notes in seconds.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { describeWithCorpus, OBSIDIAN_HUB } from "./helpers/corpora";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

setDefaultTimeout(600_000);

const BUDGET = 32 * 1024;

/** Arguments for tools that require some: the smallest sensible call. Every other read tool is called with {}. */
const REQUIRED: Record<string, Record<string, unknown>> = {
  read_note: { path: "00 - Start here.md" },
  read_outline: { path: "00 - Start here.md" },
  // The most linked-to note (filled in below): the worst case for the link tools.
  list_outgoing_links: { path: "" },
  list_backlinks: { path: "" },
  link_graph: { path: "" },
  suggest_links: { path: "00 - Start here.md" },
  related_notes: { path: "05 - Concepts/Zettelkasten.md" },
  search: { query: "plugin" },
  semantic_search: { query: "how do I write a plugin" },
  answer: { query: "how do I write a plugin" },
  notes_by_tag: { tag: "placeholder" },
  read_attachment: { path: "" }, // filled in from list_attachments
  withdraw_proposal: { id: 1 },
  get_database_schema: { databaseId: "Concepts.base" },
  search_workspace: { query: "plugin" },
  prepare_context: { task: "Write a guide to the community plugins for note linking" },
  get_page: { pageId: "00 - Start here.md" },
  get_pages: { pageIds: ["00 - Start here.md", "05 - Concepts/Zettelkasten.md"] },
  get_related_pages: { pageId: "" }, // the most linked-to note, below
  query_database: { databaseId: "Concepts.base" },
};
/** Tools whose answers are not vault-sized, or that change things: not called here. */
const NOT_CALLED = new Set(["eval", "withdraw_proposal", "await_directives"]);

describeWithCorpus("obsidian-hub", "payload budget on obsidian-hub", () => {
  let s: TestServer;
  let model: ModelServer;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    // One JSON object that satisfies every LLM tool's protocol (answer, lint_semantic, suggest_tags), saying little.
    const reply = JSON.stringify({ answer: "The notes do not say.", citations: [], quotes: [], findings: [], suggestions: [], claims: [] });
    model = startModelServer({ chatReply: () => reply });
    const env = { LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: model.url, LETTUCE_LLM_PROVIDER: "ollama", LETTUCE_LLM_MODEL: "llama3.2", LETTUCE_EMBED_BACKGROUND: "0" };
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    const root = copyVault(OBSIDIAN_HUB);
    // The hub has no Obsidian Bases: one over a big folder, as a person would make it.
    writeFileSync(join(root, "Concepts.base"), 'filters:\n  and:\n    - file.inFolder("05 - Concepts")\nviews:\n  - type: table\n    name: All\n');
    s = await startTestServer({ root });
    await s.call("reindex_embeddings");
  });
  afterAll(async () => {
    await s?.close();
    if (s) rmSync(s.root, { recursive: true, force: true });
    await model?.stop();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test("every read tool's default answer is at most 32 KB", async () => {
    const c = await s.client("write");
    const { tools } = await c.listTools();
    const attachments = await s.call("list_attachments", { limit: 1 });
    REQUIRED.read_attachment = { path: attachments.items[0].path };
    const hub = s.vault.indexDb.query("SELECT resolved AS p FROM links WHERE resolved LIKE '%.md' GROUP BY resolved ORDER BY count(*) DESC LIMIT 1").get() as { p: string };
    for (const t of ["list_outgoing_links", "list_backlinks", "link_graph"]) REQUIRED[t] = { path: hub.p };
    REQUIRED.get_related_pages = { pageId: hub.p };
    const sizes: Record<string, number> = {};
    for (const t of tools) {
      if (t.annotations?.readOnlyHint !== true || NOT_CALLED.has(t.name)) continue;
      const args = REQUIRED[t.name] ?? {};
      const missing = (t.inputSchema.required ?? []).filter((k: string) => !(k in args));
      expect({ tool: t.name, missing }).toEqual({ tool: t.name, missing: [] });
      const res: any = await c.callTool({ name: t.name, arguments: args });
      expect({ tool: t.name, isError: !!res.isError, text: res.isError ? res.content[0].text : "" }).toEqual({ tool: t.name, isError: false, text: "" });
      sizes[t.name] = Buffer.byteLength(res.content[0].text);
    }
    // read_attachment's base64 of an image is the one answer sized by the file, not the vault (capped separately).
    delete sizes.read_attachment;
    const over = Object.entries(sizes).filter(([, n]) => n > BUDGET);
    console.log(`payloads (bytes): ${JSON.stringify(sizes)}`);
    expect(over).toEqual([]);
    expect(Object.keys(sizes).length).toBeGreaterThan(15);
  });

  test("tools/list for a write token stays under 24 KB, each description under 400 characters", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const text = await res.text();
    const { tools } = JSON.parse(text).result;
    console.log(`tools/list: ${tools.length} tools, ${text.length} bytes`);
    expect(text.length).toBeLessThanOrEqual(24 * 1024);
    const long = tools.filter((t: any) => t.description.length > 400).map((t: any) => `${t.name}: ${t.description.length}`);
    expect(long).toEqual([]);
  });
});
