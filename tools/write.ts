// The write tools. With a write token each call commits through the single
// write path (lib/write/service.ts); with a propose token the same call is
// validated the same way and queued as a proposal for a person to review.
import { z } from "zod";
import { MAX_CITATIONS, MAX_EDITS_PER_CALL } from "../lib/write/limits";
import { appendLogOp, applyEditsOp, completeDirectiveOp, filePageOp, patchSectionOp, writeNoteOp } from "../lib/write/ops";
import { deleteNoteOp, moveNoteOp } from "../lib/write/ops-move";
import type { WriteOp } from "../lib/write/plan";
import { propose } from "../lib/write/proposals";
import { writeService } from "../lib/write/service";
import type { Scope } from "../lib/store/tokens";
import { defineTool, notePathField, type ToolContext } from "./types";

const WRITE_SCOPES: readonly Scope[] = ["propose", "write"];

const expectedHash = z
  .string()
  .min(1)
  .optional()
  .describe("The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict");

const singleLine = (what: string) => z.string().min(1).max(300).regex(/^[^\r\n]*$/, `${what} must be one line`);
const logOp = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, "op is one word: letters, digits, - or _ (e.g. ingest, compile, query, lint)");

const WRITES = "Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id.";
const PROPOSES =
  "Queues a proposal: with your propose token nothing in the vault changes; the call is validated as a write would be and returns {proposalId, status: \"pending\", path, summary, diff} for a person to approve or reject (see list_my_proposals).";
const COMMON_ERRORS = "Errors: path-invalid, note-not-found, conflict, immutable-path, too-large.";

const annotations = (destructive: boolean, idempotent: boolean) => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

function run<A>(op: WriteOp<A>, args: A, ctx: ToolContext) {
  const who = { agent: ctx.agent, token: ctx.token.name };
  if (ctx.token.scope === "propose") return propose(ctx.vault, op, args, who);
  return writeService(ctx.vault).execute(op, args, { tool: op.name, ...who });
}

/** Both descriptions of a write tool: what it does, then what the call returns for each scope. */
function describe(what: string, errors = COMMON_ERRORS) {
  return { description: `${what} ${WRITES} ${errors}`, proposeDescription: `${PROPOSES} ${what} ${errors}` };
}

