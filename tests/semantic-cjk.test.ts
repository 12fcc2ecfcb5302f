// Hybrid retrieval's keyword side on questions in scripts written without spaces (Chinese, Japanese,
// Thai): the words of a question are found inside the longer runs of a note, through fts_stem's n-gram
// columns (lib/semantic/keyword.ts). Before them a run was one token, so a question matched nothing.
// Through the real server and the built-in model on a temp vault of Chinese, Japanese, Thai and English notes.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keywordMatch, keywordRank } from "../lib/semantic/keyword";
import { retrieve } from "../lib/semantic/retrieve";
import { keywordConfidence, QueryTerms } from "../lib/semantic/rerank";
import { SemanticService } from "../lib/semantic/service";
import { getMeta } from "../lib/store/index-db";
import { ftsPath } from "../lib/store/fts-db";
import { useEmbeddedVault } from "./helpers/builtin-model";

const NOTES: Record<string, string> = {
  "zh/机器学习.md": "# 机器学习入门\n\n监督学习使用带标签的数据来训练模型。常见的算法包括决策树、支持向量机和神经网络。\n模型训练完成以后，需要在测试集上评估它的准确率。\n",
  "zh/家常菜.md": "# 家常菜\n\n红烧肉需要五花肉、冰糖和酱油，小火慢炖一个小时。番茄炒蛋是最简单的家常菜。\n",
  "zh/北京.md": "# 北京旅行\n\n故宫和长城是北京最有名的景点，春天和秋天去最舒服。\n",
  "ja/ラーメン.md": "# ラーメンの作り方\n\n豚骨スープを十時間煮込んで、細い麺を茹でます。チャーシューと煮卵をのせて完成です。\n",
  "ja/富士山.md": "# 富士山登山\n\n富士山の登山シーズンは七月から九月までです。山小屋に泊まって、ご来光を見ることができます。\n",
  "th/ต้มยำกุ้ง.md": "# อาหารไทย\n\nต้มยำกุ้งเป็นอาหารไทยที่มีรสเปรี้ยวและเผ็ด ใส่ตะไคร้และใบมะกรูดลงในน้ำซุป\n",
  "th/เชียงใหม่.md": "# เที่ยวเชียงใหม่\n\nดอยสุเทพเป็นวัดที่มีชื่อเสียงของเชียงใหม่ นักท่องเที่ยวนิยมขึ้นไปชมวิวบนดอย\n",
  "Garden/Tomatoes.md": "# Tomatoes\n\nPlant tomato seedlings outside after the last frost, when nights stay above ten degrees.\n",
  "Garden/Frost.md": "# Frost dates\n\nThe last frost in spring is usually in mid May here; cover seedlings on cold nights.\n",
  "Garden/Compost.md": "# Compost\n\nTurn the compost heap every few weeks; grass clippings and leaves make good compost.\n",
  "Notes/Mixed.md": "# Reading list\n\nA book about gardening, and one in Chinese: 园艺入门.\n",
  "Notes/Computer.md": "# Studio\n\nWhich PC to buy for recording music.\n",
  // What a linking note says beside its link (anchor text), in words the target itself does not use.
  "zh/阅读清单.md": "# 阅读清单\n\n想弄懂反向传播的推导过程，就先读[[机器学习]]。\n",
};

// Questions whose words lie inside longer runs of one note (no question is a substring of its note).
const QUESTIONS: [string, string][] = [
  ["怎么训练神经网络模型？", "zh/机器学习.md"],
  ["红烧肉怎么做", "zh/家常菜.md"],
  ["北京有哪些著名的景点", "zh/北京.md"],
  ["豚骨ラーメンのスープの作り方を教えて", "ja/ラーメン.md"],
  ["富士山の登山はいつから", "ja/富士山.md"],
  ["ต้มยำกุ้งทำอย่างไร", "th/ต้มยำกุ้ง.md"],
  ["ดอยสุเทพอยู่ที่ไหน", "th/เชียงใหม่.md"],
];

// Filler notes in Chinese, Japanese and Thai: a vault of such notes, where common pairs (是的, 一个) are common,
// and where the English-only built-in model cannot tell the notes apart (its list is flat, and hybrid goes by
// the keywords). Its order among notes in those scripts is noise (it ties them by their shape), and for such a
// question keywordConfidence (rerank.ts) sees a clause as one word and gives that list its weak weight: a note
// the keyword side ranks second on one shared particle (です in both Japanese notes) can then come first.
const POOL = [..."的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行"];
const THAI = [..."กขคงจฉชซญดตถทธนบปผพฟภมยรลวศษสหอฮะาเแโใไ"];
const KANA = [..."あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコ日本人年大"];
function filler(seed: number, chars: number, pool = POOL): string {
  let x = seed * 2654435761;
  const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x);
  let out = "";
  while (out.length < chars) out += pool[next() % pool.length] + (next() % 17 === 0 ? (pool === THAI ? " " : "。") : "");
  return out;
}

