// `lettuce answer` (ask the wiki from the shell) and `lettuce lint --semantic`
// (the LLM review, every batch, with progress).
import cliProgress from "cli-progress";
import { answerQuestion, type AnswerResult } from "../answer/answer";
import { lintSemantic, type SemanticLintReport } from "../answer/lint-semantic";
import { SemanticService } from "../semantic/service";
import { normalizeVaultPath } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import { intOption, parse, UsageError, type Command } from "./command";
import { openIndexed } from "./index-search";
import { indexProgress } from "./progress";
import { linesShownInTerminal, shownInTerminal } from "../control-chars";

/** Run a body, then let background embedding settle and close the vault (runCli reports tool errors). */
async function closing(vault: VaultContext, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } finally {
    await SemanticService.for(vault).idle();
    vault.close();
  }
}

/** Bring the vectors up to date first (as `lettuce search --hybrid` does), so retrieval is hybrid. */
async function embedFirst(vault: VaultContext, quiet: boolean): Promise<void> {
  const svc = SemanticService.for(vault);
  if (!(await svc.hasEmbedder())) return;
  const bar = quiet ? null : indexProgress("Embedding");
  try {
    await svc.reindex((done, total) => bar?.update({ state: "scanning", done, total, indexedAt: null }));
  } finally {
    bar?.stop();
  }
}

const wrap = (text: string, width = 88, indent = "") =>
  text
    .split(/\n/)
    .map((para) => {
      const lines: string[] = [];
      let line = "";
      for (const w of para.split(/\s+/).filter(Boolean)) {
        if (line && line.length + 1 + w.length > width) {
          lines.push(indent + line);
          line = w;
        } else line = line ? `${line} ${w}` : w;
      }
      lines.push(indent + line);
      return lines.join("\n");
    })
    .join("\n");

export function printAnswer(r: AnswerResult): void {
  // The model's words and the notes' paths: controls shown, never sent to the terminal raw.
  console.log(linesShownInTerminal(wrap(r.answer)));
  const number = new Map<string, number>();
  if (r.citations.length) {
    console.log("\nSources:");
    r.citations.forEach((c, i) => {
      number.set(c.path, i + 1);
      console.log(shownInTerminal(`  [${i + 1}] ${c.path}${c.title && c.title !== c.path.replace(/^.*\//, "").replace(/\.md$/i, "") ? ` (${c.title})` : ""}`));
    });
  }
  if (r.quotedSpans.length) {
    console.log("\nQuotes:");
    for (const q of r.quotedSpans) {
      const n = number.get(q.path);
      console.log(linesShownInTerminal(wrap(`“${q.quote}”`, 84, "  ")));
      console.log(shownInTerminal(`      ${n ? `[${n}] ` : ""}${q.path}${q.heading ? ` § ${q.heading}` : ""} (passage ${q.ordinal})`));
    }
  }
  const others = r.retrieved.filter((p) => !number.has(p.path));
  if (others.length) console.log(`\nAlso read: ${shownInTerminal(others.map((p) => p.path).join(", "))}`);
  const { citations, quotes } = r.dropped;
  if (citations || quotes) {
    const n = (k: number, w: string) => `${k} ${w}${k === 1 ? "" : "s"}`;
    console.log(`\n(Dropped ${n(citations, "citation")} and ${n(quotes, "quote")} the notes do not back.)`);
  }
  if (r.faithfulness) {
    console.log(`\nFaithfulness: ${r.faithfulness.score.toFixed(2)}${r.faithfulness.unsupported.length ? "; not supported by the notes:" : " (every claim supported)"}`);
    for (const c of r.faithfulness.unsupported) console.log(wrap(`- ${c}`, 86, "  "));
  }
}

