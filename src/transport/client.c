/*
 * hermesd-client: how a git hook or another agent's hook asks the daemon a question.
 *
 * One question per process: connect to the daemon's Unix socket (the path recorded in
 * <runtime-dir>/daemon.json), send POST /v1/ask (the protocol: src/transport/protocol.ts),
 * print the answer, exit with its code. This program owns every fault on the way, and
 * decides what each one means; nothing else does (docs/hooks.md, "When the daemon cannot
 * answer"):
 *
 *   no daemon listening       start one (the command after -n), wait for it within the bound
 *   none could be started     -u allow|block decides a blocking question (-x); the only
 *                             fault that may let a question through
 *   no answer in the bound    refused (a daemon that runs but is hung or stopped)
 *   the answer cut off        refused (the daemon died mid-answer)
 *   another protocol          the daemon is asked to stop and one of ours is started
 *   anything else             refused, with what happened
 *
 * A question from hermesd's sandbox (-S, or found by its pid namespace) never starts a
 * daemon and refuses on every fault. A question that does not block (post-commit…) goes on
 * whatever happens, and says what happened.
 *
 * No /proc, inotify or /dev/shm: POSIX sockets, poll and fork/exec, so it serves macOS as
 * it is. Built by `hermesd init` (or at install) with the C compiler better-sqlite3 needs:
 * src/transport/build.ts. Linux reads /proc only for the sandbox's pid namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HERMESD_PROTOCOL
#define HERMESD_PROTOCOL 2
#endif
#ifndef HERMESD_VERSION
#define HERMESD_VERSION "0"
#endif

/* The daemon refuses bodies over this (src/protocol/limits.ts): refused here unsent. */
#define MAX_BODY_BYTES (4 * 1024 * 1024)
/* How long to wait, after asking a daemon of another protocol to stop, for it to be gone. */
#define MISMATCH_STOP_MS 3000
#define MAX_FLAGS 32

static const char *rt = NULL;      /* <git-dir>/hermesd */
static const char *root = NULL;    /* the work tree (a new daemon's argument) */
static const char *node = NULL;    /* the node binary that runs a new daemon */
static const char *entry = NULL;   /* the daemon's entry (dist/daemon/main.js) */
static const char *flags[MAX_FLAGS];
static int nflags = 0;
static const char *envs[MAX_FLAGS];
static int nenvs = 0;
static long bound_ms = 10000;
static int blocking = 0;           /* -x: a refusal stops what asked (pre-commit, a tool call) */
static int allow_unavailable = 1;  /* -u: what "no daemon could start" means for a blocking question */
static int refuse_code = 1;        /* -c: the exit code of a refusal (git: 1; agents: 2) */
static int sandboxed = 0;
static const char *phase = NULL;
static const char *kind = NULL;
static const char *name = NULL;
static char qid[64];

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- growable buffers ---- */

typedef struct {
  char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      fputs("hermesd: out of memory\n", stderr);
      exit(refuse_code);
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void putf(buf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string of s (n bytes): quotes, backslashes and control characters escaped. */
static void put_json(buf *b, const char *s, size_t n) {
  puts_(b, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(b, e, 2);
    } else if (c < 0x20) {
      putf(b, "\\u%04x", c);
    } else {
      put(b, (const char *)&s[i], 1);
    }
  }
  puts_(b, "\"");
}

/* Percent-encodes s for a query string. */
static void put_query(buf *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')
      put(b, (const char *)s, 1);
    else
      putf(b, "%%%02X", c);
  }
}

static int read_all(int fd, buf *b, size_t limit) {
  char tmp[65536];
  for (;;) {
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return 0;
    put(b, tmp, (size_t)r);
    if (b->n > limit) return 1;
  }
}

/* ---- outcomes ---- */

/* A fault: what happened, in words, and what it means for this question. `may_allow`: no
 * daemon could be started (the one fault -u decides). Never returns. */
/* An agent's structured refusal on stdout (exit 0): what Claude Code, Codex, Gemini CLI and
 * Cursor read as "refused, because…" and show the model as the reason alone
 * (src/integrations/event.ts answers the same way when the daemon judges). */
