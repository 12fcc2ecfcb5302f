// Proposals from propose-scoped agents: the queue, each with its diff,
// approve (applied through the write path, conflict-checked) or reject, and
// what the same agent proposed before.
import { ApiError, get, post } from "../api";
import { append, clear, h, noteUrl, toast, when } from "../dom";
import { diffView } from "../diff";
import type { Page, PageContext } from "../types";

interface ProposalRow {
  id: number;
  createdAt: string;
  token: string;
  agent: string;
  tool: string;
  path: string;
  summary: string;
  status: string;
  decidedAt: string | null;
  reason: string | null;
  editId: number | null;
}

const STATUSES = ["pending", "approved", "rejected", "withdrawn", "all"];

export async function proposalsPage(ctx: PageContext): Promise<Page> {
  const status = ctx.url.searchParams.get("status") ?? "pending";
  const agent = ctx.url.searchParams.get("agent") ?? "";
  const tbody = h("tbody");
  const more = h("div");
  const heading = h("p", { class: "muted", role: "status" });
  const filter = h(
    "div",
    { class: "filters" },
    h(
      "label",
      null,
      "Status ",
      h(
        "select",
        { onchange: (e: Event) => ctx.navigate(`/proposals?status=${(e.target as HTMLSelectElement).value}${agent ? `&agent=${encodeURIComponent(agent)}` : ""}`) },
        STATUSES.map((s) => h("option", { value: s, selected: s === status }, s)),
      ),
    ),
    agent ? h("span", null, ` · by ${agent} `, h("a", { href: `/proposals?status=${status}` }, "(all agents)")) : null,
  );
  const table = h(
    "table",
    { class: "list" },
    h("thead", null, h("tr", null, ["#", "When", "Agent", "Tool", "Note", "Summary", "Status"].map((c) => h("th", { scope: "col" }, c)))),
    tbody,
  );
  clear(ctx.main, h("section", { class: "page" }, h("h1", null, "Proposals"), filter, heading, table, more));
  const load = async (offset: number) => {
    const r = await get<{ items: ProposalRow[]; total: number }>("/api/proposals", { status, agent, offset, limit: 50 });
    if (ctx.stale()) return;
    if (offset === 0) clear(tbody);
    heading.textContent = r.total ? `${r.total} ${status === "all" ? "" : status + " "}proposal${r.total === 1 ? "" : "s"}` : `No ${status === "all" ? "" : status + " "}proposals.`;
    append(
      tbody,
      r.items.map((p) =>
        h(
          "tr",
          null,
          h("td", null, h("a", { href: `/proposals/${p.id}` }, `#${p.id}`)),
          h("td", null, when(p.createdAt)),
          h("td", null, h("a", { href: `/proposals?status=all&agent=${encodeURIComponent(p.agent)}` }, p.agent)),
          h("td", null, h("code", null, p.tool)),
          h("td", null, p.path),
          h("td", null, h("a", { href: `/proposals/${p.id}` }, p.summary)),
          h("td", null, h("span", { class: `pill ${p.status}` }, p.status)),
        ),
      ),
    );
    const next = offset + r.items.length;
    clear(more, next < r.total ? h("button", { class: "more", onclick: () => void load(next) }, "More") : null);
  };
  await load(0);
  return {
    onEvent(e) {
      if (e.kind === "state") void load(0);
    },
  };
}

interface ProposalDetail extends ProposalRow {
  args: Record<string, unknown>;
  diff: string;
  stale: { kind: string; message: string } | null;
  history: { id: number; createdAt: string; tool: string; path: string; summary: string; status: string }[];
}

/** Why a pending proposal can no longer be approved, said to the person (the server's message is written for the agent). */
function staleText(stale: { kind: string; message: string }): string {
  const tail = " The diff below is what the agent proposed. Reject it, and ask the agent to propose again if it is still wanted.";
  if (stale.kind === "conflict") return `The note changed after the agent proposed this, so it cannot be approved as it is.${tail}`;
  if (stale.kind === "note-not-found") return `The note is gone (moved or deleted) since the agent proposed this.${tail}`;
  if (stale.kind === "already-exists") return `A note now exists where this proposal would write or move to.${tail}`;
  return `Approving now would fail: ${stale.message.replace(/\.+$/, "")}.${tail}`;
}

export async function proposalPage(ctx: PageContext): Promise<Page> {
  const id = Number(ctx.url.pathname.split("/")[2]);
  const box = h("section", { class: "page proposal" });
  clear(ctx.main, box);
  const draw = async () => {
    const p = await get<ProposalDetail>(`/api/proposals/${id}`);
    if (ctx.stale()) return;
    const reason = h("input", { type: "text", placeholder: "Reason (optional, the agent sees it)", "aria-label": "Reason for rejecting", maxlength: "2000" });
    const act = async (what: "approve" | "reject") => {
      try {
        const r = await post(`/api/proposals/${id}/${what}`, what === "reject" ? { reason: reason.value } : {});
        toast(what === "approve" ? `Approved #${id}${r.editId ? `: edit #${r.editId}` : ""}` : `Rejected #${id}`);
        await draw();
      } catch (e) {
        const err = e as ApiError;
        toast(err.kind === "conflict" ? `Cannot approve: ${err.message}` : err.message, "error");
        await draw();
      }
    };
    clear(
      box,
      h("p", null, h("a", { href: "/proposals" }, "← Proposals")),
      h("h1", null, `Proposal #${p.id}: ${p.summary}`),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Status"),
        h("dd", null, h("span", { class: `pill ${p.status}` }, p.status), p.reason ? ` — ${p.reason}` : "", p.editId ? [" — ", h("a", { href: `/timeline?path=${encodeURIComponent(p.path)}` }, `edit #${p.editId}`)] : ""),
        h("dt", null, "Agent"),
        h("dd", null, `${p.agent} (token ${p.token})`),
        h("dt", null, "Tool"),
        h("dd", null, h("code", null, p.tool)),
        h("dt", null, "Note"),
        h("dd", null, p.path.endsWith(".md") ? h("a", { href: noteUrl(p.path) }, p.path) : p.path),
        h("dt", null, "Proposed"),
        h("dd", null, when(p.createdAt)),
      ),
      p.stale ? h("div", { class: "warn", role: "alert" }, staleText(p.stale)) : null,
      p.status === "pending"
        ? h(
            "div",
            { class: "actions" },
            h("button", { class: "primary", id: "approve", onclick: () => void act("approve"), disabled: !!p.stale }, "Approve"),
            reason,
            h("button", { class: "danger", id: "reject", onclick: () => void act("reject") }, "Reject"),
          )
        : null,
      h("h2", null, p.status === "pending" && !p.stale ? "What approving changes" : "Diff"),
      diffView(p.diff),
      h("h2", null, `What ${p.agent} proposed before`),
      p.history.length
        ? h(
            "ul",
            { class: "plain-list" },
            p.history.map((q) => h("li", null, h("a", { href: `/proposals/${q.id}` }, `#${q.id} ${q.summary}`), " ", h("span", { class: `pill ${q.status}` }, q.status), h("span", { class: "muted small" }, ` ${when(q.createdAt)}`))),
          )
        : h("p", { class: "muted" }, "Nothing else."),
    );
  };
  await draw();
  return {
    onEvent(e) {
      if (e.kind === "state" || (e.kind === "index" && e.data.changed.length)) void draw();
    },
  };
}
