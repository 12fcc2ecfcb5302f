// The tool catalogue: every family, in the order tools/list shows them.
import { attachmentTools } from "./attachments";
import { folderTools } from "./folders";
import { linkTools } from "./links";
import { noteTools } from "./notes";
import { searchTools } from "./search";
import { tagTools } from "./tags";
import type { ToolDef } from "./types";
import { vaultInfoTools } from "./vault-info";

export const ALL_TOOLS: ToolDef[] = [
  ...vaultInfoTools,
  ...noteTools,
  ...linkTools,
  ...searchTools,
  ...tagTools,
  ...folderTools,
  ...attachmentTools,
] as unknown as ToolDef[];
