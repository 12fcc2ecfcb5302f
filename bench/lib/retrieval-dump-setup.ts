// What every dump script (retrieval-dump*.ts) starts with: the set its command line names
// (oh|srd|docs|scifact [train]), that set's vault indexed and embedded by the built-in model,
// and its passage vectors as one flat matrix (owner note per row), unit length.
import type { Database } from "bun:sqlite";
import { normalize } from "../../lib/providers/types";
import { SemanticService } from "../../lib/semantic/service";
import { allPassageVectors } from "../../lib/semantic/store";
import { VaultContext } from "../../lib/vault-context";
import { anthropicDocs, obsidianHelp, obsidianHelpAll, obsidianHelpInHub, scifact, srdWiki, type RetrievalSet } from "./retrieval-data";

process.env.LETTUCE_EMBED_PROVIDER ??= "builtin";

export function setFromArgs(argv = process.argv): { which: string; split: "train" | "test"; set: RetrievalSet } {
  const which = argv[2]!;
  const split = argv[3] === "train" ? "train" : "test";
  const set = which === "oh" ? obsidianHelp() : which === "oh-all" ? obsidianHelpAll() : which === "oh-hub" ? obsidianHelpInHub() : which === "srd" ? srdWiki() : which === "docs" ? anthropicDocs() : scifact(split);
  return { which, split, set };
}

/** The set's vault, indexed; with `embedded`, every passage embedded and the stemmed keyword table filled too. */
export async function openSetVault(set: RetrievalSet, embedded = true): Promise<VaultContext> {
  const vault = VaultContext.open(set.vault);
  await vault.indexer.fullScan();
  if (embedded) {
    const svc = SemanticService.for(vault);
    await svc.reconcileNow();
    await svc.syncKeywords();
  }
  return vault;
}

export const unit = (v: Float32Array) => normalize(Float32Array.from(v));

/** Every passage vector of the notes in `idx` (note id → row of the caller's note list), unit length, in one matrix. */
export function passageMatrix(db: Database, idx: Map<number, number>): { flat: Float32Array; owner: Int32Array; dim: number } {
  const rows: { note: number; v: Float32Array }[] = [];
  for (const p of allPassageVectors(db)) if (idx.has(p.noteId)) rows.push({ note: idx.get(p.noteId)!, v: unit(p.vector) });
  const dim = rows[0]!.v.length;
  const flat = new Float32Array(rows.length * dim);
  const owner = new Int32Array(rows.length);
  rows.forEach((p, i) => {
    flat.set(p.v, i * dim);
    owner[i] = p.note;
  });
  return { flat, owner, dim };
}