static void agent_deny(const char *reason) {
  buf b = {0}, r = {0};
  put_json(&r, reason, strlen(reason));
  if (strcmp(kind, "gemini") == 0) {
    puts_(&b, "{\"decision\":\"deny\",\"reason\":");
    puts_(&b, r.p);
    puts_(&b, "}\n");
  } else if (strcmp(kind, "cursor") == 0) {
    puts_(&b, "{\"permission\":\"deny\",\"user_message\":");
    puts_(&b, r.p);
    puts_(&b, ",\"agent_message\":");
    puts_(&b, r.p);
    puts_(&b, "}\n");
  } else {
    puts_(&b, "{\"hookSpecificOutput\":{\"hookEventName\":");
    put_json(&b, name, strlen(name));
    puts_(&b, ",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":");
    puts_(&b, r.p);
    puts_(&b, "}}\n");
  }
  fwrite(b.p, 1, b.n, stdout);
  fflush(stdout);
}

/* A fault: what happened, in words, and what it means for this question. `may_allow`: no
 * daemon could be started (the one fault -u decides). Never returns. */
__attribute__((noreturn, format(printf, 2, 3))) static void fault(int may_allow, const char *fmt, ...) {
  char what[1024], said[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  int git = strcmp(kind, "git") == 0;
  if (!blocking) {
    fprintf(stderr, "hermesd: %s; the %s hook did nothing this time (%s goes on). Check the daemon: hermesd status\n", what, name, git ? "git" : "the agent");
    exit(0);
  }
  if (may_allow && allow_unavailable && !sandboxed) {
    fprintf(stderr, "hermesd: %s; this %s UNCHECKED because %s.onUnavailable is \"allow\". Check the daemon: hermesd status\n", what,
            git ? "commit goes ahead" : "tool call was run", git ? "hooks" : "agents");
    if (strcmp(kind, "cursor") == 0) puts("{}");
    exit(0);
  }
  const char *why = sandboxed ? "it comes from hermesd's sandbox, where every fault refuses"
                    : may_allow ? (git ? "hooks.onUnavailable is \"block\"" : "agents.onUnavailable is \"block\"")
                                : "a daemon that runs but cannot answer never lets it through";
  if (git) {
    fprintf(stderr, "hermesd: %s; the %s hook refused this commit (%s). Check the daemon: hermesd status (restart: hermesd restart). To commit without hermesd: HERMESD_SKIP=1 git commit ...\n", what, name, why);
    exit(refuse_code);
  }
  snprintf(said, sizeof said, "hermesd: %s; this tool call is refused (%s). Check the daemon: hermesd status (restart: hermesd restart)", what, why);
  agent_deny(said);
  exit(0);
}

/* ---- the daemon's socket ---- */

/* The socket daemon.json records, or "" (none recorded, unreadable, or a path JSON escaped). */
static void recorded_socket(char *out, size_t cap) {
  out[0] = 0;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/daemon.json", rt);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  buf b = {0};
  int r = read_all(fd, &b, 65536);
  close(fd);
  if (r < 0 || !b.p) {
    free(b.p);
    return;
  }
  const char *key = "\"socket\": \"";
  char *s = strstr(b.p, key);
  if (s) {
    s += strlen(key);
    size_t n = 0;
    for (; *s && *s != '"' && n + 1 < cap; s++) {
      if (*s == '\\') {
        s++;
        if (*s != '"' && *s != '\\' && *s != '/') {
          n = 0;
          break;
        }
      }
      out[n++] = *s;
    }
    out[*s == '"' ? n : 0] = 0;
  }
  free(b.p);
}

/* Waits for fd to be ready for `events` until `deadline`; 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, long long deadline) {
  for (;;) {
    long long left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, (int)(left > INT_MAX ? INT_MAX : left));
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return 1; /* let the read or write report the error */
  }
}

enum { CONN_OK, CONN_NONE, CONN_DENIED, CONN_SLOW };

/* Connects to `path` by `deadline`: CONN_NONE when nobody listens there (no file, refused). */
static int connect_to(const char *path, long long deadline, int *out) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  if (!*path || strlen(path) >= sizeof a.sun_path) return CONN_NONE;
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return CONN_NONE;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    int e = errno;
    if (e == EINPROGRESS || e == EAGAIN) {
      /* The listen queue is full: a daemon that accepts nothing. */
      if (!wait_fd(fd, POLLOUT, deadline)) {
        close(fd);
        return CONN_SLOW;
      }
      socklen_t l = sizeof e;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0) e = errno;
      if (e == 0) goto connected;
    }
    close(fd);
    return e == EACCES || e == EPERM ? CONN_DENIED : CONN_NONE;
  }