export const answerCommand: Command = {
  name: "answer",
  summary: "Ask the wiki a question: an answer from the notes, with sources and quotes",
  usage: [
    "lettuce answer <vault> <question…> [--json] [--rerank] [--faithfulness] [--limit N] [--graph] [--expand] [--recent]",
    "",
    "Like the answer tool: retrieves the best passages (hybrid with an embeddings provider, else",
    "keyword), asks the LLM to answer from them only, and prints the answer with its numbered",
    "sources and verbatim quotes; citations and quotes the notes do not back are dropped.",
    "--rerank reranks 30 candidates first (LETTUCE_RERANK_URL, else the LLM); --faithfulness",
    "checks each claim against the passages; --graph uses the link graph; --expand expands the",
    "query; --recent prefers fresh notes. Needs an LLM provider (see docs/answer.md).",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, {
      json: { type: "boolean" },
      rerank: { type: "boolean" },
      faithfulness: { type: "boolean" },
      graph: { type: "boolean" },
      expand: { type: "boolean" },
      recent: { type: "boolean" },
      limit: { type: "string" },
    });
    if (positionals.length < 2) throw new UsageError("answer needs a vault and a question");
    const query = positionals.slice(1).join(" ").trim();
    if (!query) throw new UsageError("the question is empty");
    const limit = intOption(values.limit, "limit", 6, 1);
    if (limit < 1 || limit > 20) throw new UsageError("--limit must be between 1 and 20");
    const vault = await openIndexed(positionals[0], !!values.json);
    return closing(vault, async () => {
      const svc = SemanticService.for(vault);
      await svc.chat(); // no LLM: say so before embedding anything
      await embedFirst(vault, !!values.json);
      const r = await answerQuestion(svc, {
        query,
        limit,
        rerank: !!values.rerank,
        checkFaithfulness: !!values.faithfulness,
        useGraph: !!values.graph,
        expand: !!values.expand,
        preferRecent: !!values.recent,
      });
      if (values.json) console.log(JSON.stringify(r));
      else printAnswer(r);
      return 0;
    });
  },
};

/** Progress of the review: a bar on a terminal, a line per batch elsewhere (logs, CI). */
function reviewProgress(quiet: boolean): { update: (done: number, total: number) => void; stop: () => void } {
  if (quiet) return { update: () => {}, stop: () => {} };
  if (!process.stderr.isTTY) {
    let last = -1;
    return {
      update(done, total) {
        if (done !== last) console.error(`Reviewed ${done}/${total} batches`);
        last = done;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: "Reviewing [{bar}] {value}/{total} batches", stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) bar.start(total, done);
      else bar.update(done);
      started = true;
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

function printFindings(r: SemanticLintReport): void {
  for (const f of r.findings) {
    console.log(`${f.kind.padEnd(16)}  ${f.paths.join(", ")}`);
    console.log(wrap(f.message, 84, "    "));
    if (f.suggestion) console.log(wrap(`→ ${f.suggestion}`, 84, "    "));
  }
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? "" : w.endsWith("ch") ? "es" : "s"}`;
  const tail = r.complete ? "" : ` (${r.batches.total - r.batches.done} batches not reviewed: raise --max-batches)`;
  console.log(`${r.findings.length ? "\n" : ""}${n(r.total, "finding")} from ${n(r.notes.reviewed, "note")} in ${n(r.batches.done, "batch")}${tail}`);
  if (r.dropped) console.log(`(${n(r.dropped, "finding")} dropped: an unknown kind, or a page the model was not shown)`);
}

/** `lettuce lint <vault> --semantic [--path P] [--max-batches N] [--json]`: every batch (or N), with progress. */
export async function lintSemanticCli(dir: string, opts: { json: boolean; path?: string; maxBatches?: string }): Promise<number> {
  const scope = opts.path === undefined ? "" : normalizeVaultPath(opts.path, { allowRoot: true });
  const maxBatches = opts.maxBatches === undefined ? Infinity : intOption(opts.maxBatches, "max-batches", 0);
  const vault = await openIndexed(dir, opts.json);
  return closing(vault, async () => {
    const chat = await SemanticService.for(vault).chat();
    const progress = reviewProgress(opts.json);
    let r: SemanticLintReport;
    try {
      r = await lintSemantic(vault, chat, { scope, maxBatches, limit: Number.MAX_SAFE_INTEGER, onProgress: progress.update });
    } finally {
      progress.stop();
    }
    if (opts.json) console.log(JSON.stringify(r));
    else printFindings(r);
    return 0;
  });
}
