/**
 * A tool result already serialised by a read worker: its JSON as a JSON
 * string literal (quotes escaped), ready to drop into the response. The
 * dispatcher uses it as it is, so that the event loop neither copies a big
 * result object across threads nor serialises (and escapes) hundreds of
 * kilobytes per answer. A big literal comes as UTF-8 bytes, encoded in the
 * worker and handed over without a copy, which the HTTP layer sends as they
 * are: a 50 MB note's answer costs the event loop no pass over its text (a
 * string crossing threads is copied, and every pass over it held other
 * callers 20-90 ms). `text`, the JSON itself, is unescaped only if
 * something reads it (an in-process client, the web UI, stdio).
 */
export class JsonText {
  private json?: string;
  private str?: string;
  constructor(private readonly wire: WireText) {}

  /** The literal as UTF-8 bytes, when it came that way (a big answer). */
  get bytes(): Uint8Array | null {
    return typeof this.wire === "string" ? null : this.wire;
  }

  /** The literal as a string (decoded from the bytes on first use, if it came as bytes). */
  get literal(): string {
    return (this.str ??= typeof this.wire === "string" ? this.wire : new TextDecoder().decode(this.wire));
  }

  /** About how many bytes the literal takes (characters of a string, bytes of bytes). */
  get size(): number {
    return this.wire.length;
  }

  get text(): string {
    return (this.json ??= JSON.parse(this.literal) as string);
  }
}

/** A literal as a worker sends it: a string, or UTF-8 bytes from BYTES_FROM characters on. */
export type WireText = string | Uint8Array;

/** Literals this long or longer cross as bytes (the answer budget's small-answer line: such answers stream). */
export const BYTES_FROM = 64 * 1024;

/** What a worker sends for a JsonText: the result's JSON as a string literal, as bytes when it is big. */
export function renderForWire(value: unknown): WireText {
  const literal = JSON.stringify(JSON.stringify(value));
  return literal.length < BYTES_FROM ? literal : new TextEncoder().encode(literal);
}

/** The buffers of a worker's reply to hand over rather than copy (the bytes of a big literal). */
export function transferables(value: unknown): ArrayBuffer[] {
  return value instanceof Uint8Array && value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? [value.buffer] : [];
}
