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
