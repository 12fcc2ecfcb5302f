import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const listFolders = defineTool({
  name: "list_folders",
  description: "Every folder's path, empty ones included: [\"Projects\", \"Projects/2026\", …].",
  details: "Every folder in the vault as a plain array of vault-relative paths ([\"Projects\", \"Projects/2026\", …]), empty ones included; hidden folders (.trash, .obsidian, …) excluded.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault, signal }) {
    // From the disk, so that empty folders are listed too: in a read worker, which keeps the tree while no folder changes.
    return offloaded.folders(vault, signal);
  },
});

export const folderTools = [listFolders];
