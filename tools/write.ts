// The write tools. With a write token each call commits through the single
// write path (lib/write/service.ts); with a propose token the same call is
// validated the same way and queued as a proposal for a person to review.
import { z } from "zod";
import { contextGate } from "../lib/write/context-run";
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
  .describe("read_note's hash; conflict if the note changed since");

const singleLine = (what: string) => z.string().min(1).max(300).regex(/^[^\r\n]*$/, `${what} must be one line`);
const logOp = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, "op is one word: letters, digits, - or _ (e.g. ingest, compile, query, lint)");

const WRITES = "Returns {path, hash, editId}.";
const PROPOSES =
  "Queues a proposal for a person to approve (your token proposes): returns {proposalId, status, path, summary, diff}.";

// Every write tool takes the contextRunId prepare_context returned; the vault's contextMode decides what it is worth.
const contextRunId = z.string().max(200).optional().describe("From prepare_context");

async function run<A>(op: WriteOp<A>, { contextRunId: runId, ...rest }: A & { contextRunId?: string }, ctx: ToolContext) {
  const gate = contextGate(ctx.vault, ctx.token.name, runId);
  const args = rest as A; // the run id is no argument of the operation (nor of a stored proposal)
  const who = { agent: ctx.agent, token: ctx.token.name };
  const out = ctx.token.scope === "propose" ? await propose(ctx.vault, op, args, who) : await writeService(ctx.vault).execute(op, args, { tool: op.name, ...who });
  return gate.contextNotice ? { ...out, contextNotice: gate.contextNotice } : out;
}

interface WriteToolSpec<S extends z.ZodObject> {
  /** What the tool does; both descriptions (write and propose scope) are built around it. */
  what: string;
  /** For tool search (ToolDef.details). */
  details?: string;
  /** What a committed call returns, when it is not the usual {path, hash, editId}. */
  returns?: string;
  destructive: boolean;
  idempotent: boolean;
  input: S;
}

/**
 * A write tool: named after its operation (so a proposal's stored tool name
 * always finds its op again), open to propose and write tokens, and run
 * through run() for both.
 */
function writeTool<S extends z.ZodObject>(op: WriteOp<z.output<S>>, { what, details, returns = WRITES, destructive, idempotent, input }: WriteToolSpec<S>) {
  return defineTool({
    name: op.name,
    description: `${what} ${returns}`, // error kinds: docs/writes.md
    details,
    proposeDescription: `${PROPOSES} ${what}`,
    scopes: WRITE_SCOPES,
    annotations: { readOnlyHint: false, destructiveHint: destructive, idempotentHint: idempotent },
    input: input.extend({ contextRunId }),
    handler: (args, ctx) => run(op, args as z.output<S> & { contextRunId?: string }, ctx),
  });
}

export const writeNote = writeTool(writeNoteOp, {
  what: "Create a note or replace it whole (existing: overwrite or expectedHash).",
  details: "Create a note, or replace one whole. Replacing an existing note needs overwrite: true or its expectedHash (safer: fails if it changed since you read it). A CRLF note keeps CRLF. Prefer apply_edits or patch_section for changes to part of a note. Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: already-exists, conflict, immutable-path, path-invalid, not-a-note, too-large. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; content: The whole note, frontmatter included; overwrite: Replace the note if it exists (default false); expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: true,
  idempotent: true,
  input: z.object({
    path: notePathField,
    content: z.string().describe("The whole note, frontmatter included"),
    overwrite: z.boolean().default(false),
    expectedHash,
  }),
});

export const applyEdits = writeTool(applyEditsOp, {
  what: "Find/replace edits on one note; each find must match once, or nothing is written.",
  details: "Surgical find/replace on one note. Edits apply in order; each find must occur exactly once in the text as the previous edits left it, or nothing is written and the error (kind edit-no-match or edit-ambiguous, data {edit, matches}) says which edit failed. At most 100 edits a call (kind too-many-edits). Frontmatter and line endings you do not touch keep their bytes. Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: path-invalid, note-not-found, conflict, immutable-path, too-large. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; edits: The edits, applied in order; expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: true,
  idempotent: false,
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
      // Past MAX_EDITS_PER_CALL the call answers too-many-edits, as the spec says; this bound only keeps a
      // list of thousands from being validated item by item.
      .max(10 * MAX_EDITS_PER_CALL)
      .describe("Applied in order"),
    expectedHash,
  }),
});

export const patchSection = writeTool(patchSectionOp, {
  what: "Replace, append to or prepend to the body under one heading.",
  details: "Replace, append to or prepend to the body under one heading: the lines up to the next heading of the same or a higher level (sub-headings are part of the section). Name the heading by its title or by its id from read_outline. append/prepend keep lists and tables continuous and put a blank line between paragraphs. Frontmatter is untouched. Errors also: heading-not-found (data lists the headings), heading-ambiguous (pass the id). Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: path-invalid, note-not-found, conflict, immutable-path, too-large. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; heading: Heading title (\"Design rules\") or id (\"design-rules\"); mode: replace the section body, or add to its end or start; content: Markdown to put in the section; expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: true,
  idempotent: false,
  input: z.object({
    path: notePathField,
    heading: z.string().min(1).describe("Title or read_outline id"),
    mode: z.enum(["replace", "append", "prepend"]),
    content: z.string(),
    expectedHash,
  }),
});

