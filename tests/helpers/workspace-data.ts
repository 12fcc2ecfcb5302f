// A small project vault with Obsidian Bases files written the way Obsidian
// writes them (YAML; see Obsidian Help's Bases/ pages), over notes whose
// frontmatter the tests also keep as plain data, so that expected rows are
// computed here and not taken from the server.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./server";

export interface TaskFixture {
  path: string;
  title: string;
  fm: { status?: string; priority?: number; due?: string; tags?: string[]; done?: boolean; owner?: string };
  body: string;
}

export const TASKS: TaskFixture[] = [
  { path: "Tasks/Fix login bug.md", title: "Fix login bug", fm: { status: "doing", priority: 1, due: "2026-03-01", tags: ["bug", "auth"], done: false, owner: "Ada" }, body: "The login form drops the session cookie.\n" },
  { path: "Tasks/Write release notes.md", title: "Write release notes", fm: { status: "todo", priority: 3, due: "2026-04-15", tags: ["docs"], done: false, owner: "Grace" }, body: "Summarise the changes since 0.3.\n" },
  { path: "Tasks/Ship 0.4.md", title: "Ship 0.4", fm: { status: "done", priority: 2, due: "2026-02-10", tags: ["release"], done: true, owner: "Ada" }, body: "Tagged and published.\n" },
  { path: "Tasks/Archive/Old spike.md", title: "Old spike", fm: { status: "done", priority: 5, due: "2025-11-20", tags: ["spike", "auth"], done: true, owner: "Linus" }, body: "Tried OAuth device flow.\n" },
  { path: "Tasks/Rotate keys.md", title: "Rotate keys", fm: { status: "todo", priority: 2, tags: ["security", "auth"], done: false, owner: "Grace" }, body: "Rotate the signing keys before March.\n" },
  { path: "Tasks/Triage inbox.md", title: "Triage inbox", fm: { status: "todo", tags: ["chore"], done: false }, body: "Weekly.\n" },
];

export const OTHER_NOTES: { path: string; content: string }[] = [
  { path: "Projects/Lettuce.md", content: "---\ntags: [project]\nstatus: active\n---\n# Lettuce\n\nSee [[Fix login bug]] and [[Rotate keys]].\n" },
  { path: "Meetings/2026-03-02.md", content: "# Standup 2026-03-02\n\nDiscussed #auth work and [[Ship 0.4]].\n" },
  { path: "Inbox/Idea.md", content: "An idea with #bug/ui in it.\n" },
];

/** As Obsidian writes a base: global filters, property display names, views with order/sort/filters/limit. */
export const TASKS_BASE = `filters:
  and:
    - file.inFolder("Tasks")
    - file.ext == "md"
properties:
  note.status:
    displayName: Status
  file.name:
    displayName: Task
  priority:
    displayName: Priority
views:
  - type: table
    name: All tasks
    order:
      - file.name
      - status
      - priority
      - due
      - owner
    sort:
      - property: due
        direction: ASC
  - type: table
    name: Open
    filters:
      and:
        - status != "done"
    order:
      - file.name
      - status
    limit: 20
`;

/** Tags, or/not and comparisons: auth work that is not archived and not done, or anything urgent. */
export const AUTH_BASE = `filters:
  or:
    - and:
        - file.hasTag("auth")
        - not:
            - file.inFolder("Tasks/Archive")
            - status == "done"
    - priority < 2
views:
  - type: cards
    name: Auth board
`;

export const NO_VIEWS_BASE = `filters: 'file.name.startsWith("Ship") || owner == "Linus"'\n`;
export const UNSUPPORTED_BASE = `filters:\n  and:\n    - file.inFolder("Tasks")\n    - file.hasLink(this.file)\n`;
export const BROKEN_BASE = `filters:\n  and: [file.inFolder("Tasks"\nviews: {{{\n`;

function frontmatter(fm: TaskFixture["fm"]): string {
  const lines = Object.entries(fm).map(([k, v]) => (Array.isArray(v) ? `${k}:\n${v.map((x) => `  - ${x}`).join("\n")}` : `${k}: ${v}`));
  return `---\n${lines.join("\n")}\n---\n`;
}

export function taskContent(t: TaskFixture): string {
  return `${frontmatter(t.fm)}# ${t.title}\n\n${t.body}`;
}

export function write(root: string, rel: string, content: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), content);
}

/** A fresh temp vault holding the tasks, the other notes and the bases. The caller removes it. */
export function makeProjectVault(): string {
  const root = tempDir("lettuce-bases-");
  for (const t of TASKS) write(root, t.path, taskContent(t));
  for (const n of OTHER_NOTES) write(root, n.path, n.content);
  write(root, "Tasks.base", TASKS_BASE);
  write(root, "Boards/Auth.base", AUTH_BASE);
  write(root, "Ships.base", NO_VIEWS_BASE);
  write(root, "Broken/Linked.base", UNSUPPORTED_BASE);
  write(root, "Broken/Garbled.base", BROKEN_BASE);
  return root;
}

/** The expected members of each base, computed from the fixture data (not by the engine under test). */
export const EXPECTED = {
  tasks: () => TASKS.map((t) => t.path).sort(),
  auth: () =>
    TASKS.filter((t) => (t.fm.tags?.includes("auth") && !t.path.startsWith("Tasks/Archive/") && t.fm.status !== "done") || (t.fm.priority !== undefined && t.fm.priority < 2))
      .map((t) => t.path)
      .concat(OTHER_NOTES.filter((n) => /#auth\b|tags: \[.*auth/.test(n.content)).map((n) => n.path))
      .sort(),
  ships: () => TASKS.filter((t) => t.path.split("/").pop()!.startsWith("Ship") || t.fm.owner === "Linus").map((t) => t.path).sort(),
};
