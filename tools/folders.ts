import { readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { isIgnoredPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

/** Folders straight from the disk, so that empty ones are listed too. */
export function listFolderPaths(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(rel ? join(root, rel) : root, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of entries) {
      if (!d.isDirectory() || isIgnoredPath(d.name)) continue;
      const sub = rel ? `${rel}/${d.name}` : d.name;
      out.push(sub);
      walk(sub);
    }
  };
  walk("");
  return out.sort();
}

export const listFolders = defineTool({
  name: "list_folders",
  description: 'Every folder in the vault as a plain array of vault-relative paths (["Projects", "Projects/2026", …]), empty ones included; hidden folders (.trash, .obsidian, …) excluded.',
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault }) {
    return listFolderPaths(vault.root);
  },
});

export const folderTools = [listFolders];
