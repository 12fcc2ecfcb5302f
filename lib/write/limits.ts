// Caps on what one write may do. Documented in docs/writes.md; each breach
// has its own error kind so an agent can tell what to change.

import { envNumber } from "../env-number";

/** Largest note a write may produce (bytes). LETTUCE_MAX_NOTE_BYTES overrides. */
export function maxNoteBytes(): number {
  return envNumber("LETTUCE_MAX_NOTE_BYTES", 2 * 1024 * 1024, { min: 1, max: 1024 ** 3, integer: true });
}

/** apply_edits: most {find, replace} pairs in one call (kind too-many-edits). */
export const MAX_EDITS_PER_CALL = 100;

/** file_page: most cited notes per page (more is an invalid-arguments error). */
export const MAX_CITATIONS = 100;

/** Pending proposals one token may have queued at once (kind too-many-proposals). */
export const MAX_PENDING_PROPOSALS = 200;

/** Longest unified diff kept with a proposal (the person reviews it); longer ones are cut with a note. */
export const MAX_DIFF_CHARS = 200_000;

/**
 * Longest diff an agent is sent (its proposal's receipt, list_my_proposals): an agent pays for
 * every byte, and a 1 MB note's proposal came back as a 210 KB receipt. And the most a page of
 * list_my_proposals carries in diffs before it ends early.
 */
export const AGENT_DIFF_CHARS = 8_000;

/**
 * Withdrawn proposals kept per token, newest first; a withdrawn one keeps only its first AGENT_DIFF_CHARS
 * of diff and no arguments. A propose token proposing 2 MiB notes and withdrawing them in a loop grew
 * state.db 2.4 MB a call, for good (the growth audit of 2026-12-05).
 */
export const MAX_WITHDRAWN_KEPT = 1_000;
export const AGENT_DIFF_PAGE_CHARS = 64_000;
