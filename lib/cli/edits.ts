// `lettuce edits` lists the agent-edits timeline; `lettuce revert` undoes one call.
import { openStateDb } from "../store/state-db";
import { checkVaultDir, VaultContext } from "../vault-context";
import { listEdits, type EditRecord } from "../write/edits";
import { recoverAtStart } from "../write/recover";
import { revertEdit } from "../write/revert";
import { intOption, parse, UsageError, type Command } from "./command";
import { shownInTerminal } from "../control-chars";

function describeEdit(e: EditRecord): string {
  const where = e.action === "move" ? `${e.fromPath} -> ${e.path}` : e.action === "delete" ? `${e.path} -> ${e.trashPath}` : e.path;
  const hashes = e.action === "write" ? `  ${e.beforeHash?.slice(0, 8) ?? "(new)"} -> ${e.afterHash?.slice(0, 8)}` : "";
  const notes = [
    e.groupId !== e.id ? `part of #${e.groupId}` : "",
    e.reverts ? `reverts #${e.reverts}` : "",
    e.proposalId ? `proposal #${e.proposalId}` : "",
  ].filter(Boolean);
  const time = e.time.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const t = shownInTerminal;
  return `#${e.id}\t${time}\t${e.tool}\t${e.action} ${t(where)}${hashes}\tby ${t(e.agent ?? "")} (token ${t(e.token ?? "")})${notes.length ? `\t[${notes.join(", ")}]` : ""}`;
}

export const editsCommand: Command = {
  name: "edits",
  summary: "List the agent-edits timeline (what agents changed, newest first)",
  usage: [
    "lettuce edits <vault> [--path PATH] [--limit N] [--offset N] [--json]",
    "",
    "Every file change an agent made (and every revert or approved proposal), newest first:",
    "id, time, tool, what changed, agent label and token name. --path keeps the entries about",
    "one note (as source, destination or trashed note). Undo one with `lettuce revert <vault> ID`.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { path: { type: "string" }, limit: { type: "string" }, offset: { type: "string" }, json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("edits takes exactly one vault path");
    const root = checkVaultDir(positionals[0]);
    const db = openStateDb(root);
    try {
      recoverAtStart(root, db);
      const edits = listEdits(db, { path: values.path, limit: intOption(values.limit, "limit", 50, 1), offset: intOption(values.offset, "offset", 0) });
      if (values.json) console.log(JSON.stringify(edits));
      else if (!edits.length) console.log(values.path ? `No agent edits of ${values.path}.` : "No agent edits yet.");
      else for (const e of edits) console.log(describeEdit(e));
      return 0;
    } finally {
      db.close();
    }
  },
};

export const revertCommand: Command = {
  name: "revert",
  summary: "Undo one agent edit from the timeline",
  usage: [
    "lettuce revert <vault> ID [--force] [--json]",
    "",
    "Restores the before-state of every file the call with edit ID changed: text is put back, a",
    "moved note moves back, a deleted note returns from .trash/, a created note goes to .trash/.",
    "Refuses when a note changed since the edit (someone edited it after the agent), unless",
    "--force; the text it replaces is kept in the timeline, so the revert can be reverted too.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { force: { type: "boolean" }, json: { type: "boolean" } });
    if (positionals.length !== 2) throw new UsageError("revert takes a vault path and an edit id");
    const id = intOption(positionals[1], "ID", 0);
    if (id < 1) throw new UsageError(`revert needs an edit id (a number from lettuce edits), got ${JSON.stringify(positionals[1])}`);
    const vault = VaultContext.open(positionals[0]!);
    try {
      const res = await revertEdit(vault, id, { force: values.force, reindex: false });
      if (values.json) console.log(JSON.stringify(res));
      else console.log(`Reverted edit #${id}${res.reverted.length > 1 ? ` (${res.reverted.length} file changes)` : ""}: ${res.touched.join(", ")}. Recorded as edit #${res.editId}.`);
      return 0;
    } finally {
      vault.close();
    }
  },
};
