// A client that misbehaves on the wire, which fetch cannot be made to do.
import { connect, type Socket } from "node:net";

/**
 * A raw connection to an MCP endpoint (`url`) that sends one tools/call and never reads what comes back: the
 * socket is paused, so the answer backs up to the server. Destroy the socket to end it.
 */
export function neverReads(url: string, token: string, id: number, name: string, args: unknown): Promise<Socket> {
  const u = new URL(url);
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => {
      s.pause();
      s.write(
        `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      resolve(s);
    });
    s.on("error", reject);
  });
}

export interface UnfinishedBody {
  socket: Socket;
  /** What the server sent back before the body ended ("" if it closed the connection without a word). */
  answer: Promise<string>;
}

/**
 * A raw connection that sends a tools/call whose body never ends: with `bytes` of padding and its last byte
 * held back, or (`chunked`) as one chunk with no end. Destroy the socket to end it.
 */
export function unfinishedBody(url: string, token: string, bytes: number, opts: { chunked?: boolean } = {}): Promise<UnfinishedBody> {
  const u = new URL(url);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(bytes) } } });
  const framing = opts.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${Buffer.byteLength(body)}`;
  const sent = opts.chunked ? `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n` : body.slice(0, -1);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => {
      let got = "";
      const answer = new Promise<string>((done) => {
        s.on("data", (d) => (got += d.toString("latin1")));
        s.on("close", () => done(got));
      });
      s.write(`POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nAuthorization: Bearer ${token}\r\n${framing}\r\n\r\n${sent}`);
      s.off("error", reject);
      s.on("error", () => {});
      resolve({ socket: s, answer });
    });
    s.on("error", reject);
  });
}
