// Enough of the common attachment types that agents can tell an image from a PDF;
// anything else is application/octet-stream.
const TYPES: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  svg: "image/svg+xml", bmp: "image/bmp", ico: "image/x-icon", avif: "image/avif", heic: "image/heic",
  pdf: "application/pdf", json: "application/json", csv: "text/csv", tsv: "text/tab-separated-values",
  txt: "text/plain", html: "text/html", htm: "text/html", xml: "application/xml", yaml: "application/yaml",
  yml: "application/yaml", base: "application/yaml", canvas: "application/json", css: "text/css",
  js: "text/javascript", mp3: "audio/mpeg", wav: "audio/wav", ogg: "audio/ogg", m4a: "audio/mp4",
  flac: "audio/flac", mp4: "video/mp4", webm: "video/webm", mov: "video/quicktime", zip: "application/zip",
};

export function mimeTypeOf(path: string): string {
  const dot = path.lastIndexOf(".");
  if (dot === -1) return "application/octet-stream";
  return TYPES[path.slice(dot + 1).toLowerCase()] ?? "application/octet-stream";
}
