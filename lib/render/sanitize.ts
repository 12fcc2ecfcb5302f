// The allow-list a rendered note passes through (sanitize-html). A vault's
// Markdown may hold raw HTML written by anyone (a clipped web page, an agent):
// no script, no event handler, no javascript: or other odd URL scheme, no
// style, no frame or form survives. The page's Content-Security-Policy
// (lib/web/security.ts) is the second wall, but it lets any same-origin URL
// load as an image: so <img> is the one tag here that fetches by itself, and its
// src must be a vault file or an inline image (imageSrc below).
import type sanitizeHtml from "sanitize-html";

// Loaded on first use (~35 ms of every serve's start-up otherwise, and most never render a page).
let sanitizer: typeof sanitizeHtml | null = null;

// What the renderer makes for a vault image (note-html.ts fileHref): one encoded path, nothing after it.
const VAULT_IMAGE = /^\/api\/file\?path=[^&#\s]*$/;
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+[;,]/i;

/**
 * An image's src as the page may load it, or null. Any other same-origin URL is a GET the person's
 * browser sends with their session cookie on opening the note: `<img src="/api/events">` forty times
 * held open every connection Chromium allows per host, and the page's own calls waited 7-10 s.
 */
export function imageSrc(src: string | undefined): string | null {
  if (src === undefined) return null;
  const s = src.trim();
  return VAULT_IMAGE.test(s) || DATA_IMAGE.test(s) ? s : null;
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "code", "kbd", "samp", "var",
    "em", "strong", "b", "i", "u", "s", "del", "ins", "mark", "sub", "sup", "small", "abbr", "cite", "q",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption",
    "a", "img", "figure", "figcaption", "details", "summary", "div", "span", "input", "section",
  ],
  allowedAttributes: {
    a: ["href", "title", "class", "rel", "target", "id"],
    li: ["id"],
    section: ["class"],
    img: ["src", "alt", "title", "width", "height"],
    input: ["type", "checked", "disabled"],
    th: ["align", "colspan", "rowspan"],
    td: ["align", "colspan", "rowspan"],
    ol: ["start"],
    details: ["open", "class"],
    code: ["class"],
    div: ["class"],
    span: ["class", "id"],
    summary: ["class"],
    h1: ["id"], h2: ["id"], h3: ["id"], h4: ["id"], h5: ["id"], h6: ["id"],
  },
  allowedClasses: {
    a: ["wikilink", "unresolved", "tag", "external", "external-image", "attachment"],
    code: ["language-*"],
    div: ["callout", "callout-*", "embed", "embed-title", "embed-body", "math"],
    section: ["footnotes"],
    details: ["callout", "callout-*"],
    summary: ["callout-title"],
    span: ["unresolved", "block-id", "math"],
  },
  allowedSchemes: ["http", "https", "mailto"],
  // Images come from the vault (relative /api/file URLs) or inline data; never from another host.
  allowedSchemesByTag: { img: ["data"] },
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  transformTags: {
    img: (tagName, attribs) => {
      const out: sanitizeHtml.Attributes = { ...attribs };
      const src = imageSrc(attribs.src);
      if (src === null) delete out.src;
      else out.src = src;
      return { tagName, attribs: out };
    },
    // Only read-only checkboxes (task lists).
    input: (tagName, attribs) => (attribs.type === "checkbox" ? { tagName, attribs: { type: "checkbox", disabled: "", ...(attribs.checked !== undefined ? { checked: "" } : {}) } } : { tagName: "span", attribs: {} }),
    // Heading ids live under h- so that a note cannot take an id the page itself uses.
    ...Object.fromEntries(
      ["h1", "h2", "h3", "h4", "h5", "h6"].map((h) => [
        h,
        (tagName: string, attribs: sanitizeHtml.Attributes) => ({
          tagName,
          attribs: attribs.id ? { id: attribs.id.startsWith("h-") ? attribs.id : `h-${attribs.id}` } : {},
        }),
      ]),
    ),
    // Block anchors live under b- (a note's own <span id> cannot take an id the page uses).
    span: (tagName, attribs) => ({ tagName, attribs: attribs.id ? { ...attribs, id: attribs.id.startsWith("b-") ? attribs.id : `b-${attribs.id}` } : attribs }),
    // Footnote anchors (fn-…) are the only ids a link or list item keeps.
    li: (tagName, attribs) => ({ tagName, attribs: (attribs.id?.startsWith("fn-") ? { id: attribs.id } : {}) as sanitizeHtml.Attributes }),
    a: (tagName, attribs) => {
      // Links leaving the vault open in a new tab, without handing it this page.
      const out: sanitizeHtml.Attributes = { ...attribs };
      if (out.id !== undefined && !out.id.startsWith("fn-")) delete out.id;
      if (out.target) {
        out.target = "_blank";
        out.rel = "noopener noreferrer";
      }
      return { tagName, attribs: out };
    },
  },
};

export function sanitizeNoteHtml(html: string): string {
  sanitizer ??= require("sanitize-html") as typeof sanitizeHtml;
  return sanitizer(html, OPTIONS);
}
