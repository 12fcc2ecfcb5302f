// search_workspace with words of scripts written without spaces (Chinese, Japanese, Thai): answered by the
// index's n-gram columns (lib/vault/ngram.ts), as `search` answers them, in every note, with no `partial`.
// Before, such a query skipped the index for a substring scan of at most 4 MB of notes, which in a larger
// vault missed the notes past it. Through the real server, on a temp vault of 4.7 MB of filler notes with
// the notes holding the words indexed after them.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";
import { SUBSTRING_SCAN_BYTES } from "../lib/retrieval/substring";
import { MAX_QUERY_TERMS } from "../lib/retrieval/fts-query";

setDefaultTimeout(60_000);

// Latin prose with one short Chinese sentence, none of the words looked for below.
const FILLER = `${"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ".repeat(90)}\n\n这是一个很长的段落。\n`;
const FILLER_NOTES = 520;

// A 33-character run (32 pairs: search's whole budget) and one longer by a character.
const AT_BUDGET = "我们在图书馆里安静地阅读关于海洋生物的书籍并且认真记录每一个重要的";
const OVER_BUDGET = AT_BUDGET + "吧";

const NOTES: Record<string, string> = {
  // 鹦鹉螺 (nautilus) inside longer runs: in a title, and in three bodies.
  "中文/关于鹦鹉螺的研究.md": "# 关于鹦鹉螺的研究\n\n海洋里的古老动物。\n",
  "中文/海边.md": "# 海边\n\n我们在海边看到鹦鹉螺的壳，非常漂亮。\n",
  "中文/博物馆.md": `# 博物馆\n\n${"展览介绍。".repeat(60)}\n\n馆里有一个巨大的鹦鹉螺化石标本。\n`,
  "中文/笔记.md": "# 笔记\n\n今天学习了鹦鹉螺如何在水中浮沉。\n",
  "中文/东京都.md": "# 东京都\n\n一个城市。\n",
  "中文/服务.md": "# 服务\n\n我们使用Python编写服务。\n",
  "中文/阅读.md": `# 阅读\n\n昨天${AT_BUDGET}。\n`,
  // Its file name is in no heading: only the titles' substring match finds it.
  "中文/地址簿.md": "# 住所\n\n电话号码。\n",
  "日本語/ラーメン.md": "# ラーメン\n\n東京の美味しいラーメン屋さんに行きました。\n",
  "日本語/旅行.md": "# 旅行\n\n京都へ行く。コーヒーを飲む。\n",
  "ไทย/อาหาร.md": "# อาหาร\n\nฉันชอบกินข้าวผัดมาก\n",
};

