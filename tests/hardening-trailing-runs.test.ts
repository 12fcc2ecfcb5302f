// A trailing run cut by a regex such as /\/+$/ costs the square of a run that stops short of the end: each
// place below took seconds to minutes on 200,000 characters of a hostile note, a link, an AGENTS.md or a
// source. Cut by lib/text-ends.ts now, each takes well under a second; the 30 s timeouts are the only clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { leadingSpace, trailingSpace, withoutTrailing } from "../lib/text-ends";
import { normalizeTag } from "../lib/vault/tags";
import { renderNote } from "../lib/render/note-html";
import { normalizeResource } from "../lib/workspace/sources";
import { rewriteLinksForMove } from "../lib/write/links";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

const N = 200_000;

describe("trailing runs are cut in linear time", () => {
  test("the helpers give what the regexes gave", () => {
    for (const s of ["", "/", "a//", "//a", "a/b/", "x" + "/".repeat(5)]) expect(withoutTrailing(s, "/")).toBe(s.replace(/\/+$/, ""));
    for (const s of ["", " a \t\n", "\u00a0x\u2028 ", "a"]) {
      expect(trailingSpace(s)).toBe(/\s*$/.exec(s)![0]);
      expect(leadingSpace(s)).toBe(/^\s*/.exec(s)![0]);
    }
    expect(withoutTrailing("a*＊*", "*＊")).toBe("a");
  });

  test("a tag of slashes before a letter", () => {
    expect(normalizeTag(`#a${"/".repeat(N)}x`)).toBe(`a${"/".repeat(N)}x`);
    expect(normalizeTag(`a${"/".repeat(N)}`)).toBe("a");
  }, 30_000);

  test("the web page's inline tag of slashes", () => {
    const html = renderNote("/nonexistent", () => null, "n.md", `# T\n\n#a${"/".repeat(N)}x and #b//\n`);
    expect(html).toContain("#b");
  }, 30_000);

  test("a source URL of slashes before a letter", () => {
    expect(normalizeResource(`https://h/${"/".repeat(N)}x/`)?.segs[0]).toBe(`https://h/${"/".repeat(N)}x`);
  }, 30_000);

  test("a wikilink of spaces rewritten by a move", () => {
    const text = `[[Old${" ".repeat(N)}x]] and [[ Old ]]\n`;
    const r = rewriteLinksForMove(text, {
      oldSource: "a.md",
      newSource: "a.md",
      from: "Old.md",
      to: "New.md",
      resolve: (l) => (l.target === "Old" ? "Old.md" : null),
      aliases: [],
      nameUnique: true,
    });
    expect(r.text).toBe(`[[Old${" ".repeat(N)}x]] and [[ New ]]\n`);
  }, 30_000);
});

describe("get_vault_info's AGENTS.md brief", () => {
  let server: TestServer;
  let root = "";
  beforeAll(async () => {
    root = copyVault();
    // Past the brief's 64 KB: invalid UTF-8 decodes to U+FFFD, then one letter just before the cut.
    const bytes = Buffer.alloc(70_000, 0xff);
    bytes[65_535] = 0x61;
    writeFileSync(join(root, "AGENTS.md"), bytes);
    server = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("a brief of U+FFFD before its cut answers at once", async () => {
    // 64 KB is all the brief reads, so the cost is what it was (4.5 s) or a few milliseconds: 1.5 s splits them.
    const t0 = performance.now();
    const info = await server.call("get_vault_info");
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(JSON.stringify(info)).toContain("\uFFFDa");
  }, 30_000);
});
