// Read errors that say nothing about the file. A module of its own: parse workers load it, and they start
// at every cold index (no FFI or fs helpers with it).

const MOMENTARY = new Set(["EMFILE", "ENFILE", "ENOMEM", "EAGAIN", "EINTR", "EIO"]);

/**
 * Whether a file or folder could not be read for a reason of the moment (out of descriptors or memory, a disk
 * error): it is there, and a pass that took it for gone would leave a save unindexed for good, as no later
 * event names it. The pass fails instead, and is tried again.
 */
export function isMomentaryFault(e: unknown): boolean {
  return MOMENTARY.has((e as { code?: string } | null)?.code ?? "");
}
