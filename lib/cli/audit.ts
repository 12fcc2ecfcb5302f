// `lettuce audit` prints the audit log (every agent tool call), newest first.
import { pruneAudit, queryAudit, retentionDays, type AuditEntry } from "../audit/log";
import { openStateDb } from "../store/state-db";
import { checkVaultDir } from "../vault-dir";
import { ToolError } from "../errors";
import { intOption, parse, UsageError, type Command } from "./command";
import { shownInTerminal } from "../control-chars";
import { parseIsoTime } from "../iso-time";

/** --since: an ISO 8601 time, or a span back from now ("30m", "12h", "7d", "2w"). */
export function sinceOption(v: string | undefined, now = Date.now()): string | undefined {
  if (v === undefined) return undefined;
  const span = /^(\d+)\s*(m|h|d|w)$/.exec(v.trim());
  if (span) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[span[2] as "m" | "h" | "d" | "w"];
    const at = now - Number(span[1]) * unit;
    // Past what a date can hold (8.64e15 ms): "lettuce: Invalid Date" was all it said.
    if (!(Math.abs(at) <= 8.64e15)) throw new UsageError(`--since ${v} reaches back further than a date can`);
    return new Date(at).toISOString();
  }
  if (parseIsoTime(v) === null) throw new UsageError(`--since needs an ISO 8601 time or a span like 7d, 12h, 30m; got ${JSON.stringify(v)}`);
  return v;
}

function describe(e: AuditEntry): string {
  const time = e.createdAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const status = e.status === "success" ? "ok" : `error ${e.errorKind ?? ""}`.trim();
  const target = e.targetId ? `${e.targetType ?? "?"} ${e.targetId}` : "-";
  const t = shownInTerminal;
  return `${time}\t${t(e.tool)}\t${status}\t${t(target)}\tby ${t(e.agentName ?? "an unnamed agent")} (token ${t(e.tokenName)})`;
}

export const auditCommand: Command = {
  name: "audit",
  summary: "Show the audit log (every agent tool call, newest first)",
  usage: [
    "lettuce audit <vault> [--tool NAME] [--since 7d|ISO-TIME] [--status success|error] [--limit 50] [--json]",
    "",
    "Every tools/call over HTTP or stdio: time, tool, status (and error kind), the path or id it",
    "named, the agent (client name or X-Lettuce-Agent) and the token. Arguments' content is never",
    "logged. Rows older than the vault's auditRetentionDays (default 90; `lettuce config <vault>",
    "auditRetentionDays N`) are pruned. A running server writes each call within a quarter second.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, {
      tool: { type: "string" },
      since: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("audit takes exactly one vault path");
    if (values.status !== undefined && values.status !== "success" && values.status !== "error") throw new UsageError("--status must be success or error");
    const root = checkVaultDir(positionals[0]);
    const db = openStateDb(root);
    try {
      pruneAudit(db);
      let entries: AuditEntry[];
      try {
        entries = queryAudit(db, { tool: values.tool, status: values.status as "success" | "error" | undefined, from: sinceOption(values.since), limit: intOption(values.limit, "limit", 50, 1) });
      } catch (e) {
        if (e instanceof ToolError) throw new UsageError(e.message);
        throw e;
      }
      if (values.json) console.log(JSON.stringify(entries));
      else if (!entries.length) console.log(`No tool calls recorded${values.tool ? ` for ${values.tool}` : ""}${values.since ? ` since ${values.since}` : ""} (kept ${retentionDays(db)} days).`);
      else for (const e of entries) console.log(describe(e));
      return 0;
    } finally {
      db.close();
    }
  },
};
