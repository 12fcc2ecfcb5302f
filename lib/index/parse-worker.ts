// Worker entry: parses (and resolves the links of) batches of notes off the
// main thread, so that the main thread spends a cold scan inserting into SQLite.
// On a cold bulk load it also hands each note's full-text row straight to the
// full-text writer thread (a MessagePort from FtsSink.port()), so that bodies
// never pass through the main thread.
import { coldTrace } from "./cold-trace";
import { batchTransfer, ftsRowOf, packBatch, readAndParse, type FtsRow, type ParseRequest } from "./parse-job";
import { LinkResolver, type ResolverSnapshot } from "./resolver";

declare const self: Worker;

let resolver: LinkResolver | undefined;
let fts: MessagePort | undefined;
// A bulk load's note ids by path (see packBatch).
let idOf: Map<string, number> | undefined;

type Msg = { snapshot: ResolverSnapshot; ftsPort?: MessagePort; idPaths?: string[] } | { id: number; root: string; batch: ParseRequest[] };

self.onmessage = (ev: MessageEvent<Msg>) => {
  const m = ev.data;
  if ("snapshot" in m) {
    coldTrace("snapshot in", "parse");
    resolver = LinkResolver.fromSnapshot(m.snapshot);
    fts = m.ftsPort;
    if (m.idPaths) idOf = new Map(m.idPaths.map((p, i) => [p, i + 1]));
    coldTrace("snapshot loaded", "parse");
    return;
  }
  const results = m.batch.map((req) => readAndParse(m.root, req, resolver, !!fts));
  if (fts) {
    const rows: FtsRow[] = [];
    const transfer: ArrayBuffer[] = [];
    m.batch.forEach((req, i) => {
      const r = results[i]!;
      if (req.ftsId === undefined || !r.parsed) return;
      const out = ftsRowOf(req.ftsId, r);
      rows.push(out.row);
      transfer.push(...out.transfer);
      r.ftsSent = true;
    });
    // Before the results go to the main thread, which counts the rows sent for FtsSink.finish.
    if (rows.length) fts.postMessage({ rows }, transfer);
  }
  const out = packBatch(results, idOf);
  self.postMessage({ id: m.id, ...out }, batchTransfer(out));
  coldTrace(`batch ${m.id}`, "parse");
};
