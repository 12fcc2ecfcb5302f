// Trust and freshness of a page, for context packs (docs/workspace.md,
// "Reviews and trust" and "Staleness"):
// - human-reviewed: a person ran `lettuce review` on the note at exactly its
//   current content (hash); any later change undoes it.
// - external-human-asserted: the frontmatter claims a human review
//   (reviewed_by, verified_by, human_reviewed: true, trust: human:…). A file
//   saying so is not a review, so it is never promoted to human-reviewed.
// - unreviewed: neither.
// Deprecated: status deprecated|superseded|archived|obsolete, deprecated: true,
// archived: true, or a superseded_by link. Stale: the newest updated/reviewed
// date in the frontmatter is more than STALE_AFTER_DAYS old.
import type { Review } from "../store/reviews";

export type Trust = "human-reviewed" | "external-human-asserted" | "unreviewed";

export interface TrustInfo {
  trust: Trust;
  reviewedBy?: string;
  reviewedAt?: string;
  /** A review exists, of an earlier version of the note. */
  reviewOutdated?: true;
}

export const STALE_AFTER_DAYS = 365;
const DAY_MS = 86_400_000;

type Fm = Record<string, unknown>;

/** Frontmatter values by lower-cased key with `-`/`_` dropped ("Reviewed-By" = "reviewed_by" = "reviewedby"). */
function keyed(fm: Fm): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const [k, v] of Object.entries(fm)) m.set(k.toLowerCase().replace(/[-_ ]/g, ""), v);
  const knowledge = fm.knowledge;
  if (knowledge && typeof knowledge === "object" && !Array.isArray(knowledge)) {
    for (const [k, v] of Object.entries(knowledge as Fm)) {
      const key = k.toLowerCase().replace(/[-_ ]/g, "");
      if (!m.has(key)) m.set(key, v);
    }
  }
  return m;
}

/** A name written in a field: a non-empty string, or a list holding one. */
const named = (v: unknown): boolean => (typeof v === "string" ? v.trim() !== "" : Array.isArray(v) && v.some(named));
const REVIEWER_KEYS = ["reviewedby", "reviewer", "verifiedby", "approvedby"];
const REVIEW_FLAGS = ["humanreviewed", "reviewed", "verified"];
const HUMAN_CLAIM_KEYS = ["trust", "provenance", "review", "reviewstatus", "assertedby"];

/** Does the frontmatter claim a human review? */
export function claimsHumanReview(fm: Fm): boolean {
  const m = keyed(fm);
  if (REVIEWER_KEYS.some((k) => named(m.get(k)))) return true;
  if (REVIEW_FLAGS.some((k) => m.get(k) === true || (k === "reviewed" && named(m.get(k))))) return true;
  return HUMAN_CLAIM_KEYS.some((k) => {
    const v = m.get(k);
    const s = typeof v === "string" ? v : Array.isArray(v) ? v.filter((x) => typeof x === "string").join(" ") : "";
    return /(^|\s)human\b/i.test(s);
  });
}

export function trustOf(hash: string, fm: Fm, review: Review | undefined): TrustInfo {
  if (review && review.hash === hash) return { trust: "human-reviewed", reviewedBy: review.reviewer, reviewedAt: review.reviewedAt };
  const base: TrustInfo = { trust: claimsHumanReview(fm) ? "external-human-asserted" : "unreviewed" };
  return review ? { ...base, reviewOutdated: true } : base;
}

export interface Freshness {
  /** The frontmatter's status as written, "deprecated" when only a flag says so, else "current". */
  status: string;
  deprecated: boolean;
  stale: boolean;
  /** The newest updated/reviewed date (YYYY-MM-DD) from the frontmatter, else the file's modification day. */
  updated: string;
  updatedFrom: "frontmatter" | "file";
  supersededBy?: string;
}

const DEPRECATED_STATUS = /^(deprecated|superseded|archived|obsolete|retired)$/i;
const DATE_KEYS = ["updated", "lastupdated", "updatedat", "modified", "lastmodified", "datemodified", "reviewed", "reviewedat", "lastreviewed", "reviewdate"];

function dateOf(v: unknown): number | null {
  if (typeof v !== "string" && typeof v !== "number") return null;
  const s = String(v).trim();
  if (!/^\d{4}-\d{2}-\d{2}/.test(s)) return null;
  const t = Date.parse(s.length === 10 ? s + "T00:00:00Z" : s);
  return Number.isFinite(t) ? t : null;
}

const day = (t: number) => new Date(t).toISOString().slice(0, 10);

export function freshnessOf(fm: Fm, mtimeMs: number, now = Date.now()): Freshness {
  const m = keyed(fm);
  const rawStatus = m.get("status");
  const status = typeof rawStatus === "string" && rawStatus.trim() ? rawStatus.trim() : null;
  const sup = m.get("supersededby");
  const supersededBy = typeof sup === "string" && sup.trim() ? sup.trim() : Array.isArray(sup) && typeof sup[0] === "string" ? sup[0] : undefined;
  const deprecated = (status !== null && DEPRECATED_STATUS.test(status)) || m.get("deprecated") === true || m.get("archived") === true || supersededBy !== undefined;
  let newest: number | null = null;
  for (const k of DATE_KEYS) {
    const t = dateOf(m.get(k));
    // A date in the future (a typo, a plan) says nothing about staleness.
    if (t !== null && t <= now + DAY_MS && (newest === null || t > newest)) newest = t;
  }
  const stale = newest !== null && now - newest > STALE_AFTER_DAYS * DAY_MS;
  return {
    status: status ?? (deprecated ? (supersededBy ? "superseded" : "deprecated") : "current"),
    deprecated,
    stale,
    updated: day(newest ?? mtimeMs),
    updatedFrom: newest !== null ? "frontmatter" : "file",
    ...(supersededBy ? { supersededBy } : {}),
  };
}
