// Keyword mode splits a note into passages at query time, on the request thread: an 8 MB note was split
// whole for each answer (over a second for every other caller; the review of 2026-12-07). It is split up
// to KEYWORD_SPLIT_CHARS, the same way for retrieval and for an answer's context, so that a quote's ordinal
// names one passage whichever way its page came in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { notePassages } from "../lib/answer/note-text";
import { KEYWORD_SPLIT_CHARS } from "../lib/semantic/keyword-passages";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { withEnv } from "./helpers/env";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

describe("keyword mode and a note of 8 MB", () => {
  let s: TestServer;
  let root = "";
  beforeAll(async () => {
    root = copyVault();
    // Prose of varied words (a repeated line splits much faster than real text), a rare word early on.
    const words = "the garden frost lettuce seed water soil light shade harvest planting season greens leaf root compost mulch tomato basil winter".split(" ");
    let seed = 1;
    const lines: string[] = ["the zanzibarquokka frost"];
    for (let size = 0; size < 8_000_000; ) {
      let line = "";
      for (let i = 0; i < 14; i++) line += words[(seed = (seed * 1103515245 + 12345) % 2147483648) % words.length] + " ";
      lines.push(line);
      size += line.length + 1;
    }
    writeFileSync(join(root, "Inbox/Huge.md"), "# Huge\n\n" + lines.join("\n") + "\n");
    s = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("its passages come from its first megabyte, for retrieval and for an answer's context alike", async () => {
    await withEnv({ LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none" }, async () => {
      const svc = SemanticService.for(s.vault);
      const r = await retrieve(svc, { query: "zanzibarquokka", limit: 3, mode: "keyword" });
      expect(r.notes[0]!.path).toBe("Inbox/Huge.md");
      expect(r.notes[0]!.passages[0]!.text).toContain("zanzibarquokka");
      const all = notePassages(s.vault.indexDb, r.notes[0]!.noteId, "keyword");
      // Of the note's 8 MB, what a split of its first KEYWORD_SPLIT_CHARS gives.
      expect(KEYWORD_SPLIT_CHARS).toBeLessThan(2_000_000);
      expect(all.reduce((n, p) => n + p.text.length, 0)).toBeLessThanOrEqual(KEYWORD_SPLIT_CHARS);
      expect(all[r.notes[0]!.passages[0]!.ord]!.text).toBe(r.notes[0]!.passages[0]!.text);
    });
  }, 60_000);
});
