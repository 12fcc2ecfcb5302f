// Text from agents and files reaches a person's terminal (lettuce edits, audit,
// lint, search): an escape sequence in an agent's name or a note's path could
// erase lines and print fake ones there, hiding what an agent did.

// C0 controls, DEL and C1 controls (ESC, CSI, OSC, BEL, CR, LF, TAB, …).
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
// Characters that show nothing, or reorder what follows: "notes/\u202egnitteem.md" prints as
// "notes/dm.meeting", and "AGENTS\u200b.md" as "AGENTS.md" (the Unicode audit of 2026-12-05). Left alone
// because real words use them: the joiners U+200C and U+200D (Persian, emoji sequences), the direction marks
// U+200E and U+200F (Hebrew and Arabic titles), U+180E (Mongolian) and U+034F.
export const DISGUISING = /[\u00ad\u200b\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const SHOWN_ESCAPED = new RegExp(`${CONTROLS.source}|${DISGUISING.source}`, "g");
// In running text (a diff, an answer) only the controls that reorder a line: a note's soft hyphens and
// right-to-left marks are its own, but an override can make a diff line read as something else.
const REORDERING = /[\u202a-\u202e\u2066-\u2069]/;
const LINE_ESCAPED = new RegExp(`${CONTROLS.source}|${REORDERING.source}`, "g");

/** A label we store (an agent's client name): controls dropped, spaces kept single. */
export function withoutControls(s: string): string {
  return s.replace(CONTROLS, " ").replace(/ {2,}/g, " ").trim();
}

/** Text of several lines (a diff, a note) printed for a person: its line breaks kept, every other control escaped. */
export function linesShownInTerminal(s: string): string {
  return s
    .split("\n")
    .map((line) => line.replace(LINE_ESCAPED, escaped))
    .join("\n");
}

/** A field printed for a person: each control or invisible character shown as an escape (\x1b, \n, \u{202e}), never sent raw. */
export function shownInTerminal(s: string): string {
  return s.replace(SHOWN_ESCAPED, escaped);
}

function escaped(c: string): string {
  const code = c.charCodeAt(0);
  if (code === 10) return "\\n";
  if (code === 9) return "\\t";
  if (code === 13) return "\\r";
  if (code > 0xff) return `\\u{${code.toString(16)}}`;
  return `\\x${code.toString(16).padStart(2, "0")}`;
}
