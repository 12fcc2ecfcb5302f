// Files inside a `bun build --compile` binary. Bun puts every embedded file
// (workers, the model, sqlite-vec, web assets) under a virtual root:
// /$bunfs/root/ on Linux and macOS, B:/~BUN/root/ on Windows. Workers keep
// their source path there (compile.sh passes them as entry points); other
// files get a content-hashed name (vec0-6zn72t7p.so), listed in Bun.embeddedFiles.

const ROOTS = ["/$bunfs/root/", "B:/~BUN/root/", "B:\\~BUN\\root\\"];

/**
 * The virtual root of this binary's embedded files, or null when running from source.
 * By default judged from Bun.main (the binary's entry point): compile.sh builds with
 * --bytecode, where import.meta.url is the build machine's source path, not the binary's.
 */
export function embeddedRoot(url: string = Bun.main): string | null {
  const u = decodeURIComponent(url);
  for (const r of ROOTS) if (u.includes(r)) return r.replaceAll("\\", "/");
  return null;
}

export function isCompiled(): boolean {
  return embeddedRoot() !== null;
}

/**
 * What to hand `new Worker()` for a worker module: its embedded path in a
 * binary, else its source file next to `fromUrl` (the caller's import.meta.url).
 */
export function workerEntry(sourcePath: string, fromUrl: string, relToCaller: string): string {
  const root = embeddedRoot(fromUrl) ?? embeddedRoot();
  return root ? root + sourcePath : new URL(relToCaller, fromUrl).href;
}

/**
 * Whether a worker keeps the process alive: yes while it has work in hand, no when idle (an idle
 * worker must not hold a CLI process open). Never leave a busy worker unref'd: Bun's event loop,
 * waiting with nothing ref'd but an unref'd worker's reply to come, spins instead of sleeping —
 * measured, the waiting thread burnt as much CPU as the worker's job (a 4 ms search cost 4.3 ms
 * of main-thread CPU, and twice the wall time on two busy cores; ref'd, 0.14 ms).
 */
export function keepAlive(worker: Worker, busy: boolean): void {
  const w = worker as unknown as { ref?: () => void; unref?: () => void };
  if (busy) w.ref?.();
  else w.unref?.();
}

export interface EmbeddedFile {
  /** The name Bun gave it (content-hashed), e.g. vec0-6zn72t7p.so. */
  name: string;
  size: number;
  /** Where fs.readFileSync finds it inside the binary. */
  path: string;
}

/** Embedded files whose name matches `re` (none when running from source). */
export function embeddedFiles(re: RegExp = /./): EmbeddedFile[] {
  const root = embeddedRoot();
  if (!root) return [];
  const list = (Bun.embeddedFiles ?? []) as (Blob & { name?: string })[];
  return list.filter((b) => typeof b.name === "string" && re.test(b.name)).map((b) => ({ name: b.name!, size: b.size, path: root + b.name }));
}

/**
 * The files of compile.sh's ASSET_DIRS by their repo path ("web/dist/index.html"):
 * compile.sh stages each as <percent-encoded path>.asset, which Bun embeds as a
 * plain file named <that>-<hash>.asset. Empty when running from source (read
 * the folder itself there).
 */
export function embeddedAssets(): Map<string, EmbeddedFile> {
  const out = new Map<string, EmbeddedFile>();
  for (const f of embeddedFiles(/\.asset$/)) {
    const m = /^(.+)-[a-z0-9]+\.asset$/.exec(f.name);
    if (!m) continue;
    try {
      out.set(decodeURIComponent(m[1]!), f);
    } catch {
      /* not one of ours */
    }
  }
  return out;
}

/** One embedded asset by its repo path, or null. */
export function embeddedAsset(repoPath: string): EmbeddedFile | null {
  return embeddedAssets().get(repoPath) ?? null;
}
