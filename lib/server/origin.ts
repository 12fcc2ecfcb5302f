// Which Host and Origin a request may come with: loopback names and those given with --host or --allow-host
// (DNS-rebinding protection), and for the web UI's cookie-bearing routes only the server's own origin.

export const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** The host name of a Host header (an IPv6 address keeps its brackets), lower-cased. */
export function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1).toLowerCase();
  return hostHeader.split(":")[0]!.toLowerCase();
}

/** Whether a browser's Origin names an allowed host, whatever its port (DNS rebinding names another host). */
export function allowedName(origin: string, allowed: Set<string>): boolean {
  try {
    const name = new URL(origin).hostname.toLowerCase();
    return allowed.has(name) || allowed.has(`[${name}]`);
  } catch {
    return false;
  }
}

/**
 * Whether a browser's Origin is this server as the request reached it: an allowed name, and the very host
 * and port the request was sent to (its Host). Another port of 127.0.0.1 or localhost is another origin,
 * another program's page (a dev server on :3000): by name alone it was let in. The scheme is the server's
 * own (http); https only for a name given with --host or --allow-host, where a TLS proxy in front
 * (`tailscale serve`) passes the browser's Host on. Loopback is never behind one: https://127.0.0.1 is
 * another program.
 */
export function sameOrigin(origin: string, hostHeader: string | undefined, requestUrl: string, allowed: Set<string>): boolean {
  let o: URL;
  let own: URL;
  try {
    o = new URL(origin);
    own = new URL(requestUrl);
  } catch {
    return false;
  }
  const name = o.hostname.toLowerCase();
  if (!allowed.has(name) && !allowed.has(`[${name}]`)) return false;
  const tls = o.protocol === "https:" && !LOOPBACK.has(name) && !LOOPBACK.has(`[${name}]`);
  if (o.protocol !== own.protocol && !tls) return false;
  // The Host as a URL of the origin's scheme writes it (a default port left out), to compare with the origin's.
  let reached: string;
  try {
    reached = new URL(`${o.protocol}//${hostHeader ?? own.host}`).host;
  } catch {
    return false;
  }
  return o.host.toLowerCase() === reached.toLowerCase();
}