export const filePage = writeTool(filePageOp, {
  what: "Bank an answer as a new page linking its cited notes, with a log.md entry.",
  details: "Bank an answer as a new page: frontmatter (title, tags), the content, a Sources section linking every cited note as a [[wikilink]], and a `## [YYYY-MM-DD] op | Title` entry appended to log.md. Citations may be paths, names, aliases or [[links]]; each must name an existing note. Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: already-exists, note-not-found (data.citation says which), path-invalid, too-large. Parameters: path: Where the new page goes, e.g. \"Concepts/Soft locks.md\"; title: The page title; content: The page body in Markdown (an H1 is added unless it starts with one); citations: The notes the answer rests on; tags: Tags for the page's frontmatter; op: The log.md op (default \"query\"); contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: false,
  idempotent: false,
  input: z.object({
    path: notePathField,
    title: singleLine("title"),
    content: z.string(),
    citations: z.array(z.string().min(1)).min(1).max(MAX_CITATIONS).describe("Notes it rests on"),
    tags: z.array(z.string().min(1).max(200)).max(100).optional(),
    op: logOp.default("query"),
  }),
});

export const appendLog = writeTool(appendLogOp, {
  what: "Append a ## [date] op | Title entry to log.md.",
  details: "Append an entry to the vault's log.md ledger: a `## [YYYY-MM-DD] op | Title` heading (newest at the bottom) and an optional body. Creates log.md if the vault has none. Use it after each ingest, compile, query or lint pass. Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: immutable-path, too-large. Parameters: op: What kind of work: ingest, compile, query, lint, …; title: What it was about; body: Details in Markdown; [[wikilinks]] welcome; date: YYYY-MM-DD; default today on the server's calendar; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: false,
  idempotent: false,
  input: z.object({
    op: logOp.describe("ingest, compile, query, lint, …"),
    title: singleLine("title"),
    body: z.string().optional(),
    date: z.iso
      .date("date is a real calendar day, YYYY-MM-DD")
      .optional()
      .describe("YYYY-MM-DD (default today)"),
  }),
});

export const moveNote = writeTool(moveNoteOp, {
  what: "Rename or move a note and rewrite every link to it.",
  returns: "Returns {path, hash, editId, from, linksUpdated, notesUpdated}.",
  details: "Rename or move a note, and rewrite every [[wikilink]] and Markdown link to it in other notes (keeping #heading, ^block and |alias parts, and each link's style) and the note's own relative links. Links in immutable notes are left and listed in notesNotUpdated. Returns {path (the new one), hash, editId, from, linksUpdated, notesUpdated}. Errors: already-exists, note-not-found, conflict, immutable-path (the source), path-invalid. Parameters: from: The note to move; to: Its new vault-relative path, e.g. \"Archive/Old plan.md\"; updateLinks: Rewrite links that point to it (default true); expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: false,
  idempotent: false,
  input: z.object({
    from: notePathField,
    to: notePathField,
    updateLinks: z.boolean().default(true),
    expectedHash,
  }),
});

export const deleteNote = writeTool(deleteNoteOp, {
  what: "Move a note to .trash/ (revertable).",
  returns: "Returns {editId, trashPath, brokenBacklinks}.",
  details: "Delete a note by moving it to .trash/ (restorable, and revertable from the timeline). Result: {path: null, hash: null, editId, trashPath, brokenBacklinks} — brokenBacklinks are the notes whose links to it now dangle; editId is its agent-edits timeline entry. Errors: note-not-found, conflict, immutable-path, path-invalid. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: true,
  idempotent: false,
  input: z.object({ path: notePathField, expectedHash }),
});

export const completeDirective = writeTool(completeDirectiveOp, {
  what: "Mark a > [!ai] directive done, with an optional answer.",
  details: "Mark a > [!ai] directive done: flips the callout on `line` (1-based, as pending_directives reports it) to > [!ai-done], optionally adding your answer to the callout, and releases your lease on it. Errors also: not-a-directive (that line holds no open directive: re-read pending_directives), directive-done. Returns {path, hash, editId, …}: the note's new content hash (pass it as expectedHash next time) and the agent-edits timeline id. Errors: path-invalid, note-not-found, conflict, immutable-path, too-large. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; line: The directive's line, 1-based, from pending_directives; answer: Your answer, added inside the callout; expectedHash: The `hash` read_note returned. If the note has changed since, nothing is written and the call fails with kind conflict; contextRunId: The contextRunId from prepare_context (needed when the vault's contextMode is strict).",
  destructive: false,
  idempotent: true,
  input: z.object({
    path: notePathField,
    line: z.number().int().min(1).describe("From pending_directives"),
    answer: z.string().optional().describe("Added inside the callout"),
    expectedHash,
  }),
});

export const writeTools = [writeNote, applyEdits, patchSection, filePage, appendLog, moveNote, deleteNote, completeDirective];
