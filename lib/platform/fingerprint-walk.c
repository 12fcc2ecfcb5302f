// The CLI's freshness check in one native call (lib/platform/fingerprint-walk.ts):
// list every folder of the vault, then statx every file in two threads and sum
// each file's term of the fingerprint. Why C: the check is one statx per file
// (10k at 10k notes), and from JavaScript each also paid an FFI hop, a cold
// JIT and a hash call; why threads: the statx calls are the floor, and they
// split cleanly across cores.
//
// No #include: a machine without libc's headers must compile it (Bun's TinyCC
// at run time). What is declared by hand is fixed by the Linux ABI on 64-bit
// glibc: struct statx is the same on every architecture, and so are the first
// fields of struct dirent and the errno values used; two open(2) flags differ
// on Arm (below).
//
// The rules are lib/vault/scan.ts's walk: an entry whose name starts with ".",
// is one of the ignored names, is not UTF-8, or has a backslash or a control
// character is skipped (file or folder); folders are
// entered without following symlinks; only regular files count, stat'ed
// without following a symlink. Anything this walk cannot answer exactly (a
// file type readdir does not give, too many open files, a path too long, no
// memory) returns an error, and the caller walks in JavaScript instead.
//
// A file's term is lib/index/freshness.ts's Summer.add, bit for bit: the
// path's xxHash32 (seed 0) with the size's and the mtime's and ctime's bits
// mixed in by murmur3's finaliser, each time being the double Bun computes for
// mtimeMs and ctimeMs, the ctime with the inode folded in (change-stamp.ts).
// tests/speed-fingerprint-walk.test.ts checks both give the same fingerprint.

typedef unsigned long size_t;
typedef unsigned long pthread_t;
typedef unsigned int u32;

int openat(int dirfd, const char *path, int flags, ...);
int close(int fd);
int dup(int fd);
void *fdopendir(int fd);
void *readdir(void *dir);
int closedir(void *dir);
int statx(int dirfd, const char *path, int flags, unsigned int mask, void *buf);
int *__errno_location(void);
void *malloc(size_t n);
void *realloc(void *p, size_t n);
void free(void *p);
int pthread_create(pthread_t *thread, const void *attr, void *(*start)(void *), void *arg);
int pthread_join(pthread_t thread, void **ret);

#define O_RDONLY 0
#define O_CLOEXEC 02000000
// The two flags Linux numbers differently on Arm; an architecture not listed does not compile (the JavaScript walk runs).
#if defined(__x86_64__)
#define O_DIRECTORY 0200000
#define O_NOFOLLOW 0400000
#elif defined(__aarch64__)
#define O_DIRECTORY 040000
#define O_NOFOLLOW 0100000
#else
#error "fingerprint-walk.c: open(2) flags not known for this architecture"
#endif
#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_NO_AUTOMOUNT 0x800
#define STATX_WANTED 0x3c1 /* type, ctime, mtime, ino, size */
#define ENOENT 2
#define EACCES 13
#define ENOTDIR 20
#define ELOOP 40

#define DT_UNKNOWN 0
#define DT_DIR 4
#define DT_REG 8

#define ERR_ROOT (-2)
#define ERR_INEXACT (-3)

#define MAX_PATH 4096
#define MAX_FDS 256
#define MAX_THREADS 8

// One listed file, 8-byte aligned in a growing buffer (offsets only, so it can move):
//   0 u32 path length, 4 u32 name length, 8 i32 folder fd, 12 pad, 16 path bytes, NUL, pad.
#define HEAD 16
#define REC_SIZE(len) (HEAD + (((long)(len) + 1 + 7) & ~7L))

struct walk {
  unsigned char *buf;
  long cap;
  long pos;
  long count;
  const char *ignored; /* NUL-separated names, ending in an empty one */
  int fds[MAX_FDS];
  int nfds;
  int err;
  char rel[MAX_PATH];
};

struct sums {
  u32 count;
  u32 a;
  u32 b;
};

