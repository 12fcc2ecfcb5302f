// An update naming more paths than one slice (a checkout, a sync, a move with its link rewrites) compares them
// with the index slice by slice, with turns of the event loop between (path-diff.ts, comparePaths). The slices
// must add up to what one comparison gives: a note named in one slice and found under a folder named in
// another is read once, and deletions, new notes and attachments all land. Checked against a fresh index of
// the same files.
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NoteRows } from "../lib/index/note-rows";
import { reresolveKeysInTurns } from "../lib/index/reresolve";
import { VaultContext } from "../lib/vault-context";
import { targetKeyOf } from "../lib/vault/parse";
import { tempDir } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function rowsOf(v: VaultContext) {
  const db = v.indexDb;
  return {
    notes: db.query("SELECT path, hash, title FROM notes ORDER BY path").all(),
    files: db.query("SELECT path FROM files ORDER BY path").all(),
    links: db.query("SELECT n.path AS source, l.target, l.resolved FROM links l JOIN notes n ON n.id = l.note_id ORDER BY n.path, l.ord").all(),
  };
}

test("an update of ~950 paths in slices indexes what one comparison would", async () => {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "A"));
  mkdirSync(join(root, "B"));
  for (let i = 0; i < 1200; i++) writeFileSync(join(root, i % 2 ? "A" : "B", `N${i}.md`), `# N${i}\n\nsee [[N${i + 1}]] and [[New${i % 50}]]\n`);
  writeFileSync(join(root, "A/pic.png"), "png");
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    // New notes named one by one in the first slice and found again under their new folder, named in the last.
    mkdirSync(join(root, "C"));
    for (let i = 0; i < 300; i++) writeFileSync(join(root, "C", `C${i}.md`), `# C${i}\n\n[[N${i}]]\n`);
    const named: string[] = Array.from({ length: 20 }, (_, i) => `C/C${i}.md`);
    // Every note of A rewritten and named; B named as a folder only, at the end (its notes also named one by one, early).
    for (let i = 1; i < 1200; i += 2) {
      writeFileSync(join(root, "A", `N${i}.md`), `# N${i} again\n\nsee [[N${i - 1}]]\n`);
      named.push(`A/N${i}.md`);
    }
    for (let i = 0; i < 400; i += 2) {
      writeFileSync(join(root, "B", `N${i}.md`), `# N${i} b\n\nsee [[New${i % 7}]]\n`);
      named.push(`B/N${i}.md`);
    }
    // New notes that old links name, deleted notes, a new folder, an attachment gone and one new.
    for (let i = 0; i < 50; i++) {
      writeFileSync(join(root, `New${i}.md`), `# New ${i}\n`);
      named.push(`New${i}.md`);
    }
    for (let i = 1000; i < 1200; i += 2) {
      unlinkSync(join(root, "B", `N${i}.md`));
      named.push(`B/N${i}.md`);
    }
    named.push("C");
    unlinkSync(join(root, "A/pic.png"));
    named.push("A/pic.png");
    writeFileSync(join(root, "B/doc.pdf"), "pdf");
    named.push("B/doc.pdf", "B");
    expect(named.length).toBeGreaterThan(900); // two slices or more
    const change = await v.indexer.update(named);
    expect(new Set(change.changed).size).toBe(change.changed.length);

    const fresh = tempDir();
    dirs.push(fresh);
    rmSync(fresh, { recursive: true, force: true });
    cpSync(root, fresh, { recursive: true, filter: (s) => !s.includes(".lettuce") });
    const w = VaultContext.open(fresh);
    try {
      await w.indexer.fullScan();
      const got = rowsOf(v);
      const want = rowsOf(w);
      expect(got.notes.length).toBe(1200 - 100 + 50 + 300);
      expect(got.files).toEqual(want.files);
      expect(got.notes).toEqual(want.notes);
      expect(got.links).toEqual(want.links);
    } finally {
      w.close();
    }
  } finally {
    v.close();
  }
}, 120_000);

test("a folder renamed away and back in one update of many paths", async () => {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Old"));
  for (let i = 0; i < 700; i++) writeFileSync(join(root, "Old", `N${i}.md`), `# N${i}\n`);
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    renameSync(join(root, "Old"), join(root, "New"));
    // The watcher names every old and new path; the folders themselves last.
    const named = [...Array.from({ length: 700 }, (_, i) => `Old/N${i}.md`), ...Array.from({ length: 700 }, (_, i) => `New/N${i}.md`), "Old", "New"];
    await v.indexer.update(named);
    const paths = (v.indexDb.query("SELECT path FROM notes ORDER BY path").all() as { path: string }[]).map((r) => r.path);
    expect(paths.length).toBe(700);
    expect(paths.every((p) => p.startsWith("New/"))).toBe(true);
  } finally {
    v.close();
  }
}, 120_000);

test("re-resolving thousands of links after a rename gives other callers turns, and resolves them all", async () => {
  const root = tempDir();
  dirs.push(root);
  writeFileSync(join(root, "Hub.md"), "# Hub\n");
  for (let i = 0; i < 3000; i++) writeFileSync(join(root, `L${i}.md`), `# L${i}\n\n[[Hub]] [[Hub#a]] [[Hub|h]]\n`);
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    // The links as a pass that has not re-resolved yet leaves them: pointing nowhere.
    v.indexDb.exec("UPDATE links SET resolved = NULL");
    let done = false;
    let firedBeforeDone = false;
    setTimeout(() => (firedBeforeDone = !done), 0);
    // Without turns the whole of it runs before the timer (an async function that never waits).
    await reresolveKeysInTurns(new NoteRows(v.indexDb), v.indexer.resolver, new Set([targetKeyOf("Hub")])).then(() => (done = true));
    expect(firedBeforeDone).toBe(true);
    const unresolved = (v.indexDb.query("SELECT count(*) AS n FROM links WHERE resolved IS NULL").get() as { n: number }).n;
    expect(unresolved).toBe(0);
  } finally {
    v.close();
  }
}, 120_000);
