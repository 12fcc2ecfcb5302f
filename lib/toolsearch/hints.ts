// Plain-language phrasings of what each tool is for, indexed beside its
// description (not shown in tools/list), so that an agent's request in its
// own words ("who links to this note") finds the tool whose description uses
// other words ("every link into a note"). Keyed by tool name; tools of other
// branches may be listed before they exist. Keep each to the tool's purpose:
// synonyms and typical requests, not every query anyone might type.
const HINTS: Record<string, string> = {
  get_vault_info: "start here, first call, orientation, overview of the vault, what can I do, capabilities, connect, session start",
  list_notes: "list pages in a folder, browse notes, directory listing, files in a folder, all notes",
  read_note: "open a note, read a page, get the full text, view the contents of a document, fetch a note",
  read_outline: "headings only, table of contents, structure of a long note, skim a page, sections",
  list_outgoing_links: "links from this note, pages it references, what does this note link to or point at, outbound links",
  list_backlinks: "who links here, incoming links, inbound references, which notes mention or cite this page, linked from",
  link_graph: "graph around a note, neighbourhood, connected notes, hops, network of links, related by links",
  search: "keyword search, find words, exact phrase, full text, look up a term, grep the vault",
  semantic_search: "search by meaning, concept, topic, notes about a subject, fuzzy, similar ideas, natural language question",
  related_notes: "similar notes, nearest neighbours, notes like this one, unlinked related pages, what else is relevant",
  find_duplicates: "duplicate notes, near-duplicates, repeated content, same thing written twice, merge candidates, redundant",
  topic_map: "clusters, themes, group notes by topic, topics overview, categorise the vault, missing hub or index pages",
  reindex_embeddings: "rebuild embeddings, refresh vectors, re-embed, update the semantic index after an import",
  eval: "evaluate retrieval quality, benchmark questions, recall, precision, test answers, measure search",
  list_tags: "all tags, tag counts, most used tags, tag cloud, which tags exist",
  notes_by_tag: "notes with a tag, tagged pages, filter by tag, everything labelled with a hashtag",
  list_folders: "folders, directories, folder tree, vault structure",
  list_attachments: "images, PDFs, pictures, files that are not notes, attachments, media",
  read_attachment: "read an image or PDF, download a file, binary content, base64",
  lint: "problems, broken links, orphan notes, tag typos, hygiene check, validate the vault, errors and warnings",
  wiki_health: "health score, overall quality, how healthy is the wiki, metrics, progress",
  suggest_links: "unlinked mentions, names that should be wikilinks, add missing links, link suggestions",
  recent_activity: "log entries, history of work, what happened recently, ingest log, uncompiled sources",
  agent_mentions: "@mentions, who asked me, messages for an agent, handle, tagged person",
  pending_directives: "tasks for the AI, to-dos left by a person, instructions in callouts, work waiting, ai callout",
  await_directives: "wait for new tasks, long poll, block until work arrives, listen for instructions, notify me",
  write_note: "create a new note, new page, make a file, replace a whole note, save a document",
  apply_edits: "find and replace, fix a typo, small edit, change a sentence or word, correct text",
  patch_section: "edit one section, rewrite under a heading, append to a section, update part of a page",
  file_page: "save an answer as a page, bank a result, write up findings with citations and sources",
  append_log: "add a log entry, record what was done, journal, changelog, note the work in log.md",
  move_note: "rename a note, move a page to another folder, fix links after a rename, relocate",
  delete_note: "delete, remove, trash a note, get rid of a page, discard",
  complete_directive: "finish a task, mark done, close a directive, answer the request, resolve a to-do",
  list_my_proposals: "my proposals, suggested changes awaiting review, approval status, pending changes",
  withdraw_proposal: "cancel a proposal, retract a suggestion, take back a proposed change",
  get_database_schema: "database columns, fields, properties of a base, table structure, views, schema",
  query_database: "database rows, table records, query a base, filter rows by status, Obsidian Bases entries",
  get_changes_since: "what changed, changes since a time, diff since last sync, new, edited or deleted notes, updates feed",
  list_members: "members, users, who has access, people and tokens, roles, permissions",
  query_audit_log: "audit log, which tools agents called, activity history, failed calls, who did what, security",
  search_tools: "find a tool, which tool should I use, tool catalogue, discover capabilities",
  // workspace-read branch (issue 10)
  prepare_context: "context pack, gather context before a task, background for coding work, relevant knowledge",
  search_workspace: "search pages and databases, find a page by title, workspace search",
  list_workspace: "browse the workspace tree, list pages and databases, sidebar, children of a page",
  get_page: "read a page or database row, page content, outline mode",
  get_pages: "read several pages at once, batch fetch by ids",
  get_related_pages: "related pages, parent and children, siblings, pages citing a source file",
};

export function hintsFor(name: string): string {
  return HINTS[name] ?? "";
}
