// More folders than the system lets a process watch (inotify's per-user limit, shared with every other
// program that watches; .git's folders count too): edits in the unwatched folders reached the index never,
// and the server still said "watching for changes" (the sync audit of 2026-12-05). It now says what is
// wrong (log, get_vault_info) and finds changes by a periodic full scan. Run in a user namespace of its own
// whose limit is 250 watches, so the machine's limit is not touched.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { BUN, freePort, httpMcp, MAIN, spawnLettuce } from "./helpers/cli";
import { tempDir, waitFor } from "./helpers/server";

const canLimit = process.platform === "linux" && Bun.spawnSync(["unshare", "-U", "-r", "sh", "-c", "echo 250 > /proc/sys/user/max_inotify_watches"]).exitCode === 0;
if (!canLimit) console.log("foundation-watch-limit: skipped: no user namespace here to lower inotify's watch limit in (unshare -U -r)");

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

test.skipIf(!canLimit)("past the system's watch limit, the server says so and a periodic scan finds the edits", async () => {
  writeFileSync(join(root, "Top.md"), "# Top\n\nstart\n");
  for (let i = 0; i < 300; i++) mkdirSync(join(root, ".git/objects", i.toString(16).padStart(2, "0")), { recursive: true });
  for (let i = 0; i < 20; i++) {
    mkdirSync(join(root, `Z${i}`));
    writeFileSync(join(root, `Z${i}/n${i}.md`), `# N${i}\n\nstart\n`);
  }
  const db = openStateDb(root);
  const token = createToken(db, "limit", "read").token;
  db.close();
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port)], {
    prefix: ["unshare", "-U", "-r", "sh", "-c", 'echo 250 > /proc/sys/user/max_inotify_watches && exec "$@"', "sh"],
    env: { LETTUCE_WATCH_POLL_MS: "1000", LETTUCE_EMBED_PROVIDER: "none" },
  });
  try {
    await server.waitForStdout(/Index current/, 30_000);
    const { call } = httpMcp(port, token);
    await waitFor(async () => /limit on file watches was reached/.test(server.stderr()), { what: "the watch limit reported in the log", timeoutMs: 10_000 });
    expect((await call("get_vault_info", {})).indexing.watchProblem).toMatch(/limit on file watches was reached \(ENOSPC.*full scan every 1 s/);
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `Z${i}/n${i}.md`), `# N${i}\n\nchangedsub\n`);
    writeFileSync(join(root, "Top.md"), "# Top\n\nchangedtop\n");
    await waitFor(async () => (await call("search", { query: "changedsub", limit: 50 })).items.length === 20, { what: "every edit, watched folder or not", timeoutMs: 15_000 });
    expect((await call("search", { query: "changedtop" })).items.map((i: any) => i.path)).toEqual(["Top.md"]);
  } finally {
    await server.stop();
  }
  // doctor counts the folders the watch takes (.git's too) against this namespace's limit: it said ✓ for 21.
  const doctor = Bun.spawnSync(["unshare", "-U", "-r", "sh", "-c", 'echo 250 > /proc/sys/user/max_inotify_watches && exec "$@"', "sh", BUN, MAIN, "doctor", root]);
  expect(doctor.stdout.toString()).toMatch(/! watcher +32\d folders to watch \(hidden ones such as \.git count too\); inotify allows 250/);
}, 60_000);
