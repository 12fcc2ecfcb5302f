// Prints how this build walks for the freshness fingerprint, and the fingerprint by that walk and by
// scan.ts's JavaScript walk, for the vault in argv[2]: compiled for another target (binaries-targets
// builds it for linux-arm64 and runs it under qemu), it checks the native walk where tests cannot run.
import { diskFingerprintJs } from "../../lib/index/freshness";
import { fingerprintWalkKind, startFingerprintWalk } from "../../lib/platform/fingerprint-walk";
import { IGNORED_DIRS } from "../../lib/vault/paths";

const root = process.argv[2]!;
console.log(JSON.stringify({ kind: fingerprintWalkKind(), native: startFingerprintWalk(root, IGNORED_DIRS)?.() ?? null, js: diskFingerprintJs(root) }));
