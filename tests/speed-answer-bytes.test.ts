// A read worker's big answer crosses to the event loop as UTF-8 bytes, handed over without a copy, and the
// HTTP layer sends those bytes as they are (lib/offload/json-text.ts): a string crossing threads is copied,
// and each pass over a 50 MB answer's text on the event loop held other callers 20-90 ms. Small answers stay
// strings. What the client gets is the same either way.
import { expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BYTES_FROM, JsonText, renderForWire, transferables } from "../lib/offload/json-text";
import { offloaded } from "../lib/offload/offloaded";
import { planNoteRead } from "../lib/retrieval/note-read";
import { responseAroundBytes, serialiseResponse, withLiteral, type JsonRpcResponse } from "../lib/server/jsonrpc";
import { VaultContext } from "../lib/vault-context";
import { copyVault } from "./helpers/server";

const answerOf = (wire: JsonText): JsonRpcResponse => ({ jsonrpc: "2.0", id: 7, result: { content: [withLiteral({ type: "text", text: wire.text }, wire)] } });

test("a small answer crosses as a string, a big one as bytes of the same literal, and both serialise alike", () => {
  const small = { items: [{ path: "a.md", snippet: 'quote " and \\ and ✓' }] };
  const big = { content: `"${"é😀 line\n".repeat(BYTES_FROM / 4)}` };
  const s = renderForWire(small);
  const b = renderForWire(big);
  expect(typeof s).toBe("string");
  expect(b).toBeInstanceOf(Uint8Array);
  expect(transferables(s)).toEqual([]);
  expect(transferables(b)).toEqual([(b as Uint8Array).buffer as ArrayBuffer]);
  // A view of part of a buffer is not handed over (the rest of the buffer is not the answer's).
  expect(transferables((b as Uint8Array).subarray(1))).toEqual([]);
  for (const [wire, value] of [
    [new JsonText(s), small],
    [new JsonText(b), big],
  ] as const) {
    expect(JSON.parse(wire.text)).toEqual(value);
    const answer = answerOf(wire);
    const whole = serialiseResponse(answer);
    expect(JSON.parse(whole)).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: JSON.stringify(value) }] } });
    // The bytes answer in pieces: the envelope's ends around the worker's bytes, the same JSON once joined.
    const around = responseAroundBytes(answer);
    if (wire.bytes) expect(Buffer.concat(around!.map((p) => Buffer.from(p as string | Uint8Array))).toString("utf8")).toBe(whole);
    else expect(around).toBeNull();
  }
});

test("a note's answer from a real read worker arrives as bytes when big, as a string when small", async () => {
  const vault = VaultContext.open(copyVault());
  try {
    writeFileSync(join(vault.root, "Big.md"), `# Big\n\n${"ünïcödé words 😀\n".repeat(20_000)}`);
    await vault.indexer.fullScan();
    const big = (await offloaded.readNote(vault, planNoteRead(vault.indexDb, vault.root, "Big.md"), false))!;
    const small = (await offloaded.readNote(vault, planNoteRead(vault.indexDb, vault.root, "Garden/Compost.md"), false))!;
    expect(big.bytes).toBeInstanceOf(Uint8Array);
    expect(small.bytes).toBeNull();
    expect(JSON.parse(big.text).content.endsWith("ünïcödé words 😀\n")).toBe(true);
    expect(JSON.parse(small.text).path).toBe("Garden/Compost.md");
  } finally {
    vault.close();
    rmSync(vault.root, { recursive: true, force: true });
  }
});
