/*
 * hermesd's spawner: starts the daemon's git processes for it (src/git/spawner.ts says when).
 *
 * A process that forks pays for every page it has mapped, and afterwards a page fault for each
 * page it writes (the fork marked them all copy-on-write); the daemon is large, this process is
 * small, and posix_spawn here does not copy even its pages. The daemon writes requests to this
 * process's stdin and reads answers from its stdout, each a frame:
 *
 *   u32 length of what follows (little-endian), u8 kind, u32 id, the body
 *
 * Requests: 'S' start: the body is NUL-terminated strings — the program, the working folder,
 * then u32 argc and argc strings, u32 envc and envc strings — and the rest of the body is the
 * program's stdin (its stdin is closed after it). 'K' kill: the body is an i32 signal.
 * Answers: 'P' started (the body an i32 pid), 'O' stdout bytes, 'E' stderr bytes, 'F' could
 * not start (the body an i32 errno), 'X' ended (the body an i32: the exit status, or minus the
 * signal), sent once both of its output pipes are closed and it has been waited for. EOF on
 * stdin: this process ends once its children have.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A request larger than this is refused (the daemon starts such a process itself). */
#define MAX_FRAME (64u << 20)
#define READ_CHUNK 65536

struct child {
  uint32_t id;
  pid_t pid;
  int out, err, in; /* -1 once closed */
  char *input;      /* what is left to write to its stdin */
  size_t input_len, input_off;
  int reaped, status;
  struct child *next;
};

static struct child *children;
static int sigpipe_fds[2];

static void on_sigchld(int sig) {
  (void)sig;
  int saved = errno;
  ssize_t r = write(sigpipe_fds[1], "c", 1);
  (void)r;
  errno = saved;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      /* The daemon is gone: nothing is left to answer. */
      exit(0);
    }
    p += n;
    len -= (size_t)n;
  }
}

static void put_u32(unsigned char *p, uint32_t v) {
  p[0] = v & 0xff;
  p[1] = (v >> 8) & 0xff;
  p[2] = (v >> 16) & 0xff;
  p[3] = (v >> 24) & 0xff;
}

static uint32_t get_u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void answer(char kind, uint32_t id, const void *body, size_t len) {
  unsigned char head[9];
  put_u32(head, (uint32_t)(len + 5));
  head[4] = (unsigned char)kind;
  put_u32(head + 5, id);
  write_all(1, head, sizeof head);
  if (len) write_all(1, body, len);
}

static void answer_i32(char kind, uint32_t id, int32_t v) {
  unsigned char b[4];
  put_u32(b, (uint32_t)v);
  answer(kind, id, b, 4);
}

/* The first executable `file` in the PATH of `envp` (as execvp would find it in the child), or `file` itself when it names a path. */
static char *resolve(const char *file, char *const envp[]) {
  if (strchr(file, '/')) return strdup(file);
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char *const *e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  size_t flen = strlen(file);
  while (1) {
    const char *end = strchr(path, ':');
    size_t dlen = end ? (size_t)(end - path) : strlen(path);
    char *full = malloc(dlen + flen + 3);
    if (!full) die("malloc");
    if (dlen == 0) sprintf(full, "./%s", file);
    else sprintf(full, "%.*s/%s", (int)dlen, path, file);
    struct stat st;
    if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0) return full;
    free(full);
    if (!end) return NULL;
    path = end + 1;
  }
}

#define FAIL(e)             \
  do {                      \
    answer_i32('F', id, e); \
    return;                 \
  } while (0)

static void start(uint32_t id, const unsigned char *body, size_t len) {
  const char *p = (const char *)body, *end = p + len;
  const char *strs[2];
  for (int i = 0; i < 2; i++) {
    const char *z = memchr(p, 0, (size_t)(end - p));
    if (!z) FAIL(EINVAL);
    strs[i] = p;
    p = z + 1;
  }
  char **lists[2] = {0, 0};
  for (int l = 0; l < 2; l++) {
    if (end - p < 4) FAIL(EINVAL);
    uint32_t n = get_u32((const unsigned char *)p);
    p += 4;
    if (n > len) FAIL(EINVAL);
    lists[l] = calloc(n + 1, sizeof(char *));
    if (!lists[l]) die("calloc");
    for (uint32_t i = 0; i < n; i++) {
      const char *z = memchr(p, 0, (size_t)(end - p));
      if (!z) {
        free(lists[0]);
        free(lists[1]);
        FAIL(EINVAL);
      }
      lists[l][i] = (char *)p;
      p = z + 1;
    }
  }
  char **argv = lists[0], **envp = lists[1];
  char *prog = resolve(strs[0], envp);
  int in[2], out[2], err[2];
  if (!prog) {
    free(argv);
    free(envp);
    FAIL(ENOENT);
  }
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) die("pipe2");
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, strs[1]);
  posix_spawnattr_init(&at);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int rc = posix_spawn(&pid, prog, &fa, &at, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  free(prog);
  free(argv);
  free(envp);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    FAIL(rc);
  }
  answer_i32('P', id, pid);
  struct child *c = calloc(1, sizeof *c);
  if (!c) die("calloc");
  c->id = id;
  c->pid = pid;
  c->out = out[0];
  c->err = err[0];
  c->in = in[1];
  c->input_len = (size_t)(end - p);
  if (c->input_len) {
    c->input = malloc(c->input_len);
    if (!c->input) die("malloc");
    memcpy(c->input, p, c->input_len);
    fcntl(c->in, F_SETFL, fcntl(c->in, F_GETFL) | O_NONBLOCK);
  } else {
    close(c->in);
    c->in = -1;
  }
  c->next = children;
  children = c;
}

