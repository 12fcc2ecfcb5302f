// A model server's reply is read whole (JSON), so its size is bounded: a server
// that streams without end (or sends one 300 MB reply) otherwise grows this
// process's memory until the try's time runs out, 1.4 GB in 30 s in an audit.
import { AttemptError } from "./retry";
import { envNumber } from "../env-number";

/** Largest reply read from a model server (an embedding batch of 64 is ~2 MB); read at each call. */
export function maxReplyBytes(): number {
  return envNumber("LETTUCE_MAX_PROVIDER_REPLY_BYTES", 64 * 1024 * 1024, { min: 1024, max: 1024 ** 3, integer: true });
}

export class ReplyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the reply is larger than ${maxBytes} bytes`);
  }
}

/** The same response, whose body fails with ReplyTooLarge (and stops the download) past `maxBytes`. */
export function boundedResponse(res: Response, maxBytes = maxReplyBytes()): Response {
  if (!res.body) return res;
  const declared = Number(res.headers.get("content-length"));
  let seen = 0;
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(ctl) {
        if (declared > maxBytes) ctl.error(new ReplyTooLarge(maxBytes));
      },
      transform(chunk, ctl) {
        seen += chunk.byteLength;
        if (seen > maxBytes) ctl.error(new ReplyTooLarge(maxBytes));
        else ctl.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** The provider error for a reply that was too large: not retried (the next try would be the same). */
export function tooLargeError(label: string, e: ReplyTooLarge): AttemptError {
  return new AttemptError("provider-error", `${label}: ${e.message}; is the base URL a model server?`, false);
}
