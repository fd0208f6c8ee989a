/*
 * hermesd-refused: loaded (LD_PRELOAD) into every process of another agent's confined shell
 * command, it records each write the confinement refused — the path a call that writes (open
 * for writing or creating, fopen "w"/"a"/"+", rename, link, unlink, mkdir, truncate…) was
 * refused with EROFS, EACCES or EPERM — as one line, the absolute path, appended to the file
 * $HERMESD_REFUSED names (src/guard/agent-shell.ts sets both). The daemon reads that file after
 * the agent's next shell call and names the rule of each path it protects
 * (src/guard/refused-writes.ts): so the model is told why even when the command threw its own
 * error away (`… 2>/dev/null &`). It changes no call's result and no errno; it records, nothing
 * more. Programs that bypass the C library (static binaries, raw syscalls) are not seen.
 * Built by `npm run build` (dist/client/) or by the daemon: src/guard/refused-preload.ts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);

/* The kernel's open: the record itself must not be recorded, nor wait for dlsym. */
static int real_open(const char *path, int flags, mode_t mode) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* Appends `path` (made absolute against `dirfd` or the working folder) to $HERMESD_REFUSED. */
static void record(int dirfd, const char *path) {
  const char *file = getenv("HERMESD_REFUSED");
  if (!file || !*file || !path || !*path) return;
  char base[PATH_MAX] = "";
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t n = readlink(link, base, sizeof base - 1);
      if (n <= 0) return;
      base[n] = '\0';
    }
  }
  char line[PATH_MAX * 2 + 2];
  int n = path[0] == '/' ? snprintf(line, sizeof line, "%s\n", path) : snprintf(line, sizeof line, "%s/%s\n", base, path);
  if (n <= 0 || n >= (int)sizeof line || memchr(line, '\n', (size_t)n - 1)) return;
  int fd = real_open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  close(fd);
}

/* Whether errno says a sandbox (or a permission) refused a write. */
static int refused(int err) { return err == EROFS || err == EACCES || err == EPERM; }
static int writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)); }
static int writes_mode(const char *mode) { return mode && strpbrk(mode, "wa+") != NULL; }

#define NEXT(type, name) \
  static type next; \
  if (!next) next = (type)dlsym(RTLD_NEXT, name); \
  if (!next) { errno = ENOSYS; return -1; }

/* The mode argument of open(2), there only when a file may be created. */
#define MODE_OF(flags, last) \
  mode_t mode = 0; \
  if ((flags) & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, last); mode = (mode_t)va_arg(ap, int); va_end(ap); }

#define AFTER(dirfd, path, ok, writing) \
  if (!(ok) && (writing)) { int err = errno; if (refused(err)) record(dirfd, path); errno = err; }

/* A call on two paths (rename, link): both are recorded, either may be the protected one. */
#define AFTER2(fromfd, from, tofd, to, ok) \
  if (!(ok)) { int err = errno; if (refused(err)) { record(tofd, to); record(fromfd, from); } errno = err; }

/*
 * The open family is resolved when the library loads; a call that comes before (an allocator's
 * own start-up opens files, and dlsym may allocate) goes to the kernel directly, never to dlsym.
 */
static open_fn next_open, next_open64;
static int (*next_openat)(int, const char *, int, ...), (*next_openat64)(int, const char *, int, ...);
__attribute__((constructor)) static void resolve(void) {
  next_open = (open_fn)dlsym(RTLD_NEXT, "open");
  next_open64 = (open_fn)dlsym(RTLD_NEXT, "open64");
  next_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
  next_openat64 = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
}

#define OPEN(name, resolved) \
  int name(const char *path, int flags, ...) { \
    MODE_OF(flags, flags); \
    int fd = resolved ? resolved(path, flags, mode) : (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode); \
    AFTER(AT_FDCWD, path, fd >= 0, writes(flags)); \
    return fd; \
  }
OPEN(open, next_open)
OPEN(open64, next_open64)

#define OPENAT(name, resolved) \
  int name(int dirfd, const char *path, int flags, ...) { \
    MODE_OF(flags, flags); \
    int fd = resolved ? resolved(dirfd, path, flags, mode) : (int)syscall(SYS_openat, dirfd, path, flags, mode); \
    AFTER(dirfd, path, fd >= 0, writes(flags)); \
    return fd; \
  }
OPENAT(openat, next_openat)
OPENAT(openat64, next_openat64)

/* The fortified entry points (_FORTIFY_SOURCE builds call these). */
typedef int (*open2_fn)(const char *, int);
#define OPEN2(name, sym) \
  int name(const char *path, int flags) { \
    NEXT(open2_fn, sym); \
    int fd = next(path, flags); \
    AFTER(AT_FDCWD, path, fd >= 0, writes(flags)); \
    return fd; \
  }
