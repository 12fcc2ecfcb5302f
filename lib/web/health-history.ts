// The wiki-health score over time: one row per day in state.db (the day's
// latest figure), so the Health page can draw whether the wiki is getting
// healthier. Recorded by the server, not by the page: a vault nobody looks at
// still gets its daily point.
import type { Database } from "bun:sqlite";
import type { WikiHealth } from "../hygiene/health";
import { whenQuiet } from "../offload/activity";
import { offloaded } from "../offload/offloaded";
import type { VaultContext } from "../vault-context";

export interface HealthPoint {
  day: string;
  score: number;
}

/** YYYY-MM-DD on the server's calendar. */
export function localDay(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export function recordHealth(db: Database, health: WikiHealth, day = localDay()): void {
  db.query("INSERT OR REPLACE INTO health_history(day, score, components) VALUES (?, ?, ?)").run(day, health.score, JSON.stringify(health));
}

/** The last `days` recorded points, oldest first. */
export function healthHistory(db: Database, days = 90): HealthPoint[] {
  const rows = db.query("SELECT day, score FROM health_history ORDER BY day DESC LIMIT ?").all(days) as HealthPoint[];
  return rows.reverse();
}

const HOUR = 60 * 60 * 1000;

/**
 * Record today's score once the index is current, then every hour while the
 * vault is open (so each day's row holds that day's last figure). A minute's
 * timer checks; the lint pass behind the score runs only when a record is due.
 * Returns the stop function.
 */
export function startHealthRecorder(vault: VaultContext, everyMs = HOUR, checkMs = 60_000): () => void {
  let last = -Infinity; // monotonic below: a wall-clock step back stopped the daily points for its length
  let stopped = false;
  // Background work: it waits until the server is quiet, and the whole-vault lint pass
  // behind the score runs in a read worker (seconds at 100k notes), not on the request thread.
  const check = async () => {
    if (vault.indexer.status.state !== "ready" || performance.now() - last < everyMs) return;
    last = performance.now();
    await whenQuiet();
    if (stopped) return;
    try {
      const health = await offloaded.health(vault);
      if (!stopped) recordHealth(vault.stateDbNoSync, health);
    } catch (e) {
      if (!stopped) console.error("lettuce: could not record the health score:", e);
    }
  };
  const timer = setInterval(() => void check(), checkMs);
  (timer as { unref?: () => void }).unref?.();
  void check();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