static u32 rotl(u32 x, int r) { return (x << r) | (x >> (32 - r)); }
static u32 read32(const unsigned char *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((u32)p[3] << 24); }

#define P1 0x9E3779B1u
#define P2 0x85EBCA77u
#define P3 0xC2B2AE3Du
#define P4 0x27D4EB2Fu
#define P5 0x165667B1u

static u32 xxh32(const unsigned char *p, long len) {
  const unsigned char *end = p + len;
  u32 h;
  if (len >= 16) {
    u32 v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
    for (; p + 16 <= end; p += 16) {
      v1 = rotl(v1 + read32(p) * P2, 13) * P1;
      v2 = rotl(v2 + read32(p + 4) * P2, 13) * P1;
      v3 = rotl(v3 + read32(p + 8) * P2, 13) * P1;
      v4 = rotl(v4 + read32(p + 12) * P2, 13) * P1;
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
  } else {
    h = P5;
  }
  h += (u32)len;
  for (; p + 4 <= end; p += 4) h = rotl(h + read32(p) * P3, 17) * P4;
  for (; p < end; p++) h = rotl(h + *p * P5, 11) * P1;
  h ^= h >> 15;
  h *= P2;
  h ^= h >> 13;
  h *= P3;
  return h ^ (h >> 16);
}

static u32 fmix(u32 h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

static void add_term(struct sums *s, const unsigned char *path, long len, unsigned long size, long sec, u32 nsec, long csec, u32 cnsec, unsigned long ino) {
  union { double d; unsigned long u; } mtime, change;
  mtime.d = (double)sec * 1e3 + (double)nsec / 1e6;
  change.d = (double)csec * 1e3 + (double)cnsec / 1e6;
  /* lib/platform/change-stamp.ts: the inode (rounded to a double, as Bun's Stats give it) mixed and XORed
     into the time's lowest 16 mantissa bits. */
  unsigned long r = (unsigned long)(double)ino;
  change.u ^= fmix((u32)r ^ fmix((u32)(r >> 32) ^ 0x165667b1u)) & 0xffffu;
  u32 c = fmix((u32)change.u ^ fmix((u32)(change.u >> 32) ^ 0x27d4eb2fu));
  u32 p = xxh32(path, len);
  u32 lo = (u32)mtime.u, hi = (u32)(mtime.u >> 32);
  u32 sz = (u32)size, szHi = (u32)(size >> 32);
  s->count++;
  s->a += fmix(p ^ fmix(lo ^ fmix(hi ^ fmix(sz ^ fmix(szHi ^ c ^ 0x2545f491u)))));
  s->b += fmix(fmix(p ^ 0x9e3779b9u) ^ fmix(sz ^ fmix(hi ^ fmix(lo ^ fmix(szHi ^ fmix(c ^ 0x61c88647u))))));
}

// Stats one record; adds its term when it is (still) a regular file.
static void stat_record(struct sums *s, unsigned char *r) {
  unsigned char st[256];
  u32 len = *(u32 *)r;
  const char *name = (const char *)(r + HEAD + len - *(u32 *)(r + 4));
  if (statx(*(int *)(r + 8), name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANTED, st) != 0) return;
  if ((*(u32 *)st & STATX_WANTED) != STATX_WANTED || ((*(unsigned short *)(st + 28)) & 0170000) != 0100000) return;
  add_term(s, r + HEAD, len, *(unsigned long *)(st + 40), *(long *)(st + 112), *(u32 *)(st + 120), *(long *)(st + 96), *(u32 *)(st + 104), *(unsigned long *)(st + 32));
}

// Whether a name is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
// scan.ts's walk gets names as JavaScript strings: one that is not UTF-8 comes back with U+FFFD in
// it, names no file, and is skipped; so it is skipped here too.
static int utf8(const unsigned char *s) {
  while (*s) {
    unsigned c = *s;
    int n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
    if (n < 0) return 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    s++;
    for (int i = 0; i < n; i++, s++) {
      if (*s < (i == 0 ? lo : 0x80) || *s > (i == 0 ? hi : 0xBF)) return 0;
    }
  }
  return 1;
}

static void fail(struct walk *w, int err) {
  if (!w->err) w->err = err;
}

static int room(struct walk *w, long need) {
  if (w->pos + need <= w->cap) return 1;
  long cap = w->cap * 2;
  while (cap < w->pos + need) cap *= 2;
  unsigned char *grown = realloc(w->buf, cap);
  if (!grown) return 0;
  w->buf = grown;
  w->cap = cap;
  return 1;
}

// A backslash or a control character: a name no tool path can spell (lib/vault/unaddressable.ts), left out.
static int unspellable(const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p == '\\' || *p < 0x20 || *p == 0x7f) return 1;
  return 0;
}

// Lists one folder (fd, owned here) and those under it, depth first. Past MAX_FDS
// folders kept open, a folder's files are stat'ed while it is listed, into `now`.
static void list(struct walk *w, struct sums *now, int fd, int rellen) {
  // A second descriptor to stat the folder's files by after the listing (closedir closes the first).
  int statfd = dup(fd);
  if (statfd < 0) { close(fd); fail(w, ERR_INEXACT); return; }
  int keep = w->nfds < MAX_FDS;
  if (keep) w->fds[w->nfds++] = statfd;
  void *d = fdopendir(fd);
  if (!d) { close(fd); if (!keep) close(statfd); fail(w, ERR_INEXACT); return; }
  for (;;) {
    unsigned char *e = readdir(d);
    if (!e) break;
    const char *name = (const char *)(e + 19);
    unsigned char type = e[18];
    if (name[0] == '.') continue; /* hidden, and "." / ".." themselves */
    int skip = 0;
    for (const char *p = w->ignored; *p && !skip; ) {
      const char *q = name;
      /* ASCII letters in any case, as lib/vault/paths.ts (the names given are lower-case): NODE_MODULES on a
         disk that ignores case is the same folder, and a mismatch here made every CLI search take the slow path. */
      while (*p && *p == ((*q >= 'A' && *q <= 'Z') ? *q + 32 : *q)) p++, q++;
      skip = !*p && !*q;
      while (*p) p++;
      p++;
    }
    if (skip || !utf8((const unsigned char *)name) || unspellable(name)) continue;
    if (type == DT_UNKNOWN) { fail(w, ERR_INEXACT); break; }
    if (type != DT_DIR && type != DT_REG) continue;
    int nl = 0;
    while (name[nl]) nl++;
    int l = rellen ? rellen + 1 : 0;
    if (l + nl + 1 >= MAX_PATH) { fail(w, ERR_INEXACT); break; }
    if (rellen) w->rel[rellen] = '/';
    for (int i = 0; i <= nl; i++) w->rel[l + i] = name[i];
    if (type == DT_DIR) {
      int sub = openat(statfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        int e2 = *__errno_location();
        // Vanished, unreadable, or swapped for a link since it was listed: skipped, as scan.ts skips it.
        if (e2 != ENOENT && e2 != EACCES && e2 != ENOTDIR && e2 != ELOOP) { fail(w, ERR_INEXACT); break; }
        continue;
      }
      list(w, now, sub, l + nl);
      if (w->err) break;
      continue;
    }
    long need = REC_SIZE(l + nl);
    if (!room(w, need)) { fail(w, ERR_INEXACT); break; }
    unsigned char *r = w->buf + w->pos;
    *(u32 *)r = l + nl;
    *(u32 *)(r + 4) = nl;
    *(int *)(r + 8) = statfd;
    for (int i = 0; i <= l + nl; i++) r[HEAD + i] = w->rel[i];
    if (!keep) {
      stat_record(now, r); /* the record is not kept: the next one overwrites it */
      continue;
    }
    w->pos += need;
    w->count++;
  }
  closedir(d);
  if (!keep) close(statfd);
}

struct part {
  struct walk *w;
  long from;
  long to;
  struct sums sums;
};

static void *stat_part(void *arg) {
  struct part *p = arg;
  long k = 0;
  for (long pos = 0; pos < p->w->pos && k < p->to; k++) {
    unsigned char *r = p->w->buf + pos;
    if (k >= p->from) stat_record(&p->sums, r);
    pos += REC_SIZE(*(u32 *)r);
  }
  return 0;
}

// The vault's fingerprint into out[0..2] (count, a, b); returns 0, or ERR_*.
static int fingerprint_walk(const char *root, const char *ignored, int threads, u32 *out) {
  struct walk *w = malloc(sizeof(struct walk));
  if (!w) return ERR_INEXACT;
  w->cap = 1 << 20;
  w->buf = malloc(w->cap);
  if (!w->buf) { free(w); return ERR_INEXACT; }
  w->pos = 0; w->count = 0; w->ignored = ignored; w->nfds = 0; w->err = 0;
  w->rel[0] = 0;
  struct sums total = { 0, 0, 0 };
  int fd = openat(AT_FDCWD, root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) { free(w->buf); free(w); return ERR_ROOT; }
  list(w, &total, fd, 0);
  int result = w->err;
  if (!result) {
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    struct part parts[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
      parts[t].w = w;
      parts[t].from = w->count * t / threads;
      parts[t].to = w->count * (t + 1) / threads;
      parts[t].sums.count = 0; parts[t].sums.a = 0; parts[t].sums.b = 0;
      // The first part runs on this thread; a thread that cannot start leaves its part to this one.
      started[t] = t > 0 && pthread_create(&ids[t], 0, stat_part, &parts[t]) == 0;
    }
    stat_part(&parts[0]);
    for (int t = 1; t < threads; t++) {
      if (started[t]) pthread_join(ids[t], 0);
      else stat_part(&parts[t]);
    }
    for (int t = 0; t < threads; t++) {
      total.count += parts[t].sums.count;
      total.a += parts[t].sums.a;
      total.b += parts[t].sums.b;
    }
    out[0] = total.count;
    out[1] = total.a;
    out[2] = total.b;
  }
  for (int i = 0; i < w->nfds; i++) close(w->fds[i]);
  free(w->buf);
  free(w);
  return result;
}

// The same walk on a thread of its own, so that the caller can work meanwhile (the CLI runs its
// search while the check runs). fingerprint_start returns a job for fingerprint_finish, which
// waits for it, stores the fingerprint as fingerprint_walk does and frees the job; null when
// out of memory. A job whose thread could not start has already run, on the caller's thread.
size_t strlen(const char *s);
void *memcpy(void *dst, const void *src, size_t n);

struct job {
  char *root;
  char *ignored;
  int threads;
  int status;
  int started;
  pthread_t id;
  u32 out[3];
};

static void *run_job(void *arg) {
  struct job *j = arg;
  j->status = fingerprint_walk(j->root, j->ignored, j->threads, j->out);
  return 0;
}

static char *copy(const char *s, size_t n) {
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

void *fingerprint_start(const char *root, const char *ignored, int threads) {
  struct job *j = malloc(sizeof(struct job));
  if (!j) return 0;
  // The caller's strings may be freed once this returns: the job keeps copies.
  size_t n = 0;
  while (ignored[n] || ignored[n + 1]) n++;
  j->root = copy(root, strlen(root) + 1);
  j->ignored = copy(ignored, n + 2);
  if (!j->root || !j->ignored) { free(j->root); free(j->ignored); free(j); return 0; }
  j->threads = threads;
  j->status = ERR_INEXACT;
  j->started = pthread_create(&j->id, 0, run_job, j) == 0;
  if (!j->started) run_job(j);
  return j;
}

int fingerprint_finish(void *handle, u32 *out) {
  struct job *j = handle;
  if (j->started) pthread_join(j->id, 0);
  int status = j->status;
  out[0] = j->out[0];
  out[1] = j->out[1];
  out[2] = j->out[2];
  free(j->root);
  free(j->ignored);
  free(j);
  return status;
}
