// Notes: the folder tree (loaded a folder at a time), a note rendered with
// its frontmatter, tags, outline, backlinks and outgoing links, and tag pages.
import { get } from "../api";
import { append, clear, h, noteUrl, when } from "../dom";
import type { NoteSummary, Page, PageContext } from "../types";

interface TreeAnswer {
  folder: string;
  folders: string[];
  notes: { items: NoteSummary[]; total: number; limit: number; offset: number };
}

const treeCache = new Map<string, Promise<TreeAnswer>>();
const expanded = new Set<string>(JSON.parse(sessionStorage.getItem("lettuce-tree") ?? "[]"));
const saveExpanded = () => sessionStorage.setItem("lettuce-tree", JSON.stringify([...expanded]));

function loadFolder(folder: string, offset = 0): Promise<TreeAnswer> {
  const key = `${folder}\0${offset}`;
  let p = treeCache.get(key);
  if (!p) {
    p = get<TreeAnswer>("/api/tree", { folder, offset, limit: 200 });
    treeCache.set(key, p);
    p.catch(() => treeCache.delete(key));
  }
  return p;
}

function folderItem(path: string, active: string | null): HTMLElement {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const kids = h("ul", { role: "group" });
  const open = expanded.has(path) || (active !== null && active.startsWith(path + "/"));
  const btn = h("button", { class: "folder", "aria-expanded": String(open), title: path }, name);
  const li = h("li", { role: "treeitem" }, btn, kids);
  let loaded = false;
  const show = async (on: boolean) => {
    btn.setAttribute("aria-expanded", String(on));
    kids.hidden = !on;
    if (on) expanded.add(path);
    else expanded.delete(path);
    saveExpanded();
    if (on && !loaded) {
      loaded = true;
      await fillFolder(kids, path, active, 0);
    }
  };
  btn.addEventListener("click", () => void show(btn.getAttribute("aria-expanded") !== "true"));
  kids.hidden = !open;
  if (open) void show(true);
  return li;
}

async function fillFolder(list: HTMLElement, folder: string, active: string | null, offset: number): Promise<void> {
  const t = await loadFolder(folder, offset);
  if (offset === 0) append(list, t.folders.map((f) => folderItem(f, active)));
  append(
    list,
    t.notes.items.map((n) =>
      h("li", { role: "treeitem" }, h("a", { href: noteUrl(n.path), class: "note-link", "aria-current": n.path === active ? "page" : null, title: n.path }, n.title || n.name)),
    ),
  );
  const next = offset + t.notes.items.length;
  if (next < t.notes.total) {
    const more: HTMLElement = h("li", null, h("button", { class: "more", onclick: () => { more.remove(); void fillFolder(list, folder, active, next); } }, `${t.notes.total - next} more notes…`));
    list.appendChild(more);
  }
}

export function folderTree(active: string | null): HTMLElement {
  const root = h("ul", { role: "tree", "aria-label": "Folders and notes" });
  void fillFolder(root, "", active, 0);
  return h("nav", { class: "tree", "aria-label": "Vault" }, h("div", { class: "tree-head" }, h("a", { href: "/" }, "Vault"), h("a", { href: "/tags", class: "small" }, "Tags")), root);
}

// The tree stays on screen while the person moves between notes (rebuilding it
// for every note cost more than the note): only the current mark moves.
let tree: HTMLElement | null = null;

/** Drop cached folder listings after notes appear or vanish. */
export function forgetTree(): void {
  treeCache.clear();
  tree = null;
}

function markActive(el: HTMLElement, active: string | null): void {
  for (const a of el.querySelectorAll("a[aria-current]")) a.removeAttribute("aria-current");
  if (active) el.querySelector(`a.note-link[href="${CSS.escape(noteUrl(active))}"]`)?.setAttribute("aria-current", "page");
}

function layout(ctx: PageContext, active: string | null, content: HTMLElement, aside?: HTMLElement): void {
  const shown = ctx.main.querySelector(":scope > .notes-layout");
  if (shown && tree && shown.firstElementChild === tree) {
    shown.replaceChildren(tree, content, ...(aside ? [aside] : []));
    markActive(tree, active);
    return;
  }
  tree = folderTree(active);
  clear(ctx.main, h("div", { class: "notes-layout" }, tree, content, aside ?? null));
}

type OutLink = { target: string; displayText: string | null; heading?: string | null; resolvedPath: string | null; embed: boolean; line: number };

/** What a person reads for a link: its own text, else its target; an embed's "|300" is a size, and [[#Heading]] is a place in this note. */
function linkLabel(l: OutLink): string {
  const shown = l.displayText?.trim();
  if (shown && !(l.embed && /^\d+(x\d+)?$/.test(shown))) return shown;
  if (l.target) return l.heading ? `${l.target} › ${l.heading}` : l.target;
  return l.heading ? `#${l.heading} (this note)` : "(this note)";
}

