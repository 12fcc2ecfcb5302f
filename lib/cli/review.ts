// `lettuce review <vault> PATH`: a person marks a note reviewed at its exact
// current content (the review is bound to the content hash, so any later
// change makes the note unreviewed again); --remove takes it back; with no
// PATH, the reviews are listed with whether each still holds.
import { readFileSync, statSync } from "node:fs";
import { osUserName } from "../platform/user";
import { ToolError } from "../errors";
import { contentHash } from "../index/parse-job";
import { listReviews, removeReview, setReview } from "../store/reviews";
import { openStateDb } from "../store/state-db";
import { checkVaultDir } from "../vault-dir";
import { isIgnoredPath, normalizeVaultPath, safeAbsPath } from "../vault/paths";
import { parse, UsageError, type Command } from "./command";

function reviewer(by: string | undefined): string {
  if (by !== undefined) {
    const name = by.trim();
    if (!name || name.length > 100 || /[\r\n]/.test(name)) throw new UsageError("--by needs a name (one line, up to 100 characters)");
    return name;
  }
  return process.env.LETTUCE_REVIEWER?.trim() || osUserName();
}

/** The note a PATH argument names (".md" added when missing), checked like an agent's path. */
function notePath(root: string, input: string): string {
  let rel: string;
  try {
    rel = normalizeVaultPath(input);
    if (isIgnoredPath(rel)) throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(input)}: hidden files are not notes`);
    safeAbsPath(root, rel);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return /\.md$/i.test(rel) ? rel : rel + ".md";
}

function currentHash(root: string, rel: string): string | null {
  try {
    const abs = safeAbsPath(root, rel);
    return statSync(abs).isFile() ? contentHash(readFileSync(abs)) : null;
  } catch {
    return null;
  }
}

export const reviewCommand: Command = {
  name: "review",
  summary: "Mark a note human-reviewed at its current content (or list reviews)",
  usage: [
    "lettuce review <vault> PATH [--by NAME] [--json]   review the note as it is now",
    "lettuce review <vault> PATH --remove               take the review back",
    "lettuce review <vault> [--json]                    list reviews and whether each still holds",
    "",
    "A review binds to the note's exact content: any later change (by anyone) makes the note",
    "unreviewed again until it is reviewed anew. prepare_context labels reviewed notes",
    "human-reviewed and prefers them. A frontmatter claim (reviewed_by: …) is only",
    "external-human-asserted. The reviewer defaults to $LETTUCE_REVIEWER or your user name.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { remove: { type: "boolean" }, by: { type: "string" }, json: { type: "boolean" } });
    if (positionals.length < 1 || positionals.length > 2) throw new UsageError("review takes a vault and at most one note path");
    const root = checkVaultDir(positionals[0]);
    const db = openStateDb(root);
    try {
      if (positionals.length === 1) {
        if (values.remove || values.by !== undefined) throw new UsageError("--remove and --by need a note PATH");
        const list = listReviews(db).map((r) => ({ ...r, current: currentHash(root, r.path) === r.hash }));
        if (values.json) console.log(JSON.stringify(list));
        else if (!list.length) console.log("No reviews yet.");
        else for (const r of list) console.log(`${r.path}\t${r.current ? "reviewed" : "changed since review"}\tby ${r.reviewer}\t${r.reviewedAt}`);
        return 0;
      }
      const rel = notePath(root, positionals[1]!);
      if (values.remove) {
        if (values.by !== undefined) throw new UsageError("--by makes no sense with --remove");
        const removed = removeReview(db, rel);
        if (values.json) console.log(JSON.stringify({ path: rel, removed }));
        else console.log(removed ? `Review of ${rel} removed.` : `${rel} had no review.`);
        return 0;
      }
      const hash = currentHash(root, rel);
      if (hash === null) throw new ToolError("note-not-found", `Note not found: ${rel}`);
      const review = setReview(db, rel, hash, reviewer(values.by));
      if (values.json) console.log(JSON.stringify(review));
      else console.log(`Reviewed ${rel} at ${hash.slice(0, 12)} by ${review.reviewer}. Any change to the note makes it unreviewed again.`);
      return 0;
    } finally {
      db.close();
    }
  },
};
