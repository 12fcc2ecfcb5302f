// Words of scripts written without spaces (Chinese, Japanese, Thai) are found through the index's n-gram
// columns (lib/vault/ngram.ts): in every note that holds them, whatever the vault's size, with no `partial`.
// Before, a substring scan read at most 4 MB of notes per query, so in a larger vault a word was found only in
// the notes it reached. Through the real server on temp vaults built for the purpose.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";
import { keywordSnippets } from "../lib/retrieval/search";
import { MAY_RUN, ngramText, NGRAM_MAX_CHARS } from "../lib/vault/ngram";
import { addWorkspaceNotes } from "./helpers/workspace-notes";

setDefaultTimeout(60_000);

// Common characters for filler text: none of the needle's.
const POOL = [..."的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"].filter(
  (c) => !"鹦鹉螺".includes(c),
);

/** Deterministic Chinese filler of about `chars` characters, in sentences. */
function filler(seed: number, chars: number): string {
  let x = seed * 2654435761;
  const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x);
  let out = "";
  while (out.length < chars) {
    let sentence = "";
    for (let n = 8 + (next() % 20); n > 0; n--) sentence += POOL[next() % POOL.length];
    out += sentence + (next() % 5 === 0 ? "。\n\n" : "，");
  }
  return out;
}