connected:
  *out = fd;
  return CONN_OK;
}

/* ---- starting a daemon ---- */

/* Starts a daemon detached from this process (its own session, stdin /dev/null, output to
 * daemon.log, no fd of ours but the ready pipe) and waits for its first line on that pipe:
 * "<socket>" once it listens, "busy <pid>" when another daemon holds the lock, "error <why>".
 * Returns 1 with the socket in `sock`, 0 when it is another daemon's turn (busy), -1 on
 * failure with the reason in `why`. */
static int start_daemon(long long deadline, char *sock, size_t cap, char *why, size_t whycap) {
  if (!node || !entry) {
    snprintf(why, whycap, "no daemon is running and this hook does not know how to start one (run hermesd init again)");
    return -1;
  }
  int p[2];
  if (pipe(p) != 0) {
    snprintf(why, whycap, "cannot start the daemon (pipe: %s)", strerror(errno));
    return -1;
  }
  char log[PATH_MAX];
  snprintf(log, sizeof log, "%s/daemon.log", rt);
  /* A linked work tree's runtime dir is made by its first daemon: its log goes there first. */
  if (mkdir(rt, 0700) != 0 && errno != EEXIST) {
    snprintf(why, whycap, "cannot make %s: %s", rt, strerror(errno));
    return -1;
  }
  pid_t child = fork();
  if (child < 0) {
    snprintf(why, whycap, "cannot start the daemon (fork: %s)", strerror(errno));
    return -1;
  }
  if (child == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0) {
      dprintf(p[1], "error cannot open %s: %s\n", out < 0 ? log : "/dev/null", strerror(errno));
      _exit(1);
    }
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    if (p[1] != 3) {
      dup2(p[1], 3);
    }
    /* Nothing of the hook's stays open in the daemon: git and the agents wait for their pipes' ends. */
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = 4; fd < max; fd++) close((int)fd);
    setenv("HERMESD_READY_FD", "3", 1);
    /* The daemon's own settings (its allocator), unless the user set any of them: theirs stay. */
    int theirs = 0;
    for (int i = 0; i < nenvs; i++) {
      const char *eq = strchr(envs[i], '=');
      char name[128];
      snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - envs[i]) : 0, envs[i]);
      if (*name && getenv(name)) theirs = 1;
    }
    for (int i = 0; !theirs && i < nenvs; i++) putenv((char *)envs[i]);
    if (chdir(root) != 0) {
      dprintf(3, "error cannot enter %s: %s\n", root, strerror(errno));
      _exit(1);
    }
    const char *argv[MAX_FLAGS + 4];
    int n = 0;
    argv[n++] = node;
    for (int i = 0; i < nflags; i++) argv[n++] = flags[i];
    argv[n++] = entry;
    argv[n++] = root;
    argv[n] = NULL;
    execv(node, (char *const *)argv);
    dprintf(3, "error cannot run %s: %s\n", node, strerror(errno));
    _exit(1);
  }
  close(p[1]);
  waitpid(child, NULL, 0);
  fcntl(p[0], F_SETFD, FD_CLOEXEC);
  char line[PATH_MAX];
  size_t n = 0;
  int got = 0;
  while (n + 1 < sizeof line && wait_fd(p[0], POLLIN, deadline)) {
    ssize_t r = read(p[0], line + n, sizeof line - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
    line[n] = 0;
    if (memchr(line, '\n', n)) {
      got = 1;
      break;
    }
  }
  close(p[0]);
  line[n] = 0;
  char *nl = strchr(line, '\n');
  if (nl) *nl = 0;
  if (!got && n == 0) {
    if (now_ms() >= deadline) {
      snprintf(why, whycap, "no daemon was running and the one started did not listen within %ld ms", bound_ms);
      return -1;
    }
    snprintf(why, whycap, "the daemon started for this question exited at once (see %s)", log);
    return -1;
  }
  if (strncmp(line, "busy ", 5) == 0) return 0;
  if (strncmp(line, "error ", 6) == 0) {
    snprintf(why, whycap, "no daemon was running and one could not be started: %s", line + 6);
    return -1;
  }
  snprintf(sock, cap, "%s", line);
  return 1;
}

