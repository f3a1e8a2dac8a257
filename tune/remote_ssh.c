/* remote_ssh.c — one candidate's program run on one host over OpenSSH: a single `ssh` (argv,
 * BatchMode=yes, the user's -o options, port, user, identity) whose remote command makes a
 * private temporary directory (mktemp -d), receives the program on stdin (`cat`), runs it
 * (behind the run prefix, each word quoted) and removes the directory when the shell exits,
 * whatever ended the program. This side writes the program, reads the driver's protocol
 * (remote_driver.c) and its stderr, holds each step to a deadline (the program started within
 * START_S, prepare within 10 x the time-out + 5 s, each run within 2 x the time-out, plus
 * SLACK_S for the network) and kills ssh past it; then the times and the first run's output
 * are read back and the output is checked against the reference here. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tune/remote.h"

#define START_S 60.0 /* connect, copy and start (ssh's own ConnectTimeout is 10 s) */
#define SLACK_S 2.0

/* The remote shell's script: the program runs in the background under a watchdog that
 * kills it (-9: an emulator stuck in a guest's threads ignores gentler signals) when its
 * budget is spent, and is itself ended (with its sleep) when the program ends first; the
 * directory goes when the shell exits. */
static const char script_head[] =
    "d=$(mktemp -d \"${TMPDIR:-/tmp}/tec-tune.XXXXXX\") || exit 97\n"
    "trap 'rm -rf \"$d\"' EXIT\n"
    "trap 'exit 98' HUP INT TERM\n"
    "cat > \"$d/c\" && chmod 700 \"$d/c\" || exit 97\n";
static const char script_tail[] =
    "p=$!\n"
    "(trap 'kill $s 2>/dev/null; exit 0' TERM; sleep %d & s=$!; wait $s; kill -9 $p) >/dev/null 2>&1 &\n"
    "w=$!\n"
    "wait $p\n"
    "s=$?\n"
    "kill $w 2>/dev/null\n"
    "exit $s\n";

static char *read_file(const char *path, size_t *n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat s;
  char *b = NULL;
  if (fd >= 0 && fstat(fd, &s) == 0 && (b = malloc((size_t)s.st_size + 1))) {
    size_t got = 0;
    while (got < (size_t)s.st_size) {
      ssize_t k = read(fd, b + got, (size_t)s.st_size - got);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      got += (size_t)k;
    }
    if (got != (size_t)s.st_size) free(b), b = NULL;
    *n = got;
  }
  if (fd >= 0) close(fd);
  return b;
}

/* The output of one ssh run. */
typedef struct sshrun {
  char *out;
  size_t nout, cap;
  char err[2048];
  size_t nerr;
  int started, prepared, status_seen, killed, spawn_failed, exit_status, signal;
  char why[200];
} sshrun;

static int out_append(sshrun *s, const char *p, size_t k) {
  if (s->nout + k + 1 > s->cap) {
    size_t c = s->cap ? s->cap * 2 : 4096;
    while (c < s->nout + k + 1) c *= 2;
    if (c > ((size_t)1 << 31)) return -1;
    char *n = realloc(s->out, c);
    if (!n) return -1;
    s->out = n, s->cap = c;
  }
  memcpy(s->out + s->nout, p, k);
  s->nout += k;
  s->out[s->nout] = 0;
  return 0;
}

/* Steps through the protocol lines that have arrived since *scan; the new deadline. */
static double progress(sshrun *s, size_t *scan, double deadline, double timeout) {
  while (!s->status_seen) {
    char *nl = memchr(s->out + *scan, '\n', s->nout - *scan);
    if (!nl) break;
    const char *line = s->out + *scan;
    *scan = (size_t)(nl - s->out) + 1;
    if (!strncmp(line, "tec-tune 1\n", 11)) s->started = 1, deadline = tune_now() + 10 * timeout + 5 + SLACK_S;
    else if (!strncmp(line, "status ", 7)) s->status_seen = 1, deadline = tune_now() + START_S;
    else if (*line == 'p' || *line == 'r') s->prepared = 1, deadline = tune_now() + 2 * timeout + SLACK_S;
  }
  return deadline;
}

