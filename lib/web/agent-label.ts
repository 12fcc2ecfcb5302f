// The label the person's own actions carry on the timeline, and how an agent's self-declared label is
// kept from passing for it.

/** How the person's own actions (web reverts) are labelled on the timeline. */
export const WEB_AGENT = "person (web UI)";
export const WEB_TOKEN = "web";

/** Case, spacing, punctuation and compatibility forms (fullwidth letters) do not make another label. */
const folded = (label: string) => label.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
const RESERVED = folded(WEB_AGENT);

/**
 * The agent label a caller with token `tokenName` declared, as the timeline records it. An agent may name
 * itself anything but the person: a write token that sent `person (web UI)` had its edits shown as the
 * person's own reverts. A claim is written out in one form, short and marked at its start, so that
 * cutting the label to length (mcp.ts keeps 100 characters of a client's name) cannot drop the mark.
 */
export function declaredAgent(label: string, tokenName: string): string {
  return folded(label) === RESERVED ? `${WEB_AGENT} [claimed by token ${tokenName}]` : label;
}