/** A link to a heading of this note jumps to it (the page's heading ids are h-<slug>). */
function headingAnchor(headings: { id: string; title: string }[], l: OutLink): string {
  if (l.target || !l.heading) return "";
  const want = l.heading.toLowerCase();
  const hd = headings.find((x) => x.title.toLowerCase() === want);
  return hd ? `#h-${hd.id}` : "";
}

/** One entry per place a note links to: the same target as a link and as an embed shows once. */
function distinctLinks(items: OutLink[]): OutLink[] {
  const seen = new Set<string>();
  return items.filter((l) => {
    const key = `${l.resolvedPath ?? l.target}\u0000${l.heading ?? ""}\u0000${linkLabel(l)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function homePage(ctx: PageContext): Promise<Page> {
  const content = h("section", { class: "note-pane" });
  layout(ctx, null, content);
  const draw = async () => {
    const recent = await get<{ items: NoteSummary[]; total: number }>("/api/recent", { limit: 30 });
    if (ctx.stale()) return;
    clear(
      content,
      h("h1", null, ctx.session.vault.name),
      h("p", { class: "muted" }, `${recent.total} notes. Recently changed:`),
      h(
        "ul",
        { class: "plain-list" },
        recent.items.map((n) => h("li", null, h("a", { href: noteUrl(n.path) }, n.title || n.name), " ", h("span", { class: "muted small" }, `${n.path} · ${when(n.modified)}`))),
      ),
    );
  };
  await draw();
  return {
    onEvent(e) {
      if (e.kind === "index") {
        forgetTree();
        void draw();
      }
    },
  };
}

interface NoteAnswer {
  path: string;
  title: string;
  tags: string[];
  aliases: string[];
  frontmatter: Record<string, unknown>;
  html: string;
  hash: string;
  size: number;
  modified: string;
  headings: { level: number; title: string; id: string }[];
  outgoing: { items: OutLink[]; total: number };
  backlinks: { items: { sourcePath: string; sourceName: string; displayText: string | null; line: number }[]; total: number };
}

function fmValue(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(fmValue).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function frontmatterTable(fm: Record<string, unknown>): HTMLElement | null {
  const keys = Object.keys(fm);
  if (!keys.length) return null;
  return h(
    "details",
    { class: "frontmatter", open: true },
    h("summary", null, "Properties"),
    h("table", null, h("tbody", null, keys.map((k) => h("tr", null, h("th", { scope: "row" }, k), h("td", null, fmValue(fm[k])))))),
  );
}

function notePath(url: URL): string {
  return url.pathname
    .slice("/notes/".length)
    .split("/")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    })
    .join("/");
}

/** The backlinks past the first page, a page at a time. */
function moreLinks(path: string, shown: number, total: number): HTMLElement {
  const box = h("div");
  const btn = h("button", { class: "more" }, `${total - shown} more`);
  btn.addEventListener("click", async () => {
    const r = await get<{ items: { sourcePath: string; sourceName: string; line: number }[]; total: number }>("/api/links", { path, dir: "in", offset: shown, limit: 200 });
    box.replaceWith(
      h("ul", null, r.items.map((b) => h("li", null, h("a", { href: noteUrl(b.sourcePath) }, b.sourceName), h("span", { class: "muted small" }, ` line ${b.line}`)))),
      shown + r.items.length < r.total ? moreLinks(path, shown + r.items.length, r.total) : "",
    );
  });
  box.appendChild(btn);
  return box;
}

export async function notePage(ctx: PageContext): Promise<Page> {
  const path = notePath(ctx.url);
  const content = h("article", { class: "note-pane", "aria-live": "polite" });
  const aside = h("aside", { class: "note-aside", "aria-label": "Links and tags" });
  layout(ctx, path, content, aside);
  const draw = async (keepScroll: boolean) => {
    const y = ctx.main.scrollTop;
    let n: NoteAnswer;
    try {
      n = await get<NoteAnswer>("/api/note", { path });
    } catch (e) {
      clear(content, h("div", { class: "error-box", role: "alert" }, h("h1", null, path), h("p", null, (e as Error).message)));
      clear(aside);
      return;
    }
    if (ctx.stale()) return;
    document.title = `${n.title} — Lettuce`;
    const body = h("div", { class: "markdown", "data-path": n.path });
    // The server rendered this with marked and sanitised it with sanitize-html; the page's CSP forbids inline script.
    body.innerHTML = n.html;
    clear(
      content,
      h(
        "header",
        { class: "note-head" },
        h("div", { class: "crumbs muted small" }, n.path),
        h("h1", { class: "note-title" }, n.title),
        h(
          "div",
          { class: "note-meta small muted" },
          `Modified ${when(n.modified)} · ${n.size.toLocaleString()} bytes · `,
          h("a", { href: `/graph?center=${encodeURIComponent(n.path)}&depth=1` }, "Local graph"),
          " · ",
          h("a", { href: `/timeline?path=${encodeURIComponent(n.path)}` }, "Agent edits"),
        ),
        n.tags.length ? h("div", { class: "tags" }, n.tags.map((t) => h("a", { class: "tag", href: `/tags/${encodeURIComponent(t)}` }, `#${t}`))) : null,
      ),
      frontmatterTable(n.frontmatter),
      body,
    );
    clear(
      aside,
      n.headings.length > 1
        ? h("section", null, h("h2", null, "Outline"), h("ul", { class: "outline" }, n.headings.map((hd) => h("li", { class: `lvl${hd.level}` }, h("a", { href: `#h-${hd.id}` }, hd.title)))))
        : null,
      h(
        "section",
        { class: "backlinks" },
        h("h2", null, `Backlinks (${n.backlinks.total})`),
        n.backlinks.items.length
          ? h("ul", null, n.backlinks.items.map((b) => h("li", null, h("a", { href: noteUrl(b.sourcePath) }, b.sourceName), h("span", { class: "muted small" }, ` line ${b.line}`))))
          : h("p", { class: "muted small" }, "No note links here."),
        n.backlinks.total > n.backlinks.items.length ? moreLinks(n.path, n.backlinks.items.length, n.backlinks.total) : null,
      ),
      h(
        "section",
        { class: "outgoing" },
        h("h2", null, `Outgoing links (${n.outgoing.total})`),
        n.outgoing.items.length
          ? h(
              "ul",
              null,
              distinctLinks(n.outgoing.items).map((l) =>
                h(
                  "li",
                  null,
                  l.resolvedPath
                    ? h("a", { href: l.resolvedPath.endsWith(".md") ? noteUrl(l.resolvedPath) + headingAnchor(n.headings, l) : `/api/file?path=${encodeURIComponent(l.resolvedPath)}` }, linkLabel(l))
                    : h("span", { class: "unresolved", title: "No such note" }, linkLabel(l)),
                ),
              ),
            )
          : h("p", { class: "muted small" }, "None."),
      ),
    );
    if (keepScroll) ctx.main.scrollTop = y;
    else if (ctx.url.hash) document.getElementById(ctx.url.hash.slice(1))?.scrollIntoView();
  };
  await draw(false);
  return {
    onEvent(e) {
      if (e.kind !== "index") return;
      if (e.data.changed.length || e.data.deleted.length) forgetTree();
      if (e.data.more || e.data.changed.includes(path) || e.data.deleted.includes(path)) void draw(true);
    },
  };
}