describe("a vault past the old scan's 4 MB", () => {
  let s: TestServer;
  let root: string;
  // Notes near the end of the scan order (the index's order), past its 4 MB.
  const holders = ["n590.md", "n595.md", "n599.md"];
  const texts: string[] = [];
  beforeAll(async () => {
    root = tempDir();
    // 600 notes of ~2,700 Chinese characters (~8 KB each): 4.8 MB.
    for (let i = 0; i < 600; i++) {
      const name = `n${String(i).padStart(3, "0")}.md`;
      let body = filler(i + 1, 2700);
      // The needle inside a run: 鹦鹉螺 with characters glued on both sides.
      if (holders.includes(name)) body = body.slice(0, 1500) + "鹦鹉螺" + body.slice(1500);
      texts.push(`# 笔记${i}\n\n${body}\n`);
      writeFileSync(join(root, name), texts[i]!);
    }
    s = await startTestServer({ root });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("a word inside a run is found in every note that holds it: exact total, no partial", async () => {
    for (const query of ["鹦鹉螺", "鹦鹉", "鹉螺"]) {
      const r = await s.call("search", { query }, "read");
      expect(r.partial, query).toBeUndefined();
      expect(r.total, query).toBe(3);
      expect(r.items.map((i: { path: string }) => i.path).sort(), query).toEqual(holders);
      for (const i of r.items) expect(i.snippet, query).toContain(query);
    }
    // Words of common characters: every note holding them, counted exactly (checked against the files).
    const three = texts[300]!.slice(20).match(/\p{Script=Han}{3}/u)![0];
    for (const word of [POOL[0]!, three.slice(0, 2), three]) {
      const expected = texts.filter((t) => t.includes(word)).length;
      const common = await s.call("search", { query: word, limit: 200 }, "read");
      expect(common.partial, word).toBeUndefined();
      expect(common.total, word).toBe(expected);
    }
  });
});

const NOTES: Record<string, string> = {
  // Latin typed full width (a Japanese input mode): glued to Japanese, standalone, and in ASCII.
  "ja/買い物.md": "# 買い物\n\n新しいＰＣを買った。\n",
  "en/Fullwidth.md": "# Fullwidth\n\nThe ＰＣ on the desk.\n",
  "en/Laptop.md": "# Laptop\n\nMy old PC still runs.\n",
  "ja/ラーメン.md": "# ラーメン\n\n東京の美味しいラーメン屋さんに行きました。\n",
  "ja/旅行.md": "# 旅行\n\n京都へ行く。コーヒーを飲む。\n",
  "zh/北京.md": "# 住所\n\n我住在北京。\n",
  "zh/东京.md": "# 东京都\n\n一个城市。\n",
  "zh/服务.md": "# 服务\n\n我们使用Python编写服务。\n",
  "zh/AI.md": "# AI\n\n人工智能 and 机器学习 are related.\n",
  "zh/AI2.md": "# AI2\n\n人工智能 or 机器学习, not the same.\n",
  "zh/换行.md": "# 换行\n\n我们研究机器\n学习的方法。\n",
  "zh/段落.md": "# 段落\n\n这是深度\n\n学习的开始。\n",
  "th/อาหาร.md": "# อาหาร\n\nฉันชอบกินข้าวผัดมาก\n",
  "th/บรรทัด.md": "# บรรทัด\n\nเราไปตลาด\nวันนี้\n",
  "en/Fox.md": "# Fox\n\nThe quick brown fox.\n",
  "zh/长.md": `# 长\n\n${"这是一个很长的段落。".repeat(40)}\n\n我们用Rustacean编写。\n`,
};

describe("words of scripts without spaces, through the index", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    addWorkspaceNotes(root, NOTES);
    s = await startTestServer({ root, watch: true });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const search = (query: string, limit = 25) => s.call("search", { query, limit }, "read");
  const paths = async (query: string) => ((await search(query)).items as { path: string }[]).map((i) => i.path).sort();

  test("Japanese: kana and kanji, a word across the two, none out of order", async () => {
    expect(await paths("ラーメン")).toEqual(["ja/ラーメン.md"]);
    expect(await paths("美味しい")).toEqual(["ja/ラーメン.md"]);
    expect(await paths("ラーメン屋")).toEqual(["ja/ラーメン.md"]);
    expect(await paths("京の美")).toEqual(["ja/ラーメン.md"]);
    expect(await paths("コーヒー")).toEqual(["ja/旅行.md"]); // ー is Common by Script, Katakana by its extensions
    expect(await paths("メンラー")).toEqual([]);
    expect(await paths("京都")).toEqual(["ja/旅行.md", "zh/东京.md"]);
  });

  test("Thai: words inside a run; a line break separates Thai words", async () => {
    expect(await paths("ข้าวผัด")).toEqual(["th/อาหาร.md"]);
    expect(await paths("กินข้าว")).toEqual(["th/อาหาร.md"]);
    expect(await paths("ชอบ")).toEqual(["th/อาหาร.md"]);
    expect(await paths("ตลาด")).toEqual(["th/บรรทัด.md"]);
    expect(await paths("ตลาดวันนี้")).toEqual([]);
  });

  test("a 1-character query finds the character anywhere in a run: first, middle, last, alone, in a title", async () => {
    // 京: last in 北京, first in 京都, in the middle of 东京都, in a title.
    expect(await paths("京")).toEqual(["ja/ラーメン.md", "ja/旅行.md", "zh/东京.md", "zh/北京.md"]);
    expect(await paths("屋")).toEqual(["ja/ラーメン.md"]);
    expect(await paths("鳥")).toEqual([]);
    const r = await search("京");
    expect(r.total).toBe(4);
    expect(r.partial).toBeUndefined();
  });

  test("a word glued to Latin text is found, and the Latin word by itself", async () => {
    for (const q of ["Python", "pyth", "使用Python", "python编写", "用Python编", "编写 python"]) expect(await paths(q), q).toEqual(["zh/服务.md"]);
    expect(await paths("使Python")).toEqual([]);
    expect(await paths("python使用")).toEqual([]);
    // The snippet finds the glued word too, not only the note's opening.
    expect((await search("rustacean")).items[0].snippet).toContain("用Rustacean编写");
  });

  test("Latin typed full width finds the word glued to Japanese, standing alone, and written in ASCII", async () => {
    // The tokenizer folds no width: ＰＣ was found only where it stood alone in full width.
    expect(await paths("ＰＣ")).toEqual(["en/Fullwidth.md", "en/Laptop.md", "ja/買い物.md"]);
    expect(await paths("ＰＣ -desk")).toEqual(["en/Laptop.md", "ja/買い物.md"]);
    expect((await search("ＰＣ")).total).toBe(3);
    // Typed full width, OR and NOT are the operators, and title: the column filter the language refuses.
    expect(await paths("ＰＣ ＮＯＴ desk")).toEqual(["en/Laptop.md", "ja/買い物.md"]);
    expect(await paths("Laptop ＯＲ Fullwidth")).toEqual(["en/Fullwidth.md", "en/Laptop.md"]);
    expect(await paths("ｔｉｔｌｅ:laptop")).toEqual([]);
    // In a phrase too.
    expect(await paths('"ＰＣ still"')).toEqual(["en/Laptop.md"]);
    expect(await paths('"ＰＣ on"')).toEqual(["en/Fullwidth.md"]);
    // Full-width punctuation alone adds no second form, nor its cost: 20 words ending in ！ are within budget.
    const bangs = await s.callRaw("search", { query: Array.from({ length: 20 }, (_, i) => `word${i}！`).join(" ") }, "read");
    expect(bangs.isError).toBeFalsy();
  });

  test("a soft line break inside Chinese text does not split the word; a blank line does", async () => {
    expect(await paths("机器学习")).toEqual(["zh/AI.md", "zh/AI2.md", "zh/换行.md"]);
    expect(await paths("研究机器学习的方法")).toEqual(["zh/换行.md"]);
    expect(await paths("深度学习")).toEqual([]);
    expect(await paths("深度")).toEqual(["zh/段落.md"]);
  });

  test("exclusion, OR and phrases with such words", async () => {
    expect(await paths("京 -京都")).toEqual(["ja/ラーメン.md", "zh/北京.md"]);
    expect(await paths("京 -屋 -都")).toEqual(["zh/北京.md"]);
    expect(await paths("服务 -python")).toEqual([]);
    expect(await paths("python -编写")).toEqual([]);
    expect(await paths("ラーメン OR 北京")).toEqual(["ja/ラーメン.md", "zh/北京.md"]);
    expect(await paths("人工智能 机器学习")).toEqual(["zh/AI.md", "zh/AI2.md"]);
    // A phrase holds its words in order, the Latin ones too.
    expect(await paths('"人工智能 and 机器学习"')).toEqual(["zh/AI.md"]);
    expect(await paths('"人工智能 or 机器学习"')).toEqual(["zh/AI2.md"]);
    expect(await paths('"机器学习 人工智能"')).toEqual([]);
    expect(await paths('"美味しいラーメン"')).toEqual(["ja/ラーメン.md"]);
    expect(await paths('"人工智能 and"')).toEqual(["zh/AI.md"]);
    // Words typed apart in a phrase are found as the text writes them, glued (the review of the change).
    expect(await paths('"机器 学习"')).toEqual(await paths("机器学习"));
    expect(await paths('"使用 python"')).toEqual(["zh/服务.md"]);
    expect(await paths('"python 编写"')).toEqual(["zh/服务.md"]);
    expect(await paths('"学习 机器"')).toEqual([]);
  });

  test("a match in the title ranks above one in the body", async () => {
    // 京都 is in the title of zh/东京.md (东京都) and in the body of ja/旅行.md.
    const r = await search("京都");
    expect(r.items.map((i: { path: string }) => i.path)).toEqual(["zh/东京.md", "ja/旅行.md"]);
    expect(r.items[0].score).toBeLessThan(r.items[1].score);
  });

  test("a long run is refused as too complex rather than sent as a huge phrase", async () => {
    const over = await s.callRaw("search", { query: "机器学习".repeat(10) }, "read");
    expect(over.isError).toBe(true);
    expect(over.content[0].text).toContain("query-too-complex");
    expect(over.content[0].text).toContain("pair of characters");
    // A semantic question as long is no search query: its keyword snippets open the note instead of failing.
    const snippets = keywordSnippets(s.vault.indexDb, ["zh/AI.md"], "人工智能和机器学习有什么关系".repeat(4));
    expect(snippets.get("zh/AI.md")).toContain("人工智能");
  });

  // A note of 256 KiB or more is parsed in a worker and its body goes to the full-text writer as UTF-8 bytes
  // with its n-grams made in the worker (lib/index/parse-job.ts HugeBody), not through the main thread.
  test("a big note saved on disk is found by its words and its n-grams", async () => {
    const filler = "这是一个很长的笔记，写了很多内容。".repeat(20_000); // ~1 MB
    writeFileSync(join(s.root, "zh/大.md"), `# 大笔记\n\n熊猫宝宝在这里。${filler}\nzebrafish at the end\n`);
    await waitFor(async () => (await paths("熊猫宝宝")).includes("zh/大.md"), { timeoutMs: 15_000, what: "the big note indexed" });
    expect(await paths("zebrafish")).toEqual(["zh/大.md"]);
    expect(await paths("大笔记")).toEqual(["zh/大.md"]);
    unlinkSync(join(s.root, "zh/大.md"));
    await waitFor(async () => (await paths("zebrafish")).length === 0, { timeoutMs: 15_000, what: "the big note gone" });
  });

  test("edits, creations, deletions and renames reach the n-grams: watcher and write tools", async () => {
    const until = (what: string, check: () => Promise<boolean>) => waitFor(check, { timeoutMs: 15_000, what });
    const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);
    // An edit on disk adds the word, another takes it away.
    writeFileSync(join(s.root, "zh/北京.md"), "# 住所\n\n我住在北京，喜欢吃烤鸭。\n");
    await until("the word added", async () => same(await paths("烤鸭"), ["zh/北京.md"]));
    writeFileSync(join(s.root, "zh/北京.md"), "# 住所\n\n我住在北京。\n");
    await until("the word gone", async () => (await paths("烤鸭")).length === 0);
    expect(await paths("北京")).toEqual(["zh/北京.md"]);
    // Created through the write tools, and on disk.
    await s.call("write_note", { path: "zh/新.md", content: "# 新\n\n熊猫在竹林里。\n" });
    expect(await paths("竹林")).toEqual(["zh/新.md"]);
    writeFileSync(join(s.root, "zh/盘.md"), "熊猫吃竹子。\n");
    await until("the note created on disk", async () => same(await paths("熊猫"), ["zh/新.md", "zh/盘.md"]));
    // Renamed: the title of a note without a heading is its file name (move_note, then on disk).
    await s.call("move_note", { from: "zh/盘.md", to: "zh/碗.md" });
    expect(await paths("熊猫")).toEqual(["zh/新.md", "zh/碗.md"]);
    expect(await paths("碗")).toEqual(["zh/碗.md"]);
    expect(await paths("盘")).toEqual([]);
    renameSync(join(s.root, "zh/碗.md"), join(s.root, "zh/杯子.md"));
    await until("the rename on disk", async () => same(await paths("杯子"), ["zh/杯子.md"]) && (await paths("碗")).length === 0);
    expect(await paths("熊猫")).toEqual(["zh/新.md", "zh/杯子.md"]);
    // Deleted through the write tools, and on disk.
    await s.call("delete_note", { path: "zh/新.md" });
    expect(await paths("竹林")).toEqual([]);
    unlinkSync(join(s.root, "zh/杯子.md"));
    await until("the deletion on disk", async () => (await paths("熊猫")).length === 0);
  });
});

