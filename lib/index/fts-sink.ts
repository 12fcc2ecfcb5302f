import { workerEntry } from "../platform/embedded";
import { ftsPath } from "../store/fts-db";
import { startWorker } from "../platform/descriptors";
import { ngramText } from "../vault/ngram";
import type { HugeBody } from "./parse-job";
import type { Row } from "./fts-writer";

// Rows sent per message: large enough that messaging costs nothing, small
// enough that the writer thread never waits long for work.
const ROWS_PER_MESSAGE = 64;

function spawn(): Worker {
  // See parse-pool.ts: in a compiled binary embedded entry points live under the binary's virtual root at their source path.
  return startWorker(workerEntry("lib/index/fts-writer.ts", import.meta.url, "./fts-writer.ts"));
}

/**
 * The main thread's end of the full-text writer thread (cold scans, and batches with a huge note):
 * push rows, then finish() commits them (with the index generation) before
 * the main thread commits index.db. Errors surface at finish().
 */
export class FtsSink {
  private worker = spawn();
  // [id, title, body] (or a big note's [id, title, UTF-8 body, title n-grams, body n-grams]); a null title is a deletion.
  private buffer: Row[] = [];
  /** The buffers of the rows in `buffer` to hand over rather than copy. */
  private transfer: ArrayBuffer[] = [];
  private failure: string | null = null;
  private settled: ((m: { done?: true; error?: string }) => void) | null = null;
  private ended = false;
  /** Rows parse workers sent straight to the writer (through port()), as the main thread counted them. */
  private viaPorts = 0;

  /**
   * `incremental`: the index already has rows (a batch with a huge note, whose
   * full-text insert would hold the request thread for seconds); rows replace
   * their old versions. Otherwise a cold scan: fts.db starts empty.
   */
  constructor(root: string, opts: { incremental?: boolean } = {}) {
    this.worker.onmessage = (ev: MessageEvent<{ done?: true; error?: string }>) => {
      if (ev.data.error) this.failure ??= ev.data.error;
      if (this.settled) this.settled(ev.data);
    };
    this.worker.onerror = (e) => {
      this.failure ??= e.message;
      this.settled?.({ error: e.message });
    };
    this.worker.postMessage({ open: ftsPath(root), incremental: !!opts.incremental });
  }

  push(id: number, title: string, body: string | HugeBody): void {
    if (typeof body === "string") this.buffer.push([id, title, body]);
    else {
      this.buffer.push([id, title, body.utf8, ngramText(title), body.ngrams]);
      this.transfer.push(body.utf8.buffer as ArrayBuffer);
    }
    if (this.buffer.length >= ROWS_PER_MESSAGE) this.flush();
  }

  /**
   * A port for a parse worker to send full-text rows to the writer directly (a cold
   * bulk load: the body then never crosses the main thread). The main thread tells
   * the sink how many rows went that way (sentDirectly), and finish() waits for them.
   */
  port(): MessagePort {
    const ch = new MessageChannel();
    this.worker.postMessage({ port: ch.port2 }, [ch.port2]);
    return ch.port1;
  }

  sentDirectly(n: number): void {
    this.viaPorts += n;
  }

  /** Delete note `id`'s full-text row. */
  remove(id: number): void {
    this.buffer.push([id, null, null]);
    if (this.buffer.length >= ROWS_PER_MESSAGE) this.flush();
  }

  private flush(): void {
    if (this.buffer.length) this.worker.postMessage({ rows: this.buffer }, this.transfer);
    this.buffer = [];
    this.transfer = [];
  }

  private end(msg: unknown): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    return new Promise<void>((resolve, reject) => {
      this.settled = (m) => {
        this.worker.terminate();
        if (m.error || this.failure) reject(new Error(`full-text writer failed: ${m.error ?? this.failure}`));
        else resolve();
      };
      this.worker.postMessage(msg);
    });
  }

  /** Commit everything pushed, stamped with the index generation. */
  finish(gen: string): Promise<void> {
    this.flush();
    return this.end({ finish: gen, expect: this.viaPorts });
  }

  abort(): Promise<void> {
    this.buffer = [];
    this.transfer = [];
    return this.end({ abort: true }).catch(() => undefined);
  }
}
