import { readFileSync } from "node:fs";
import { userInfo } from "node:os";

/**
 * The name of the user this process runs as, or "owner". Bun's userInfo() reads $USER and answers
 * "unknown" when it is unset (containers, CI, services started by init), so the account database
 * decides then: /etc/passwd's entry for this uid.
 */
export function osUserName(): string {
  let name = "";
  try {
    name = userInfo().username;
  } catch {
    /* no such user in this environment */
  }
  if (name && name !== "unknown") return name;
  const uid = process.getuid?.();
  if (uid !== undefined) {
    try {
      for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
        const f = line.split(":");
        if (f.length > 2 && Number(f[2]) === uid && f[0]) return f[0];
      }
    } catch {
      /* no passwd file (Windows) */
    }
  }
  return name && name !== "unknown" ? name : "owner";
}
