// Talking to lib/web: JSON in and out, the CSRF token on every change, and a
// 401 sends the person to the login help.

let csrf = "";
export function setCsrf(token: string): void {
  csrf = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

async function parse<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { error: text.slice(0, 200) };
  }
  if (res.status === 401) {
    location.reload(); // the server answers the page itself with the login help
    throw new ApiError(401, "unauthorized", body?.error ?? "Not logged in", body ?? {});
  }
  if (!res.ok) throw new ApiError(res.status, body?.kind ?? "error", body?.error ?? `HTTP ${res.status}`, body ?? {});
  return body as T;
}

export async function get<T = any>(path: string, params: Record<string, string | number | undefined | null> = {}, signal?: AbortSignal): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const qs = q.toString();
  return parse<T>(await fetch(qs ? `${path}?${qs}` : path, { credentials: "same-origin", signal }));
}

export async function post<T = any>(path: string, body: unknown = {}): Promise<T> {
  return parse<T>(
    await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    }),
  );
}
