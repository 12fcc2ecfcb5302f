// Heading ids are github-slugger's, spelled from a table for ASCII headings (lib/vault/heading-ids.ts).
import { expect, test } from "bun:test";
import GithubSlugger, { slug } from "github-slugger";
import { headingSlug, HeadingIds } from "../lib/vault/heading-ids";

test("the same slug as github-slugger for every ASCII character and for mixed text", () => {
  for (let c = 0; c < 128; c++) expect(headingSlug(`A${String.fromCharCode(c)}b`)).toBe(slug(`A${String.fromCharCode(c)}b`));
  const alphabet = [..."aZ09 -_.,:;!?()[]{}#'\"`~/\\|@$%^&*+=<>\t", "é", "Ü", "ß", "İ", "😀", "中", "\u0301"];
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let k = 0; k < 20_000; k++) {
    let s = "";
    for (let i = Math.floor(rnd() * 12); i > 0; i--) s += alphabet[Math.floor(rnd() * alphabet.length)];
    expect([s, headingSlug(s)]).toEqual([s, slug(s)]);
  }
});

test("repeated headings are numbered as github-slugger numbers them", () => {
  const titles = ["Notes", "Notes", "notes-1", "Notes", "", "", "A b", "a-b", "Notes-1"];
  const ours = new HeadingIds();
  const theirs = new GithubSlugger();
  expect(titles.map((t) => ours.next(t))).toEqual(titles.map((t) => theirs.slug(t)));
});
