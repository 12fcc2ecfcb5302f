// state.db and embeddings.db are upgraded in place by counting migrations (PRAGMA user_version): a
// shipped migration edited, or two reordered, is skipped or run twice on a user's file. Two branches
// that each appended one and were merged in another order left files no version could open (the
// upgrade audit of 2026-12-05). Each shipped migration's text is pinned here: append a new one (and its
// line below), never change one.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { CACHE_MIGRATIONS } from "../lib/semantic/cache";
import { STATE_MIGRATIONS } from "../lib/store/state-db";

const digest = (sql: string) => createHash("sha256").update(sql).digest("hex").slice(0, 16);

const STATE = [
  "e341fc400046b35c", // tokens, settings
  "e6d06dac2bdf9d67", // agent-edits timeline, proposals
  "03e4972ed215f6cf", // change journal
  "cd93559315af3349", // audit log
  "0bb9b3953c654b60", // reviews
  "93fe79055a9992b9", // web UI
  "2afaf5b8febe3042", // agent_edits_reverts
  "c7a8690b9fdf6c78", // proposals.claimed_by
  "386c5af6aab6477c", // change_journal.created_seen_at
  "cfce216722843d25", // approvals from before claims
  "17a7fd42abbb159b", // edit_texts
  "dbd4ea142b678952", // change_journal indexes by time
  "375dcf73444fd9c3", // edit_texts.parts: big timeline texts in parts
  "1ae3479563a06283", // owner stamps beside the pids of work in flight
];
const CACHE = ["43f1a919badb96f8"];

test("shipped state.db migrations are unchanged and in order (new ones are appended)", () => {
  expect(STATE_MIGRATIONS.slice(0, STATE.length).map(digest)).toEqual(STATE);
});

test("shipped embeddings.db migrations are unchanged and in order", () => {
  expect(CACHE_MIGRATIONS.slice(0, CACHE.length).map(digest)).toEqual(CACHE);
});
