import { ToolError } from "../errors";
import { MissingVaultError, VaultError } from "../vault-context";
import { VERSION } from "../version";
import { answerCommand } from "./answer";
import { auditCommand } from "./audit";
import { UsageError, type Command } from "./command";
import { configCommand } from "./config";
import { editsCommand, revertCommand } from "./edits";
import { healthCommand, lintCommand } from "./hygiene";
import { indexCommand, searchCommand } from "./index-search";
import { loginCommand } from "./login";
import { proposalsCommand } from "./proposals";
import { doctorCommand } from "./doctor";
import { reviewCommand } from "./review";
import { embedCommand, evalCommand, relatedCommand } from "./semantic";
import { serveCommand, stdioCommand } from "./serve";
import { tokenCommand } from "./token";
import { versionCommand } from "./version";

export const COMMANDS: Command[] = [serveCommand, stdioCommand, indexCommand, searchCommand, tokenCommand, configCommand, lintCommand, healthCommand, editsCommand, revertCommand, proposalsCommand, reviewCommand, embedCommand, relatedCommand, evalCommand, answerCommand, auditCommand, loginCommand, doctorCommand, versionCommand];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `lettuce ${VERSION}: a local-first knowledge server for a folder of Markdown notes`,
    "",
    "Usage: lettuce <command> [options]",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `lettuce help <command>` (or `lettuce <command> --help`) for a command's options.",
    "Exit codes: 0 success, 1 failure (a missing vault folder, a refusal, lint warnings), 2 a usage mistake.",
  ].join("\n");
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    // `lettuce help <command>` is that command's --help, as in git.
    const topic = name === "help" ? rest[0] : undefined;
    const cmd = topic ? COMMANDS.find((c) => c.name === topic) : undefined;
    if (topic && !cmd) {
      console.error(`lettuce: no command ${JSON.stringify(topic)}\n\n${mainHelp()}`);
      return 2;
    }
    console.log(cmd ? cmd.usage : mainHelp());
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-V" || name === "-v") return runCli(["version", ...rest]);
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    console.error(`lettuce: unknown command ${JSON.stringify(name)}\n\n${mainHelp()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(cmd.usage);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof UsageError || e instanceof MissingVaultError) {
      console.error(`lettuce ${cmd.name}: ${e.message}\n\n${cmd.usage}`);
      return 2;
    }
    // A refusal from the engine (a conflict, an unknown id, no provider): its message is for people.
    if (e instanceof VaultError || e instanceof ToolError) {
      console.error(`lettuce ${cmd.name}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
