// Bytes of answers one token may have made and not yet sent.
//
// A note can be a person's 50 MB log, and read_note must return it whole (the spec). A token that
// asked for it over 40 connections and never read the answers held 40 copies in the server: 2.4-3.8 GB
// of memory, for as long as the connections stayed open (measured 2026-12-06; more connections, more
// memory, until the machine ran out). Smaller answers do the same given more connections. The per-token
// call gate (mcp.ts CALLS) did not bound it: a call leaves the gate when its answer is made, not when the
// client has taken it.
//
// So every answer of SMALL_ANSWER_BYTES or more is counted against its token until the HTTP layer has
// written it to the socket, or the client went away (lib/server/http.ts streams such answers to know
// when). A token at its budget starts no new call (door) until its earlier answers are read; a tool about
// to make an answer the size of a note reserves that many bytes first (ToolContext.reserveAnswer), so that
// eight calls at once cannot each make one. Another token never waits for it. A reservation larger than
// the whole budget is granted when the token holds nothing else, so every note can still be read.
import { envNumber } from "../env-number";
import { waitInQueue } from "../wait-in-queue";

/** Bytes of note-sized answers one token may have made and not yet sent (LETTUCE_ANSWER_BYTES_PER_TOKEN). */
export function answerBytesPerToken(): number {
  return envNumber("LETTUCE_ANSWER_BYTES_PER_TOKEN", 64 * 1024 * 1024, { min: 1024, max: 1024 ** 4, integer: true });
}

/** An answer under this is neither reserved nor counted: most answers, sent the ordinary way as before. */
export const SMALL_ANSWER_BYTES = 64 * 1024;

type Waiter = { bytes: number; ledger: AnswerLedger; go: () => void };

export class AnswerBudget {
  private held = new Map<string, number>();
  private waiting = new Map<string, Waiter[]>();

  constructor(private readonly limit: () => number = answerBytesPerToken) {}

  /** The reservations of one request of `key` (a token's name), given back together by release(). */
  ledger(key: string): AnswerLedger {
    return new AnswerLedger(this, key);
  }

  /** Bytes `key` holds now (tests, the log). */
  heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** @internal AnswerLedger.hold: counted at once, whatever the budget (the answer exists already). */
  hold(key: string, ledger: AnswerLedger, bytes: number): void {
    if (!ledger.closed) this.add(key, ledger, bytes);
  }

  /** @internal AnswerLedger.reserve and .door */
  async take(key: string, ledger: AnswerLedger, bytes: number, signal?: AbortSignal): Promise<void> {
    if (ledger.closed) return;
    const q = this.waiting.get(key);
    // A request that holds bytes already (a batch's next item) never waits for itself.
    if (ledger.bytes > 0 || (!q?.length && this.fits(key, bytes))) {
      if (bytes > 0) this.add(key, ledger, bytes);
      return;
    }
    const queue = q ?? [];
    this.waiting.set(key, queue);
    await waitInQueue(queue, (go): Waiter => ({ bytes, ledger, go }), signal, () => {
      if (!queue.length) this.waiting.delete(key);
      this.wake(key);
    });
  }

  /** @internal AnswerLedger.release */
  give(key: string, bytes: number): void {
    const left = (this.held.get(key) ?? 0) - bytes;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
    this.wake(key);
  }

  // bytes 0 is the door: open while the token is under its budget.
  private fits(key: string, bytes: number): boolean {
    const held = this.held.get(key) ?? 0;
    return held === 0 || (bytes === 0 ? held < this.limit() : held + bytes <= this.limit());
  }

  private add(key: string, ledger: AnswerLedger, bytes: number): void {
    this.held.set(key, (this.held.get(key) ?? 0) + bytes);
    ledger.bytes += bytes;
  }

  // Waiters go in order: the first that does not fit keeps the ones behind it waiting.
  private wake(key: string): void {
    const q = this.waiting.get(key);
    while (q?.length && this.fits(key, q[0]!.bytes)) {
      const w = q.shift()!;
      // Its request was answered meanwhile (it stopped waiting some other way): nothing to hold for it.
      if (!w.ledger.closed && w.bytes > 0) this.add(key, w.ledger, w.bytes);
      w.go();
    }
    if (q && !q.length) this.waiting.delete(key);
  }
}

/** One request's reservations. */
export class AnswerLedger {
  /** Bytes reserved and not given back. */
  bytes = 0;
  /** Released once: what is granted after that goes straight back. */
  closed = false;

  constructor(
    private readonly budget: AnswerBudget,
    private readonly key: string,
  ) {}

  /** Resolves once `bytes` more may be made for this request (at once under SMALL_ANSWER_BYTES); rejects with the signal's reason if it aborts first. */
  async reserve(bytes: number, signal?: AbortSignal): Promise<void> {
    if (bytes >= SMALL_ANSWER_BYTES) await this.budget.take(this.key, this, bytes, signal);
  }

  /** Resolves once the token is under its budget (before a call starts); rejects with the signal's reason if it aborts first. */
  async door(signal?: AbortSignal): Promise<void> {
    await this.budget.take(this.key, this, 0, signal);
  }

  /** Count an answer made (`bytes`, under SMALL_ANSWER_BYTES: nothing) until release(). */
  hold(bytes: number): void {
    if (bytes >= SMALL_ANSWER_BYTES) this.budget.hold(this.key, this, bytes);
  }

  /** Give every reserved byte back (idempotent): the answer was written, or will not be. */
  release(): void {
    this.closed = true;
    if (!this.bytes) return;
    const n = this.bytes;
    this.bytes = 0;
    this.budget.give(this.key, n);
  }
}
