// Bytes of request bodies one token may have in flight.
//
// Bun reads a request's body into memory as it arrives, before and whether or not the handler asks for
// it. A read token that opened 400 connections and sent each a 900 KB body but its last byte held 535 MB
// in the server until the connections idled out (measured 2026-12-06); a write token may send 8 MB a
// body. Waiting before reading the body (as answers wait, ./answer-budget.ts) bounded nothing: the bytes
// are in memory before the handler runs. So a request that would take its token past the budget is
// refused at once, from its headers, and its connection closed, which drops what Bun has buffered.
//
// A request is charged its declared length (Content-Length), the most its scope may send when it declares
// none (chunked), and never less than MIN_CHARGE: a connection costs memory of its own, and the floor
// caps how many one token can hold open with tiny bodies that never end. The charge is held until the
// handler has answered, so bodies read and waiting for the token's call gate count too. A request
// larger than the whole budget is let in when the token has nothing else in flight, so every body the
// size limits allow can still be sent.
import { envNumber } from "../env-number";

/** Bytes of request bodies one token may have in flight (LETTUCE_REQUEST_BYTES_PER_TOKEN). */
export function requestBytesPerToken(): number {
  return envNumber("LETTUCE_REQUEST_BYTES_PER_TOKEN", 32 * 1024 * 1024, { min: 1024, max: 1024 ** 4, integer: true });
}

/** The least a request is charged: 32 MB / 64 KB = 512 requests of one token in flight at most. */
export const MIN_CHARGE = 64 * 1024;

export class RequestBudget {
  private held = new Map<string, number>();

  constructor(private readonly limit: () => number = requestBytesPerToken) {}

  /**
   * Let a request of `key` (a token's name) in, charged `bytes`; the returned function gives the charge
   * back (once, however often called). Null when the token has that much in flight already.
   */
  enter(key: string, bytes: number): (() => void) | null {
    const charge = Math.max(MIN_CHARGE, bytes);
    const held = this.held.get(key) ?? 0;
    if (held > 0 && held + charge > this.limit()) return null;
    this.held.set(key, held + charge);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.held.get(key) ?? 0) - charge;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /** Bytes `key` has in flight now (tests). */
  heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }
}

/**
 * What a request will send, from its headers: its Content-Length; `most` (what its scope may send) when it
 * is chunked or its length is nonsense; nothing when it declares neither (no body, as HTTP/1.1 reads it).
 */
export function declaredBodyBytes(headers: { get(name: string): string | null }, most: number): number {
  const length = headers.get("content-length");
  if (length === null) return headers.get("transfer-encoding") === null ? 0 : most;
  return /^\s*\d+\s*$/.test(length) ? Math.min(Number(length), most) : most;
}
