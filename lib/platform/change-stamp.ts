// What tells the index that a file at a known path may not be the file it read: its size, its mtime, and this
// stamp. The stamp is st_ctime (no tool can set it back, unlike the mtime) with the file's inode folded in: a
// folder put in another's place (git mv A B && git mv C A, a re-clone, unzip) brings files whose size, mtime
// and ctime can all equal the old ones' when they were written in one burst, and only the inode tells them
// apart (the sync audit of 2026-12-05: such a note stayed stale in the index for good).
//
// Folded into the double rather than kept beside it, so that every place that carries, stores and compares
// st_ctime (scan, parse workers, the notes and files rows, the freshness fingerprint, and its walk in C,
// lib/platform/fingerprint-walk.c, which computes the same bits) needs no new column. A 16-bit mix of the
// inode is XORed into the lowest bits of the time's mantissa (~16 ms at today's times): for one inode that is
// a one-to-one map, so two status change times stay as distinct as they were (replacing the bits instead
// merged writes under 16 ms apart); the stamp is compared for equality only, never read as a time.

/** murmur3's 32-bit finaliser: every input bit reaches every output bit. */
export function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** st_ctime in ms (as Bun computes ctimeMs) with the inode's 16-bit mix XORed into its lowest mantissa bits. */
export function changeStamp(ctimeMs: number, ino: number): number {
  // An inode past 2^53 arrives rounded, as Bun's Stats give it; the C walk rounds the same way.
  const lo = ino >>> 0;
  const hi = Math.floor(ino / 4294967296) >>> 0;
  f64[0] = ctimeMs;
  u32[0] = (u32[0]! ^ (fmix(lo ^ fmix(hi ^ 0x165667b1)) & 0xffff)) >>> 0;
  return f64[0]!;
}
