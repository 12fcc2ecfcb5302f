// `lettuce proposals`: the person's side of propose tokens: list, read the
// diff, approve (applied through the write path), reject.
import { ToolError } from "../errors";
import { VaultContext } from "../vault-context";
import {
  approveProposal,
  getProposal,
  listProposals,
  previewProposal,
  PROPOSAL_STATUSES,
  rejectProposal,
  type Proposal,
  type ProposalStatus,
} from "../write/proposals";
import { intOption, parse, UsageError, type Command } from "./command";
import { linesShownInTerminal, shownInTerminal } from "../control-chars";

function line(p: Proposal): string {
  const time = p.createdAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const decided = p.status === "pending" ? "" : `\t${p.status}${p.reason ? `: ${shownInTerminal(p.reason)}` : ""}`;
  // The summary names the paths an agent chose: shown escaped, so that no name can pass for another.
  return `#${p.id}\t${time}\t${p.tool}\t${shownInTerminal(p.summary)}\tby ${shownInTerminal(p.agent)} (token ${shownInTerminal(p.token)})${decided}`;
}

function idArg(v: string | undefined, sub: string): number {
  const id = intOption(v, "ID", 0);
  if (id < 1) throw new UsageError(`proposals ${sub} needs a proposal id (a number from proposals list)`);
  return id;
}

export const proposalsCommand: Command = {
  name: "proposals",
  summary: "Review what propose-only agents suggested: list, show (diff), approve, reject",
  usage: [
    "lettuce proposals list <vault> [--status pending|approved|rejected|withdrawn|all] [--json]",
    "lettuce proposals show <vault> ID [--json]",
    "lettuce proposals approve <vault> ID [--json]",
    "lettuce proposals reject <vault> ID [--reason TEXT]",
    "",
    "An agent with a propose token cannot change the vault; its write calls are queued here.",
    "show prints a unified diff of what approving would change now. approve applies it through the",
    "same safe write path as a write token (recorded in `lettuce edits`, revertable); a proposal",
    "whose note changed since it was made is refused as a conflict, never applied blindly.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals: pos } = parse(argv, { status: { type: "string" }, reason: { type: "string" }, json: { type: "boolean" } });
    // `proposals list <vault>` like `token create <vault>`; the older `proposals <vault> list` still works.
    const subs = ["list", "show", "approve", "reject"];
    const [sub, vaultArg, ...positionals] = subs.includes(pos[0] ?? "") ? pos : [pos[1], pos[0], ...pos.slice(2)];
    if (!sub || !subs.includes(sub)) throw new UsageError("proposals needs a subcommand: list, show, approve or reject");
    if (!vaultArg) throw new UsageError(`proposals ${sub} needs a vault path`);
    const status = values.status ?? "pending";
    if (status !== "all" && !PROPOSAL_STATUSES.includes(status as ProposalStatus)) throw new UsageError(`--status must be one of ${PROPOSAL_STATUSES.join(", ")} or all`);
    const vault = VaultContext.open(vaultArg);
    try {
      if (sub === "list") {
        const { items } = listProposals(vault.stateDb, { status: status === "all" ? undefined : (status as ProposalStatus), limit: 1000 });
        if (values.json) console.log(JSON.stringify(items.map(({ diff: _d, ...p }) => p)));
        else if (!items.length) console.log(status === "all" ? "No proposals." : `No ${status} proposals.`);
        else for (const p of items) console.log(line(p));
        return 0;
      }
      const id = idArg(positionals[0], sub);
      if (sub === "show") {
        const p = getProposal(vault.stateDb, id);
        if (!p) throw new ToolError("proposal-not-found", `No proposal ${id}`);
        let diff = p.diff;
        let note = "";
        if (p.status === "pending") {
          const now = await previewProposal(vault, p);
          if ("diff" in now) diff = now.diff;
          else note = `Approving now would fail (${now.error.kind}): ${now.error.message}\nThe diff below is what was proposed.`;
        }
        if (values.json) console.log(JSON.stringify({ ...p, diff, ...(note ? { stale: note } : {}) }));
        else {
          console.log(line(p));
          console.log(`arguments: ${JSON.stringify(p.args)}`);
          // An agent wrote this text: an escape sequence in it could redraw the diff a person approves.
          if (note) console.log(`\n${linesShownInTerminal(note)}`);
          console.log(`\n${linesShownInTerminal(diff)}`);
        }
        return 0;
      }
      if (sub === "approve") {
        const res = await approveProposal(vault, id, { reindex: false });
        if (values.json) console.log(JSON.stringify(res));
        else console.log(`Approved proposal #${id}${res.editId === null ? " (it changed nothing)" : `: applied as edit #${res.editId}`}${res.path ? `; ${res.path} now has hash ${res.hash}` : ""}.`);
        return 0;
      }
      const p = await rejectProposal(vault, id, values.reason ?? null);
      console.log(`Rejected proposal #${p.id}${p.reason ? ` (${p.reason})` : ""}.`);
      return 0;
    } finally {
      vault.close();
    }
  },
};
