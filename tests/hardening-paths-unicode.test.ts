// Items 8–10 and 12 of the hardening issue: names with literal percent
// escapes, Unicode normalisation and folder case, a byte-order mark before
// frontmatter, and OS errors about paths answered as path kinds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

const NFD_CAFE = "Cafe\u0301.md";
const NFC_CAFE = "Caf\u00e9.md";
const NFD_FOLDER = "Re\u0301sume\u0301";
const NFC_FOLDER = "R\u00e9sum\u00e9";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  mkdirSync(join(s.root, "Odd"));
  writeFileSync(join(s.root, "Odd/Meeting%20Notes.md"), "# Literal percent\n\nliteral twenty\n");
  writeFileSync(join(s.root, "Odd/Meeting Notes.md"), "# Spaced\n\nreal spaces\n");
  writeFileSync(join(s.root, "Odd/100%25 done.md"), "# Hundred\n\nall done\n");
  writeFileSync(join(s.root, "Odd/50%zz off.md"), "# Sale\n\nnot an escape\n");
  writeFileSync(join(s.root, "Odd/report%20v2.csv"), "a,b\n1,2\n");
  writeFileSync(join(s.root, "Odd", NFD_CAFE), "# Café\n\ncroissant\n");
  mkdirSync(join(s.root, NFD_FOLDER));
  writeFileSync(join(s.root, NFD_FOLDER, "cv.md"), "# CV\n");
  mkdirSync(join(s.root, "Plugins"));
  writeFileSync(join(s.root, "Plugins/dataview.md"), "# Dataview\n");
  writeFileSync(join(s.root, "Odd/Bom.md"), "\uFEFF---\ntitle: Bom Title\ntags: [bomtag]\naliases: [Byte Order]\n---\n# Bom heading\n\n## Second\n\nbomtext\n");
  writeFileSync(join(s.root, "Odd/BomHeading.md"), "\uFEFF# Only heading\n\nbody #inlinebom\n");
  symlinkSync(join(s.root, "no-such-folder"), join(s.root, "dead"));
  await s.vault.indexer.fullScan();
});
afterAll(() => s?.close());

const onDisk = (dir: string) => readdirSync(join(s.root, dir)).sort();

describe("literal percent escapes in names (item 8)", () => {
  test("listed, read and edited under the literal name; the decoded twin stays separate", async () => {
    const listed = (await s.call("list_notes", { path: "Odd", limit: 100 })).items.map((n: any) => n.path);
    expect(listed).toEqual(expect.arrayContaining(["Odd/Meeting%20Notes.md", "Odd/Meeting Notes.md", "Odd/100%25 done.md", "Odd/50%zz off.md"]));
    expect((await s.call("read_note", { path: "Odd/Meeting%20Notes.md" })).content).toContain("literal twenty");
    expect((await s.call("read_note", { path: "Odd/Meeting Notes.md" })).content).toContain("real spaces");
    expect((await s.call("read_note", { path: "Odd/100%25 done.md" })).title).toBe("Hundred");
    expect((await s.call("read_note", { path: "Odd/50%zz off.md" })).title).toBe("Sale");
    expect((await s.call("read_outline", { path: "Odd/100%25 done.md" }))[0].title).toBe("Hundred");

    const edit = await s.call("apply_edits", { path: "Odd/100%25 done.md", edits: [{ find: "all done", replace: "all done, edited" }] });
    expect(edit.path).toBe("Odd/100%25 done.md");
    expect(readFileSync(join(s.root, "Odd/100%25 done.md"), "utf8")).toContain("all done, edited");
    await s.call("write_note", { path: "Odd/Meeting%20Notes.md", content: "# Literal percent\n\nreplaced\n", overwrite: true });
    expect(readFileSync(join(s.root, "Odd/Meeting%20Notes.md"), "utf8")).toContain("replaced");
    expect(readFileSync(join(s.root, "Odd/Meeting Notes.md"), "utf8")).toContain("real spaces");

    const att = await s.call("read_attachment", { path: "Odd/report%20v2.csv" });
    expect(Buffer.from(att.base64, "base64").toString()).toBe("a,b\n1,2\n");
  });

  test("a percent-encoded spelling of a name that exists only decoded still finds it", async () => {
    expect((await s.call("read_note", { path: "Odd/Meeting%20Notes%20only.md" }).catch((e) => e.message))).toMatch(/note-not-found/);
    writeFileSync(join(s.root, "Odd/Only Spaces.md"), "# Only spaces\n");
    await s.vault.indexer.update(["Odd/Only Spaces.md"]);
    expect((await s.call("read_note", { path: "Odd/Only%20Spaces.md" })).path).toBe("Odd/Only Spaces.md");
  });
});

