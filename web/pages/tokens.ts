// MCP tokens: list, create (the token and a ready client configuration are
// shown once), revoke (takes effect on the agent's next request).
import { ApiError, get, post } from "../api";
import { ask, clear, h, toast, when } from "../dom";
import type { Page, PageContext } from "../types";

interface TokenInfo {
  id: number;
  name: string;
  scope: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export async function tokensPage(ctx: PageContext): Promise<Page> {
  const tbody = h("tbody");
  const created = h("div", { "aria-live": "polite" });
  const name = h("input", { type: "text", name: "name", required: true, maxlength: "100", placeholder: "e.g. claude-code", "aria-label": "Token name" });
  const scope = h("select", { name: "scope", "aria-label": "Scope" }, ["read", "propose", "write"].map((s) => h("option", { value: s, selected: s === "propose" }, s)));
  const form = h(
    "form",
    { class: "inline-form" },
    h("label", null, "Name ", name),
    h("label", null, "Scope ", scope),
    h("button", { class: "primary", type: "submit" }, "Create token"),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await post<{ token: string; info: TokenInfo; url: string; config: string }>("/api/tokens", { name: name.value, scope: scope.value });
      name.value = "";
      const copy = h("button", { onclick: () => void navigator.clipboard?.writeText(r.token).then(() => toast("Copied")) }, "Copy token");
      clear(
        created,
        h(
          "div",
          { class: "created", role: "alert" },
          h("h2", null, `Token “${r.info.name}” (${r.info.scope})`),
          h("p", null, "Shown only this once: copy it now. Lettuce keeps only its hash."),
          h("pre", { class: "token", id: "new-token" }, r.token),
          copy,
          h("h3", null, "Client configuration"),
          h("pre", { class: "config" }, r.config),
        ),
      );
      await load();
    } catch (err) {
      toast((err as ApiError).message, "error");
    }
  });
  clear(
    ctx.main,
    h(
      "section",
      { class: "page" },
      h("h1", null, "Tokens"),
      h("p", { class: "muted" }, "Agents connect to /mcp with a bearer token. read: read tools; propose: writes become proposals you review; write: everything."),
      form,
      created,
      h("table", { class: "list" }, h("thead", null, h("tr", null, ["Name", "Scope", "Created", "Last used", "", ""].map((c) => h("th", { scope: "col" }, c)))), tbody),
    ),
  );
  const load = async () => {
    const r = await get<{ items: TokenInfo[] }>("/api/tokens");
    if (ctx.stale()) return;
    clear(
      tbody,
      r.items.map((t) =>
        h(
          "tr",
          { class: t.revokedAt ? "revoked" : "", "data-token": t.name },
          h("td", null, t.name),
          h("td", null, h("span", { class: `pill ${t.scope}` }, t.scope)),
          h("td", null, when(t.createdAt)),
          h("td", null, when(t.lastUsedAt)),
          h("td", null, t.revokedAt ? `revoked ${when(t.revokedAt)}` : ""),
          h(
            "td",
            null,
            t.revokedAt
              ? null
              : h(
                  "button",
                  {
                    class: "danger",
                    "aria-label": `Revoke ${t.name}`,
                    onclick: async () => {
                      const ok = await ask(`Revoke “${t.name}”?`, "Agents using this token are refused from their next request. This cannot be undone; create a new token instead.", [
                        { label: "Cancel", value: "no" },
                        { label: "Revoke", value: "yes", danger: true },
                      ]);
                      if (ok !== "yes") return;
                      try {
                        await post(`/api/tokens/${t.id}/revoke`);
                        toast(`Revoked ${t.name}`);
                        await load();
                      } catch (err) {
                        toast((err as ApiError).message, "error");
                      }
                    },
                  },
                  "Revoke",
                ),
          ),
        ),
      ),
    );
  };
  await load();
  return {};
}