/* ---- the question ---- */

static buf body;

/* The git command this hook runs in, "<pid>:<start in clock ticks>": the nearest `git` among
 * this process's ancestors (src/githooks/attempt.ts reads it the same way). Read from /proc
 * where there is one; empty elsewhere (the daemon then judges by tree). */
static void attempt_of(char *out, size_t cap) {
  out[0] = 0;
  long pid = (long)getppid();
  for (int hop = 0; hop < 8 && pid > 1; hop++) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return;
    text[n] = 0;
    char *open_ = strchr(text, '('), *close_ = strrchr(text, ')');
    if (!open_ || !close_ || close_ < open_) return;
    *close_ = 0;
    /* After "(comm) ": state ppid … ; the start time is the 20th of those fields. */
    long ppid = 0;
    unsigned long long start = 0;
    char *f = close_ + 2;
    for (int i = 0; i < 20 && f; i++) {
      if (i == 1) ppid = atol(f);
      if (i == 19) start = strtoull(f, NULL, 10);
      f = strchr(f, ' ');
      if (f) f++;
    }
    if (strcmp(open_ + 1, "git") == 0) {
      snprintf(out, cap, "%ld:%llu", pid, start);
      return;
    }
    pid = ppid;
  }
}

static void build_git_body(int argc, char **argv) {
  puts_(&body, "{\"args\":[");
  for (int i = 0; i < argc; i++) {
    if (i) puts_(&body, ",");
    put_json(&body, argv[i], strlen(argv[i]));
  }
  puts_(&body, "]");
  const char *idx = getenv("GIT_INDEX_FILE");
  if (idx && *idx) {
    puts_(&body, ",\"indexFile\":");
    if (idx[0] == '/') {
      put_json(&body, idx, strlen(idx));
    } else {
      char cwd[PATH_MAX];
      buf abs = {0};
      if (getcwd(cwd, sizeof cwd)) {
        puts_(&abs, cwd);
        puts_(&abs, "/");
      }
      puts_(&abs, idx);
      put_json(&body, abs.p, abs.n);
      free(abs.p);
    }
  }
  char attempt[64];
  attempt_of(attempt, sizeof attempt);
  if (*attempt) {
    puts_(&body, ",\"attempt\":");
    put_json(&body, attempt, strlen(attempt));
  }
  if (phase) {
    puts_(&body, ",\"phase\":");
    put_json(&body, phase, strlen(phase));
  }
  if (strcmp(name, "post-rewrite") == 0) {
    /* git gives post-rewrite "<old> <new>" lines on stdin. */
    buf in = {0};
    read_all(0, &in, MAX_BODY_BYTES);
    puts_(&body, ",\"stdin\":[");
    size_t start = 0;
    int first = 1;
    for (size_t i = 0; i <= in.n; i++) {
      if (i == in.n || in.p[i] == '\n') {
        if (i > start) {
          if (!first) puts_(&body, ",");
          put_json(&body, in.p + start, i - start);
          first = 0;
        }
        start = i + 1;
      }
    }
    puts_(&body, "]");
    free(in.p);
  }
  puts_(&body, "}");
}

