// The wiki-health score over time: one row per day in state.db (the day's
// latest figure), so the Health page can draw whether the wiki is getting
// healthier. Recorded by the server, not by the page: a vault nobody looks at
// still gets its daily point.
import type { Database } from "bun:sqlite";
import type { WikiHealth } from "../hygiene/health";
import { offloaded } from "../offload/pool";
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
  let last = 0;
  let closed = false;
  const check = () => {
    if (closed || vault.indexer.status.state !== "ready" || Date.now() - last < everyMs) return;
    last = Date.now();
    // In a read worker, where lint and wiki_health keep their plan: on the event loop this pass blocked requests
    // for seconds at 100k notes and kept a second whole-vault plan in the main thread's memory.
    offloaded
      .health(vault)
      .then((h) => {
        if (!closed) recordHealth(vault.stateDb, h);
      })
      .catch((e) => {
        if (!closed) console.error("lettuce: could not record the health score:", e);
      });
  };
  const timer = setInterval(check, checkMs);
  (timer as { unref?: () => void }).unref?.();
  check();
  return () => {
    closed = true;
    clearInterval(timer);
  };
}
