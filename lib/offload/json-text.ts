/**
 * A tool result already serialised by a read worker: `text` is the result's
 * JSON, and `literal` is that text once more as a JSON string literal (quotes
 * escaped), ready to drop into the response. The dispatcher uses them as they
 * are, so that the event loop neither copies a big result object across
 * threads nor serialises (and escapes) hundreds of kilobytes per answer.
 */
export class JsonText {
  constructor(
    readonly text: string,
    readonly literal: string,
  ) {}
}

/** What a worker sends for a JsonText: the result's JSON and its string literal. */
export function renderForWire(value: unknown): [string, string] {
  const text = JSON.stringify(value);
  return [text, JSON.stringify(text)];
}
