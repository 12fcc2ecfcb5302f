import type { Database } from "bun:sqlite";

// index.db is shared by every Lettuce process on a vault: a `serve`, a `lettuce stdio` under a desktop
// client, CLI commands. Each keeps things in memory (the link resolver's names, what it last indexed) that
// another process's commits make stale: links written against a name list that lacked a note made in the
// other process were stored broken for good, and a save the other process indexed first was no change to
// this one (await_directives never woke). The multi-process audit of 2026-12-05.

/** Tells whether another connection has committed to index.db since the last look (PRAGMA data_version). */
export class OtherWriters {
  private seen: number | null = null;

  constructor(private readonly db: Database) {}

  private version(): number {
    return (this.db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  /** True when another process committed since the last call (never on the first); this connection's own commits do not count. */
  wroteSince(): boolean {
    const v = this.version();
    const moved = this.seen !== null && v !== this.seen;
    this.seen = v;
    return moved;
  }
}
