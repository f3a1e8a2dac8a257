/* build_child.c — a candidate built in a forked child (tune_options.fork), so that a build
 * that blows up (LLVM's time or memory on a huge unrolled body) is an error record and not the
 * tuner's stall or end. The candidate is lowered in the tuner's process; the child inherits
 * the lowered function, builds it (tune_build_candidate: tec_build, LLVM's optimization and
 * code generation, the part whose cost explodes, or the task's own build function) and
 * reports 'B' (built) or 'E' and the error on a pipe. The parent waits at most build_timeout
 * seconds for that byte and kills the child past it ("build took longer than N s (killed)");
 * a child that dies (the kernel's OOM killer, an abort inside LLVM) is an error record naming
 * the signal. A built child then waits for its turn: the module exists only in its address
 * space, so it is measured there (tune_bench_child_measure) when the parent writes 'M', the
 * parent reading the result with the measurement's time-outs (tune_bench_wait). At most the
 * tuner's look-ahead (2) children wait at a time. Here too the plumbing every forked child of
 * the tuner uses: tune_fork_reporter (the measuring children's pipe and fork), tune_read_by
 * (reads held to a deadline) and tune_reap. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tune/internal.h"

int tune_fork_reporter(const char *who, int *fd, char *err, size_t errsize) {
  int fds[2];
  if (pipe(fds) != 0) return snprintf(err, errsize, "cannot make a pipe to the %s: %s", who, strerror(errno)), -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]), close(fds[1]);
    return snprintf(err, errsize, "cannot fork the %s: %s", who, strerror(e)), -1;
  }
  close(fds[pid == 0 ? 0 : 1]);
  *fd = fds[pid == 0 ? 1 : 0];
  return (int)pid;
}

/* Reads n bytes before the deadline (deadline < 0: no deadline): 1 done, 0 end of file or an
 * error, -1 time-out. */
int tune_read_by(int fd, void *buf, size_t n, double deadline) {
  size_t got = 0;
  while (got < n) {
    int ms = -1;
    if (deadline >= 0) {
      double left = deadline - tune_now();
      if (left <= 0) return -1;
      ms = (int)(left * 1000) + 1;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc = poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return 0;
    if (rc == 0) return -1;
    ssize_t k = read(fd, (char *)buf + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    got += (size_t)k;
  }
  return 1;
}

void tune_reap(int pid, int *status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

/* In the child: build, report, wait for the go-ahead, measure (never returns). */
static void child(tec_ctx *ctx, const tune_task *task, lower_func *f, tune_bench *b, int64_t index, int up,
                  int down) {
  tec_module *m = tune_build_candidate(task, ctx, index, f);
  if (!m) {
    char msg[400];
    const char *e = tec_ctx_error(ctx);
    snprintf(msg, sizeof msg, "%s", e && *e ? e : "building failed without a message");
    char c = 'E';
    if (write(up, &c, 1) != 1 || write(up, msg, sizeof msg) != (ssize_t)sizeof msg) _exit(3);
    _exit(0);
  }
  char c = 'B';
  if (write(up, &c, 1) != 1) _exit(3);
  /* the go-ahead; a tuner that died leaves this child to init (the pipe may stay open in the
   * other children, so the end of file is not enough): it exits then */
  pid_t parent = getppid();
  int rc;
  while ((rc = tune_read_by(down, &c, 1, tune_now() + 1.0)) < 0)
    if (getppid() != parent) _exit(0);
  if (rc != 1 || c != 'M') _exit(0); /* not measured: the tuner stopped */
  tune_bench_child_measure(b, m, f, index, up);
}

int tune_child_build(tec_ctx *ctx, const tune_task *task, lower_func *f, double timeout, tune_bench *b,
                     int64_t index, tune_child *c, char *err, size_t errsize, double *seconds) {
  int up[2], down[2];
  memset(c, 0, sizeof *c);
  *seconds = 0;
  if (pipe(up) != 0) {
    snprintf(err, errsize, "cannot make a pipe to the building process: %s", strerror(errno));
    return -1;
  }
  if (pipe(down) != 0) {
    snprintf(err, errsize, "cannot make a pipe to the building process: %s", strerror(errno));
    close(up[0]), close(up[1]);
    return -1;
  }
  fflush(NULL);
  double t0 = tune_now();
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errsize, "cannot fork the building process: %s", strerror(errno));
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
    return -1;
  }
  if (pid == 0) {
    close(up[0]), close(down[1]);
    child(ctx, task, f, b, index, up[1], down[0]);
  }
  close(up[1]), close(down[0]);
  char r = 0;
  int rc = tune_read_by(up[0], &r, 1, t0 + timeout);
  *seconds = tune_now() - t0;
  /* a tuner descheduled between its deadline check and the poll can find the byte there after
   * the time-out: the build still took longer than it */
  if (rc == 1 && *seconds > timeout) rc = -1;
  if (rc == 1 && r == 'B') {
    *c = (tune_child){.pid = (int)pid, .up = up[0], .down = down[1]};
    return 0;
  }
  int st = 0;
  if (rc < 0) { /* past the time-out */
    kill(pid, SIGKILL);
    snprintf(err, errsize, "build took longer than %g s (killed)", timeout);
  } else if (rc == 1 && r == 'E') {
    char msg[400];
    if (tune_read_by(up[0], msg, sizeof msg, tune_now() + 5.0) == 1) {
      msg[sizeof msg - 1] = 0;
      snprintf(err, errsize, "%s", msg);
    } else {
      snprintf(err, errsize, "the build failed and its message was lost");
    }
  }
  close(up[0]), close(down[1]);
  tune_reap(pid, &st);
  if (rc == 0 || (rc == 1 && r != 'E' && r != 'B')) {
    if (WIFSIGNALED(st))
      snprintf(err, errsize, "the building process died of signal %d (%s) after %.3g s", WTERMSIG(st),
               strsignal(WTERMSIG(st)), *seconds);
    else
      snprintf(err, errsize, "the building process exited with status %d before reporting", WEXITSTATUS(st));
  }
  return -1;
}

void tune_child_measure(tune_bench *b, tune_child *c, tune_trial *t) {
  char go = 'M';
  if (write(c->down, &go, 1) != 1) { /* the child is gone: tune_bench_wait reads the end of
                                        file and reports how it died */
  }
  close(c->down);
  tune_bench_wait(b, c->pid, c->up, t);
  c->pid = 0;
}

void tune_child_discard(tune_child *c) {
  if (!c->pid) return;
  int st;
  kill(c->pid, SIGKILL);
  close(c->up), close(c->down);
  tune_reap(c->pid, &st);
  c->pid = 0;
}