describe("Unicode normalisation and folder case (item 9)", () => {
  test("an NFD name on disk is read and written through its NFC spelling, with no twin", async () => {
    const read = await s.call("read_note", { path: `Odd/${NFC_CAFE}` });
    expect(read.path).toBe(`Odd/${NFD_CAFE}`);
    expect(read.content).toContain("croissant");
    const before = onDisk("Odd").length;
    const w = await s.call("write_note", { path: `Odd/${NFC_CAFE}`, content: "# Café\n\npain au chocolat\n", overwrite: true });
    expect(w.created).toBe(false);
    expect(onDisk("Odd").length).toBe(before);
    expect(readFileSync(join(s.root, "Odd", NFD_CAFE), "utf8")).toContain("pain au chocolat");
    await s.call("apply_edits", { path: `Odd/${NFC_CAFE}`, edits: [{ find: "pain au chocolat", replace: "brioche" }] });
    expect(readFileSync(join(s.root, "Odd", NFD_CAFE), "utf8")).toContain("brioche");
    // Without overwrite it is the existing note: already-exists, not a new twin.
    expect(await s.callRaw("write_note", { path: `Odd/${NFC_CAFE}`, content: "# x\n" })).toMatchObject({ isError: true, kind: "already-exists" });
  });

  test("a new note goes into the existing folder as it is spelled on disk", async () => {
    const w = await s.call("write_note", { path: "PLUGINS/templater.md", content: "# Templater\n" });
    expect(w.path).toBe("Plugins/templater.md");
    expect(onDisk("").filter((n) => n.toLowerCase() === "plugins")).toEqual(["Plugins"]);
    expect(onDisk("Plugins")).toEqual(["dataview.md", "templater.md"]);
    const w2 = await s.call("write_note", { path: `${NFC_FOLDER}/letter.md`, content: "# Letter\n" });
    expect(w2.path).toBe(`${NFD_FOLDER}/letter.md`);
    expect(onDisk(NFD_FOLDER)).toEqual(["cv.md", "letter.md"]);
    expect(onDisk("").filter((n) => n.normalize("NFC") === NFC_FOLDER)).toHaveLength(1);
    expect((await s.call("list_notes", { path: NFC_FOLDER })).total).toBe(2);
  });
});

describe("a byte-order mark (item 10)", () => {
  test("before frontmatter: title, tags, aliases and outline are kept", async () => {
    const n = await s.call("read_note", { path: "Odd/Bom.md" });
    expect(n.title).toBe("Bom Title");
    expect(n.tags).toEqual(["bomtag"]);
    expect(n.frontmatter).toMatchObject({ title: "Bom Title", aliases: ["Byte Order"] });
    expect((await s.call("read_outline", { path: "Odd/Bom.md" })).map((h: any) => h.title)).toEqual(["Bom heading", "Second"]);
    expect((await s.call("notes_by_tag", { tag: "bomtag" })).items.map((i: any) => i.path)).toEqual(["Odd/Bom.md"]);
    expect((await s.call("search", { query: "byte order" })).items[0].path).toBe("Odd/Bom.md");
  });

  test("before a heading: the heading is the title and the first outline entry", async () => {
    const n = await s.call("read_note", { path: "Odd/BomHeading.md" });
    expect(n.title).toBe("Only heading");
    expect(n.tags).toEqual(["inlinebom"]);
    expect((await s.call("read_outline", { path: "Odd/BomHeading.md" }))[0]).toMatchObject({ level: 1, title: "Only heading" });
  });
});

describe("OS errors about paths are path kinds with a message (item 12)", () => {
  test("a name over 255 bytes is too-long; a path under a file and a dangling folder link are path-invalid", async () => {
    const long = `Odd/${"ü".repeat(150)}.md`;
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ["write_note", { path: long, content: "# x\n" }, "too-long", /255 bytes/],
      ["read_note", { path: long }, "too-long", /255 bytes/],
      ["write_note", { path: "Projects/Lettuce.md/child.md", content: "# x\n" }, "path-invalid", /is a file, not a folder/],
      ["read_note", { path: "Projects/Lettuce.md/child.md" }, "path-invalid", /is a file, not a folder/],
      ["write_note", { path: "dead/x.md", content: "# x\n" }, "path-invalid", /symbolic link/],
      ["move_note", { from: "Odd/Bom.md", to: "Projects/Lettuce.md/Bom.md" }, "path-invalid", /is a file, not a folder/],
      ["move_note", { from: "Odd/Bom.md", to: `Odd/${"x".repeat(300)}.md` }, "too-long", /255 bytes/],
    ];
    for (const [tool, args, kind, message] of cases) {
      const res: any = await s.callRaw(tool, args);
      expect(res.kind, `${tool} ${JSON.stringify(args).slice(0, 80)}: ${res.content?.[0]?.text}`).toBe(kind);
      expect(JSON.parse(res.content[0].text).error).toMatch(message);
    }
    const leftovers = readdirSync(s.root, { recursive: true }).map(String).filter((p) => p.includes(".lettuce-tmp"));
    expect(leftovers).toEqual([]);
  });
});
