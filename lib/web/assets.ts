// The UI's browser code and styles. web/index.html is an HTML import: in a
// compiled binary Bun bundled it at build time and lists the output files
// (HTMLBundle.files, embedded under /$bunfs); run from source, it is bundled
// here on first use with Bun.build and kept in memory. Either way nothing is
// fetched from anywhere at run time.
import { basename } from "node:path";
import shell from "../../web/index.html";

export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

interface Bundle {
  assets: Map<string, Asset>;
  scripts: string[];
  styles: string[];
}

let bundle: Promise<Bundle> | null = null;

const typeOf = (name: string) =>
  name.endsWith(".js") ? "text/javascript; charset=utf-8" : name.endsWith(".css") ? "text/css; charset=utf-8" : name.endsWith(".svg") ? "image/svg+xml" : "application/octet-stream";

/** The scripts and stylesheets the bundled index.html loads, by file name. */
function entriesOf(html: string, out: Bundle): void {
  for (const m of html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)) out.scripts.push(basename(m[1]!));
  for (const m of html.matchAll(/<link[^>]*\shref="([^"]+\.css)"/g)) out.styles.push(basename(m[1]!));
}

async function fromBinary(files: NonNullable<typeof shell.files>): Promise<Bundle> {
  const out: Bundle = { assets: new Map(), scripts: [], styles: [] };
  for (const f of files) {
    const text = Bun.file(f.path);
    if (f.loader === "html") {
      entriesOf(await text.text(), out);
      continue;
    }
    const name = basename(f.path);
    out.assets.set(name, { body: new Uint8Array(await text.arrayBuffer()), type: f.headers["content-type"] ?? typeOf(name), etag: `"${f.headers.etag ?? name}"` });
  }
  return out;
}

async function fromSource(): Promise<Bundle> {
  const res = await Bun.build({ entrypoints: [shell.index], target: "browser", minify: true, publicPath: "/assets/" });
  if (!res.success) throw new Error(`could not bundle the web UI: ${res.logs.map(String).join("\n")}`);
  const out: Bundle = { assets: new Map(), scripts: [], styles: [] };
  for (const o of res.outputs) {
    const name = basename(o.path);
    if (name.endsWith(".html")) entriesOf(await o.text(), out);
    else out.assets.set(name, { body: new Uint8Array(await o.arrayBuffer()), type: typeOf(name), etag: `"${o.hash ?? name}"` });
  }
  return out;
}

/** The bundled assets (built once per process). */
export function webBundle(): Promise<Bundle> {
  bundle ??= (shell.files?.length ? fromBinary(shell.files) : fromSource()).catch((e) => {
    bundle = null;
    throw e;
  });
  return bundle;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** The page every UI route answers with: the app mounts itself into #app. */
export async function shellHtml(title: string): Promise<string> {
  const b = await webBundle();
  return htmlDocument(title, b.styles, b.scripts, '<div id="app"><p class="boot">Loading…</p></div>');
}

function htmlDocument(title: string, styles: string[], scripts: string[], body: string): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${esc(title)}</title>`,
    ...styles.map((s) => `<link rel="stylesheet" href="/assets/${esc(s)}">`),
    ...scripts.map((s) => `<script type="module" src="/assets/${esc(s)}"></script>`),
    "</head>",
    `<body>${body}</body>`,
    "</html>",
  ].join("\n");
}

/** A page without the app: the login help and other dead ends (styled by the bundle's CSS, no script). */
export async function plainPage(title: string, bodyHtml: string): Promise<string> {
  let styles: string[] = [];
  try {
    styles = (await webBundle()).styles;
  } catch {
    /* unstyled is better than no page */
  }
  return htmlDocument(title, styles, [], `<main class="plain">${bodyHtml}</main>`);
}
