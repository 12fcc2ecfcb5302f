// After an unchanged restart the index loads no name list (links are resolved against it only when notes
// change); a server builds it once quiet, in slices between which requests are answered, rather than on
// the first save or write (~0.2 s of the request thread at 100k notes). The list built in slices must be
// the list built in one go, and a change made after it must resolve its links as before.
import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolverFrom, resolverInSlices } from "../lib/index/known-rows";
import { VaultContext } from "../lib/vault-context";
import { copyVault } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("the name list read three notes at a time is the one read at once, and it is what the next change uses", async () => {
  const root = copyVault();
  dirs.push(root);
  writeFileSync(join(root, "Aliased.md"), "---\naliases: [Another name, Third]\n---\n# Aliased\n");
  const first = VaultContext.open(root);
  await first.indexer.fullScan();
  first.close();

  // An unchanged restart: no name list yet.
  const vault = VaultContext.open(root);
  try {
    await vault.indexer.fullScan();
    const indexer = vault.indexer as unknown as { _resolver: unknown };
    expect(indexer._resolver).toBeNull();
    const sliced = await resolverInSlices(vault.indexDb, 3);
    expect(sliced.snapshot()).toEqual(resolverFrom(vault.indexDb).snapshot());
    expect(sliced.snapshot().notes.length).toBeGreaterThan(20);

    await vault.indexer.warmResolver();
    const warmed = indexer._resolver;
    expect(warmed).not.toBeNull();
    // A note linking by alias, written after: resolved through the warmed list, which the pass keeps.
    writeFileSync(join(root, "Linker.md"), "# Linker\n\nSee [[Another name]].\n");
    await vault.indexer.update(["Linker.md"]);
    expect(indexer._resolver).toBe(warmed);
    const link = vault.indexDb.query("SELECT l.resolved FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = 'Linker.md'").get() as { resolved: string };
    expect(link.resolved).toBe("Aliased.md");
  } finally {
    vault.close();
  }
});