const v = useEmbeddedVault("lettuce-cjk-", (root) => {
  for (const [path, text] of Object.entries(NOTES)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(join(root, "随笔"));
  for (let i = 0; i < 40; i++) writeFileSync(join(root, "随笔", `随笔${i}.md`), `# 随笔${i}\n\n${filler(i + 1, 200)}\n`);
  for (let i = 0; i < 40; i++) writeFileSync(join(root, "随笔", `บันทึก${i}.md`), `# บันทึก${i}\n\n${filler(i + 1, 200, THAI)}\n`);
  for (let i = 0; i < 40; i++) writeFileSync(join(root, "随笔", `日記${i}.md`), `# 日記${i}\n\n${filler(i + 1, 200, KANA)}\n`);
});

const svc = () => SemanticService.for(v.s.vault);
const pathOf = (id: number) => (v.s.vault.indexDb.query("SELECT path FROM notes WHERE id = ?").get(id) as { path: string }).path;

describe("questions in Chinese, Japanese and Thai", () => {
  test("find the note holding their words, first, in keyword and hybrid mode", async () => {
    for (const [q, path] of QUESTIONS) {
      expect(NOTES[path]!.includes(q.replace(/[？]/g, ""))).toBe(false);
      const kw = await retrieve(svc(), { query: q, mode: "keyword", limit: 3 });
      expect(kw.notes[0]?.path, q).toBe(path);
      const hybrid = await v.s.call("semantic_search", { query: q, hybrid: true, limit: 5 });
      expect(hybrid.items[0]?.path, q).toBe(path);
    }
  }, 120_000);

  test("the second stage reads a question's runs as pairs: a note holding its words gives the keyword side its confidence", async () => {
    // Before, a clause without spaces was one word that no note holds: confidence 0 for every question in these
    // scripts, so the built-in model's list (English-only, ranking such notes by their shape) weighed as for a
    // paraphrase, and a note sharing one particle (です) with the question came first in hybrid.
    const doc = (title: string, body: string) => ({ noteId: 1, title, aliases: [], headings: [], body });
    const ja = "富士山の登山はいつがいいですか";
    expect(keywordConfidence(ja, [doc("富士山登山", NOTES["ja/富士山.md"]!)])).toBeGreaterThan(0.3);
    expect(keywordConfidence(ja, [doc("ラーメンの作り方", NOTES["ja/ラーメン.md"]!)])).toBeLessThan(0.2);
    expect(keywordConfidence("红烧肉怎么做", [doc("家常菜", NOTES["zh/家常菜.md"]!)])).toBeGreaterThan(0.3);
    const hybrid = await v.s.call("semantic_search", { query: ja, hybrid: true, limit: 5 });
    expect(hybrid.items[0]?.path).toBe("ja/富士山.md");
    // A long question said word for word in a note is all there: its pairs are more than the 24-word window.
    const long = "在训练机器学习模型的时候应该怎样选择合适的优化器和学习率才能让损失更快地收敛";
    expect(keywordConfidence(long, [doc("笔记", `前言。${long}。后记。`)])).toBe(1);
    // An English question reads mixed text as before: a Chinese run is one position, not six pairs.
    const en = new QueryTerms("Chinese gardening");
    expect(en.stems).toEqual(["chines", "garden"]);
    expect(en.bestWindow("Chinese 园艺入门很有意思 gardening", 3)).toBe(1);
  }, 120_000);

  test("what other notes say beside their links counts in those scripts too (the anchor text's pairs)", async () => {
    await svc().syncKeywords();
    expect(NOTES["zh/机器学习.md"]!.includes("反向传播")).toBe(false);
    const hits = keywordRank(v.s.vault.indexDb, "反向传播的推导", 5).map((h) => pathOf(h.noteId));
    expect(hits).toContain("zh/机器学习.md");
    // The pairs live in a table of their own: fts_anchor's rows, and so the bm25 of English anchor words, are
    // what they were without them (a column of pairs lengthened a short row and moved English scores by up to 6%).
    const cols = (t: string) => (v.s.vault.indexDb.query(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name);
    expect(cols("fts_anchor")).toEqual(["text"]);
    expect(cols("fts_anchor_ng")).toEqual(["text_ng"]);
    // Without the anchor text only the linking note itself holds the words.
    expect(keywordRank(v.s.vault.indexDb, "反向传播的推导", 5, true, undefined, 0).map((h) => pathOf(h.noteId))).not.toContain("zh/机器学习.md");
  });

  test("a word glued to a run is found where it stands alone, and the anchor query keeps to the words", async () => {
    expect(keywordMatch("什么是Python编程")).toBe('"python" OR {title_ng headings_ng body_ng} : ("什么" OR "么是" OR "编程")');
    await svc().syncKeywords();
    // Words and pairs together: the note with both words ranks, and the anchor table (no n-gram column) is not asked for pairs.
    const hits = keywordRank(v.s.vault.indexDb, "gardening 园艺", 5);
    expect(hits.map((h) => pathOf(h.noteId))[0]).toBe("Notes/Mixed.md");
  });

  test("a question of 10,000 characters reads at most 32 pairs and answers at once", async () => {
    // The question, then characters no note holds (pairs of which the first 32 are read, none past them).
    const rare = [..."丒丮丱乀乁乑乚乛乜乧乭乲乶乹乺乻乼乽乿亀亁亃亄亅亇亊"];
    const q = ("红烧肉怎么做" + filler(99, 10_000, rare)).slice(0, 10_000);
    expect(q.length).toBe(10_000);
    const match = keywordMatch(q)!;
    expect(match.match(/"[^"]*"/g)!.length).toBe(32);
    await svc().syncKeywords();
    const t0 = performance.now();
    const hits = keywordRank(v.s.vault.indexDb, q, 20);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(pathOf(hits[0]!.noteId)).toBe("zh/家常菜.md");
    const kw = await retrieve(svc(), { query: q, mode: "keyword", limit: 3 });
    expect(kw.notes[0]?.path).toBe("zh/家常菜.md");
    // semantic_search takes 2,000 characters.
    const hybrid = await v.s.call("semantic_search", { query: q.slice(0, 2000), hybrid: true, limit: 5 });
    expect(hybrid.items[0]?.path).toBe("zh/家常菜.md");
  }, 120_000);
});

test("a word typed in full-width Latin is also asked in ASCII", async () => {
  // The tokenizer folds no width: ＰＣ alone matched only notes writing it full width.
  expect(keywordMatch("which ＰＣ to buy")).toBe('"ｐｃ" OR "buy" OR "pc"');
  await svc().syncKeywords();
  expect(keywordRank(v.s.vault.indexDb, "ＰＣ recording", 3).map((h) => pathOf(h.noteId))[0]).toBe("Notes/Computer.md");
  expect(keywordRank(v.s.vault.indexDb, "ＰＣ", 3).map((h) => pathOf(h.noteId))).toEqual(["Notes/Computer.md"]);
});

test("an English question is asked exactly as before, and ranks the same", async () => {
  // The expression the keyword side made before the n-gram columns: its words, quoted, OR-ed.
  expect(keywordMatch("When should I plant tomato seedlings after the last frost?")).toBe('"plant" OR "tomato" OR "seedlings" OR "after" OR "last" OR "frost"');
  expect(keywordMatch("how do I turn the compost")).toBe('"turn" OR "compost"');
  await svc().syncKeywords();
  const hits = keywordRank(v.s.vault.indexDb, "When should I plant tomato seedlings after the last frost?", 10);
  expect(hits.map((h) => pathOf(h.noteId))).toEqual(["Garden/Tomatoes.md", "Garden/Frost.md"]);
  expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
});

test("an index of the older layout (no n-gram columns) is re-created at its next use", async () => {
  // Put the table back as the previous version left it, from another connection (as an older binary would).
  const db = new Database(join(v.s.root, ".lettuce", "index.db"));
  db.exec("PRAGMA busy_timeout = 5000");
  db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(v.s.root));
  db.exec("DROP TABLE fts_stem");
  db.exec("CREATE VIRTUAL TABLE fts_stem USING fts5(title, aliases, headings, path, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')");
  db.exec("INSERT INTO fts_stem(rowid, title, aliases, headings, path, body) SELECT rowid, title, '', '', '', body FROM ftsdb.fts");
  // And the anchor text's table without its n-gram column.
  db.exec("DROP TABLE fts_anchor");
  db.exec("CREATE VIRTUAL TABLE fts_anchor USING fts5(text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')");
  db.exec("INSERT INTO fts_anchor(rowid, text) SELECT target_id, group_concat(text, char(10)) FROM anchor_lines GROUP BY target_id");
  db.exec("UPDATE meta SET value = 'fields-2' WHERE key = 'keyword_layout'");
  db.close();
  // Before the sync: the words still rank on the old table (a column filter it lacks does not empty them).
  expect(keywordRank(v.s.vault.indexDb, "compost 堆肥", 3).map((h) => pathOf(h.noteId))).toEqual(["Garden/Compost.md"]);
  const hybrid = await v.s.call("semantic_search", { query: "怎么训练神经网络模型？", hybrid: true, limit: 5 });
  expect(hybrid.items[0]?.path).toBe("zh/机器学习.md");
  expect(getMeta(v.s.vault.indexDb, "keyword_layout")).toBe("fields-4");
}, 120_000);
