// The task set of bench/context.ts: questions over the corpora whose answer
// page is known (checked by hand against the files). A third are paraphrased:
// written in other words than the page uses, the case lexical ranking finds
// hardest. `answers` lists the acceptable pages (any one counts).

export interface ContextTask {
  corpus: "obsidian-help/en" | "dnd-srd-wiki";
  task: string;
  answers: string[];
  paraphrased: boolean;
}

const help = (task: string, answer: string, paraphrased = false): ContextTask => ({ corpus: "obsidian-help/en", task, answers: [answer], paraphrased });
const dnd = (task: string, answers: string[], paraphrased = false): ContextTask => ({ corpus: "dnd-srd-wiki", task, answers, paraphrased });

export const CONTEXT_TASKS: ContextTask[] = [
  help("How do I embed a PDF in a note?", "Linking notes and files/Embed files.md"),
  help("create an alias for a note so links find it under another name", "Linking notes and files/Aliases.md"),
  help("change the colour of nodes in the graph view", "Plugins/Graph view.md"),
  help("restore an older version of a note from file recovery snapshots", "Plugins/File recovery.md"),
  help("open the command palette and run a command", "Plugins/Command palette.md"),
  help("insert a template into the current note", "Plugins/Templates.md"),
  help("create today's daily note automatically on startup", "Plugins/Daily notes.md"),
  help("add a callout block with a custom title and make it foldable", "Editing and formatting/Callouts.md"),
  help("add properties such as tags and aliases to a note", "Editing and formatting/Properties.md"),
  help("nested tags and which characters a tag may contain", "Editing and formatting/Tags.md"),
  help("install and enable a community plugin", "Extending Obsidian/Community plugins.md"),
  help("add a CSS snippet to change how the app looks", "Extending Obsidian/CSS snippets.md"),
  help("set up a custom domain for my Publish site", "Obsidian Publish/Custom domains.md"),
  help("choose the sync region of my remote vault", "Obsidian Sync/Sync regions.md"),
  help("import my notes from Evernote", "Import notes/Import from Evernote.md"),
  help("import a Notion workspace export", "Import notes/Import from Notion.md"),
  help("customize the hotkeys of commands", "User interface/Hotkeys.md"),
  help("open a note in a pop-out window", "User interface/Pop-out windows.md"),
  help("save and load workspace layouts", "Plugins/Workspaces.md"),
  help("create a base from the notes in a folder", "Bases/Create a base.md"),
  help("write formulas in a base to compute a property", "Bases/Formulas.md"),
  help("highlight text on a web page with the web clipper", "Obsidian Web Clipper/Highlighter.md"),
  help("refund policy for a license purchase", "Licenses and payment/Refund policy.md"),
  help("enable two-factor authentication for my account", "Obsidian/2-factor authentication.md"),
  // Paraphrased: the page uses other words.
  help("my phone and my laptop should show the same notes", "Getting started/Sync your notes across devices.md", true),
  help("get back a paragraph I deleted from a page yesterday", "Plugins/File recovery.md", true),
  help("show which other pages point to the one I am reading", "Plugins/Backlinks.md", true),
  help("pin favourite pages so I can jump back to them later", "Plugins/Bookmarks.md", true),
  help("turn a page into a presentation deck", "Plugins/Slides.md", true),
  help("how many words have I typed in this document", "Plugins/Word count.md", true),
  help("capture a voice memo straight into my vault", "Plugins/Audio recorder.md", true),
  help("combine two pages into one", "Plugins/Note composer.md", true),
  help("jump to any file by typing part of its name", "Plugins/Quick switcher.md", true),
  help("an infinite whiteboard to arrange cards spatially", "Plugins/Canvas.md", true),
  help("switch the app to a dark colour scheme", "User interface/Appearance.md", true),
  help("make the interface show German instead of English", "User interface/Language settings.md", true),
  dnd("how much is an electrum piece worth in copper pieces", ["Equipment/Coinage.md"]),
  dnd("what does the poisoned condition do to a creature", ["Gamemastering/Conditions.md"]),
  dnd("ability score prerequisites for multiclassing", ["Characterizations/Multiclassing.md"]),
  dnd("fireball spell damage and area of effect", ["Spells/Fireball.md"]),
  dnd("dwarf racial traits and darkvision", ["Races/Dwarf.md"]),
  dnd("opportunity attack when a creature leaves your reach", ["Gameplay/Combat.md"]),
  dnd("lifestyle expenses per day for an adventurer", ["Equipment/Expenses.md"]),
  dnd("what the wish spell can do", ["Spells/Wish.md"]),
  dnd("how long can a character hold their breath before drowning", ["Gameplay/Adventuring.md"], true),
  dnd("take a breather for an hour to regain hit points", ["Gameplay/Adventuring.md"], true),
  dnd("heal an ally by touching them", ["Spells/Cure Wounds.md"], true),
  dnd("the levels of tiredness a character accumulates without sleep", ["Gamemastering/Conditions.md"], true),
];
