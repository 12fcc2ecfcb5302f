// The Markdown-link scan (lib/vault/md-links.ts) finds what the parser's pattern finds, in linear time.
import { expect, test } from "bun:test";
import { MD_LINK_RULE, mdLinks } from "../lib/vault/md-links";

function viaRule(s: string): unknown[] {
  return [...s.matchAll(MD_LINK_RULE)].map((m) => ({ index: m.index!, raw: m[0], bang: m[1], text: m[2], dest: m[3] }));
}

test("the same matches as the pattern on generated text", () => {
  const parts = ["[", "]", "(", ")", "![", "](", "a", "b c", " ", "\n", "\t", "<", ">", '"', "'", '"t"', "x.md", "<a b>", "http://x", "\u00a0", "\u2028", "!", "#h"];
  let seed = 11;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let k = 0; k < 30_000; k++) {
    let s = "";
    for (let i = Math.floor(rnd() * 16); i > 0; i--) s += parts[Math.floor(rnd() * parts.length)];
    expect([s, [...mdLinks(s)] as unknown[]]).toEqual([s, viaRule(s)]);
  }
});

test("destinations around the 4,096-character bound, and links one after another", () => {
  for (const n of [4095, 4096, 4097]) {
    const s = `see [a](${"d".repeat(n)}) and ![b](<c d> "t") [e]( f 'g' )`;
    expect([...mdLinks(s)] as unknown[]).toEqual(viaRule(s));
  }
  const s = "[a](b)![c](d)[e](<f>)(g)[h](i".repeat(50);
  expect([...mdLinks(s)] as unknown[]).toEqual(viaRule(s));
});

// As a regex, a line of "[a](" retried a 4,096-character destination from every '[': 0.3 s for 250 KB, and
// 8 MB about 9 s.
test("an 8 MB line of '[a](' is read in linear time", () => {
  const s = "[a](".repeat(2_000_000);
  expect([...mdLinks(s)]).toEqual([]);
}, 3_000);

// Every '[' whose bare destination ends at the same place read what follows it again: an unclosed title
// running to the end of a 1 MB line, 1,024 times (1.5 s; 4 MB ~6 s).
test("an unclosed title after a run of links to be is read once", () => {
  const s = `[a](${"[b](".repeat(1023)} "${"x".repeat(4_000_000)}\n`;
  expect([...mdLinks(s)]).toEqual([]);
}, 3_000);
