// Helpers for the web UI tests: a browser session against the real server
// (a login code, the cookie it sets, the CSRF token), and Chromium for the
// end-to-end tests, which skip with one line when it is not installed
// (.ci/run installs it and sets LETTUCE_REQUIRE_BROWSER=1 so CI cannot skip).
import { describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { createLoginCode } from "../lib/web/sessions";
import type { VaultContext } from "../lib/vault-context";

export const CHROMIUM = process.env.LETTUCE_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

export function describeWithBrowser(title: string, fn: () => void): void {
  if (existsSync(CHROMIUM)) return describe(title, fn);
  if (process.env.LETTUCE_REQUIRE_BROWSER === "1") {
    describe(title, () => {
      test("needs Chromium", () => {
        throw new Error(`no browser at ${CHROMIUM} (LETTUCE_REQUIRE_BROWSER=1): apt-get install -y chromium`);
      });
    });
    return;
  }
  console.log(`skip: "${title}" needs Chromium at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`);
  describe.skip(title, fn);
}

/** The origin of a server whose MCP endpoint is `mcpUrl`. */
export const originOf = (mcpUrl: string) => new URL(mcpUrl).origin;

export interface WebSession {
  origin: string;
  cookie: string; // "name=value", as a Cookie header
  csrf: string;
  /** fetch on the server with this session (and the CSRF token on anything but GET). */
  fetch(path: string, init?: RequestInit & { json?: unknown; noCsrf?: boolean }): Promise<Response>;
}

/** Log in the way a person does: a fresh code, GET /login?code=…, keep the cookie, read the CSRF token. */
export async function loginSession(vault: VaultContext, mcpUrl: string): Promise<WebSession> {
  const origin = originOf(mcpUrl);
  const { code } = createLoginCode(vault.stateDb);
  const res = await fetch(`${origin}/login?code=${code}`, { redirect: "manual" });
  if (res.status !== 303) throw new Error(`login answered ${res.status}`);
  const setCookie = res.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0]!;
  const s = (await (await fetch(`${origin}/api/session`, { headers: { cookie } })).json()) as { csrf: string };
  const session: WebSession = {
    origin,
    cookie,
    csrf: s.csrf,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set("cookie", cookie);
      const method = init.method ?? (init.json !== undefined ? "POST" : "GET");
      if (method !== "GET" && !init.noCsrf) headers.set("x-csrf-token", s.csrf);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("content-type", "application/json");
        body = JSON.stringify(init.json);
      }
      return fetch(origin + path, { ...init, method, headers, body, redirect: "manual" });
    },
  };
  return session;
}
