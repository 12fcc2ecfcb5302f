// The compiled binary carries the web UI: Bun bundles web/index.html (an
// HTML import in lib/web/assets.ts) at build time, so the binary serves the
// page and its script and styles from an empty folder with nothing fetched.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./helpers/cli";
import { copyVault, REPO } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("the compiled binary serves the web UI from an empty folder", async () => {
  const out = mkdtempSync(join(tmpdir(), "lettuce-webbin-"));
  dirs.push(out);
  const exe = join(out, "lettuce");
  // The entry points compile.sh builds, read from it: a list copied here went stale (no read worker: every
  // read the server hands to one failed in this binary).
  const entries = /^ENTRIES=\(([^)]*)\)/m.exec(readFileSync(join(REPO, "compile.sh"), "utf8"))![1]!.trim().split(/\s+/);
  expect(entries).toContain("./lib/offload/worker.ts");
  const build = Bun.spawnSync(
    [process.execPath, "build", "--compile", "--minify", "--sourcemap=none", ...entries, "--outfile", exe],
    { cwd: REPO, stdout: "pipe", stderr: "pipe" },
  );
  expect(build.exitCode).toBe(0);
  const empty = mkdtempSync(join(tmpdir(), "lettuce-webbin-empty-"));
  dirs.push(empty);
  copyFileSync(exe, join(empty, "lettuce"));
  rmSync(exe);
  const vault = copyVault();
  dirs.push(vault);
  const port = freePort();
  const proc = Bun.spawn([join(empty, "lettuce"), "serve", vault, "--port", String(port)], {
    cwd: empty,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: "/usr/bin:/bin", HOME: empty, TMPDIR: empty, LETTUCE_EMBED_PROVIDER: "none" },
  });
  try {
    let printed = "";
    const reader = proc.stdout.getReader();
    const dec = new TextDecoder();
    const deadline = Date.now() + 60_000;
    while (!/login\?code=[\w-]+/.test(printed) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      printed += dec.decode(value);
    }
    const link = printed.match(/(http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+)/)?.[1];
    expect(link).toBeTruthy();
    const login = await fetch(link!, { redirect: "manual" });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).text();
    const script = page.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    const style = page.match(/href="(\/assets\/[^"]+\.css)"/)?.[1];
    expect(script).toBeTruthy();
    expect(style).toBeTruthy();
    const js = await fetch(`http://127.0.0.1:${port}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    const body = await js.text();
    expect(body.length).toBeGreaterThan(100_000); // the app, graphology and sigma
    expect(body).toContain("/api/session");
    expect((await fetch(`http://127.0.0.1:${port}${style}`)).headers.get("content-type")).toContain("css");
    // The graph is laid out in a read worker, with graphology bundled for it too.
    const graph = await fetch(`http://127.0.0.1:${port}/api/graph`, { headers: { cookie } });
    expect(graph.status).toBe(200);
    const drawn = (await graph.json()) as { nodes: { x: number }[]; total: number };
    expect(drawn.nodes.length).toBe(drawn.total);
    expect(drawn.nodes.some((n) => n.x !== 0)).toBe(true);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 240_000);
