// Building the page without innerHTML: every string from the server (titles,
// paths, snippets, agent names, diffs) becomes a text node. The one exception
// is a note's body, which the server rendered and sanitised (see notes.ts).

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: any) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v);
      else if (k === "class") el.className = String(v);
      else if (v === true) el.setAttribute(k, "");
      else el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

const SVG = "http://www.w3.org/2000/svg";
export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

export const noteUrl = (path: string, heading?: string) => "/notes/" + path.split("/").map(encodeURIComponent).join("/") + (heading ? `#h-${heading}` : "");

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number): (...a: A) => void {
  let t: ReturnType<typeof setTimeout> | undefined;
  return (...a: A) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

/** A modal question with buttons; resolves with the chosen button's value (Escape: null). */
export function ask(title: string, message: string, buttons: { label: string; value: string; primary?: boolean; danger?: boolean }[]): Promise<string | null> {
  return new Promise((resolve) => {
    const dlg = h("dialog", { class: "modal", "aria-labelledby": "modal-title" });
    const done = (v: string | null) => {
      dlg.close();
      dlg.remove();
      resolve(v);
    };
    append(dlg, [
      h("h2", { id: "modal-title" }, title),
      h("p", null, message),
      h(
        "div",
        { class: "actions" },
        buttons.map((b) => h("button", { class: b.danger ? "danger" : b.primary ? "primary" : "", onclick: () => done(b.value) }, b.label)),
      ),
    ]);
    dlg.addEventListener("cancel", (e) => {
      e.preventDefault();
      done(null);
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    (dlg.querySelector("button.primary, button.danger, button") as HTMLButtonElement | null)?.focus();
  });
}

/** A short message at the bottom of the screen. */
export function toast(text: string, kind: "ok" | "error" = "ok"): void {
  const el = h("div", { class: `toast ${kind}`, role: "status" }, text);
  document.body.appendChild(el);
  setTimeout(() => el.remove(), kind === "error" ? 8000 : 4000);
}