static int write_all(int fd, const char *p, size_t n, long long deadline) {
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, deadline)) return 0;
    ssize_t w = write(fd, p, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

enum { ASK_MISMATCH, ASK_GONE, ASK_CUT };

/* What `ask` found out when it did not end the process. */
static char ask_why[PATH_MAX + 256];

/* Asks the daemon at `sock` and, when it answers, prints the answer and exits with its code.
 * Returns ASK_GONE when nobody listens there (start one), ASK_MISMATCH when the daemon speaks
 * another protocol, ASK_CUT when the answer broke off after the daemon took the question;
 * every other fault ends the process through fault(). */
static int ask(const char *sock, long long deadline) {
  int fd;
  switch (connect_to(sock, deadline, &fd)) {
    case CONN_NONE: return ASK_GONE;
    case CONN_DENIED: fault(0, "the daemon's socket %s belongs to another user (permission denied)", sock);
    case CONN_SLOW: fault(0, "the daemon at %s accepts no connection (hung or stopped; waited %ld ms)", sock, bound_ms);
  }
  buf req = {0};
  puts_(&req, "POST /v1/ask?p=");
  putf(&req, "%d&v=", HERMESD_PROTOCOL);
  put_query(&req, HERMESD_VERSION);
  puts_(&req, "&q=");
  put_query(&req, qid);
  puts_(&req, "&k=");
  put_query(&req, kind);
  puts_(&req, "&n=");
  put_query(&req, name);
  putf(&req, "&pid=%ld", (long)getpid());
  putf(&req, "&ppid=%ld", (long)getppid());
  putf(&req, "&bound=%ld", bound_ms);
  if (sandboxed) puts_(&req, "&sandboxed=1");
  putf(&req, " HTTP/1.0\r\nHost: hermesd\r\nContent-Type: application/octet-stream\r\nContent-Length: %lu\r\n\r\n", (unsigned long)body.n);
  /* A daemon that refuses early (413) closes while the body still goes out: its answer counts. */
  int sent = write_all(fd, req.p, req.n, deadline);
  if (sent > 0 && body.n) sent = write_all(fd, body.p, body.n, deadline);
  free(req.p);
  if (sent == 0) fault(0, "the daemon at %s took no question within %ld ms (hung or stopped)", sock, bound_ms);

  /* The answer: HTTP/1.0 status and headers, then lines (protocol.ts). Silence longer than
   * the bound is a hung daemon; a daemon at work (checks, generators) sends a line every
   * 500 ms. */
  buf in = {0};
  buf out = {0};
  size_t at = 0;
  int head_done = 0, hello = 0, status = 0;
  int code = -1;
  long long silence = deadline;
  for (;;) {
    if (!wait_fd(fd, POLLIN, silence))
      fault(0, hello ? "the daemon stopped answering mid-answer (silent for %ld ms; hung or stopped)" : "the daemon did not answer within %ld ms (hung or stopped)", bound_ms);
    char tmp[16384];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) break;
    put(&in, tmp, (size_t)r);
    silence = now_ms() + bound_ms;
    for (;;) {
      char *nl = memchr(in.p + at, '\n', in.n - at);
      if (!nl) break;
      *nl = 0;
      char *l = in.p + at;
      at = (size_t)(nl - in.p) + 1;
      size_t ln = strlen(l);
      if (ln && l[ln - 1] == '\r') l[--ln] = 0;
      if (!head_done) {
        if (status == 0) {
          if (sscanf(l, "HTTP/%*d.%*d %d", &status) != 1) fault(0, "the daemon's answer is not HTTP (%.80s)", l);
        } else if (ln == 0) {
          head_done = 1;
          if (status == 404) {
            close(fd);
            snprintf(ask_why, sizeof ask_why, "the daemon does not know this protocol (an older hermesd)");
            return ASK_MISMATCH;
          }
          if (status != 200) {
            /* An error answer: {"error": {"code", "message"}}; its message is the reason. */
            buf rest = {0};
            put(&rest, in.p + at, in.n - at);
            read_all(fd, &rest, 65536);
            char *m = rest.p ? strstr(rest.p, "\"message\":\"") : NULL;
            char msg[400] = "";
            if (m) {
              m += 11;
              size_t k = 0;
              for (; *m && *m != '"' && k + 1 < sizeof msg; m++) {
                if (*m == '\\' && m[1]) m++;
                msg[k++] = *m;
              }
              msg[k] = 0;
            }
            fault(0, "the daemon refused the question (HTTP %d%s%s)", status, *msg ? ": " : "", msg);
          }
        }
        continue;
      }
      if (!hello) {
        int proto = 0;
        char ver[64], id[64];
        long dpid = 0;
        if (sscanf(l, "hermesd %d %63s %ld %63s", &proto, ver, &dpid, id) != 4) fault(0, "the daemon's answer does not start as protocol %d says (%.80s)", HERMESD_PROTOCOL, l);
        if (proto != HERMESD_PROTOCOL) {
          close(fd);
          snprintf(ask_why, sizeof ask_why, "the daemon (pid %ld, hermesd %s) speaks protocol %d, this hook %d", dpid, ver, proto, HERMESD_PROTOCOL);
          return ASK_MISMATCH;
        }
        if (strcmp(id, qid) != 0) fault(0, "the daemon answered question %s, not this one (%s)", id, qid);
        hello = 1;
        continue;
      }
      if (l[0] == '.') continue; /* the daemon at work */
      if (l[0] == 'e' && l[1] == ' ') {
        fprintf(stderr, "%s\n", l + 2);
        fflush(stderr);
      } else if (l[0] == 'o' && l[1] == ' ') {
        /* What the agent reads on stdout (its structured answer): printed once the answer is whole. */
        put(&out, l + 2, ln - 2);
        put(&out, "\n", 1);
      } else if (l[0] == '=' && l[1] == ' ') {
        code = atoi(l + 2);
        break;
      }
    }
    if (code >= 0) break;
  }
  close(fd);
  if (code < 0) {
    if (!head_done && in.n == 0) {
      /* Closed before a byte came back: a daemon that was stopping as we connected. */
      snprintf(ask_why, sizeof ask_why, "the daemon closed the connection without answering");
      return ASK_GONE;
    }
    return ASK_CUT;
  }
  if (out.n) fwrite(out.p, 1, out.n, stdout);
  fflush(stdout);
  exit(code);
}

