import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";

// The vault argument's check and its errors, apart from lib/vault-context.ts:
// every CLI command imports these, and vault-context pulls in the indexer, the
// Markdown parser and the watcher (≈ 15 ms of module loading that a usage
// error, `--help` or a CLI search of an unchanged vault never needs).

export class VaultError extends Error {}
/** No vault argument at all: a usage mistake (the CLI exits 2 and shows the usage), not a bad vault. */
export class MissingVaultError extends VaultError {}

/**
 * Check a vault argument from the command line; throws VaultError with a message for people. The root
 * comes back as its real path: ~/Notes is often a link (to a synced folder; /tmp and /var are links on a
 * Mac), and the walk never follows a link, the root's included: given the link it listed nothing.
 */
export function checkVaultDir(dir: string | undefined): string {
  if (!dir) throw new MissingVaultError("Missing vault: give the path of a folder of Markdown notes");
  const root = resolve(dir);
  let st;
  try {
    st = statSync(root);
  } catch {
    throw new VaultError(`Vault not found: ${root} does not exist`);
  }
  if (!st.isDirectory()) throw new VaultError(`Not a vault: ${root} is not a directory`);
  try {
    return realpathSync(root);
  } catch {
    throw new VaultError(`Vault not found: ${root} could not be resolved`);
  }
}
