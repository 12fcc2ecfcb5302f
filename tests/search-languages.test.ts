// The multilingual search audit (2026-12-05): `search` finds words that hold a colon, words inside
// scripts written without spaces, and words written with combining marks; its snippets never cut a
// character in half. Through the real server on a temp vault built for the purpose.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";

const NOTES: Record<string, string> = {
  "Code/Cpp.md": "# Cpp\n\nWe keep the rows in a std::vector and call Foo::bar on each. TODO:fix the parser before release.\n",
  "Code/Refs.md": "# Refs\n\nThe paper is doi:10.1000/xyz and the author is mailto:carol@example.org for questions.\n",
  // 40 pizzas before the word (80 units): a snippet starting 53 units before it starts inside a surrogate pair.
  "Food/Pizza.md": `# Pizza\n\n${"🍕".repeat(40)}margherita ${"🍕".repeat(200)}\n`,
  // The cut at 160 lands just before a vowel sign.
  "Lang/Hindi.md": `# Hindi\n\ngreeting ${"नमस्ते ".repeat(40)}\n`,
  "CJK/会议.md": "# 会议\n\n我们今天在北京开会讨论人工智能。\n",
  "CJK/Tokyo.md": "# Tokyo\n\n東京でコーヒーを飲みました。\n",
  "CJK/服务.md": "# 服务\n\n我们使用Python编写服务。\n",
  "CJK/北京烤鸭.md": "# 北京烤鸭\n\nA recipe.\n",
  "Lang/Thai.md": "# Thai\n\nฉันชอบกินข้าวผัดมาก\n",
  "Lang/Arabic.md": "# Arabic\n\nذَهَبَ الوَلَدُ إِلَى المَدْرَسَةِ\n",
  "Lang/Hebrew.md": "# Hebrew\n\nהַיֶּלֶד הָלַךְ לְבֵית הַסֵּפֶר\n",
  "Lang/Greek.md": "# Greek\n\nΤο ταξίδι στην Αθήνα ήταν υπέροχο.\n",
  "Lang/Turkish.md": "# Turkish\n\nIşık ve gölge, İstanbul'da akşam.\n",
  "Places/İstanbul.md": "# İstanbul\n\nA city.\n",
  "Places/Zürich.md": "# Zürich\n\nA city.\n",
  "Places/Café.md": "# Café\n\nA place.\n",
  "Animals/Fox.md": "# Fox\n\nThe quick brown fox.\n",
  "Animals/Dog.md": "# Dog\n\nThe quick dog.\n",
  "Places/Trip.md": "# Trip\n\nFrom istanbul to ZURICH, then a coffee at the Cafe\u0301 near İstanbul.\n",
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
    addWorkspaceNotes(root, NOTES);
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

  test("words inside Chinese, Japanese and Thai runs are found, and Latin words glued to them", async () => {
    expect(await paths("北京")).toEqual(["CJK/北京烤鸭.md", "CJK/会议.md"]); // the title first
    expect(await paths("人工智能")).toEqual(["CJK/会议.md"]);
    expect(await paths("东京")).toEqual([]); // simplified 东 is another character than 東
    expect(await paths("東京")).toEqual(["CJK/Tokyo.md"]);
    expect(await paths("コーヒー")).toEqual(["CJK/Tokyo.md"]);
    expect(await paths("ข้าวผัด")).toEqual(["Lang/Thai.md"]);
    expect(await paths("编写 python")).toEqual(["CJK/服务.md"]);
    // A Latin word alone, glued to Chinese in the note.
    expect(await paths("Python")).toEqual(["CJK/服务.md"]);
    expect(await paths("pyth")).toEqual(["CJK/服务.md"]);
    expect(await paths("北京 -烤鸭")).toEqual(["CJK/会议.md"]);
    expect((await paths("東京 OR 人工智能")).sort()).toEqual(["CJK/Tokyo.md", "CJK/会议.md"]);
    const r = await s.call("search", { query: "人工智能" }, "read");
    expect(r.items[0].snippet).toContain("人工智能");
    expect(r.total).toBe(1);
    // Paging over the index's match and the substring ones: total counts both, scores never go down the list.
    const all = await s.call("search", { query: "北京" }, "read");
    expect(all.total).toBe(2);
    expect(all.items[0].score).toBeLessThanOrEqual(all.items[1].score);
    const second = await s.call("search", { query: "北京", limit: 1, offset: 1 }, "read");
    expect(second.items.map((i: any) => i.path)).toEqual(["CJK/会议.md"]);
    expect(second.total).toBe(2);
  });

  test("words written with vowel points, accents or Turkish i are found as typed without them", async () => {
    expect(await paths("ذهب")).toEqual(["Lang/Arabic.md"]);
    expect(await paths("الولد")).toEqual(["Lang/Arabic.md"]);
    expect(await paths("הילד")).toEqual(["Lang/Hebrew.md"]);
    expect(await paths("αθηνα")).toEqual(["Lang/Greek.md"]);
    expect(await paths("ΑΘΗΝΑ")).toEqual(["Lang/Greek.md"]);
    expect(await paths("ışık")).toEqual(["Lang/Turkish.md"]);
    expect(await paths("नमस्ते")).toEqual(["Lang/Hindi.md"]);
    const r = await s.call("search", { query: "הילד" }, "read");
    expect(r.items[0].snippet).toContain("הַיֶּלֶד");
  });

  test("suggest_links folds names and text as the index does: İ, accents, decomposed letters", async () => {
    const r = await s.call("suggest_links", { path: "Places/Trip.md" }, "read");
    expect(r.items).toEqual([
      { targetPath: "Places/İstanbul.md", name: "İstanbul", count: 2 },
      { targetPath: "Places/Café.md", name: "Café", count: 1 },
      { targetPath: "Places/Zürich.md", name: "Zürich", count: 1 },
    ]);
  });

  test("the query's length is counted in characters, not UTF-16 units", async () => {
    const ok = await s.call("search", { query: "🍕".repeat(600) }, "read");
    expect(ok.items).toEqual([]);
    const over = await s.callRaw("search", { query: "🍕".repeat(1001) }, "read");
    expect(over.isError).toBe(true);
    expect(over.content[0].text).toContain("1001 characters");
  });

  test("lettuce search reads a -word after the query as part of it, and everything after --", async () => {
    const run = async (...words: string[]) => {
      const r = await runLettuce(["search", "--json", root, ...words]);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout).items as { path: string }[]).map((i) => i.path);
    };
    expect(await run("quick", "-fox")).toEqual(["Animals/Dog.md"]);
    expect(await run("quick", "--limit", "5", "-dog")).toEqual(["Animals/Fox.md"]);
    expect(await run("--", "quick", "-fox")).toEqual(["Animals/Dog.md"]);
    const help = await runLettuce(["search", "--help"]);
    expect(help.stdout + help.stderr).toContain("after `--` every word is");
  }, 60_000);

  test("a long query in a script without spaces is refused promptly, not sent as a phrase of its pairs of characters", async () => {
    const t0 = performance.now();
    const r = await s.callRaw("search", { query: "北".repeat(1000) }, "read");
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toContain("query-too-complex");
    expect(performance.now() - t0).toBeLessThan(2000);
    // 33 characters are 32 pairs: within the budget.
    expect((await s.call("search", { query: "北".repeat(33) }, "read")).items).toEqual([]);
    expect((await s.callRaw("search", { query: "北".repeat(34) }, "read")).isError).toBe(true);
  });
});

