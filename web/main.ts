// The web UI's shell: header, navigation, a small router over the History
// API, keyboard shortcuts, light/dark theme, and live updates from the server
// (Server-Sent Events). Pages live in web/pages/.
import "./style.css";
import { get, post, setCsrf } from "./api";
import { clear, debounce, h, toast } from "./dom";
import { graphPage } from "./pages/graph";
import { hygienePage } from "./pages/hygiene";
import { homePage, notePage, tagPage, tagsPage } from "./pages/notes";
import { proposalPage, proposalsPage } from "./pages/proposals";
import { searchPage } from "./pages/search";
import { settingsPage } from "./pages/settings";
import { timelinePage } from "./pages/timeline";
import { tokensPage } from "./pages/tokens";
import { workPage } from "./pages/work";
import type { LiveEvent, Page, PageContext, Session } from "./types";

let session: Session;
let current: Page | null = null;
let renderSeq = 0;
const main = h("main", { id: "main", tabindex: "-1" });
const searchBox = h("input", { type: "search", id: "global-search", placeholder: "Search notes  ( / )", "aria-label": "Search notes", autocomplete: "off" });
const badges: Record<string, HTMLElement> = {};

const NAV: { path: string; label: string; key: string; badge?: string }[] = [
  { path: "/", label: "Notes", key: "n" },
  { path: "/search", label: "Search", key: "s" },
  { path: "/graph", label: "Graph", key: "g" },
  { path: "/proposals", label: "Proposals", key: "p", badge: "proposals" },
  { path: "/timeline", label: "Timeline", key: "t" },
  { path: "/work", label: "Work", key: "w", badge: "directives" },
  { path: "/hygiene", label: "Health", key: "h" },
  { path: "/tokens", label: "Tokens", key: "k" },
  { path: "/settings", label: "Settings", key: "," },
];

function route(url: URL): { page: (ctx: PageContext) => Promise<Page | void>; section: string } {
  const p = url.pathname;
  if (p.startsWith("/notes/")) return { page: notePage, section: "/" };
  if (p === "/tags") return { page: tagsPage, section: "/" };
  if (p.startsWith("/tags/")) return { page: tagPage, section: "/" };
  if (p === "/search") return { page: searchPage, section: "/search" };
  if (p === "/graph") return { page: graphPage, section: "/graph" };
  if (p === "/proposals") return { page: proposalsPage, section: "/proposals" };
  if (p.startsWith("/proposals/")) return { page: proposalPage, section: "/proposals" };
  if (p === "/timeline") return { page: timelinePage, section: "/timeline" };
  if (p === "/work") return { page: workPage, section: "/work" };
  if (p === "/hygiene") return { page: hygienePage, section: "/hygiene" };
  if (p === "/tokens") return { page: tokensPage, section: "/tokens" };
  if (p === "/settings") return { page: settingsPage, section: "/settings" };
  return { page: homePage, section: "/" };
}

