// A clean `npm ci` on the Node this project supports (20, as on a fresh machine)
// must print no warning: no dependency may demand a newer Node (EBADENGINE),
// and every install script must be approved in package.json's allowScripts
// (npm 11 otherwise lists it as "not yet covered").
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./helpers/server";

const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8"));
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
const packages = Object.entries(lock.packages as Record<string, any>).filter(([k]) => k.startsWith("node_modules/"));

test("every locked dependency accepts Node 20 (no EBADENGINE warning)", () => {
  const bad = packages.filter(([, p]) => p.engines?.node && !Bun.semver.satisfies("20.20.2", p.engines.node)).map(([k, p]) => `${k} wants node ${p.engines.node}`);
  expect(bad).toEqual([]);
});

test("every dependency with an install script is approved in allowScripts", () => {
  const unapproved = packages
    .filter(([, p]) => p.hasInstallScript)
    .map(([k]) => k.slice(k.lastIndexOf("node_modules/") + "node_modules/".length))
    .filter((name) => !Object.keys(pkg.allowScripts ?? {}).some((a) => a === name || a.startsWith(`${name}@`)));
  expect(unapproved).toEqual([]);
});
