// The context-first gate in front of every write tool (vault setting
// contextMode): off — nothing checked; smart — a write without a live
// contextRunId goes through and its result recommends prepare_context;
// strict — such a write is refused with kind context-required (data.reason:
// missing, unknown or expired), before anything is planned or queued.
import { ToolError } from "../errors";
import { checkContextRun, contextMode } from "../store/context-runs";
import type { VaultContext } from "../vault-context";

export interface ContextGate {
  /** Set in smart mode when the write had no live run: what the agent should do next time. */
  contextNotice?: string;
}

const WHY = {
  missing: "no contextRunId was passed",
  unknown: "the contextRunId is not one prepare_context gave this token",
  expired: "the contextRunId has expired (runs last 30 minutes)",
} as const;

export function contextGate(vault: VaultContext, token: string, runId: string | undefined): ContextGate {
  const mode = contextMode(vault.stateDb);
  if (mode === "off") return {};
  const check = checkContextRun(vault, token, runId);
  if (check.ok) return {};
  if (mode === "strict") {
    throw new ToolError(
      "context-required",
      `This vault is in strict context mode and ${WHY[check.reason]}: call prepare_context for the task first and pass its contextRunId to the write.`,
      { reason: check.reason, contextMode: "strict" },
    );
  }
  return { contextNotice: `Written, but ${WHY[check.reason]}. This vault recommends calling prepare_context for the task before writing and passing its contextRunId.` };
}