describe("search_workspace in Chinese, Japanese and Thai, past the substring scan's budget", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, "Filler"));
    for (let i = 0; i < FILLER_NOTES; i++) writeFileSync(join(root, "Filler", `f${String(i).padStart(3, "0")}.md`), `# Filler ${i}\n\n${FILLER}`);
    s = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer({ root }));
    // Indexed after the filler, so that they come after it in the index's order, which the scan reads in
    // (a cold scan's order follows the folder walk and the parse workers).
    addWorkspaceNotes(root, NOTES);
    await s.vault.indexer.update(Object.keys(NOTES));
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  type Hit = { id: string; matchedOn: string; snippet: string; title: string };
  const search = (query: string, limit = 50) => s.call("search_workspace", { query, limit }, "read");
  const ids = async (query: string) => {
    const r = await search(query);
    expect(r.partial, query).toBeUndefined();
    return (r.results as Hit[]).map((h) => h.id).sort();
  };
  /** Every note holding `word` in its text, from the files. */
  const holding = (word: string) => Object.keys(NOTES).filter((p) => NOTES[p]!.includes(word)).sort();

  test("a word inside longer runs is found in every note that holds it, not partial, the title match first", async () => {
    // The vault is past the scan's budget: a fragment found nowhere says partial.
    expect(FILLER_NOTES * Buffer.byteLength(FILLER)).toBeGreaterThan(SUBSTRING_SCAN_BYTES);
    const nowhere = await search("zqzq");
    expect(nowhere.fallback).toBe("substring");
    expect(nowhere.partial).toBe(true);
    for (const query of ["鹦鹉螺", "鹦鹉", "鹉螺"]) {
      const r = await search(query);
      expect(r.fallback, query).toBeUndefined();
      expect(r.partial, query).toBeUndefined();
      const hits = r.results as Hit[];
      expect(hits.map((h) => h.id).sort(), query).toEqual(holding(query));
      expect(hits[0], query).toMatchObject({ id: "中文/关于鹦鹉螺的研究.md", matchedOn: "title", snippet: "" });
      for (const h of hits.slice(1)) {
        expect(h.matchedOn, query).toBe("content");
        // In the note's opening window, so the snippet is cut around it (博物馆's is past a paragraph of filler).
        expect(h.snippet, query).toContain(query);
      }
    }
    expect(await ids("鹦鹉螺化石")).toEqual(["中文/博物馆.md"]);
  });

  test("a word of such text alone that the index does not find is in no note: no partial, file names still matched", async () => {
    const none = await search("螺鹦鹉");
    expect(none.results).toEqual([]);
    expect(none.partial).toBeUndefined();
    const named = await search("地址簿");
    expect(named.fallback).toBe("substring");
    expect(named.partial).toBeUndefined();
    expect(named.results.map((h: Hit) => [h.id, h.matchedOn])).toEqual([["中文/地址簿.md", "title"]]);
  });

  test("a title match ranks above a content match", async () => {
    // 京都 is inside the title 东京都, and inside a sentence of 旅行's body.
    const r = await search("京都");
    expect((r.results as Hit[]).map((h) => [h.id, h.matchedOn])).toEqual([
      ["中文/东京都.md", "title"],
      ["日本語/旅行.md", "content"],
    ]);
    expect(r.results[1].snippet).toContain("京都へ行く");
  });

  test("Japanese: kana and kanji inside a run", async () => {
    expect(await ids("ラーメン屋")).toEqual(["日本語/ラーメン.md"]);
    expect(await ids("美味しい")).toEqual(["日本語/ラーメン.md"]);
    expect(await ids("コーヒー")).toEqual(["日本語/旅行.md"]);
    const r = await search("美味しい");
    expect(r.results[0].snippet).toContain("美味しいラーメン屋");
  });

  test("Thai: a word inside a run, with its vowel signs and tone marks", async () => {
    for (const q of ["ข้าวผัด", "กินข้าว", "ชอบ"]) expect(await ids(q), q).toEqual(["ไทย/อาหาร.md"]);
    expect((await search("ข้าวผัด")).results[0].snippet).toContain("ฉันชอบกินข้าวผัดมาก");
  });

  test("a one-character query finds the character anywhere in a run", async () => {
    // 京: inside 东京都 (a title), first in 京都, inside 東京 (a kanji, folded apart from 东).
    expect(await ids("京")).toEqual(["中文/东京都.md", "日本語/ラーメン.md", "日本語/旅行.md"]);
    expect(await ids("螺")).toEqual(holding("螺"));
    const r = await search("浮");
    expect(r.fallback).toBeUndefined();
    expect(r.results.map((h: Hit) => h.id)).toEqual(["中文/笔记.md"]);
  });

  test("a Latin word glued to Chinese text, and the two typed apart", async () => {
    for (const q of ["python编写", "使用Python", "编写 python", "Python 编写"]) {
      const r = await search(q);
      expect(r.fallback, q).toBeUndefined();
      expect(r.results.map((h: Hit) => h.id), q).toEqual(["中文/服务.md"]);
    }
    expect((await search("python编写")).results[0].snippet).toContain("使用Python编写服务");
    expect((await search("python使用")).results).toEqual([]);
  });

  test("a long Chinese query: at the budget the index answers; past it the scan does; too long for the tool, a clear error", async () => {
    expect([...AT_BUDGET].length).toBe(MAX_QUERY_TERMS + 1);
    expect(await ids(AT_BUDGET)).toEqual(["中文/阅读.md"]);
    let t = performance.now();
    const over = await search(OVER_BUDGET);
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(over.fallback).toBe("substring");
    expect(over.results).toEqual([]);
    expect(over.partial).toBe(true); // the scan's honest answer: 阅读 is past its 4 MB
    // The longest query the tool takes (500 characters), then 10,000.
    t = performance.now();
    const longest = await search("鹦鹉螺".repeat(166));
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(longest.results).toEqual([]);
    // Past the tool's 500 characters: invalid arguments (-32602, zod's message, as for any tool), at once.
    t = performance.now();
    await expect(s.callRaw("search_workspace", { query: "鹦鹉螺".repeat(3334) }, "read")).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/<=500 characters/),
    });
    expect(performance.now() - t).toBeLessThan(5_000);
  });
});

