// Which words are tags, and how a tag is stored. Obsidian's rule (Tags.md): letters, digits, _ - / and
// emoji, with at least one character that is not a digit (#1984 is no tag).
import { withoutTrailing } from "../text-ends";

/** A tag this long is no tag (one "#tag" of 105,000 characters came back in every page of list_tags). */
export const MAX_TAG_CHARS = 200;

// Letters with their combining marks (#हिंदी, a decomposed #résumé), digits, _ - /, and emoji: a
// pictograph, joined to the next by U+200D (👩‍💻), followed by U+FE0F where it asks to be drawn as an
// emoji or by a skin tone (👍🏽), and flags (🇫🇷, two regional indicators).
const EMOJI = String.raw`\p{Extended_Pictographic}\p{Regional_Indicator}`;
const PART = String.raw`\p{L}\p{M}\p{N}_\-/${EMOJI}\p{Emoji_Modifier}\u200d\ufe0f`;
const NON_DIGIT = String.raw`\p{L}_\-/${EMOJI}`;
/** '#' after whitespace or line start, then the tag. */
export const TAG = new RegExp(String.raw`(?<=^|[\s])#([${PART}]*[${NON_DIGIT}][${PART}]*)`, "gu");
/** A tag at the start of the text (the web renderer's inline rule), and where the next one may start. */
export const TAG_AT_START = new RegExp(String.raw`^#([${PART}]*[${NON_DIGIT}][${PART}]*)`, "u");
export const TAG_START = new RegExp(String.raw`(^|\s)#[${PART}]*[${NON_DIGIT}]`, "u");

/**
 * An inline #word that is a CSS colour, prose and not a tag: 3, 4, 6 or 8 hex digits holding a digit
 * (#ff0000, #1e1e1e, #a1b2c3) or one letter repeated (#fff, #eee, #ffffff). Words spelt in hex letters
 * alone (#cafe, #face, #decade) are tags, as they are in Obsidian.
 */
export function isColour(tag: string): boolean {
  if (!/^(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(tag)) return false;
  return /\d/.test(tag) || /^(.)\1*$/i.test(tag);
}

/** A tag as stored and compared: no leading #, no trailing /, composed (NFC: #résumé typed either way is one tag). */
export function normalizeTag(raw: string): string {
  return withoutTrailing(raw.replace(/^#+/, ""), "/").normalize("NFC");
}

/** A note's tags, first spelling kept, compared without case. Frontmatter tags are never taken for colours: they were written as tags. */
export class TagSet {
  private readonly byKey = new Map<string, string>();
  add(raw: string, inline: boolean): void {
    const tag = normalizeTag(raw);
    if (!tag || tag.length > MAX_TAG_CHARS || /^[\d/]+$/.test(tag) || (inline && isColour(tag))) return;
    const key = tag.toLowerCase();
    if (!this.byKey.has(key)) this.byKey.set(key, tag);
  }
  list(): string[] {
    return [...this.byKey.values()];
  }
}
