// Text from agents and files reaches a person's terminal (lettuce edits, audit,
// lint, search): an escape sequence in an agent's name or a note's path could
// erase lines and print fake ones there, hiding what an agent did.

// C0 controls, DEL and C1 controls (ESC, CSI, OSC, BEL, CR, LF, TAB, …).
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** A label we store (an agent's client name): controls dropped, spaces kept single. */
export function withoutControls(s: string): string {
  return s.replace(CONTROLS, " ").replace(/ {2,}/g, " ").trim();
}

/** Text of several lines (a diff, a note) printed for a person: its line breaks kept, every other control escaped. */
export function linesShownInTerminal(s: string): string {
  return s.split("\n").map(shownInTerminal).join("\n");
}

/** A field printed for a person: each control shown as an escape (\x1b, \n), never sent raw. */
export function shownInTerminal(s: string): string {
  return s.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    if (code === 10) return "\\n";
    if (code === 9) return "\\t";
    if (code === 13) return "\\r";
    return `\\x${code.toString(16).padStart(2, "0")}`;
  });
}
