import { z } from "zod";
import { noteByPath, noteCount } from "../lib/retrieval/notes";
import { vectorStorage } from "../lib/store/index-db";
import { sqliteInfo } from "../lib/store/sqlite-lib";
import { readVaultFile } from "../lib/vault/read-file";
import { ALL_SCOPES, defineTool, READ_ONLY, type ToolContext } from "./types";
import { withoutTrailing } from "../lib/text-ends";

/**
 * Sections of get_vault_info that other tool families own (directives fill
 * liveness, the semantic layer fills capabilities.embeddings). They register
 * here instead of this file importing them, keeping the dependency one-way.
 */
export type VaultInfoContributor = (info: VaultInfo, ctx: ToolContext) => void | Promise<void>;
const contributors: VaultInfoContributor[] = [];
export function contributeVaultInfo(fn: VaultInfoContributor): void {
  contributors.push(fn);
}

export interface VaultInfo {
  root: string;
  noteCount: number;
  indexedAt: string | null;
  agentsFile: string | null;
  /** Present (true) when AGENTS.md is longer than agentsFile shows: read_note has the rest. */
  agentsFileTruncated?: true;
  immutablePaths: string[];
  /** readOnly: this token may not write at all (a read token); proposeOnly: its writes queue as proposals. */
  capabilities: { embeddings: boolean; llm: boolean; hasIndexCatalog: boolean; proposeOnly: boolean; readOnly: boolean };
  liveness: { pendingDirectives: number; lastLogDate: string | null; embeddingIndexStale: boolean };
  /** watchProblem: the system refused part of the file watch, and a periodic full scan finds changes instead (what to raise). */
  indexing: { state: string; done: number; total: number; watchProblem?: string };
  /** The semantic index's progress, when embeddings work (filled by tools/semantic.ts). */
  embedding?: { state: string; notesEmbedded: number; notesTotal: number; passagesLeft: number | null; passagesPerSecond: number | null; etaSeconds: number | null; paused?: boolean };
  /** How vectors are stored (sqlite-vec, or plain tables where it cannot load) and which SQLite runs. */
  storage: { vectors: string; sqliteVec: string | null; sqlite: string; note?: string };
}

/** The brief every agent reads first: bounded, since every call pays for it. */
export const MAX_AGENTS_BRIEF_BYTES = 64 * 1024;

// Only a regular file reached without a symlink (one that leads out of the vault would
// hand any token that file; a FIFO named AGENTS.md would block the server on read).
function agentsBrief(root: string): { text: string; truncated: boolean } | null {
  try {
    const { bytes, size } = readVaultFile(root, "AGENTS.md", MAX_AGENTS_BRIEF_BYTES);
    // A cut through a multi-byte character decodes to U+FFFD at the end: drop it.
    const text = bytes.toString("utf8");
    return size > bytes.length ? { text: withoutTrailing(text, "\uFFFD"), truncated: true } : { text, truncated: false };
  } catch {
    return null;
  }
}

function storageInfo(db: Parameters<typeof vectorStorage>[0]): VaultInfo["storage"] {
  const v = vectorStorage(db);
  const out: VaultInfo["storage"] = { vectors: v.kind, sqliteVec: v.vecVersion, sqlite: sqliteInfo().version };
  if (v.reason) out.note = `${v.reason}; vectors are kept in plain tables and every tool works`;
  return out;
}

export const getVaultInfo = defineTool({
  name: "get_vault_info",
  description: "Call first: vault root, note count, index state, the AGENTS.md brief, immutable paths, capabilities (which tools work) and liveness (pending directives).",
  details: "Call this first. The vault root, note count, index time (indexedAt is null while the first scan runs; `indexing` shows progress, and watchProblem when the system limits file watching), the AGENTS.md brief (its first 64 KB; agentsFileTruncated when there is more), immutable path prefixes, capabilities (which tools work: embeddings, llm, proposeOnly; readOnly for a token that cannot write) and liveness (pending directives, last log date, embedding staleness), embedding (while the semantic index is built: notes embedded, passages left, measured rate, etaSeconds), and storage (sqlite-vec or plain tables; SQLite version).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  async handler(_args, ctx) {
    const { vault, token } = ctx;
    const s = vault.indexer.status;
    const brief = agentsBrief(vault.root);
    const info: VaultInfo = {
      root: vault.root,
      noteCount: noteCount(vault.indexDb),
      indexedAt: s.state === "ready" ? s.indexedAt : null,
      agentsFile: brief?.text ?? null,
      ...(brief?.truncated ? { agentsFileTruncated: true as const } : {}),
      immutablePaths: vault.immutablePaths,
      capabilities: {
        embeddings: false,
        llm: false,
        hasIndexCatalog: noteByPath(vault.indexDb, "index.md") !== null,
        proposeOnly: token.scope === "propose",
        readOnly: token.scope === "read",
      },
      liveness: { pendingDirectives: 0, lastLogDate: null, embeddingIndexStale: false },
      indexing: { state: s.state, done: s.done, total: s.total, ...(vault.watchProblem ? { watchProblem: vault.watchProblem } : {}) },
      storage: storageInfo(vault.indexDb),
    };

    for (const fn of contributors) await fn(info, ctx);
    return info;
  },
});

export const vaultInfoTools = [getVaultInfo];