describe("the n-gram form", () => {
  test("MAY_RUN, the fast test, covers every character a run can hold", () => {
    const run = /[[[\p{L}\p{N}]&&[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}\p{scx=Thai}\p{scx=Laoo}\p{scx=Khmr}\p{scx=Mymr}\p{scx=Tibt}]]--[\u02bc]]/v;
    const missed: string[] = [];
    for (let c = 0; c < 0x110000; c++) {
      if (c >= 0xd800 && c < 0xe000) continue;
      const ch = String.fromCodePoint(c);
      if (run.test(ch) && !MAY_RUN.test(ch)) missed.push(c.toString(16));
    }
    expect(missed).toEqual([]);
  });

  test("a vault without such text stores no n-grams", () => {
    expect(ngramText("The quick “brown” fox — 😀 café naïve Ελληνικά Привет नमस्ते 안녕하세요")).toBeNull();
    expect(ngramText("我们使用Python编写")).toBe("我们 们使 使用 用 python 编写 写");
    // Only the lines holding such text, with a gap where others were left out.
    expect(ngramText("机器 x\nonly English here\n学习\n的")?.replace(/\ue000/g, "°")).toBe("机器 器 °x ° 学习 习的 的");
  });

  test("only the first NGRAM_MAX_CHARS characters of a note are made n-grams", () => {
    const text = "中".repeat(NGRAM_MAX_CHARS + 10_000) + "尾";
    const out = ngramText(text)!;
    expect(out.split(" ").length).toBe(NGRAM_MAX_CHARS);
    expect(out).not.toContain("尾");
  });
});