export const writeNote = defineTool({
  name: "write_note",
  ...describe(
    "Create a note, or replace one whole. Replacing an existing note needs overwrite: true or its expectedHash (safer: fails if it changed since you read it). A CRLF note keeps CRLF. Prefer apply_edits or patch_section for changes to part of a note.",
    "Errors: already-exists, conflict, immutable-path, path-invalid, not-a-note, too-large.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(true, true),
  input: z.object({
    path: notePathField,
    content: z.string().describe("The whole note, frontmatter included"),
    overwrite: z.boolean().default(false).describe("Replace the note if it exists (default false)"),
    expectedHash,
  }),
  handler: (args, ctx) => run(writeNoteOp, args, ctx),
});

export const applyEdits = defineTool({
  name: "apply_edits",
  ...describe(
    `Surgical find/replace on one note. Edits apply in order; each find must occur exactly once in the text as the previous edits left it, or nothing is written and the error (kind edit-no-match or edit-ambiguous, data {edit, matches}) says which edit failed. At most ${MAX_EDITS_PER_CALL} edits a call (kind too-many-edits). Frontmatter and line endings you do not touch keep their bytes.`,
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(true, false),
  input: z.object({
    path: notePathField,
    edits: z
      .array(
        z.object({
          find: z.string().min(1).describe("Exact text to find (must occur exactly once)"),
          replace: z.string().describe("Text to put in its place"),
        }),
      )
      .min(1)
      .describe("The edits, applied in order"),
    expectedHash,
  }),
  handler: (args, ctx) => run(applyEditsOp, args, ctx),
});

export const patchSection = defineTool({
  name: "patch_section",
  ...describe(
    "Replace, append to or prepend to the body under one heading: the lines up to the next heading of the same or a higher level (sub-headings are part of the section). Name the heading by its title or by its id from read_outline. append/prepend keep lists and tables continuous and put a blank line between paragraphs. Frontmatter is untouched. Errors also: heading-not-found (data lists the headings), heading-ambiguous (pass the id).",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(true, false),
  input: z.object({
    path: notePathField,
    heading: z.string().min(1).describe('Heading title ("Design rules") or id ("design-rules")'),
    mode: z.enum(["replace", "append", "prepend"]).describe("replace the section body, or add to its end or start"),
    content: z.string().describe("Markdown to put in the section"),
    expectedHash,
  }),
  handler: (args, ctx) => run(patchSectionOp, args, ctx),
});

export const filePage = defineTool({
  name: "file_page",
  ...describe(
    "Bank an answer as a new page: frontmatter (title, tags), the content, a Sources section linking every cited note as a [[wikilink]], and a `## [YYYY-MM-DD] op | Title` entry appended to log.md. Citations may be paths, names, aliases or [[links]]; each must name an existing note.",
    "Errors: already-exists, note-not-found (data.citation says which), path-invalid, too-large.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(false, false),
  input: z.object({
    path: notePathField.describe('Where the new page goes, e.g. "Concepts/Soft locks.md"'),
    title: singleLine("title").describe("The page title"),
    content: z.string().describe("The page body in Markdown (an H1 is added unless it starts with one)"),
    citations: z.array(z.string().min(1)).min(1).max(MAX_CITATIONS).describe("The notes the answer rests on"),
    tags: z.array(z.string().min(1)).optional().describe("Tags for the page's frontmatter"),
    op: logOp.default("query").describe('The log.md op (default "query")'),
  }),
  handler: (args, ctx) => run(filePageOp, args, ctx),
});

export const appendLog = defineTool({
  name: "append_log",
  ...describe(
    "Append an entry to the vault's log.md ledger: a `## [YYYY-MM-DD] op | Title` heading (newest at the bottom) and an optional body. Creates log.md if the vault has none. Use it after each ingest, compile, query or lint pass.",
    "Errors: immutable-path, too-large.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(false, false),
  input: z.object({
    op: logOp.describe("What kind of work: ingest, compile, query, lint, …"),
    title: singleLine("title").describe("What it was about"),
    body: z.string().optional().describe("Details in Markdown; [[wikilinks]] welcome"),
    date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, "date is YYYY-MM-DD")
      .optional()
      .describe("YYYY-MM-DD; default today on the server's calendar"),
  }),
  handler: (args, ctx) => run(appendLogOp, args, ctx),
});

export const moveNote = defineTool({
  name: "move_note",
  ...describe(
    "Rename or move a note, and rewrite every [[wikilink]] and Markdown link to it in other notes (keeping #heading, ^block and |alias parts, and each link's style) and the note's own relative links. Links in immutable notes are left and listed in notesNotUpdated. Result adds {from, linksUpdated, notesUpdated}.",
    "Errors: already-exists, note-not-found, conflict, immutable-path (the source), path-invalid.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(false, false),
  input: z.object({
    from: notePathField.describe("The note to move"),
    to: notePathField.describe('Its new vault-relative path, e.g. "Archive/Old plan.md"'),
    updateLinks: z.boolean().default(true).describe("Rewrite links that point to it (default true)"),
    expectedHash,
  }),
  handler: (args, ctx) => run(moveNoteOp, args, ctx),
});

export const deleteNote = defineTool({
  name: "delete_note",
  ...describe(
    "Delete a note by moving it to .trash/ (restorable, and revertable from the timeline). Result: {path: null, hash: null, editId, trashPath, brokenBacklinks} — brokenBacklinks are the notes whose links to it now dangle.",
    "Errors: note-not-found, conflict, immutable-path, path-invalid.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(true, false),
  input: z.object({ path: notePathField, expectedHash }),
  handler: (args, ctx) => run(deleteNoteOp, args, ctx),
});

export const completeDirective = defineTool({
  name: "complete_directive",
  ...describe(
    "Mark a > [!ai] directive done: flips the callout on `line` (1-based, as pending_directives reports it) to > [!ai-done], optionally adding your answer to the callout, and releases your lease on it. Errors also: not-a-directive (that line holds no open directive: re-read pending_directives), directive-done.",
  ),
  scopes: WRITE_SCOPES,
  annotations: annotations(false, true),
  input: z.object({
    path: notePathField,
    line: z.number().int().min(1).describe("The directive's line, 1-based, from pending_directives"),
    answer: z.string().optional().describe("Your answer, added inside the callout"),
    expectedHash,
  }),
  handler: (args, ctx) => run(completeDirectiveOp, args, ctx),
});

export const writeTools = [writeNote, applyEdits, patchSection, filePage, appendLog, moveNote, deleteNote, completeDirective];
