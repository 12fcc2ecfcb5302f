// Index and embed a bench vault (its vectors land in the vault copy's own
// embeddings cache under BENCH_CACHE, so a second run costs nothing).
//   bun bench/lib/retrieval-embed.ts obsidian-help|srd-wiki|scifact|anthropic-docs
import { SemanticService } from "../../lib/semantic/service";
import { VaultContext } from "../../lib/vault-context";
import { anthropicDocs, obsidianHelp, scifact, srdWiki, type RetrievalSet } from "./retrieval-data";

process.env.LETTUCE_EMBED_PROVIDER ??= "builtin";
process.env.LETTUCE_LLM_PROVIDER ??= "none";

export async function embedSet(set: RetrievalSet, log = (s: string) => process.stderr.write(`${s}\n`)): Promise<{ ms: number; passages: number }> {
  const vault = VaultContext.open(set.vault);
  try {
    await vault.indexer.fullScan();
    const svc = SemanticService.for(vault);
    const t0 = performance.now();
    let last = 0;
    const r = await svc.reconcileNow((done, total) => {
      if (performance.now() - last > 10_000) {
        last = performance.now();
        log(`  ${set.name}: embedding ${done}/${total} notes`);
      }
    });
    return { ms: performance.now() - t0, passages: r.passages };
  } finally {
    vault.close();
  }
}

if (import.meta.main) {
  const sets: Record<string, () => RetrievalSet> = { "obsidian-help": obsidianHelp, "srd-wiki": srdWiki, scifact, "anthropic-docs": anthropicDocs };
  for (const name of process.argv.slice(2)) {
    const r = await embedSet(sets[name]!());
    console.log(`${name}: ${r.passages} passages written in ${(r.ms / 1000).toFixed(1)} s`);
  }
  process.exit(0);
}
