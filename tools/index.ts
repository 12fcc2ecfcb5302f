// The tool catalogue: every family, in the order tools/list shows them.
import { activityTools } from "./activity";
import { answerTools } from "./answer";
import { attachmentTools } from "./attachments";
import { auditTools } from "./audit";
import { changeTools } from "./changes";
import { databaseTools } from "./databases";
import { directiveTools } from "./directives";
import { folderTools } from "./folders";
import { linkTools } from "./links";
import { lintTools } from "./lint";
import { llmHygieneTools } from "./llm-hygiene";
import { memberTools } from "./members";
import { noteTools } from "./notes";
import { proposalTools } from "./proposals";
import { searchTools } from "./search";
import { semanticTools } from "./semantic";
import { suggestLinkTools } from "./suggest-links";
import { tagTools } from "./tags";
import { toolSearchTools } from "./tool-search";
import type { ToolDef } from "./types";
import { vaultInfoTools } from "./vault-info";
import { writeTools } from "./write";
import { registerToolCatalogue } from "../lib/toolsearch";
import { workspaceTools } from "./workspace";
import { contextTools } from "./context";

export const ALL_TOOLS: ToolDef[] = [
  ...vaultInfoTools,
  ...noteTools,
  ...linkTools,
  ...searchTools,
  ...semanticTools,
  ...answerTools,
  ...tagTools,
  ...folderTools,
  ...attachmentTools,
  ...lintTools,
  ...llmHygieneTools,
  ...suggestLinkTools,
  ...activityTools,
  ...directiveTools,
  ...workspaceTools,
  ...contextTools,
  ...writeTools,
  ...proposalTools,
  ...databaseTools,
  ...changeTools,
  ...memberTools,
  ...auditTools,
  ...toolSearchTools,
] as unknown as ToolDef[];

// Tool search's catalogue; each family (the tools of one module) is a tag. A tool in no family is tagged "other".
registerToolCatalogue(ALL_TOOLS, {
  vault: vaultInfoTools,
  notes: [...noteTools, ...folderTools],
  links: linkTools,
  search: [...searchTools, ...toolSearchTools],
  semantic: semanticTools,
  answer: answerTools,
  tags: tagTools,
  attachments: attachmentTools,
  hygiene: [...lintTools, ...llmHygieneTools, ...suggestLinkTools, ...activityTools],
  directives: directiveTools,
  write: writeTools,
  proposals: proposalTools,
  databases: databaseTools,
  changes: changeTools,
  members: memberTools,
  audit: auditTools,
  workspace: [...workspaceTools, ...contextTools],
});
