// The tool catalogue: every family, in the order tools/list shows them.
import { activityTools } from "./activity";
import { attachmentTools } from "./attachments";
import { directiveTools } from "./directives";
import { folderTools } from "./folders";
import { linkTools } from "./links";
import { lintTools } from "./lint";
import { noteTools } from "./notes";
import { proposalTools } from "./proposals";
import { searchTools } from "./search";
import { semanticTools } from "./semantic";
import { suggestLinkTools } from "./suggest-links";
import { tagTools } from "./tags";
import type { ToolDef } from "./types";
import { vaultInfoTools } from "./vault-info";
import { writeTools } from "./write";
import { workspaceTools } from "./workspace";
import { contextTools } from "./context";

export const ALL_TOOLS: ToolDef[] = [
  ...vaultInfoTools,
  ...noteTools,
  ...linkTools,
  ...searchTools,
  ...semanticTools,
  ...tagTools,
  ...folderTools,
  ...attachmentTools,
  ...lintTools,
  ...suggestLinkTools,
  ...activityTools,
  ...directiveTools,
  ...workspaceTools,
  ...contextTools,
  ...writeTools,
  ...proposalTools,
] as unknown as ToolDef[];