export async function tagsPage(ctx: PageContext): Promise<Page> {
  const content = h("section", { class: "note-pane" });
  layout(ctx, null, content);
  const cloud = h("div", { class: "tag-cloud" });
  const more = h("div");
  const loadPage = async (offset: number) => {
    const t = await get<{ items: { tag: string; count: number }[]; total: number }>("/api/tags", { limit: 300, offset });
    if (offset === 0) content.insertBefore(h("h1", null, `Tags (${t.total})`), cloud);
    append(cloud, t.items.map((x) => h("a", { class: "tag", href: `/tags/${encodeURIComponent(x.tag)}` }, `#${x.tag}`, h("span", { class: "count" }, String(x.count)))));
    const next = offset + t.items.length;
    clear(more, next < t.total ? h("button", { class: "more", onclick: () => void loadPage(next) }, `${t.total - next} more tags`) : null);
  };
  clear(content, cloud, more);
  await loadPage(0);
  return {};
}

export async function tagPage(ctx: PageContext): Promise<Page> {
  const tag = decodeURIComponent(ctx.url.pathname.slice("/tags/".length));
  const content = h("section", { class: "note-pane" });
  layout(ctx, null, content);
  const list = h("ul", { class: "plain-list" });
  const more = h("div");
  const loadPage = async (offset: number) => {
    const r = await get<{ items: NoteSummary[]; total: number }>("/api/tag", { tag, offset, limit: 100 });
    append(list, r.items.map((n) => h("li", null, h("a", { href: noteUrl(n.path) }, n.title || n.name), " ", h("span", { class: "muted small" }, n.path))));
    clear(more, offset + r.items.length < r.total ? h("button", { class: "more", onclick: () => void loadPage(offset + r.items.length) }, "More") : null);
    return r.total;
  };
  clear(content, h("h1", null, `#${tag}`), list, more);
  const total = await loadPage(0);
  content.insertBefore(h("p", { class: "muted" }, `${total} notes`), list);
  return {};
}
