// Worker entry: parses (and resolves the links of) batches of notes off the
// main thread, so that the main thread spends a cold scan inserting into SQLite.
import { packResult, readAndParse, type ParseRequest } from "./parse-job";
import { LinkResolver, type ResolverSnapshot } from "./resolver";

declare const self: Worker;

let resolver: LinkResolver | undefined;

type Msg = { snapshot: ResolverSnapshot } | { id: number; root: string; batch: ParseRequest[] };

self.onmessage = (ev: MessageEvent<Msg>) => {
  const m = ev.data;
  if ("snapshot" in m) {
    resolver = LinkResolver.fromSnapshot(m.snapshot);
    return;
  }
  const results = m.batch.map((req) => packResult(readAndParse(m.root, req, resolver)));
  self.postMessage({ id: m.id, results });
};