static struct child *find(uint32_t id) {
  for (struct child *c = children; c; c = c->next)
    if (c->id == id) return c;
  return NULL;
}

static void close_in(struct child *c) {
  if (c->in >= 0) close(c->in);
  c->in = -1;
  free(c->input);
  c->input = NULL;
}

static void request(const unsigned char *frame, size_t len) {
  if (len < 5) return;
  char kind = (char)frame[0];
  uint32_t id = get_u32(frame + 1);
  if (kind == 'S') start(id, frame + 5, len - 5);
  else if (kind == 'K' && len >= 9) {
    struct child *c = find(id);
    if (c && !c->reaped) kill(c->pid, (int)get_u32(frame + 5));
  }
}

/* Reads what one of a child's pipes holds and passes it on; closes it at EOF. */
static void drain(struct child *c, int *fd, char kind) {
  static unsigned char buf[READ_CHUNK];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0) answer(kind, c->id, buf, (size_t)n);
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close(*fd);
    *fd = -1;
  }
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
    for (struct child *c = children; c; c = c->next)
      if (c->pid == pid) {
        c->reaped = 1;
        c->status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        /* Whatever it did not read of its stdin, nobody will. */
        close_in(c);
      }
}

/* Children whose pipes are closed and who were waited for: their end is told, they are forgotten. */
static void finish(void) {
  for (struct child **pc = &children; *pc;) {
    struct child *c = *pc;
    if (c->reaped && c->out < 0 && c->err < 0) {
      answer_i32('X', c->id, c->status);
      *pc = c->next;
      free(c);
    } else pc = &c->next;
  }
}

/* The frames above; a daemon that speaks another version starts its git processes itself. */
#ifndef PROTOCOL
#define PROTOCOL "1"
#endif

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-V") == 0) {
    puts("hermesd-spawner " PROTOCOL);
    return 0;
  }
  /* The daemon names the protocol it speaks: a helper of another install's version ends at once. */
  if (argc != 2 || strcmp(argv[1], "--protocol=" PROTOCOL) != 0) return 2;
  signal(SIGPIPE, SIG_IGN);
  if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK)) die("pipe2");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);

  unsigned char *req = NULL;
  size_t req_len = 0, req_cap = 0;
  int stdin_open = 1;
  while (stdin_open || children) {
    size_t n = 2;
    for (struct child *c = children; c; c = c->next) n += 3;
    struct pollfd *fds = calloc(n, sizeof *fds);
    struct {
      struct child *c;
      int which;
    } *who = calloc(n, sizeof *who);
    if (!fds || !who) die("calloc");
    size_t k = 0;
    fds[k++] = (struct pollfd){.fd = sigpipe_fds[0], .events = POLLIN};
    fds[k++] = (struct pollfd){.fd = stdin_open ? 0 : -1, .events = POLLIN};
    for (struct child *c = children; c; c = c->next) {
      int pipes[3] = {c->out, c->err, c->input ? c->in : -1};
      for (int w = 0; w < 3; w++) {
        if (pipes[w] < 0) continue;
        who[k].c = c;
        who[k].which = w;
        fds[k++] = (struct pollfd){.fd = pipes[w], .events = w == 2 ? POLLOUT : POLLIN};
      }
    }
    if (poll(fds, k, -1) < 0) {
      free(fds);
      free(who);
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[0].revents) {
      char drop[64];
      while (read(sigpipe_fds[0], drop, sizeof drop) > 0) {
      }
    }
    for (size_t i = 2; i < k; i++) {
      if (!fds[i].revents) continue;
      struct child *c = who[i].c;
      if (who[i].which == 0) drain(c, &c->out, 'O');
      else if (who[i].which == 1) drain(c, &c->err, 'E');
      else if (c->input) {
        ssize_t w = write(c->in, c->input + c->input_off, c->input_len - c->input_off);
        if (w > 0) c->input_off += (size_t)w;
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || c->input_off == c->input_len) close_in(c);
      }
    }
    if (fds[1].revents) {
      if (req_cap - req_len < READ_CHUNK) {
        req_cap = req_cap * 2 + READ_CHUNK;
        req = realloc(req, req_cap);
        if (!req) die("realloc");
      }
      ssize_t r = read(0, req + req_len, req_cap - req_len);
      if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) stdin_open = 0;
      else if (r > 0) req_len += (size_t)r;
      size_t off = 0;
      while (req_len - off >= 4) {
        uint32_t flen = get_u32(req + off);
        if (flen > MAX_FRAME) die("frame too large");
        if (req_len - off - 4 < flen) break;
        request(req + off + 4, flen);
        off += 4 + flen;
      }
      memmove(req, req + off, req_len - off);
      req_len -= off;
    }
    free(fds);
    free(who);
    reap();
    finish();
  }
  return 0;
}