OPEN2(__open_2, "__open_2")
OPEN2(__open64_2, "__open64_2")

typedef int (*openat2_fn)(int, const char *, int);
#define OPENAT2(name, sym) \
  int name(int dirfd, const char *path, int flags) { \
    NEXT(openat2_fn, sym); \
    int fd = next(dirfd, path, flags); \
    AFTER(dirfd, path, fd >= 0, writes(flags)); \
    return fd; \
  }
OPENAT2(__openat_2, "__openat_2")
OPENAT2(__openat64_2, "__openat64_2")

typedef int (*creat_fn)(const char *, mode_t);
#define CREAT(name, sym) \
  int name(const char *path, mode_t mode) { \
    NEXT(creat_fn, sym); \
    int fd = next(path, mode); \
    AFTER(AT_FDCWD, path, fd >= 0, 1); \
    return fd; \
  }
CREAT(creat, "creat")
CREAT(creat64, "creat64")

/* fopen and freopen open inside the C library, where open cannot be interposed. */
typedef FILE *(*fopen_fn)(const char *, const char *);
#define FOPEN(name, sym) \
  FILE *name(const char *path, const char *m) { \
    static fopen_fn next; \
    if (!next) next = (fopen_fn)dlsym(RTLD_NEXT, sym); \
    if (!next) { errno = ENOSYS; return NULL; } \
    FILE *f = next(path, m); \
    AFTER(AT_FDCWD, path, f != NULL, writes_mode(m)); \
    return f; \
  }
FOPEN(fopen, "fopen")
FOPEN(fopen64, "fopen64")

typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);
#define FREOPEN(name, sym) \
  FILE *name(const char *path, const char *m, FILE *s) { \
    static freopen_fn next; \
    if (!next) next = (freopen_fn)dlsym(RTLD_NEXT, sym); \
    if (!next) { errno = ENOSYS; return NULL; } \
    FILE *f = next(path, m, s); \
    AFTER(AT_FDCWD, path, f != NULL, path && writes_mode(m)); \
    return f; \
  }
FREOPEN(freopen, "freopen")
FREOPEN(freopen64, "freopen64")

/* Calls on a path that change it. */
typedef int (*path_fn)(const char *);
#define PATH1(name) \
  int name(const char *path) { \
    NEXT(path_fn, #name); \
    int r = next(path); \
    AFTER(AT_FDCWD, path, r == 0, 1); \
    return r; \
  }
PATH1(unlink)
PATH1(rmdir)

typedef int (*pathmode_fn)(const char *, mode_t);
#define PATHMODE(name) \
  int name(const char *path, mode_t mode) { \
    NEXT(pathmode_fn, #name); \
    int r = next(path, mode); \
    AFTER(AT_FDCWD, path, r == 0, 1); \
    return r; \
  }
PATHMODE(mkdir)
PATHMODE(chmod)

typedef int (*unlinkat_fn)(int, const char *, int);
int unlinkat(int dirfd, const char *path, int flags) {
  NEXT(unlinkat_fn, "unlinkat");
  int r = next(dirfd, path, flags);
  AFTER(dirfd, path, r == 0, 1);
  return r;
}

typedef int (*mkdirat_fn)(int, const char *, mode_t);
int mkdirat(int dirfd, const char *path, mode_t mode) {
  NEXT(mkdirat_fn, "mkdirat");
  int r = next(dirfd, path, mode);
  AFTER(dirfd, path, r == 0, 1);
  return r;
}

typedef int (*truncate_fn)(const char *, off_t);
int truncate(const char *path, off_t len) {
  NEXT(truncate_fn, "truncate");
  int r = next(path, len);
  AFTER(AT_FDCWD, path, r == 0, 1);
  return r;
}

typedef int (*path2_fn)(const char *, const char *);
#define PATH2(name) \
  int name(const char *from, const char *to) { \
    NEXT(path2_fn, #name); \
    int r = next(from, to); \
    AFTER2(AT_FDCWD, from, AT_FDCWD, to, r == 0); \
    return r; \
  }
PATH2(rename)
PATH2(link)

int symlink(const char *target, const char *path) {
  NEXT(path2_fn, "symlink");
  int r = next(target, path);
  AFTER(AT_FDCWD, path, r == 0, 1);
  return r;
}

typedef int (*renameat_fn)(int, const char *, int, const char *);
int renameat(int fromfd, const char *from, int tofd, const char *to) {
  NEXT(renameat_fn, "renameat");
  int r = next(fromfd, from, tofd, to);
  AFTER2(fromfd, from, tofd, to, r == 0);
  return r;
}

typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);
int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
  NEXT(renameat2_fn, "renameat2");
  int r = next(fromfd, from, tofd, to, flags);
  AFTER2(fromfd, from, tofd, to, r == 0);
  return r;
}