export function navigate(href: string, opts: { replace?: boolean } = {}): void {
  const url = new URL(href, location.href);
  if (url.origin !== location.origin) {
    location.href = href;
    return;
  }
  if (opts.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  void render();
}

async function render(): Promise<void> {
  const seq = ++renderSeq;
  const url = new URL(location.href);
  const { page, section } = route(url);
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav.side a")) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  current?.dispose?.();
  current = null;
  if (section !== "/search") searchBox.value = "";
  else if (document.activeElement !== searchBox) searchBox.value = url.searchParams.get("q") ?? "";
  const ctx: PageContext = { main, url, session, navigate, stale: () => seq !== renderSeq };
  // Pages draw their own frame at once; a bar at the top says data is on its way.
  document.body.classList.add("busy");
  try {
    const p = await page(ctx);
    if (seq === renderSeq) current = p ?? null;
    else p?.dispose?.();
  } catch (e) {
    if (seq !== renderSeq) return;
    clear(main, h("div", { class: "error-box", role: "alert" }, h("h1", null, "Could not load this page"), h("p", null, (e as Error).message)));
  }
  if (seq === renderSeq) document.body.classList.remove("busy");
  if (seq === renderSeq && url.hash) {
    const target = document.getElementById(url.hash.slice(1)) ?? document.getElementById("h-" + url.hash.slice(1));
    target?.scrollIntoView();
  }
}

function setBadge(name: string, n: number): void {
  const b = badges[name];
  if (!b) return;
  b.textContent = n ? String(n) : "";
  b.hidden = !n;
}

function applyTheme(theme: string | null): void {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

function toggleTheme(): void {
  const dark = document.documentElement.dataset.theme ? document.documentElement.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  const next = dark ? "light" : "dark";
  localStorage.setItem("lettuce-theme", next);
  applyTheme(next);
}

function showShortcuts(): void {
  const dlg = h(
    "dialog",
    { class: "modal", "aria-label": "Keyboard shortcuts" },
    h("h2", null, "Keyboard shortcuts"),
    h(
      "table",
      { class: "shortcuts" },
      h("tbody", null, [
        h("tr", null, h("td", null, h("kbd", null, "/")), h("td", null, "Search")),
        ...NAV.map((n) => h("tr", null, h("td", null, h("kbd", null, "g"), " ", h("kbd", null, n.key)), h("td", null, n.label))),
        h("tr", null, h("td", null, h("kbd", null, "Esc")), h("td", null, "Leave a field, close a dialog")),
        h("tr", null, h("td", null, h("kbd", null, "?")), h("td", null, "This help")),
      ]),
    ),
    h("div", { class: "actions" }, h("button", { class: "primary", onclick: () => dlg.close() }, "Close")),
  );
  dlg.addEventListener("close", () => dlg.remove());
  document.body.appendChild(dlg);
  dlg.showModal();
}

function keyboard(): void {
  let pendingG = 0;
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target as HTMLElement;
    if (t.closest("input, textarea, select, [contenteditable]")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    if (document.querySelector("dialog[open]")) return;
    if (e.key === "/") {
      e.preventDefault();
      searchBox.focus();
      searchBox.select();
    } else if (e.key === "?") {
      showShortcuts();
    } else if (e.key === "g" && !pendingG) {
      pendingG = window.setTimeout(() => (pendingG = 0), 1200);
    } else if (pendingG) {
      clearTimeout(pendingG);
      pendingG = 0;
      const n = NAV.find((x) => x.key === e.key);
      if (n) {
        e.preventDefault();
        navigate(n.path);
        main.focus();
      }
    }
  });
}

function live(): void {
  const dot = document.getElementById("live-dot")!;
  // A burst of index events (a sync tool writing many notes) asks for the counts once.
  const refreshCounts = debounce(() => void get<Session>("/api/session").then((s) => setBadge("directives", s.pendingDirectives)).catch(() => {}), 500);
  let es: EventSource | null = null;
  const connect = () => {
    es = new EventSource("/api/events");
    es.addEventListener("open", () => {
      dot.className = "live on";
      dot.title = "Live: the page follows changes to the vault";
    });
    es.addEventListener("error", () => {
      dot.className = "live off";
      dot.title = "Not connected; retrying";
    });
    const deliver = (kind: LiveEvent["kind"]) => (ev: MessageEvent) => {
      const data = JSON.parse(ev.data);
      if (kind === "state" || kind === "hello") setBadge("proposals", data.pendingProposals);
      if (kind === "index") refreshCounts();
      current?.onEvent?.({ kind, data } as LiveEvent);
    };
    es.addEventListener("hello", deliver("hello"));
    es.addEventListener("state", deliver("state"));
    es.addEventListener("index", deliver("index"));
  };
  connect();
  window.addEventListener("beforeunload", () => es?.close());
}

function layout(): HTMLElement {
  const onSearch = debounce(() => {
    const q = searchBox.value;
    // On the search page the page's own field runs the query; elsewhere, go there.
    const field = location.pathname === "/search" ? document.querySelector<HTMLInputElement>("input.big-search") : null;
    if (field) {
      field.value = q;
      field.dispatchEvent(new Event("input"));
    } else navigate(`/search?q=${encodeURIComponent(q)}`);
  }, 150);
  searchBox.addEventListener("input", onSearch);
  searchBox.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      onSearch();
    }
  });
  const nav = h(
    "nav",
    { class: "side", "aria-label": "Sections" },
    h(
      "ul",
      null,
      NAV.map((n) => {
        const badge = n.badge ? h("span", { class: "badge", hidden: true }) : null;
        if (n.badge && badge) badges[n.badge] = badge;
        return h("li", null, h("a", { href: n.path, "data-section": n.path, title: `g ${n.key}` }, n.label, badge));
      }),
    ),
  );
  return h(
    "div",
    { class: "shell" },
    h("a", { class: "skip", href: "#main" }, "Skip to content"),
    h(
      "header",
      { class: "top" },
      h("a", { class: "brand", href: "/" }, h("span", { class: "leaf", "aria-hidden": "true" }), "Lettuce"),
      h("span", { class: "vault", title: session.vault.root }, session.vault.name),
      searchBox,
      h("span", { id: "live-dot", class: "live off", title: "Connecting…", role: "img", "aria-label": "live updates" }),
      h("button", { class: "ghost", title: "Light or dark", "aria-label": "Switch light or dark mode", onclick: toggleTheme }, "◐"),
      h("button", { class: "ghost", title: "Keyboard shortcuts (?)", "aria-label": "Keyboard shortcuts", onclick: showShortcuts }, "⌨"),
      h(
        "button",
        {
          class: "ghost",
          onclick: async () => {
            await post("/api/logout");
            location.reload();
          },
        },
        "Log out",
      ),
    ),
    h("div", { class: "body" }, nav, main),
  );
}

async function start(): Promise<void> {
  applyTheme(localStorage.getItem("lettuce-theme"));
  session = await get<Session>("/api/session");
  setCsrf(session.csrf);
  const app = document.getElementById("app")!;
  clear(app, layout());
  setBadge("proposals", session.pendingProposals);
  setBadge("directives", session.pendingDirectives);
  // Internal links change the page without a reload.
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const href = a.getAttribute("href");
    if (!href || href.startsWith("/api/") || href.startsWith("#") || a.origin !== location.origin) return;
    e.preventDefault();
    navigate(a.href);
  });
  window.addEventListener("popstate", () => void render());
  keyboard();
  live();
  await render();
  document.body.dataset.ready = "1";
}

start().catch((e) => {
  toast(`Lettuce could not start: ${(e as Error).message}`, "error");
});
