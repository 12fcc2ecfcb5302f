// prepare_context without embeddings on text written without spaces: a task in
// Chinese, Japanese or Thai is one run of letters to the index's tokenizer, so
// its words are found through their pairs of characters (the fts table's n-gram
// columns). A vault of notes in those scripts and English, with filler notes in
// each script so that their common pairs are common; through the real server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";
import { termsOf } from "../lib/workspace/context/terms";
import { ngramText } from "../lib/vault/ngram";

const NO_MODELS = { LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none" };

const NOTES: Record<string, string> = {
  "中文/模型训练.md": "# 模型训练笔记\n\n训练机器学习模型时，先准备好数据集，再选择优化器和学习率，然后反复迭代直到损失收敛。\n",
  "中文/数据库索引.md": "# 数据库索引\n\n数据库的索引可以加快查询速度，但是会让写入变得更慢一些。\n",
  "中文/公园散步.md": "# 公园散步\n\n我们今天去了公园，天气很好，大家都很开心。\n",
  "中文/做饭心得.md": "# 做饭心得\n\n我们在家做饭的时候，一般先把菜洗干净，然后再切好。\n",
  "中文/读书计划.md": "# 读书计划\n\n今年我们的读书计划是每个月读两本书，大家一起讨论。\n",
  "中文/旅行日记.md": "# 旅行日记\n\n我们坐火车去了海边，那里的风景很美，大家拍了很多照片。\n",
  "日本語/猫の飼い方.md": "# 猫の飼い方\n\n猫を飼うときは、毎日のごはんと新鮮な水を用意して、トイレをきれいに保ちましょう。\n",
  "日本語/電車の乗り方.md": "# 電車の乗り方\n\n電車に乗るときは、切符を買ってから改札を通ります。\n",
  "日本語/天気の話.md": "# 天気の話\n\n今日はとても良い天気でしたので、私たちは公園に行きました。\n",
  "日本語/料理の話.md": "# 料理の話\n\n私たちは毎週日曜日にカレーを作ります。とても美味しいです。\n",
  "日本語/仕事の話.md": "# 仕事の話\n\n私たちの会社では、毎朝九時に会議があります。\n",
  "ไทย/การปลูกข้าว.md": "# การปลูกข้าว\n\nชาวนาปลูกข้าวในฤดูฝนและเก็บเกี่ยวเมื่อรวงข้าวเป็นสีทอง\n",
  "ไทย/การทำอาหาร.md": "# การทำอาหาร\n\nการทำอาหารไทยต้องใช้พริกกระเทียมและน้ำปลาเป็นส่วนผสม\n",
  "ไทย/การเดินทาง.md": "# การเดินทาง\n\nการเดินทางในกรุงเทพมักจะใช้รถไฟฟ้าเพราะรถติดมาก\n",
  "ไทย/การเรียน.md": "# การเรียน\n\nนักเรียนไปโรงเรียนทุกวันและทำการบ้านในตอนเย็น\n",
  "English/Tomato garden.md": "# Tomato garden\n\nWater the tomato plants every morning; stake them once they flower.\n",
  "English/Garden tools.md": "# Garden tools\n\nA spade, a rake and a watering can. Keep the tools dry.\n",
  "English/Deploy checklist.md": "# Deploy checklist\n\nFreeze merges, tag the release, run the smoke tests, then deploy.\n",
  "English/Release notes.md": "# Release notes\n\nWhat changed in each release, and how to deploy it.\n",
  "English/Watering schedule.md": "# Watering schedule\n\nWater the garden beds twice a week, the tomato pots daily.\n",
};

describe("prepare_context without embeddings, in scripts written without spaces", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    addWorkspaceNotes(root, NOTES);
    s = await withEnv(NO_MODELS, () => startTestServer({ root }));
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const pack = (args: Record<string, unknown>): Promise<any> => withEnv(NO_MODELS, () => s.call("prepare_context", args));
  const ids = (p: any): string[] => p.concepts.map((c: any) => c.id);

  test("a task whose words lie inside a note's longer runs finds that note first", async () => {
    const cases: [string, string][] = [
      ["机器学习模型怎么训练", "中文/模型训练.md"],
      ["怎样给数据库加索引，让查询更快", "中文/数据库索引.md"],
      ["毎日ごはんを用意する方法", "日本語/猫の飼い方.md"],
      ["電車の切符はどこで買う", "日本語/電車の乗り方.md"],
      ["ปลูกข้าวฤดูฝน", "ไทย/การปลูกข้าว.md"],
      ["อาหารไทยใช้พริก", "ไทย/การทำอาหาร.md"],
    ];
    for (const [task, want] of cases) {
      const p = await pack({ task });
      expect(p.ranking).toBe("keyword");
      expect({ task, first: ids(p)[0] }).toEqual({ task, first: want });
      // Found through its words, the pack does not say they are missing from the vault.
      expect(p.warnings ?? []).toEqual([]);
    }
  });

  test("a Thai task's pairs across its vowel and tone marks are the index's pairs", async () => {
    // The marks are \p{M}: cut before folding, ต้มยำกุ้ง lost ตม and กง (and กุ้ง alone became ก* and ง*, nearly every note).
    const indexPairs = (text: string) => [...new Set(ngramText(text)!.split(" ").filter((t) => [...t].length === 2))].sort();
    for (const task of ["ต้มยำกุ้ง", "ที่ไหน", "การเดินทางในกรุงเทพ", "กุ้ง"]) {
      const pairs = termsOf(task, 24).filter((t) => t.ngram).map((t) => t.word).sort();
      expect({ task, pairs }).toEqual({ task, pairs: indexPairs(task) });
    }
    const p = await pack({ task: "เดินทางในกรุงเทพ" });
    expect(ids(p)[0]).toBe("ไทย/การเดินทาง.md");
  });

  test("the agent's keywords in those scripts count too", async () => {
    const p = await pack({ task: "what is relevant here", keywords: ["学习率", "优化器"] });
    expect(ids(p)[0]).toBe("中文/模型训练.md");
  });

  test("a task none of whose pairs the vault holds is still reported as missing", async () => {
    const p = await pack({ task: "量子计算机纠错码" });
    expect(p.concepts).toEqual([]);
    expect(p.warnings.join(" ")).toContain("appear nowhere");
  });

  test("English tasks rank as they did before", async () => {
    // Recorded with the ranking before runs became pairs: the same pages, order and reasons.
    const cases: [string, [string, string][]][] = [
      [
        "how often should I water the tomato garden",
        [
          ["English/Tomato garden.md", "title matches tomato, garden; 3 of 4 task words in the page"],
          ["English/Watering schedule.md", "title matches water; 3 of 4 task words in the page"],
          ["English/Garden tools.md", "title matches garden; 2 of 4 task words in the page; keywords rake"],
        ],
      ],
      [
        "deploy the release after the smoke tests",
        [
          ["English/Deploy checklist.md", "title matches deploy; 4 of 4 task words in the page"],
          ["English/Release notes.md", "title matches release; 2 of 4 task words in the page"],
        ],
      ],
    ];
    for (const [task, want] of cases) {
      const p = await pack({ task, keywords: ["rake"] });
      expect({ task, got: p.concepts.map((c: any) => [c.id, c.selectionReason]) }).toEqual({ task, got: want });
    }
  });

  test("a 2,000-character Chinese task answers promptly", async () => {
    const filler = "我们今天讨论了很多不同的话题，包括天气、旅行、读书和做饭。";
    let task = "机器学习模型怎么训练，数据集和学习率怎么选？";
    while (task.length < 2000) task += filler;
    task = task.slice(0, 2000);
    const t0 = performance.now();
    const p = await pack({ task });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(ids(p)).toContain("中文/模型训练.md");
  });
});
