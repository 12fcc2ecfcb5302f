import { z } from "zod";
import { listFolders as folderTree } from "../lib/vault/folders";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const listFolders = defineTool({
  name: "list_folders",
  description: "Every folder's path, empty ones included: [\"Projects\", \"Projects/2026\", …].",
  details: "Every folder in the vault as a plain array of vault-relative paths ([\"Projects\", \"Projects/2026\", …]), empty ones included; hidden folders (.trash, .obsidian, …) excluded.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault }) {
    // From the disk (kept while no folder changes), so that empty folders are listed too.
    return folderTree(vault.root);
  },
});

export const folderTools = [listFolders];
