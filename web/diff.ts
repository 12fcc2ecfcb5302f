import { h } from "./dom";

/** A unified diff (from the `diff` package on the server) as coloured lines; text only. */
export function diffView(diff: string): HTMLElement {
  const lines = diff.replace(/\n$/, "").split("\n");
  return h(
    "pre",
    { class: "diff", tabindex: "0", "aria-label": "Diff" },
    lines.map((l) => {
      const cls =
        l.startsWith("+++") || l.startsWith("---") || l.startsWith("Index:") || l.startsWith("rename ") || l.startsWith("delete ") || l.startsWith("(not compared")
          ? "meta"
          : l.startsWith("@@")
            ? "hunk"
            : l.startsWith("+")
              ? "add"
              : l.startsWith("-")
                ? "del"
                : l.startsWith("\\")
                  ? "meta"
                  : "ctx";
      return h("span", { class: `line ${cls}` }, l + "\n");
    }),
  );
}
