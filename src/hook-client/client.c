/*
 * hermesd-client: how a git hook or another agent's hook asks the daemon one question, over
 * the daemon's Unix socket (the path in <runtime-dir>/daemon.json), in the protocol of
 * src/protocol/ask.ts. It owns every fault on the way and what each one means
 * (docs/hooks.md, "When the daemon cannot answer"):
 *   nobody listening      start a daemon (-n/-d/-f/-e) and ask it, within the bound (-t)
 *   none could start      -u allow|block decides a blocking question (-x): the one fault
 *                         that may let a question through
 *   no answer in time     refused: a daemon that runs but is hung or stopped
 *   the answer cut off    refused (a pre-commit's work is put back by a new daemon first)
 *   another protocol      the daemon is asked to stop, and this install's is started
 *   anything else         refused, saying what happened
 * With -b (post-commit: it decides nothing) the hook returns once its question is written to the
 * daemon's socket: a child of this process, in a session of its own, waits for the answer and
 * prints it (and owns every fault after the write: a daemon that went away is started again and
 * asked again, as here).
 * A question from hermesd's sandbox (another pid namespace than the daemon's) never starts a
 * daemon and refuses on every fault; one that does not block goes on and says what happened.
 * POSIX only (sockets, poll, fork, exec): /proc is read where there is one, for the sandbox's
 * namespace and the git command a hook runs in. Built by `hermesd init`: src/hook-client/build.ts.
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
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The agents, and how each reads a refusal: generated from src/protocol/agent-hooks.ts. */
#include "agent-hooks.h"

#ifndef HERMESD_PROTOCOL
#define HERMESD_PROTOCOL 2
#endif
#ifndef HERMESD_VERSION
#define HERMESD_VERSION "0"
#endif
/* The daemon judges bodies up to this (src/protocol/limits.ts). */
#define MAX_BODY_BYTES (4 * 1024 * 1024)
/* After asking a daemon of another protocol to stop, how long it has to be gone. */
#define MISMATCH_STOP_MS 3000
#define MAX_OPTS 32

static const char *rt, *root, *node, *entry, *judge, *phase, *kind, *name;
static const char *flags[MAX_OPTS], *envs[MAX_OPTS];
static int nflags, nenvs, blocking, sandboxed, detach;
static int allow_unavailable = 1, refuse_code = 1;
static long bound_ms = 10000;
static char qid[64], ask_why[PATH_MAX + 256];

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- text ---- */

typedef struct { char *p; size_t n, cap; } buf;