describe("search's substring scan is bounded", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    // 40 notes of 128 KB, each with a Greek word written with its accents and a word inside a run of Chinese:
    // 5 MB, past the scan's 4 MB budget.
    const filler = `# Filler\n\nΤο ταξίδι στην Αθήνα. 我们今天在北京开会。\n\n${"lorem ipsum dolor sit amet ".repeat(128 * 1024 / 27)}\n`;
    for (let i = 0; i < 40; i++) writeFileSync(join(root, `a${String(i).padStart(2, "0")}.md`), filler);
    s = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("a scan stopped at its budget says partial", async () => {
    const r = await s.call("search", { query: "αθηνα" }, "read");
    expect(r.partial).toBe(true);
    expect(r.items).toHaveLength(25);
    expect(r.total).toBeGreaterThanOrEqual(25);
    expect(r.total).toBeLessThan(40);
    // A query the index answers alone runs no scan: complete, not partial.
    const whole = await s.call("search", { query: "lorem" }, "read");
    expect(whole.total).toBe(40);
    expect(whole.partial).toBeUndefined();
    // Nor a word inside a run of Chinese: the index's n-grams find it in every note.
    const cjk = await s.call("search", { query: "北京" }, "read");
    expect(cjk.total).toBe(40);
    expect(cjk.partial).toBeUndefined();
  });
});