static void run_ssh(tune_remote_run *r, const tune_rhost *h, const char *prog, size_t nprog, const tune_options *o,
                    sshrun *s) {
  const tune_remote *ro = r->opt;
  char script[2000], num[64], tail[200];
  snprintf(num, sizeof num, "%d %d %.9g %.9g", o->warmup, o->repeats, o->timeout, o->min_repeat_ms);
  /* the driver's own alarm() budget, and a little more */
  double budget = 15.0 + 10.0 * o->timeout + (o->warmup + o->repeats) * (2.0 * o->timeout + 1.0) +
                  o->repeats * 2e-3 * o->min_repeat_ms;
  snprintf(tail, sizeof tail, script_tail, budget < 1e6 ? (int)budget : 1000000);
  int len = snprintf(script, sizeof script, "%s%s\"$d/c\" %s &\n%s", script_head, r->prefix_quoted, num, tail);
  if (len < 0 || (size_t)len >= sizeof script) {
    s->spawn_failed = 1;
    snprintf(s->why, sizeof s->why, "the run prefix is too long");
    return;
  }
  char *argv[32 + 2 * 64];
  int n = 0;
  argv[n++] = (char *)(ro->ssh ? ro->ssh : "ssh");
  argv[n++] = "-T", argv[n++] = "-o", argv[n++] = "BatchMode=yes"; /* first: the user's -o cannot undo it */
  for (int i = 0; i < ro->nssh_options && i < 64; i++) argv[n++] = "-o", argv[n++] = (char *)ro->ssh_options[i];
  argv[n++] = "-o", argv[n++] = "ConnectTimeout=10", argv[n++] = "-o", argv[n++] = "LogLevel=ERROR";
  if (h->port[0]) argv[n++] = "-p", argv[n++] = (char *)h->port;
  if (ro->identity) argv[n++] = "-i", argv[n++] = (char *)ro->identity;
  if (h->user[0]) argv[n++] = "-l", argv[n++] = (char *)h->user;
  argv[n++] = "--", argv[n++] = (char *)h->host, argv[n++] = script, argv[n] = NULL;

  int sv[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
  pid_t pid;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || pipe2(po, O_CLOEXEC) != 0 ||
      pipe2(pe, O_CLOEXEC) != 0 || tune_spawn(argv, sv[1], po[1], pe[1], &pid) != 0) {
    s->spawn_failed = 1;
    snprintf(s->why, sizeof s->why, "cannot run %s: %s", argv[0], strerror(errno));
    int fds[] = {sv[0], sv[1], po[0], po[1], pe[0], pe[1]};
    for (int i = 0; i < 6; i++)
      if (fds[i] >= 0) close(fds[i]);
    return;
  }
  close(sv[1]), close(po[1]), close(pe[1]);
  int in = sv[0], out = po[0], err = pe[0];
  fcntl(in, F_SETFL, O_NONBLOCK), fcntl(out, F_SETFL, O_NONBLOCK), fcntl(err, F_SETFL, O_NONBLOCK);
  size_t sent = 0, scan = 0;
  double deadline = tune_now() + START_S;
  char buf[65536];
  while (out >= 0 || err >= 0) {
    struct pollfd p[3];
    int np = 0, iin = -1, iout = -1, ierr = -1;
    if (in >= 0) iin = np, p[np++] = (struct pollfd){.fd = in, .events = POLLOUT};
    if (out >= 0) iout = np, p[np++] = (struct pollfd){.fd = out, .events = POLLIN};
    if (err >= 0) ierr = np, p[np++] = (struct pollfd){.fd = err, .events = POLLIN};
    double left = deadline - tune_now();
    if (left <= 0) {
      kill(pid, SIGKILL);
      s->killed = 1;
      break;
    }
    int rc = poll(p, (nfds_t)np, (int)(left * 1000) + 1);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    if (iin >= 0 && p[iin].revents) {
      ssize_t k = send(in, prog + sent, nprog - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) sent += (size_t)k;
      if ((k < 0 && errno != EAGAIN && errno != EINTR) || sent == nprog) close(in), in = -1; /* EOF: cat ends */
    }
    if (iout >= 0 && p[iout].revents) {
      ssize_t k = read(out, buf, sizeof buf);
      if (k > 0) {
        if (out_append(s, buf, (size_t)k) != 0) {
          kill(pid, SIGKILL);
          snprintf(s->why, sizeof s->why, "the remote program sent more output than expected");
          break;
        }
        deadline = progress(s, &scan, deadline, o->timeout);
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(out), out = -1;
      }
    }
    if (ierr >= 0 && p[ierr].revents) {
      ssize_t k = read(err, buf, sizeof buf);
      if (k > 0) {
        size_t room = sizeof s->err - 1 - s->nerr;
        memcpy(s->err + s->nerr, buf, (size_t)k < room ? (size_t)k : room);
        s->nerr += (size_t)k < room ? (size_t)k : room;
        s->err[s->nerr] = 0;
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(err), err = -1;
      }
    }
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  /* ssh ends once its streams are closed; a stuck one is killed after 10 s */
  double wait_until = tune_now() + 10.0;
  int st = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (tune_now() > wait_until) kill(pid, SIGKILL), wait_until = tune_now() + 3600;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  s->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  s->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

/* The driver's "status ok" block: costs and output. 0, or -1 with why. */
static int parse_ok(const sshrun *s, int64_t nout, int *nc, double *costs, float **outv, char *why, size_t wsize) {
  const char *c = strstr(s->out, "\ncosts ");
  if (!c) return snprintf(why, wsize, "no costs line after status ok"), -1;
  c += 7;
  char *end;
  long k = strtol(c, &end, 10);
  if (k < 1 || k > 16) return snprintf(why, wsize, "a costs line with %ld times", k), -1;
  for (int i = 0; i < k; i++) {
    costs[i] = strtod(end, &end);
    if (!(costs[i] > 0)) return snprintf(why, wsize, "a time that is not > 0 on the costs line"), -1;
  }
  *nc = (int)k;
  const char *o = strstr(end, "\nout ");
  if (!o) return snprintf(why, wsize, "no output after the costs"), -1;
  long long bytes = strtoll(o + 5, &end, 10);
  if (*end != '\n' || bytes != nout * 4)
    return snprintf(why, wsize, "%lld bytes of output where %lld were expected", bytes, (long long)(nout * 4)), -1;
  size_t at = (size_t)(end + 1 - s->out);
  if (s->nout - at != (size_t)bytes)
    return snprintf(why, wsize, "%zu of %lld bytes of output arrived", s->nout - at, bytes), -1;
  if (!(*outv = malloc((size_t)bytes + 4))) return snprintf(why, wsize, "out of memory"), -1;
  memcpy(*outv, s->out + at, (size_t)bytes);
  return 0;
}

int tune_remote_measure(tune_remote_run *r, int hi, tune_bench *b, const char *exe, int64_t index, tune_trial *t) {
  tune_rhost *h = &r->hosts[hi];
  const tune_options *o = tune_bench_options(b);
  sshrun s;
  memset(&s, 0, sizeof s);
  size_t nprog = 0;
  char *prog = read_file(exe, &nprog);
  char msg[1400], err[700];
  tune_status st = TUNE_RUN_ERROR;
  int unreachable = 0, nc = 0;
  double costs[16];
  float *outv = NULL;
  if (!prog) {
    snprintf(msg, sizeof msg, "remote %s: cannot read the program %s: %s", h->spec, exe, strerror(errno));
  } else {
    run_ssh(r, h, prog, nprog, o, &s);
    tune_trim_message(err, sizeof err, s.err);
    const char *said = err[0] ? "; it said: " : "";
    const char *line = s.status_seen ? strstr(s.out, "status ") : NULL;
    if (s.spawn_failed) {
      snprintf(msg, sizeof msg, "remote %s: %s", h->spec, s.why);
    } else if (s.killed && !s.started) {
      unreachable = 1;
      snprintf(msg, sizeof msg, "remote %s: the program had not started after %g s (ssh killed)%s%s", h->spec, START_S, said, err);
    } else if (s.killed && !s.status_seen) {
      st = TUNE_TIMEOUT;
      snprintf(msg, sizeof msg, "remote %s: %s did not finish within the time-out of %g s (killed)", h->spec,
               s.prepared ? "a run" : "prepare", o->timeout);
    } else if (line && !strncmp(line, "status ok\n", 10)) {
      char why[200];
      if (s.killed || parse_ok(&s, tune_bench_nout(b), &nc, costs, &outv, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "remote %s: the program's report is cut short: %s", h->spec, s.killed ? "killed while sending" : why);
      } else {
        char werr[500];
        st = tune_bench_check(b, index, outv, werr, sizeof werr);
        if (st != TUNE_OK) snprintf(msg, sizeof msg, "remote %s: %s", h->spec, werr);
      }
    } else if (line) {
      int is_timeout = !strncmp(line, "status timeout ", 15);
      const char *text = line + (is_timeout ? 15 : 7);
      if (!strncmp(text, "run ", 4)) text += 4;
      char m[400];
      tune_trim_message(m, sizeof m, text);
      st = is_timeout ? TUNE_TIMEOUT : TUNE_RUN_ERROR;
      snprintf(msg, sizeof msg, "remote %s: %s", h->spec, m);
    } else if (s.signal) {
      snprintf(msg, sizeof msg, "remote %s: ssh died of signal %d%s%s", h->spec, s.signal, said, err);
    } else if (s.exit_status == 255) {
      unreachable = !s.started;
      snprintf(msg, sizeof msg, "remote %s: ssh failed (exit status 255)%s%s", h->spec, said, err);
    } else if (s.exit_status == 97) {
      snprintf(msg, sizeof msg, "remote %s: cannot make or fill a temporary directory there%s%s", h->spec, said, err);
    } else if (s.exit_status == 126 || s.exit_status == 127) {
      snprintf(msg, sizeof msg, "remote %s: the program%s could not be run (exit status %d)%s%s", h->spec,
               r->opt->run_prefix ? " or its run prefix" : "", s.exit_status, said, err);
    } else if (s.exit_status > 128) {
      int sig = s.exit_status - 128;
      snprintf(msg, sizeof msg, "remote %s: the program died of signal %d (%s)%s%s", h->spec, sig, strsignal(sig), said, err);
    } else {
      snprintf(msg, sizeof msg, "remote %s: the program exited with status %d before reporting%s%s", h->spec,
               s.exit_status, said, err);
    }
  }
  tune_trial_set(t, st, msg, st == TUNE_OK ? nc : 0, costs);
  pthread_mutex_lock(&r->mu);
  if (st == TUNE_OK) h->ok++;
  else if (!h->failed++) snprintf(h->first_error, sizeof h->first_error, "%.399s", msg);
  pthread_mutex_unlock(&r->mu);
  free(outv), free(prog), free(s.out);
  return unreachable;
}
