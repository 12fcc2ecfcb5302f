// Write-path benchmark: latency p50/p99 and sustained writes/s of real MCP
// write calls (apply_edits, one note per client) against `lettuce serve`
// running in its own process, with 1 and with 16 concurrent clients.
// Goal on the 2-core dev machine: p50 ≤ 5 ms, ≥ 300 writes/s across notes.
//
//   bun bench/write.ts [--writes 600] [--extra-notes 0] [--embed]
//
// --extra-notes N adds N synthetic notes (../shared/tools/gen-vault.mjs) to
// show how the vault's size affects a write (the re-index after each write).
// The server's background embedding (the semantic layer re-embeds changed
// notes with the built-in model) is off unless --embed: it competes for the
// same two cores and would measure the model, not the write path.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const REPO = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const { values } = parseArgs({ options: { writes: { type: "string" }, "extra-notes": { type: "string" }, embed: { type: "boolean" } } });
const WRITES = Number(values.writes ?? 600);
const EXTRA = Number(values["extra-notes"] ?? 0);
const NOTES = 16;

async function run(args: string[]): Promise<string> {
  const p = Bun.spawn([BUN, join(REPO, "main.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`lettuce ${args.join(" ")} failed`);
  return out;
}

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
function cpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return null;
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
};

async function main() {
  const root = mkdtempSync(join(tmpdir(), "lettuce-bench-write-"));
  cpSync(join(REPO, "examples/vault"), root, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  if (EXTRA > 0) {
    const gen = Bun.spawnSync(["node", resolve(REPO, "../shared/tools/gen-vault.mjs"), join(root, "synthetic"), String(EXTRA)]);
    if (gen.exitCode !== 0) throw new Error("gen-vault failed");
  }
  mkdirSync(join(root, "bench"));
  for (let i = 0; i < NOTES; i++) {
    writeFileSync(join(root, `bench/n${i}.md`), `---\ntitle: Bench ${i}\ntags: [bench]\n---\n\n# Bench ${i}\n\ncounter: 0\n\n${"Some steady prose about lettuce and notes. ".repeat(20)}\n`);
  }
  const token = JSON.parse(await run(["token", "create", root, "--scope", "write", "--name", "bench", "--json"])).token as string;
  const port = freePort();
  const env = { ...process.env, ...(values.embed ? {} : { LETTUCE_EMBED_BACKGROUND: "0" }) };
  const server = Bun.spawn([BUN, join(REPO, "main.ts"), "serve", root, "--port", String(port)], { stdout: "pipe", stderr: "inherit", env });
  const url = `http://127.0.0.1:${port}/mcp`;
  try {
    // Wait for the first full scan: writes queue behind it.
    const dec = new TextDecoder();
    let out = "";
    for await (const chunk of server.stdout) {
      out += dec.decode(chunk);
      if (/Index current/.test(out)) break;
    }
    const counters = new Array(NOTES).fill(0);
    let id = 0;
    const write = async (note: number) => {
      const c = counters[note]++;
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "apply_edits", arguments: { path: `bench/n${note}.md`, edits: [{ find: `counter: ${c}`, replace: `counter: ${c + 1}` }] } },
      });
      const t = performance.now();
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` }, body });
      const json = (await res.json()) as { result?: { isError?: boolean; content: { text: string }[] } };
      const ms = performance.now() - t;
      if (!json.result || json.result.isError) throw new Error(`write failed: ${JSON.stringify(json)}`);
      return ms;
    };
    // Warm up (JIT, statement caches, the first WAL growth).
    for (let i = 0; i < 40; i++) await write(i % NOTES);

    const rows: string[][] = [];
    for (const clients of [1, 16]) {
      const lat: number[] = [];
      const per = Math.ceil(WRITES / clients);
      const t0 = performance.now();
      const cpu0 = cpuSeconds(server.pid);
      await Promise.all(
        Array.from({ length: clients }, async (_, k) => {
          for (let i = 0; i < per; i++) lat.push(await write(clients === 1 ? i % NOTES : k % NOTES));
        }),
      );
      const secs = (performance.now() - t0) / 1000;
      const cpu1 = cpuSeconds(server.pid);
      const cpuMs = cpu0 === null || cpu1 === null ? "n/a" : (((cpu1 - cpu0) * 1000) / lat.length).toFixed(2);
      rows.push([String(clients), String(lat.length), pct(lat, 0.5).toFixed(2), pct(lat, 0.99).toFixed(2), (lat.length / secs).toFixed(0), cpuMs]);
    }
    const notes = 25 + NOTES + EXTRA;
    console.log(`\nWrite path: apply_edits over MCP HTTP to \`lettuce serve\` (vault of ~${notes} notes, one note per client; background embedding ${values.embed ? "on" : "off"})\n`);
    console.log("| clients | writes | p50 ms | p99 ms | writes/s | server CPU ms/write |");
    console.log("|--------:|-------:|-------:|-------:|---------:|--------------------:|");
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
    console.log("\nGoal: p50 ≤ 5 ms and ≥ 300 writes/s across different notes.");
    console.log(`Load average when done: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} (other work on the machine skews the figures).`);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
