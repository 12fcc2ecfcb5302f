/**
 * A tool result already serialised by a read worker: `literal` is the result's
 * JSON as a JSON string literal (quotes escaped), ready to drop into the
 * response. The dispatcher uses it as it is, so that the event loop neither
 * copies a big result object across threads nor serialises (and escapes)
 * hundreds of kilobytes per answer. `text`, the JSON itself, is unescaped
 * from it only when something reads it (an in-process client, the web UI):
 * the worker sends one copy, not two, and for a note of 50 MB the copy
 * is made on the event loop.
 */
export class JsonText {
  private json?: string;
  constructor(readonly literal: string) {}
  get text(): string {
    return (this.json ??= JSON.parse(this.literal) as string);
  }
}

/** What a worker sends for a JsonText: the result's JSON as a string literal. */
export function renderForWire(value: unknown): string {
  return JSON.stringify(JSON.stringify(value));
}