/* Asks a daemon of another protocol to stop, and waits until it is gone. */
static void stop_other(const char *sock, long long deadline) {
  int fd;
  if (connect_to(sock, deadline, &fd) != CONN_OK) return;
  const char *req = "POST /v1/shutdown HTTP/1.0\r\nHost: hermesd\r\nContent-Length: 2\r\n\r\n{}";
  write_all(fd, req, strlen(req), deadline);
  char tmp[4096];
  while (wait_fd(fd, POLLIN, deadline) && read(fd, tmp, sizeof tmp) > 0) {
  }
  close(fd);
  long long until = now_ms() + MISMATCH_STOP_MS;
  if (until > deadline) until = deadline;
  while (now_ms() < until) {
    int probe;
    if (connect_to(sock, until, &probe) != CONN_OK) return;
    close(probe);
    struct timespec ts = {0, 20 * 1000000};
    nanosleep(&ts, NULL);
  }
}

/* Inside hermesd's sandbox: another pid namespace than the daemon recorded (Linux), or the
 * sandbox's variable where there is no /proc (macOS). */
static int in_sandbox(void) {
  char mine[128], path[PATH_MAX], theirs[128];
  ssize_t n = readlink("/proc/self/ns/pid", mine, sizeof mine - 1);
  if (n <= 0) {
    const char *v = getenv("HERMESD_SANDBOX");
    return v && strcmp(v, "1") == 0;
  }
  mine[n] = 0;
  snprintf(path, sizeof path, "%s/sandbox/daemon-pidns", rt);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t m = read(fd, theirs, sizeof theirs - 1);
  close(fd);
  if (m <= 0) return 0;
  theirs[m] = 0;
  return strcmp(mine, theirs) != 0;
}

/* Asks until a daemon answers (this process then exits with the answer): the recorded
 * daemon, else one this process starts. Ends the process through fault() on every fault but
 * an answer cut off (ASK_CUT), which it returns. */
static int question(long long deadline) {
  int busy = 0, starts = 0, stopped_other = 0;
  long long next_start = 0;
  char sock[PATH_MAX];
  char why[PATH_MAX + 256] = "";
  ask_why[0] = 0;
  for (;;) {
    recorded_socket(sock, sizeof sock);
    if (*sock) {
      int r = ask(sock, deadline);
      if (r == ASK_CUT) return r;
      if (r == ASK_MISMATCH) {
        if (sandboxed || stopped_other) fault(0, "%s, and %s", ask_why, sandboxed ? "a sandboxed command cannot restart it" : "it did not make way for this version");
        stop_other(sock, deadline);
        stopped_other = 1;
        continue;
      }
      /* ASK_GONE: nobody listens on the recorded socket (a daemon killed, or stopping). */
    }
    if (sandboxed) fault(0, "no daemon answers hermesd's sandbox%s%s", *ask_why ? ": " : "", ask_why);
    if (now_ms() >= deadline) {
      if (busy) fault(0, "a daemon holds this work tree's lock but did not answer within %ld ms (starting slowly, hung, or stopping)", bound_ms);
      fault(1, "%s", *why ? why : "no daemon answered and none could be started in time");
    }
    if (now_ms() >= next_start) {
      if (++starts > 8) fault(1, "%s", *why ? why : "no daemon could be started");
      char ready[PATH_MAX];
      int s = start_daemon(deadline, ready, sizeof ready, why, sizeof why);
      if (s < 0) fault(1, "%s", why);
      if (s == 1) {
        int r = ask(ready, deadline);
        if (r == ASK_CUT) return r;
        if (r == ASK_MISMATCH) fault(0, "%s (the daemon this hook started)", ask_why);
        continue;
      }
      /* Another daemon holds the lock: it is starting, or stopping. Its socket is recorded
       * once it listens; a stopping one lets go of the lock, and the next start takes it. */
      busy = 1;
      next_start = now_ms() + 250;
    }
    struct timespec pause = {0, 10 * 1000000};
    nanosleep(&pause, NULL);
  }
}

