import { ToolError } from "../errors";
import { VaultError } from "../vault-context";
import { VERSION } from "../version";
import { UsageError, type Command } from "./command";
import { configCommand } from "./config";
import { editsCommand, revertCommand } from "./edits";
import { healthCommand, lintCommand } from "./hygiene";
import { indexCommand, searchCommand } from "./index-search";
import { loginCommand } from "./login";
import { proposalsCommand } from "./proposals";
import { embedCommand, evalCommand, relatedCommand } from "./semantic";
import { serveCommand, stdioCommand } from "./serve";
import { tokenCommand } from "./token";

export const COMMANDS: Command[] = [serveCommand, stdioCommand, indexCommand, searchCommand, tokenCommand, configCommand, lintCommand, healthCommand, editsCommand, revertCommand, proposalsCommand, embedCommand, relatedCommand, evalCommand, loginCommand];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `lettuce ${VERSION}: a local-first knowledge server for a folder of Markdown notes`,
    "",
    "Usage: lettuce <command> [options]",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `lettuce <command> --help` for a command's options.",
  ].join("\n");
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(mainHelp());
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    console.log(VERSION);
    return 0;
  }
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
    if (e instanceof UsageError) {
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
