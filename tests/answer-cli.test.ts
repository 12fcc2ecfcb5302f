// `lettuce answer <vault> <question…>`: the real CLI as a child process, against
// the scripted model over HTTP.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { parseReference, startChatServer, type ChatServer } from "./helpers/chat-server";
import { runLettuce } from "./helpers/cli";
import { copyVault } from "./helpers/server";

let root: string;
let llm: ChatServer;
const env = () => ({ LETTUCE_LLM_PROVIDER: "openai", LETTUCE_LLM_BASE_URL: llm.url, LETTUCE_LLM_MODEL: "cli", LETTUCE_EMBED_PROVIDER: "none", LETTUCE_RERANK_URL: "" });

beforeAll(() => {
  root = copyVault();
  llm = startChatServer();
  llm.state.reply = (req) => {
    if (/check whether an answer is supported/.test(req.system)) return JSON.stringify({ claims: [{ claim: "Frost ends in April.", supported: true }, { claim: "Snow in July.", supported: false }] });
    const items = parseReference(req.user)!.items;
    const frost = items.find((i) => i.attrs.path === "Garden/Frost Dates.md");
    const words = frost ? frost.text.split("\n").find((l) => l.split(" ").length > 6)!.split(" ").slice(0, 6).join(" ") : "";
    return JSON.stringify({
      answer: "Frost ends in April. Snow in July.",
      citations: ["Garden/Frost Dates.md", "Made/Up.md"],
      quotes: [
        { path: "Garden/Frost Dates.md", quote: words },
        { path: "Garden/Frost Dates.md", quote: "a sentence nobody wrote" },
      ],
    });
  };
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await llm.stop();
});

test("lettuce answer prints the answer, numbered sources and quotes, and what was dropped", async () => {
  const r = await runLettuce(["answer", root, "when", "is", "the", "last", "frost", "--faithfulness"], { env: env(), timeoutMs: 60_000 });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Frost ends in April. Snow in July.");
  expect(r.stdout).toMatch(/Sources:\n {2}\[1\] Garden\/Frost Dates\.md/);
  expect(r.stdout).not.toContain("Made/Up.md");
  expect(r.stdout).toMatch(/Quotes:\n {2}“[^”]+”\n {6}\[1\] Garden\/Frost Dates\.md/);
  expect(r.stdout).toContain("(Dropped 1 citation and 1 quote the notes do not back.)");
  expect(r.stdout).toContain("Faithfulness: 0.50; not supported by the notes:");
  expect(r.stdout).toContain("- Snow in July.");
  // The question reached the model as one string.
  expect(llm.state.chats.some((c) => c.user.includes("Question: when is the last frost"))).toBe(true);
});

test("lettuce answer --json is the tool's answer; usage mistakes exit 2; no LLM exits 1 with the reason", async () => {
  const r = await runLettuce(["answer", root, "last frost date", "--json", "--limit", "2"], { env: env(), timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  const j = JSON.parse(r.stdout);
  expect(Object.keys(j).sort()).toEqual(["answer", "citations", "dropped", "quotedSpans", "retrieval", "retrieved"]);
  expect(j.retrieved.length).toBeLessThanOrEqual(2);
  expect(j.dropped.citations).toBe(1);
  expect((await runLettuce(["answer", root], { env: env() })).code).toBe(2);
  expect((await runLettuce(["answer", root, "q", "--limit", "99"], { env: env() })).code).toBe(2);
  const none = await runLettuce(["answer", root, "frost"], { env: { LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_PROVIDER: "none" } });
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("No LLM provider configured");
  // Asked for JSON, the refusal is JSON on stdout, with its kind.
  const noneJson = await runLettuce(["answer", root, "frost", "--json"], { env: { LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_PROVIDER: "none" } });
  expect(noneJson.code).toBe(1);
  expect(JSON.parse(noneJson.stdout)).toMatchObject({ kind: "not-configured" });
}, 60_000);
