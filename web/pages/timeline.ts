// The agent-edits timeline: every change an agent made (and every revert or
// approval), filterable by note, agent and tool, each with its diff and a
// Revert button that refuses when the person changed the note since, unless
// they confirm.
import { ApiError, get, post } from "../api";
import { append, ask, clear, h, noteUrl, toast, when } from "../dom";
import { diffView } from "../diff";
import type { Page, PageContext } from "../types";

interface EditRecord {
  id: number;
  groupId: number;
  time: string;
  tool: string;
  action: "write" | "move" | "delete";
  path: string;
  fromPath: string | null;
  trashPath: string | null;
  agent: string;
  token: string;
  proposalId: number | null;
  reverts: number | null;
  revertedBy?: number | null;
}

function describe(e: EditRecord): string {
  if (e.action === "move") return `${e.fromPath} → ${e.path}`;
  if (e.action === "delete") return `${e.path} → ${e.trashPath}`;
  return e.path;
}

async function revert(id: number, force: boolean): Promise<boolean> {
  try {
    const r = await post(`/api/edits/${id}/revert`, { force });
    toast(`Reverted edit #${id}; recorded as edit #${r.editId}`);
    return true;
  } catch (e) {
    const err = e as ApiError;
    if (err.kind === "conflict" && !force) {
      const choice = await ask(
        "The note changed since this edit",
        `${err.message.replace(/ \(pass --force[^)]*\)/, "")}. Reverting anyway replaces the current text with the text from before the agent's edit; the current text stays on the timeline, so this revert can be undone too.`,
        [
          { label: "Cancel", value: "cancel" },
          { label: "Revert anyway", value: "force", danger: true },
        ],
      );
      return choice === "force" ? revert(id, true) : false;
    }
    toast(err.message, "error");
    return false;
  }
}

function entry(e: EditRecord, reload: () => void): HTMLElement {
  const detail = h("div", { class: "edit-detail" });
  const row = h(
    "details",
    { class: "edit", "data-edit": e.id },
    h(
      "summary",
      null,
      h("span", { class: "id" }, `#${e.id}`),
      h("span", { class: "when muted small" }, when(e.time)),
      h("code", null, e.tool),
      h("span", { class: "what" }, `${e.action} ${describe(e)}`),
      // The agent label is whatever the caller said it was; the token is the server's record of who it was.
      h("span", { class: "who muted small" }, `by ${e.agent}`, " ", h("span", { class: "token", title: "The token that made this edit" }, `(token ${e.token})`)),
      e.reverts ? h("span", { class: "pill" }, `reverts #${e.reverts}`) : null,
      e.revertedBy ? h("span", { class: "pill" }, `reverted by #${e.revertedBy}`) : null,
      e.proposalId ? h("span", { class: "pill" }, `proposal #${e.proposalId}`) : null,
      e.groupId !== e.id ? h("span", { class: "pill" }, `part of #${e.groupId}`) : null,
    ),
    detail,
  );
  row.addEventListener("toggle", async () => {
    if (!row.open || detail.childElementCount) return;
    detail.textContent = "Loading…";
    const d = await get<{ id: number; changes: (EditRecord & { diff: string })[]; changedSince: string[] }>(`/api/edits/${e.id}`);
    clear(
      detail,
      d.changedSince.length ? h("p", { class: "warn" }, `Changed since this edit: ${d.changedSince.join(", ")}`) : null,
      d.changes.map((c) => [h("h3", null, `${c.action} ${describe(c)}`, c.action !== "delete" && c.path.endsWith(".md") ? [" ", h("a", { href: noteUrl(c.path), class: "small" }, "open")] : null), diffView(c.diff)]),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          {
            class: "danger revert",
            onclick: async () => {
              if (await revert(d.id, false)) reload();
            },
          },
          d.changes.length > 1 ? `Revert this call (${d.changes.length} changes)` : "Revert",
        ),
      ),
    );
  });
  return row;
}

export async function timelinePage(ctx: PageContext): Promise<Page> {
  const sp = ctx.url.searchParams;
  const f = { path: sp.get("path") ?? "", agent: sp.get("agent") ?? "", tool: sp.get("tool") ?? "" };
  const list = h("div", { class: "timeline" });
  const more = h("div");
  const status = h("p", { class: "muted", role: "status" });
  const go = (k: keyof typeof f, v: string) => {
    const q = new URLSearchParams({ ...f, [k]: v });
    for (const [key, val] of [...q.entries()]) if (!val) q.delete(key);
    ctx.navigate(`/timeline${q.toString() ? `?${q}` : ""}`);
  };
  const pathInput = h("input", { type: "text", value: f.path, placeholder: "Note path", "aria-label": "Filter by note path" });
  pathInput.addEventListener("change", () => go("path", pathInput.value.trim()));
  const agentSel = h("select", { "aria-label": "Filter by agent", onchange: (e: Event) => go("agent", (e.target as HTMLSelectElement).value) }, h("option", { value: "" }, "All agents"));
  const toolSel = h("select", { "aria-label": "Filter by tool", onchange: (e: Event) => go("tool", (e.target as HTMLSelectElement).value) }, h("option", { value: "" }, "All tools"));
  clear(ctx.main, h("section", { class: "page" }, h("h1", null, "Agent edits"), h("div", { class: "filters" }, pathInput, agentSel, toolSel), status, list, more));

  const load = async (offset: number) => {
    const r = await get<{ items: EditRecord[]; total: number; facets?: { agents: string[]; tools: string[] } }>("/api/edits", { ...f, offset, limit: 50 });
    if (ctx.stale()) return;
    if (r.facets && agentSel.options.length === 1) {
      const facets = r.facets;
      for (const a of new Set([...facets.agents, f.agent].filter(Boolean))) agentSel.appendChild(h("option", { value: a, selected: a === f.agent }, a));
      for (const t of new Set([...facets.tools, f.tool].filter(Boolean))) toolSel.appendChild(h("option", { value: t, selected: t === f.tool }, t));
    }
    if (offset === 0) clear(list);
    status.textContent = r.total ? `${r.total} ${r.total === 1 ? "entry" : "entries"}, newest first` : "No agent edits match.";
    append(list, r.items.map((e) => entry(e, () => void load(0))));
    const next = offset + r.items.length;
    clear(more, next < r.total ? h("button", { class: "more", onclick: () => void load(next) }, "Older") : null);
  };
  await load(0);
  return {
    onEvent(e) {
      if (e.kind === "state" && !list.querySelector("details[open]")) void load(0);
    },
  };
}
