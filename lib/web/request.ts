// Reading a request: page bounds from the query string and a JSON body checked with zod.
import type { z } from "zod";

/** Default page size of the UI's lists. */
export const PAGE = 100;
const MAX_PAGE = 500;

/** limit/offset from the query string, clamped. */
export function paging(q: (k: string) => string | undefined, def = PAGE): { limit: number; offset: number } {
  // Past 2^53 a number binds to SQLite as a REAL, and OFFSET refuses it ("datatype mismatch", a 500):
  // any offset that large is past the end anyway.
  const n = (v: string | undefined, d: number) => {
    const x = Number(v);
    return Number.isFinite(x) && x >= 0 ? Math.min(Math.floor(x), Number.MAX_SAFE_INTEGER) : d;
  };
  return { limit: Math.min(MAX_PAGE, Math.max(1, n(q("limit"), def))), offset: n(q("offset"), 0) };
}

/** The body as JSON checked against `schema`, or a message for people saying what is wrong. */
export async function jsonBody<T>(req: Request, schema: z.ZodType<T>): Promise<T | { error: string }> {
  let raw: unknown = {};
  const text = await req.text();
  if (text.trim()) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { error: "The body is not valid JSON" };
    }
  }
  const r = schema.safeParse(raw);
  return r.success ? r.data : { error: r.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") };
}
