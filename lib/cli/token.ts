import { openStateDb } from "../store/state-db";
import { createToken, listTokens, revokeToken, SCOPES, type Scope } from "../store/tokens";
import { checkVaultDir } from "../vault-dir";
import { parse, UsageError, type Command } from "./command";
import { shownInTerminal } from "../control-chars";

export const tokenCommand: Command = {
  name: "token",
  summary: "Create, list and revoke access tokens",
  usage: [
    "lettuce token create <vault> --scope read|propose|write --name NAME [--json]",
    "lettuce token list <vault> [--json]",
    "lettuce token revoke <vault> <name-or-id>",
    "",
    "Scopes: read (read tools only), propose (reads; writes become proposals a person reviews),",
    "write (everything). A token is shown once, on creation; only its hash is stored.",
  ].join("\n"),
  async run(argv) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parse(rest, { scope: { type: "string" }, name: { type: "string" }, json: { type: "boolean" } });
    if (!sub) throw new UsageError("token needs a subcommand: create, list or revoke");
    if (!["create", "list", "revoke"].includes(sub)) throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}: use create, list or revoke`);
    if (!positionals[0]) throw new UsageError(`token ${sub} needs a vault path`);
    const root = checkVaultDir(positionals[0]);
    const db = openStateDb(root);
    try {
      if (sub === "create") {
        const scope = values.scope as Scope | undefined;
        if (!scope) throw new UsageError("token create needs --scope read|propose|write");
        if (!SCOPES.includes(scope)) throw new UsageError(`no scope ${JSON.stringify(scope)}: --scope is read, propose or write`);
        if (!values.name) throw new UsageError("token create needs --name NAME");
        let created;
        try {
          created = createToken(db, values.name, scope);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        if (values.json) console.log(JSON.stringify({ ...created.info, token: created.token }));
        else {
          console.log(`Created ${scope} token "${values.name}". It is shown only now; store it somewhere safe:`);
          console.log(created.token);
        }
      } else if (sub === "list") {
        const tokens = listTokens(db);
        if (values.json) console.log(JSON.stringify(tokens));
        else if (!tokens.length) console.log("No active tokens.");
        // Escaped: a name made before names were checked (or written into state.db by hand) reaches the terminal.
        else for (const t of tokens) console.log(`${t.id}\t${shownInTerminal(t.name)}\t${t.scope}\tcreated ${t.createdAt}\tlast used ${t.lastUsedAt ?? "never"}`);
      } else {
        const which = positionals[1];
        if (!which) throw new UsageError("token revoke needs a token name or id");
        if (!revokeToken(db, which)) {
          console.error(`lettuce token: no active token named or numbered ${JSON.stringify(which)}`);
          return 1;
        }
        console.log(`Revoked ${which}.`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};
