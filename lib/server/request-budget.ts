// Bytes of request bodies one token may have in flight.
//
// Bun reads a request's body into memory as it arrives, before and whether or not the handler asks for
// it. A read token that opened 400 connections and sent each a 900 KB body but its last byte held 535 MB
// in the server until the connections idled out (measured 2026-12-06); a write token may send 8 MB a
// body. Waiting before reading the body (as answers wait, ./answer-budget.ts) bounded nothing: the bytes
// are in memory before the handler runs. So a request that would take its token past the budget is
// refused at once, from its headers, and its connection closed, which drops what Bun has buffered.
//
// A request is charged its declared length (Content-Length), and never less than MIN_CHARGE: a connection
// costs memory of its own, and the floor caps how many one token can hold open with tiny bodies that
// never end. A chunked body declares no length: it is charged the floor, then what has arrived as it
// streams in (http.ts reads it), and refused once that passes the budget. Charging it the most its scope
// may send instead held 8 MB for a 200-byte long-poll, so a write token had 4 calls in flight at most.
// The charge is held until the handler has answered, so bodies read and waiting for the token's call
// gate count too. A request larger than the whole budget is let in when the token has nothing else in
// flight, so every body the size limits allow can still be sent.
import { envNumber } from "../env-number";

/** Bytes of request bodies one token may have in flight (LETTUCE_REQUEST_BYTES_PER_TOKEN). */
export function requestBytesPerToken(): number {
  return envNumber("LETTUCE_REQUEST_BYTES_PER_TOKEN", 32 * 1024 * 1024, { min: 1024, max: 1024 ** 4, integer: true });
}

/** The least a request is charged: 32 MB / 64 KB = 512 requests of one token in flight at most. */
export const MIN_CHARGE = 64 * 1024;

/**
 * JSON-RPC's range for a server's own errors: the refusal is of a valid request, so -32600 (Invalid
 * Request) would tell the client its message was wrong and not to send it again as it is.
 */
export const SERVER_BUSY = -32000;

/** A request's charge: call it to give the charge back (once, however often called). */
export interface Held {
  (): void;
  /** Charge `total` bytes in all (never less than before); false when that would take the token past its budget. */
  grow(total: number): boolean;
}

export class RequestBudget {
  private held = new Map<string, number>();

  constructor(private readonly limit: () => number = requestBytesPerToken) {}

  /** Let a request of `key` (a token's name) in, charged `bytes`. Null when the token has that much in flight already. */
  enter(key: string, bytes: number): Held | null {
    let charge = Math.max(MIN_CHARGE, bytes);
    const held = this.held.get(key) ?? 0;
    if (held > 0 && held + charge > this.limit()) return null;
    this.held.set(key, held + charge);
    let done = false;
    const leave = (() => {
      if (done) return;
      done = true;
      const left = (this.held.get(key) ?? 0) - charge;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    }) as Held;
    leave.grow = (total) => {
      if (done) return false;
      const more = Math.max(MIN_CHARGE, total) - charge;
      if (more <= 0) return true;
      const now = this.held.get(key) ?? 0;
      // Alone, a request may grow past the budget (as it may enter past it).
      if (now > charge && now + more > this.limit()) return false;
      this.held.set(key, now + more);
      charge += more;
      return true;
    };
    return leave;
  }

  /** Bytes `key` has in flight now (tests). */
  heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }
}

/**
 * What a request will send, from its headers: its Content-Length (at most `most`, what its scope may send;
 * `most` when the length is nonsense); nothing when it declares neither (no body, as HTTP/1.1 reads it);
 * null when it is chunked, to be charged as it arrives.
 */
export function declaredBodyBytes(headers: { get(name: string): string | null }, most: number): number | null {
  const length = headers.get("content-length");
  if (length === null) return headers.get("transfer-encoding") === null ? 0 : null;
  return /^\s*\d+\s*$/.test(length) ? Math.min(Number(length), most) : most;
}

/**
 * Read a chunked body whole, growing `held` by what arrives: the bytes, "over-budget" as soon as the token's
 * budget would pass, or "too-large" past `max` bytes (the reading stops there either way).
 */
export async function readCharged(body: ReadableStream<Uint8Array>, held: Held, max: number): Promise<Uint8Array | "over-budget" | "too-large"> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    const refusal = size > max ? "too-large" : !held.grow(size) ? "over-budget" : null;
    if (refusal) {
      void reader.cancel().catch(() => {});
      return refusal;
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
