// Worker entry: parses batches of notes off the main thread so that the main
// thread can spend the whole cold scan inserting into SQLite.
import { readAndParse, type ParseRequest } from "./parse-job";

declare const self: Worker;

self.onmessage = (ev: MessageEvent<{ id: number; root: string; batch: ParseRequest[] }>) => {
  const { id, root, batch } = ev.data;
  const results = batch.map((req) => readAndParse(root, req));
  self.postMessage({ id, results });
};