static void add(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    while (b->n + n + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 4096;
    if (!(b->p = realloc(b->p, b->cap))) exit(refuse_code);
  }
  memcpy(b->p + b->n, s, n);
  b->p[b->n += n] = 0;
}
static void adds(buf *b, const char *s) { add(b, s, strlen(s)); }
static void addf(buf *b, const char *fmt, ...) {
  char t[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t, sizeof t, fmt, ap);
  va_end(ap);
  if (n > 0) add(b, t, (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
}
/* Control characters JSON.stringify writes as \b \f \n \r \t (the rest as \u00xx), so this client's JSON is the daemon's bytes. */
static const char SHORT_ESCAPES[] = "\b\f\n\r\t";
/* s (n bytes) as a JSON string. */
static void add_json(buf *b, const char *s, size_t n) {
  adds(b, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') addf(b, "\\%c", c);
    else if (c < 0x20 && c && strchr(SHORT_ESCAPES, c)) addf(b, "\\%c", "bfnrt"[strchr(SHORT_ESCAPES, c) - SHORT_ESCAPES]);
    else if (c < 0x20) addf(b, "\\u%04x", c);
    else add(b, s + i, 1);
  }
  adds(b, "\"");
}
/* s percent-encoded for a query string. */
static void add_query(buf *b, const char *s) {
  for (; *s; s++) {
    if (strchr("-_.", *s) || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')) add(b, s, 1);
    else addf(b, "%%%02X", (unsigned char)*s);
  }
}
/* Reads fd to its end into b; 1 when it passed `limit`, -1 on an error. */
static int read_all(int fd, buf *b, size_t limit) {
  char t[65536];
  for (ssize_t r;;) {
    if ((r = read(fd, t, sizeof t)) < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? -1 : 0;
    add(b, t, (size_t)r);
    if (b->n > limit) return 1;
  }
}

/* ---- outcomes ---- */

/* An agent's structured refusal on stdout, exit 0: the form its row of DENY_FORMS gives, the
 * same bytes the daemon writes (src/protocol/agent-hooks.ts). An agent without a row is
 * refused by exit code 2 with the reason on stderr. */
static void agent_deny(const char *reason) {
  const char *form = NULL;
  for (int i = 0; DENY_FORMS[i].agent && !form; i++)
    if (!strcmp(DENY_FORMS[i].agent, kind) && (!DENY_FORMS[i].event || !strcmp(DENY_FORMS[i].event, name))) form = DENY_FORMS[i].form;
  if (!form) {
    fprintf(stderr, "%s\n", reason);
    exit(2);
  }
  buf b = {0};
  for (const char *p = form; *p;) {
    if (!strncmp(p, "$REASON", 7)) add_json(&b, reason, strlen(reason)), p += 7;
    else if (!strncmp(p, "$EVENT", 6)) add_json(&b, name, strlen(name)), p += 6;
    else add(&b, p++, 1);
  }
  adds(&b, "\n");
  fwrite(b.p, 1, b.n, stdout);
}

/* What an agent is told when there is nothing to say (Cursor wants JSON on every path). */
static void agent_silent(void) {
  for (int i = 0; SILENT_FORMS[i].agent; i++)
    if (!strcmp(SILENT_FORMS[i].agent, kind)) fputs(SILENT_FORMS[i].text, stdout);
}

/* Bounds the judgement made here without a daemon (it may run a protected rule's generator). */
#define JUDGE_HERE_MS 120000

/* No daemon could start: the commit is judged in this process's stead by the CLI (`check --staged
 * --no-daemon`: the rules of the config in force, the checks not run), before onUnavailable is
 * asked. 0: no rule broken; 1: refused (the CLI said why); -1: the judge could not run (then
 * onUnavailable decides, as for a judge that cannot run at all). */
static int judge_here(void) {
  if (!node || !judge) return -1;
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, 0);
    dup2(2, 1); /* git shows a hook's stderr; the verdict's lines go there */
    execl(node, node, judge, "check", "--staged", "--no-daemon", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  for (long long until = now_ms() + JUDGE_HERE_MS;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (now_ms() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  if (!WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 0 ? 0 : WEXITSTATUS(status) == 1 ? 1 : -1;
}

/* A fault, in words, and what it means for this question; `may_allow`: no daemon could be
 * started, the one fault -u decides — a commit is first judged here (judge_here). */
__attribute__((noreturn, format(printf, 2, 3))) static void fault(int may_allow, const char *fmt, ...) {
  char what[1024], said[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* A sentence of its own (the daemon's start error) loses its full stop: "…; judging" follows. */
  for (size_t n = strlen(what); n > 0 && (what[n - 1] == '.' || what[n - 1] == '\n' || what[n - 1] == ' '); n--) what[n - 1] = '\0';
  int git = !strcmp(kind, "git");
  if (!blocking) {
    fprintf(stderr, "hermesd: %s; the %s hook did nothing this time (%s goes on). Check the daemon: hermesd status\n", what, name, git ? "git" : "the agent");
    exit(0);
  }
  if (may_allow && git && !sandboxed && !strcmp(name, "pre-commit")) {
    fprintf(stderr, "hermesd: %s; judging this commit here, without the daemon (the rules; the repository's checks are not run)...\n", what);
    int r = judge_here();
    if (r == 0) exit(0);
    if (r == 1) {
      fprintf(stderr, "hermesd: the pre-commit hook refused this commit (judged without the daemon). To commit without hermesd: HERMESD_SKIP=1 git commit ...\n");
      exit(refuse_code);
    }
    snprintf(what + strlen(what), sizeof what - strlen(what), ", and the commit could not be judged here either");
  }
  if (may_allow && allow_unavailable && !sandboxed) {
    fprintf(stderr, "hermesd: %s; this %s UNCHECKED because %s.onUnavailable is \"allow\". Check the daemon: hermesd status\n", what, git ? "commit goes ahead" : "tool call was run", git ? "hooks" : "agents");
    agent_silent();
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

/* ---- the socket ---- */

/* The socket daemon.json records, or "" (none, unreadable, or a path JSON escaped). */
static void recorded_socket(char *out, size_t cap) {
  char path[PATH_MAX];
  buf b = {0};
  out[0] = 0;
  snprintf(path, sizeof path, "%s/daemon.json", rt);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  read_all(fd, &b, 65536);
  close(fd);
  char *s = b.p ? strstr(b.p, "\"socket\": \"") : NULL;
  if (s) {
    size_t n = 0;
    for (s += 11; *s && *s != '"' && *s != '\\' && n + 1 < cap; s++) out[n++] = *s;
    out[*s == '"' ? n : 0] = 0;
  }
  free(b.p);
}

/* Waits until fd is ready for `events` or `deadline` passes; 0 when it passed. */
static int wait_fd(int fd, short events, long long deadline) {
  for (long long left; (left = deadline - now_ms()) > 0;) {
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
    if (r > 0 || (r < 0 && errno != EINTR)) return 1; /* the read or write says what failed */
    if (r == 0) return 0;
  }
  return 0;
}

static int write_all(int fd, const char *p, size_t n, long long deadline) {
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, deadline)) return 0;
    ssize_t w = write(fd, p, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return -1;
    p += w, n -= (size_t)w;
  }
  return 1;
}

/* The daemon that holds this work tree's lock: its pid and start time (daemon.lock, in the runtime
 * folder no sandboxed command can write), and the lock file's owner. 0 when it cannot be read. */
static int lock_holder(long *pid, unsigned long long *start, uid_t *owner) {
  char path[PATH_MAX], t[128];
  snprintf(path, sizeof path, "%s/daemon.lock", rt);
  for (int tries = 0; tries < 3; tries++) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    ssize_t n = fd < 0 ? -1 : read(fd, t, sizeof t - 1);
    int ok = fd >= 0 && fstat(fd, &st) == 0;
    if (fd >= 0) close(fd);
    if (ok && n > 0) {
      t[n] = 0;
      *start = 0;
      if (sscanf(t, "%ld %llu", pid, start) >= 1 && *pid > 0) return *owner = st.st_uid, 1;
    }
    struct timespec ts = {0, 10000000}; /* a lock being written */
    nanosleep(&ts, NULL);
  }
  return 0;
}

/* A process's start in clock ticks since boot (/proc/<pid>/stat field 22), 0 when unknown. */
static unsigned long long start_of(long pid) {
  char path[64], t[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, t, sizeof t - 1);
  if (fd >= 0) close(fd);
  if (n <= 0) return 0;
  t[n] = 0;
  char *f = strrchr(t, ')');
  for (int i = 0; f && i < 20; i++) f = strchr(f + 1, ' ');
  return f ? strtoull(f + 1, NULL, 10) : 0;
}

/* Whose socket `fd` reached: the daemon that holds the lock, seen through the kernel (SO_PEERCRED),
 * never what the listener says of itself. A listener in another pid namespace (pid 0) is the agent
 * socket that hermesd's sandbox binds at the daemon's path, and only there is it taken. A fault
 * when it is anyone else's: an answer from it would read as the daemon's. */
static void check_peer(int fd, const char *path) {
#ifdef SO_PEERCRED
  struct ucred cr;
  socklen_t l = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) return;
  if (cr.pid == 0) {
    if (!sandboxed) fault(0, "the socket %s is served from another pid namespace, not by this work tree's daemon", path);
    return;
  }
  long pid = 0;
  unsigned long long start = 0, now;
  uid_t owner = 0;
  if (!lock_holder(&pid, &start, &owner)) fault(0, "the socket %s answers, but no daemon holds this work tree's lock (%s/daemon.lock); its answer is not trusted", path, rt);
  if ((long)cr.pid != pid || cr.uid != owner || (start && (now = start_of(pid)) && now != start))
    fault(0, "the socket %s is served by pid %ld, not by the daemon that holds this work tree's lock (pid %ld); its answer is not trusted", path, (long)cr.pid, pid);
#else
  (void)fd, (void)path;
#endif
}

/* A connection to `path`, or -1 when nobody listens there; a fault when it is not ours or accepts nothing. */
static int connect_to(const char *path, long long deadline) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (!*path || strlen(path) >= sizeof a.sun_path) return -1;
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
  e = errno;
  if (e == EINPROGRESS || e == EAGAIN) { /* the listen queue is full: a daemon that accepts nothing */
    socklen_t l = sizeof e;
    if (!wait_fd(fd, POLLOUT, deadline)) fault(0, "the daemon at %s accepts no connection (hung or stopped; waited %ld ms)", path, bound_ms);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e == 0) return fd;
  }
  close(fd);
  if (e == EACCES || e == EPERM) fault(0, "the daemon's socket %s belongs to another user (permission denied)", path);
  return -1;
}

/* ---- starting a daemon ---- */

/* Starts a daemon detached from this process (its own session, stdin /dev/null, output to
 * daemon.log, nothing of the hook's open but the ready pipe: git and agents wait for their
 * pipes' ends) and waits for its line there: "<socket>" once it listens, "busy <pid>" when
 * another daemon holds the lock, "error <why>". 1 with the socket, 0 when busy, -1 with why. */
static int start_daemon(long long deadline, char *sock, size_t cap, char *why, size_t whycap) {
  char log[PATH_MAX], line[PATH_MAX];
  int p[2];
  if (!node || !entry) return snprintf(why, whycap, "no daemon is running and this hook does not know how to start one (run hermesd init again)"), -1;
  snprintf(log, sizeof log, "%s/daemon.log", rt);
  /* A linked work tree's runtime folder is made by its first daemon: its log goes there first. */
  if (mkdir(rt, 0700) != 0 && errno != EEXIST) return snprintf(why, whycap, "cannot make %s: %s", rt, strerror(errno)), -1;
  if (pipe(p) != 0) return snprintf(why, whycap, "cannot start the daemon: %s", strerror(errno)), -1;
  pid_t child = fork();
  if (child < 0) return snprintf(why, whycap, "cannot start the daemon: %s", strerror(errno)), -1;
  if (child == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0) dprintf(p[1], "error cannot open %s: %s\n", log, strerror(errno)), _exit(1);
    dup2(in, 0), dup2(out, 1), dup2(out, 2), dup2(p[1], 3);
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 4; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close((int)fd);
    setenv("HERMESD_READY_FD", "3", 1);
    /* The daemon's own settings (its allocator), unless the user set any of them. */
    int theirs = 0;
    for (int i = 0; i < nenvs; i++) {
      char var[128];
      snprintf(var, sizeof var, "%.*s", (int)strcspn(envs[i], "="), envs[i]);
      theirs |= getenv(var) != NULL;
    }
    for (int i = 0; !theirs && i < nenvs; i++) putenv((char *)envs[i]);
    const char *argv[MAX_OPTS + 4];
    int n = 0;
    argv[n++] = node;
    for (int i = 0; i < nflags; i++) argv[n++] = flags[i];
    argv[n++] = entry, argv[n++] = root, argv[n] = NULL;
    if (chdir(root) == 0) execv(node, (char *const *)argv);
    dprintf(3, "error cannot run %s in %s: %s\n", node, root, strerror(errno));
    _exit(1);
  }
  close(p[1]);
  waitpid(child, NULL, 0);
  size_t n = 0;
  while (n + 1 < sizeof line && !memchr(line, '\n', n) && wait_fd(p[0], POLLIN, deadline)) {
    ssize_t r = read(p[0], line + n, sizeof line - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(p[0]);
  line[n] = 0;
  line[strcspn(line, "\n")] = 0;
  if (!*line && now_ms() >= deadline) return snprintf(why, whycap, "no daemon was running and the one started did not listen within %ld ms", bound_ms), -1;
  if (!*line) return snprintf(why, whycap, "the daemon started for this question exited at once (its log: %s)", log), -1;
  if (!strncmp(line, "busy ", 5)) return 0;
  if (!strncmp(line, "error ", 6)) return snprintf(why, whycap, "no daemon was running and one could not be started: %s", line + 6), -1;
  snprintf(sock, cap, "%s", line);
  return 1;
}

/* ---- the question ---- */

static buf body;

/* The git command a hook runs in, "<pid>:<start in clock ticks>": the nearest `git` among this
 * process's ancestors, from /proc (src/githooks/attempt.ts reads it the same way); "" elsewhere. */
static void attempt_of(char *out, size_t cap) {
  out[0] = 0;
  for (long pid = (long)getppid(), hop = 0; hop < 8 && pid > 1; hop++) {
    char path[64], t[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, t, sizeof t - 1);
    if (fd >= 0) close(fd);
    if (n <= 0) return;
    t[n] = 0;
    char *open_ = strchr(t, '('), *close_ = strrchr(t, ')'), *f;
    if (!open_ || close_ < open_) return;
    *close_ = 0;
    /* After "(comm) ": state ppid …; the start time is the 20th of those fields. */
    long ppid = 0;
    unsigned long long start = 0;
    f = close_ + 2;
    for (int i = 0; i < 20 && f; i++, f = strchr(f, ' '), f = f ? f + 1 : NULL) {
      if (i == 1) ppid = atol(f);
      if (i == 19) start = strtoull(f, NULL, 10);
    }
    if (!strcmp(open_ + 1, "git")) {
      snprintf(out, cap, "%ld:%llu", pid, start);
      return;
    }
    pid = ppid;
  }
}

/* A git hook's question: its arguments, GIT_INDEX_FILE, the attempt, the phase, post-rewrite's stdin lines. */
static void git_body(int argc, char **argv) {
  char cwd[PATH_MAX], attempt[64];
  const char *idx = getenv("GIT_INDEX_FILE");
  adds(&body, "{\"args\":[");
  for (int i = 0; i < argc; i++) adds(&body, i ? "," : ""), add_json(&body, argv[i], strlen(argv[i]));
  adds(&body, "]");
  if (idx && *idx) {
    buf abs = {0};
    if (idx[0] != '/' && getcwd(cwd, sizeof cwd)) adds(&abs, cwd), adds(&abs, "/");
    adds(&abs, idx);
    adds(&body, ",\"indexFile\":"), add_json(&body, abs.p, abs.n);
  }
  attempt_of(attempt, sizeof attempt);
  if (*attempt) adds(&body, ",\"attempt\":"), add_json(&body, attempt, strlen(attempt));
  if (phase) adds(&body, ",\"phase\":"), add_json(&body, phase, strlen(phase));
  if (!strcmp(name, "post-rewrite")) {
    buf in = {0};
    read_all(0, &in, MAX_BODY_BYTES);
    adds(&body, ",\"stdin\":[");
    for (size_t i = 0, from = 0, first = 1; i <= in.n; i++) {
      if (i < in.n && in.p[i] != '\n') continue;
      if (i > from) adds(&body, first ? "" : ","), add_json(&body, in.p + from, i - from), first = 0;
      from = i + 1;
    }
    adds(&body, "]");
  }
  adds(&body, "}");
}

enum { ASK_MISMATCH, ASK_GONE, ASK_CUT };

/* -b: git goes on; the answer, and every fault after the question was written, are this
 * process's child's (in a session of its own), once per process (a question asked again after a
 * fault is the child's already). Fork failing, all of it is waited for here. */
static void go_on_without_the_answer(void) {
  static int gone;
  if (!detach || gone) return;
  gone = 1;
  fflush(stdout), fflush(stderr);
  pid_t child = fork();
  if (child > 0) _exit(0);
  if (child == 0) setsid();
}

/* Asks the daemon at `sock`; prints its answer and exits with its code. ASK_GONE: nobody listens
 * there (or it closed before a byte: it was stopping); ASK_MISMATCH: another protocol (why in
 * ask_why); ASK_CUT: the answer broke off after the daemon took the question. Every other
 * fault ends the process. */
static int ask(const char *sock, long long deadline) {
  int fd = connect_to(sock, deadline);
  if (fd < 0) return ASK_GONE;
  check_peer(fd, sock);
  buf req = {0}, in = {0}, out = {0};
  addf(&req, "POST /v1/ask?p=%d&v=", HERMESD_PROTOCOL), add_query(&req, HERMESD_VERSION);
  adds(&req, "&q="), add_query(&req, qid), adds(&req, "&k="), add_query(&req, kind), adds(&req, "&n="), add_query(&req, name);
  addf(&req, "&pid=%ld&ppid=%ld&bound=%ld HTTP/1.0\r\nHost: hermesd\r\nContent-Length: %lu\r\n\r\n", (long)getpid(), (long)getppid(), bound_ms, (unsigned long)body.n);
  /* A daemon that answers early (too large) closes while the body still goes out: its answer counts. */
  if (!write_all(fd, req.p, req.n, deadline) || (body.n && !write_all(fd, body.p, body.n, deadline)))
    fault(0, "the daemon at %s took no question within %ld ms (hung or stopped)", sock, bound_ms);
  /* The question is in the socket, the daemon reads it whenever its loop comes round. */
  go_on_without_the_answer();
  /* HTTP/1.0 status and headers, then the answer's lines. Silence past the bound is a hung
   * daemon; one at work sends a line every 500 ms. */
  int status = 0, head = 1, hello = 0, code = -1;
  size_t at = 0;
  for (long long silence = deadline; code < 0;) {
    char t[16384];
    if (!wait_fd(fd, POLLIN, silence)) fault(0, hello ? "the daemon stopped answering mid-answer (silent for %ld ms; hung or stopped)" : "the daemon did not answer within %ld ms (hung or stopped)", bound_ms);
    ssize_t r = read(fd, t, sizeof t);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) break;
    add(&in, t, (size_t)r);
    silence = now_ms() + bound_ms;
    for (char *nl; code < 0 && (nl = memchr(in.p + at, '\n', in.n - at));) {
      char *l = in.p + at;
      *nl = 0, at = (size_t)(nl - in.p) + 1;
      if (nl > l && nl[-1] == '\r') nl[-1] = 0;
      if (head) {
        if (!status && sscanf(l, "HTTP/%*d.%*d %d", &status) != 1) fault(0, "the daemon's answer is not HTTP (%.80s)", l);
        if (*l || status == 0) continue;
        head = 0;
        if (status == 404) return close(fd), snprintf(ask_why, sizeof ask_why, "the daemon does not know this protocol (an older hermesd)"), ASK_MISMATCH;
        if (status != 200) read_all(fd, &in, 65536), fault(0, "the daemon refused the question (HTTP %d: %.300s)", status, in.p + at);
      } else if (!hello) {
        int proto = 0;
        char ver[64], id[64];
        long dpid = 0;
        if (sscanf(l, "hermesd %d %63s %ld %63s", &proto, ver, &dpid, id) != 4) fault(0, "the daemon's answer does not start as protocol %d says (%.80s)", HERMESD_PROTOCOL, l);
        if (proto != HERMESD_PROTOCOL)
          return close(fd), snprintf(ask_why, sizeof ask_why, "the daemon (pid %ld, hermesd %s) speaks protocol %d, this hook %d", dpid, ver, proto, HERMESD_PROTOCOL), ASK_MISMATCH;
        if (strcmp(id, qid)) fault(0, "the daemon answered question %s, not this one (%s)", id, qid);
        hello = 1;
      } else if (!strncmp(l, "e ", 2)) {
        fprintf(stderr, "%s\n", l + 2); /* shown as it comes: a check's progress */
      } else if (!strncmp(l, "o ", 2)) {
        adds(&out, l + 2), adds(&out, "\n"); /* an agent's structured answer: printed once whole */
      } else if (!strncmp(l, "= ", 2)) {
        code = atoi(l + 2);
      }
    }
  }
  close(fd);
  if (code < 0) return in.n == 0 ? ASK_GONE : ASK_CUT;
  if (out.n) fwrite(out.p, 1, out.n, stdout);
  exit(code);
}

/* Asks a daemon of another protocol to stop, and waits (a while) until it is gone. */
static void stop_other(const char *sock, long long deadline) {
  const char *req = "POST /v1/shutdown HTTP/1.0\r\nHost: hermesd\r\nContent-Length: 2\r\n\r\n{}";
  int fd = connect_to(sock, deadline);
  char t[4096];
  if (fd < 0) return;
  write_all(fd, req, strlen(req), deadline);
  while (wait_fd(fd, POLLIN, deadline) && read(fd, t, sizeof t) > 0) {
  }
  close(fd);
  long long until = now_ms() + MISMATCH_STOP_MS;
  for (struct timespec ts = {0, 20000000}; now_ms() < (until < deadline ? until : deadline) && (fd = connect_to(sock, deadline)) >= 0; nanosleep(&ts, NULL)) close(fd);
}

/* Asks until a daemon answers (the process then exits): the recorded one, else one started
 * here. Returns only ASK_CUT; every other fault ends the process. */
static int question(long long deadline) {
  char sock[PATH_MAX], ready[PATH_MAX], why[PATH_MAX + 256] = "";
  int busy = 0, starts = 0, stopped = 0;
  long long next_start = 0;
  ask_why[0] = 0;
  for (;;) {
    recorded_socket(sock, sizeof sock);
    int r = *sock ? ask(sock, deadline) : ASK_GONE;
    if (r == ASK_CUT) return r;
    if (r == ASK_MISMATCH) {
      if (sandboxed || stopped) fault(0, "%s, and %s", ask_why, sandboxed ? "a sandboxed command cannot restart it" : "it did not make way for this version");
      stop_other(sock, deadline);
      stopped = 1;
      continue;
    }
    if (sandboxed) fault(0, "no daemon answers hermesd's sandbox%s%s", *ask_why ? ": " : "", ask_why);
    if (now_ms() >= deadline) {
      if (busy) fault(0, "a daemon holds this work tree's lock but did not answer within %ld ms (starting slowly, hung, or stopping)", bound_ms);
      fault(1, "%s", *why ? why : "no daemon answered and none could be started in time");
    }
    if (now_ms() >= next_start) {
      if (++starts > 8) fault(1, "%s", *why ? why : "no daemon could be started");
      int s = start_daemon(deadline, ready, sizeof ready, why, sizeof why);
      if (s < 0) fault(1, "%s", why);
      if (s == 1) {
        if ((r = ask(ready, deadline)) == ASK_CUT) return r;
        if (r == ASK_MISMATCH) fault(0, "%s (the daemon this hook started)", ask_why);
        continue;
      }
      /* Another daemon holds the lock: starting (its socket is recorded once it listens), or
       * stopping (it lets go, and the next start takes it). */
      busy = 1, next_start = now_ms() + 250;
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
}

/* Inside hermesd's sandbox: another pid namespace than the daemon recorded, or (no /proc: macOS) the sandbox's variable. */
static int in_sandbox(void) {
  char mine[128] = "", theirs[128] = "", path[PATH_MAX];
  ssize_t n = readlink("/proc/self/ns/pid", mine, sizeof mine - 1);
  if (n <= 0) return getenv("HERMESD_SANDBOX") && !strcmp(getenv("HERMESD_SANDBOX"), "1");
  snprintf(path, sizeof path, "%s/sandbox/daemon-pidns", rt);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t m = fd < 0 ? 0 : read(fd, theirs, sizeof theirs - 1);
  if (fd >= 0) close(fd);
  return m > 0 && strncmp(mine, theirs, (size_t)m) != 0;
}

int main(int argc, char **argv) {
  static char cwd[PATH_MAX];
  int opt;
  signal(SIGPIPE, SIG_IGN);
  while ((opt = getopt(argc, argv, "+r:w:t:xbu:c:p:n:d:j:f:e:V")) != -1) {
    switch (opt) {
      case 'r': rt = optarg; break;
      case 'w': root = optarg; break;
      case 't': bound_ms = atol(optarg); break;
      case 'x': blocking = 1; break;
      case 'b': detach = 1; break;
      case 'u': allow_unavailable = strcmp(optarg, "block") != 0; break;
      case 'c': refuse_code = atoi(optarg); break;
      case 'p': phase = optarg; break;
      case 'n': node = optarg; break;
      case 'd': entry = optarg; break;
      case 'j': judge = optarg; break;
      case 'f': if (nflags < MAX_OPTS) flags[nflags++] = optarg; break;
      case 'e': if (nenvs < MAX_OPTS) envs[nenvs++] = optarg; break;
      case 'V': printf("hermesd-client %s protocol %d\n", HERMESD_VERSION, HERMESD_PROTOCOL); return 0;
      default: goto usage;
    }
  }
  if (!rt || argc - optind < 2) {
  usage:
    fputs("usage: hermesd-client -r <runtime-dir> [-w <work-tree>] [-t <ms>] [-x] [-b] [-u allow|block] [-c <code>] [-p <phase>]\n"
          "       [-n <node> -d <daemon-entry> [-j <cli>] [-f <node-flag>]... [-e NAME=VALUE]...] <git|" HERMESD_AGENTS "> <hook or event> [arg...]\n",
          stderr);
    return 2;
  }
  kind = argv[optind], name = argv[optind + 1];
  if (bound_ms <= 0) bound_ms = 10000;
  /* A new daemon runs in the work tree, named absolutely (the stubs pass it relative). */
  if (!(root ? realpath(root, cwd) : getcwd(cwd, sizeof cwd))) return fprintf(stderr, "hermesd: the work tree %s cannot be read: %s\n", root ? root : ".", strerror(errno)), refuse_code;
  root = cwd;
  sandboxed = in_sandbox();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(qid, sizeof qid, "%ld-%ld%09ld", (long)getpid(), (long)ts.tv_sec, ts.tv_nsec);
  if (!strcmp(kind, "git")) git_body(argc - optind - 2, argv + optind + 2);
  else if (read_all(0, &body, MAX_BODY_BYTES) == 1) fault(0, "the hook's payload is over %d bytes, the most the daemon judges", MAX_BODY_BYTES);

  question(now_ms() + bound_ms);
  /* The answer was cut off: the daemon stopped or died while it worked on this question. */
  if (!strcmp(kind, "git") && !strcmp(name, "pre-commit")) {
    /* It may have checked out the staged snapshot for the checks: a (new) daemon puts the user's
     * work back from the backup made for this commit, before git returns. */
    fprintf(stderr, "hermesd: the daemon stopped while the pre-commit hook ran; nothing was committed. Putting your work back...\n");
    name = "recover", body.n = 0;
    git_body(0, NULL);
    if (question(now_ms() + bound_ms) == ASK_CUT) fault(0, "the daemon stopped again while it put your work back; run: hermesd hook restore");
  }
  fault(0, "the daemon's answer was cut off (it stopped or died while answering; see hermesd logs)");
}