static void usage(void) {
  fputs("usage: hermesd-client -r <runtime-dir> [-w <work-tree>] [-t <ms>] [-x] [-u allow|block] [-c <code>] [-S] [-p <phase>]\n"
        "                      [-n <node> -d <daemon-entry> [-f <node-flag>]... [-e NAME=VALUE]...] <kind> <name> [arg...]\n"
        "Asks hermesd's daemon one question (src/transport/protocol.ts); run by hermesd's hook runners.\n",
        stderr);
  exit(2);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  int opt;
  while ((opt = getopt(argc, argv, "+r:w:t:xu:c:Sp:n:d:f:e:V")) != -1) {
    switch (opt) {
      case 'r': rt = optarg; break;
      case 'w': root = optarg; break;
      case 't': bound_ms = atol(optarg); break;
      case 'x': blocking = 1; break;
      case 'u': allow_unavailable = strcmp(optarg, "block") != 0; break;
      case 'c': refuse_code = atoi(optarg); break;
      case 'S': sandboxed = 1; break;
      case 'p': phase = optarg; break;
      case 'n': node = optarg; break;
      case 'd': entry = optarg; break;
      case 'f': if (nflags < MAX_FLAGS) flags[nflags++] = optarg; break;
      case 'e': if (nenvs < MAX_FLAGS) envs[nenvs++] = optarg; break;
      case 'V': printf("hermesd-client %s protocol %d\n", HERMESD_VERSION, HERMESD_PROTOCOL); return 0;
      default: usage();
    }
  }
  if (!rt || argc - optind < 2) usage();
  kind = argv[optind];
  name = argv[optind + 1];
  if (bound_ms <= 0) bound_ms = 10000;
  static char cwd[PATH_MAX];
  /* A new daemon runs in the work tree, named absolutely: the stubs pass it relative. */
  if (!(root ? realpath(root, cwd) : getcwd(cwd, sizeof cwd))) {
    fprintf(stderr, "hermesd: the work tree %s cannot be read (%s)\n", root ? root : ".", strerror(errno));
    return refuse_code;
  }
  root = cwd;
  if (!sandboxed) sandboxed = in_sandbox();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(qid, sizeof qid, "%ld-%ld%09ld", (long)getpid(), (long)ts.tv_sec, (long)ts.tv_nsec);

  if (strcmp(kind, "git") == 0) {
    build_git_body(argc - optind - 2, argv + optind + 2);
  } else {
    /* Another agent's hook: its payload, as it wrote it on stdin. */
    if (read_all(0, &body, MAX_BODY_BYTES) == 1) fault(0, "the hook's payload is over %d bytes, the most the daemon judges", MAX_BODY_BYTES);
  }

  question(now_ms() + bound_ms);
  /* It returned ASK_CUT: the daemon stopped or died while it worked on this question. */
  if (strcmp(kind, "git") == 0 && strcmp(name, "pre-commit") == 0) {
    /* It may have checked out the staged snapshot for the checks: a daemon puts the user's
     * work back from the backup it made for this commit, before git returns. */
    fprintf(stderr, "hermesd: the daemon stopped while the pre-commit hook ran; nothing was committed. Putting your work back…\n");
    name = "recover";
    body.n = 0;
    puts_(&body, "{\"args\":[]}");
    if (question(now_ms() + bound_ms) == ASK_CUT) fault(0, "the daemon stopped again while it put your work back; run: hermesd hook restore");
  }
  fault(0, "the daemon's answer was cut off (it stopped or died while answering; see hermesd logs)");
}
