/* test_tune_remote.c — remote measurement (tune/remote*.c) against a real OpenSSH server this
 * test starts: `sshd -D` on a free port of 127.0.0.1 with a generated host key, an authorized
 * user key and a generated known_hosts (StrictHostKeyChecking=yes), as the current user
 * (StrictModes no, and PermitRootLogin prohibit-password when that user is root). Checked:
 * dense 32x32x32 tuned over ssh proposes the same configs as measured here (same seed), every
 * ok trial has times > 0 and its output checked against a naive matmul (a candidate made wrong
 * by the hook is a `wrong` record, never the best), the best is the fastest measured; two
 * hosts measure in parallel (their programs meet at a rendezvous) and an unreachable third host is
 * dropped without losing a trial; an unreachable host alone, a refused key, a crashing
 * program and a time-out are error records with their messages; the remote and local
 * temporary directories are empty afterwards; bad hosts and options are refused with exact
 * messages. With TEC_TEST_RUNTIME_AARCH64 set (ctest's tune_remote_aarch64, label arm), the
 * AArch64 flow instead: rasp4b candidates cross-linked, run under qemu-aarch64 as the run
 * prefix, their outputs matched. Exit 77 (ctest: skipped) only when OpenSSH is not installed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tec/tune.h"
#include "testutil.h"

extern char **environ;

#define M 32
static const topi_dense dense_prob = {.m = M, .n = M, .k = M, .const_b = 1};

static char dir[128], host_ok[128], host_user[64];
static int port;
static pid_t sshd_pid = -1;
static char o_known[300], o_id[300], o_strict[] = "StrictHostKeyChecking=yes", o_only[] = "IdentitiesOnly=yes";
static const char *ssh_opts[4];

#ifdef TEC_TEST_SANITIZE /* the runtime library is instrumented: the driver links the sanitizers */
#define HOST_CC "cc -fsanitize=address,undefined"
#else
#define HOST_CC "cc"
#endif

/* ---------------- the server ---------------- */

static int sh(const char *cmd) {
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *find_sshd(void) {
  const char *env = getenv("TEC_TEST_SSHD");
  if (env && *env) return env;
  static const char *const places[] = {"/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"};
  for (size_t i = 0; i < sizeof places / sizeof *places; i++)
    if (access(places[i], X_OK) == 0) return places[i];
  return NULL;
}

static int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t n = sizeof a;
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(s, (struct sockaddr *)&a, &n) != 0) return -1;
  close(s);
  return ntohs(a.sin_port);
}

static int can_connect(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
  if (s >= 0) close(s);
  return ok;
}

static void write_text(const char *path, const char *text, int mode) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "test_tune_remote: cannot write %s\n", path);
    exit(1);
  }
  chmod(path, (mode_t)mode);
}

/* 0 started; 77 OpenSSH missing; 1 a failure (printed) */
static int start_sshd(void) {
  const char *sshd = find_sshd();
  if (!sshd || sh("ssh -V 2>/dev/null") != 0 || sh("command -v ssh-keygen >/dev/null") != 0) {
    printf("test_tune_remote: SKIPPED: OpenSSH is not installed (%s missing): install openssh-server and "
           "openssh-client (scripts/dev deps does)\n", sshd ? "ssh or ssh-keygen" : "sshd");
    return 77;
  }
  struct passwd *pw = getpwuid(getuid());
  if (!pw) return fprintf(stderr, "test_tune_remote: who am I?\n"), 1;
  snprintf(host_user, sizeof host_user, "%s", pw->pw_name);
  strcpy(dir, "/tmp/tec_tune_remote_XXXXXX");
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  if (getuid() == 0 && access("/run/sshd", F_OK) != 0) mkdir("/run/sshd", 0755); /* sshd's privilege separation */
  char cmd[1200], path[300];
  snprintf(cmd, sizeof cmd,
           "cd %s && mkdir rtmp ltmp && ssh-keygen -q -t ed25519 -N '' -f host_key && ssh-keygen -q -t ed25519 -N '' -f id && "
           "ssh-keygen -q -t ed25519 -N '' -f other_id && cp id.pub authorized_keys",
           dir);
  if (sh(cmd) != 0) return fprintf(stderr, "test_tune_remote: ssh-keygen failed\n"), 1;
  for (int attempt = 0; attempt < 5; attempt++) {
    port = free_port();
    snprintf(cmd, sizeof cmd, "cd %s && echo \"[127.0.0.1]:%d $(cut -d' ' -f1,2 host_key.pub)\" > known_hosts", dir, port);
    if (port < 0 || sh(cmd) != 0) return fprintf(stderr, "test_tune_remote: no port\n"), 1;
    char cfg[2000];
    snprintf(cfg, sizeof cfg,
             "Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\n"
             "PidFile %s/sshd.pid\nStrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
             "KbdInteractiveAuthentication no\nUsePAM no\nMaxStartups 64\nSetEnv TMPDIR=%s/rtmp\n",
             port, dir, dir, dir, dir);
    snprintf(path, sizeof path, "%s/sshd_config", dir);
    write_text(path, cfg, 0600);
    char log[300];
    snprintf(log, sizeof log, "%s/sshd.log", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)sshd, "-D", "-e", "-f", path, NULL};
    int rc = posix_spawn(&sshd_pid, sshd, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return fprintf(stderr, "test_tune_remote: cannot run %s: %s\n", sshd, strerror(rc)), 1;
    for (int i = 0; i < 200 && !can_connect(); i++) {
      int st;
      if (waitpid(sshd_pid, &st, WNOHANG) == sshd_pid) {
        sshd_pid = -1;
        break;
      }
      usleep(50000);
    }
    if (sshd_pid > 0 && can_connect()) break;
    char *l = tu_read_file(log, NULL);
    fprintf(stderr, "test_tune_remote: sshd did not start (attempt %d): %s\n", attempt + 1, l ? l : "");
    free(l);
    if (sshd_pid > 0) kill(sshd_pid, SIGKILL), waitpid(sshd_pid, NULL, 0), sshd_pid = -1;
  }
  if (sshd_pid < 0) return 1;
  snprintf(host_ok, sizeof host_ok, "%s@127.0.0.1:%d", host_user, port);
  snprintf(o_known, sizeof o_known, "UserKnownHostsFile=%s/known_hosts", dir);
  snprintf(o_id, sizeof o_id, "IdentityFile=%s/id", dir);
  ssh_opts[0] = o_known, ssh_opts[1] = o_strict, ssh_opts[2] = o_id, ssh_opts[3] = o_only;
  /* the tuner's local work directories go here too (checked empty) */
  snprintf(path, sizeof path, "%s/ltmp", dir);
  setenv("TMPDIR", path, 1);
  return 0;
}

static void stop_sshd(void) {
  if (sshd_pid > 0) kill(sshd_pid, SIGTERM), waitpid(sshd_pid, NULL, 0);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (dir[0] && sh(cmd) != 0) fprintf(stderr, "test_tune_remote: could not remove %s\n", dir);
}

/* ---------------- helpers ---------------- */

static int naive_ref(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout) {
  (void)user;
  ck_assert_int_eq(nargs, 3);
  ck_assert_int_eq(nout, M * M);
  tu_ref_matmul(args[0]->data, args[1]->data, out, M, M, M);
  return 0;
}

static void wrong_hook(void *user, int64_t index, float *out, int64_t nout) {
  if (index == *(const int64_t *)user) out[nout / 3] += 1.0f;
}

static void make_task(tec_ctx *ctx, const char *target, tune_task *task) {
  ck_assert_msg(tune_task_topi(ctx, topi_template_find("dense"), &dense_prob, "m=32,n=32,k=32", target, task) == 0, "%s",
                tec_ctx_error(ctx));
}

static tune_options small(int trials, const tune_remote *ro) {
  tune_options o = tune_options_default();
  o.trials = trials, o.batch = 3, o.repeats = 2, o.warmup = 1, o.seed = 5, o.timeout = 2.0;
  o.reference = naive_ref, o.remote = ro;
  return o;
}

static tune_remote remote(const char *const *hosts, int n) {
  return (tune_remote){.nhosts = n, .hosts = hosts, .nssh_options = 4, .ssh_options = ssh_opts, .runtime = TEC_RUNTIME_LIB,
                       .cc = HOST_CC};
}

static int entries(const char *sub) { /* files left in dir/sub */
  char cmd[300];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s/%s)\"", dir, sub);
  return sh(cmd) == 0 ? 0 : 1;
}

static void assert_ok_trials(const tune_result *r, int skip) {
  for (int i = 0; i < r->ntrials; i++) {
    if (i == skip) continue;
    const tune_trial *t = &r->trials[i];
    ck_assert_msg(t->status == TUNE_OK, "trial %d (%s): %s", i, t->config, t->error);
    ck_assert_int_eq(t->ncosts, 2);
    ck_assert(t->costs[0] > 0 && t->costs[1] > 0);
    ck_assert(t->median > 0 && t->gflops > 0);
  }
}

/* ---------------- tests ---------------- */

START_TEST(remote_dense) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, NULL, &task);
  /* measured here first: the configs the seed proposes */
  tune_options lo = small(5, NULL);
  tune_result local;
  ck_assert_msg(tune_run(ctx, &task, &lo, &local) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(local.ntrials, 5);

  const char *hosts[] = {host_ok};
  tune_remote ro = remote(hosts, 1);
  tune_options o = small(5, &ro);
  int64_t wrong = local.trials[2].index;
  o.hook = wrong_hook, o.hook_user = &wrong;
  char rec[300];
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  o.records = rec;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 5);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(r.trials[i].index, local.trials[i].index); /* same proposals */
  assert_ok_trials(&r, 2);
  ck_assert_int_eq(r.trials[2].status, TUNE_WRONG);
  char want[600];
  snprintf(want, sizeof want, "remote %s: wrong output: element %d is ", host_ok, M * M / 3);
  ck_assert_msg(strncmp(r.trials[2].error, want, strlen(want)) == 0, "%s", r.trials[2].error);
  ck_assert_int_ge(r.best, 0);
  ck_assert_int_ne(r.best, 2);
  for (int i = 0; i < 5; i++)
    if (r.trials[i].status == TUNE_OK) ck_assert(r.trials[r.best].median <= r.trials[i].median);
  /* the records: one per trial, the target named, the wrong one with its message */
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 5);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(recs[i].target, task.target);
    ck_assert_str_eq(recs[i].status, i == 2 ? "wrong" : "ok");
    ck_assert_int_eq(recs[i].index, r.trials[i].index);
  }
  ck_assert_str_eq(recs[2].error, r.trials[2].error);
  ck_assert_int_eq(entries("rtmp"), 0); /* removed on the remote */
  ck_assert_int_eq(entries("ltmp"), 0); /* and here */
  tune_result_free(&r);
  /* min_repeat_ms on the remote: the driver calibrates its calls and reports the mean of a
   * call, of the local measurement's order (a call here is microseconds: under 1 ms) */
  tune_options om = small(2, &ro);
  om.min_repeat_ms = 2.0;
  ck_assert_msg(tune_run(ctx, &task, &om, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(r.trials[i].status == TUNE_OK, "%s", r.trials[i].error);
    ck_assert_int_eq(r.trials[i].ncosts, om.repeats);
    for (int k = 0; k < r.trials[i].ncosts; k++)
      ck_assert_msg(r.trials[i].costs[k] > 0 && r.trials[i].costs[k] < 1e-3, "cost %g s",
                    r.trials[i].costs[k]);
  }
  tune_result_free(&r);
  tune_result_free(&local);
  tec_ctx_free(ctx);
}
END_TEST

/* Two hosts (the same server twice) measure at once, whatever the load: the run prefix is a
 * rendezvous. The first program (the default config, alone in its round) passes; every later
 * one waits until a second later one has arrived too (at most 30 s), so with one candidate
 * per host at a time and two hosts they meet, and measured one after the other they would
 * not. A third, unreachable host is dropped; its candidate is measured by another. */
START_TEST(remote_parallel) {
  char path[300], script[1200], log[300];
  snprintf(log, sizeof log, "%s/runs.log", dir);
  snprintf(path, sizeof path, "%s/meet.sh", dir);
  snprintf(script, sizeof script,
           "#!/bin/sh\n"
           "cd %s || exit 1\n"
           "if mkdir first 2>/dev/null; then exec \"$@\"; fi\n"
           "touch arrived.$$\n"
           "i=0\n"
           "while [ $(ls | grep -c '^arrived\\.') -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done\n"
           "if [ $i -lt 300 ]; then echo met >> %s; else echo alone >> %s; fi\n"
           "exec \"$@\"\n",
           dir, log, log);
  write_text(path, script, 0700);
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, NULL, &task);
  const char *hosts[] = {"127.0.0.1:1", host_ok, host_ok};
  tune_remote ro = remote(hosts, 3);
  ro.run_prefix = path;
  tune_options o = small(4, &ro);
  o.batch = 3;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 4);
  assert_ok_trials(&r, -1);
  char *text = tu_read_file(log, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(!strcmp(text, "met\nmet\nmet\n"), "the runs after the first did not meet:\n%s", text);
  free(text);
  ck_assert_int_eq(entries("rtmp"), 0);
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* Errors are records with their messages; tune_run itself succeeds. */
START_TEST(remote_errors) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, NULL, &task);
  tune_result r;
  /* an unreachable host, alone: every candidate fails with ssh's message */
  const char *bad_hosts[] = {"127.0.0.1:1"};
  tune_remote ro = remote(bad_hosts, 1);
  tune_options o = small(2, &ro);
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 2);
  ck_assert_int_eq(r.best, -1);
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(r.trials[i].status, TUNE_RUN_ERROR);
    ck_assert_str_eq(r.trials[i].error, "remote 127.0.0.1:1: ssh failed (exit status 255); it said: ssh: connect to host "
                                        "127.0.0.1 port 1: Connection refused");
  }
  tune_result_free(&r);

  /* a key the server does not know */
  const char *hosts[] = {host_ok};
  ro = remote(hosts, 1);
  char other[300];
  snprintf(other, sizeof other, "IdentityFile=%s/other_id", dir);
  const char *opts[] = {o_known, o_strict, other, o_only};
  ro.ssh_options = opts;
  o = small(1, &ro);
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.trials[0].status, TUNE_RUN_ERROR);
  char want[700];
  snprintf(want, sizeof want, "remote %s: ssh failed (exit status 255); it said: %s@127.0.0.1: Permission denied (publickey).",
           host_ok, host_user);
  ck_assert_str_eq(r.trials[0].error, want);
  tune_result_free(&r);

  /* a program that crashes (the run prefix kills its shell with SIGSEGV) */
  char crash[300];
  snprintf(crash, sizeof crash, "%s/crash.sh", dir);
  write_text(crash, "#!/bin/sh\nkill -SEGV $$\n", 0700);
  ro = remote(hosts, 1);
  ro.run_prefix = crash;
  o = small(1, &ro);
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.trials[0].status, TUNE_RUN_ERROR);
  snprintf(want, sizeof want, "remote %s: the program died of signal 11 (Segmentation fault)", host_ok);
  ck_assert_msg(strncmp(r.trials[0].error, want, strlen(want)) == 0, "%s", r.trials[0].error);
  tune_result_free(&r);

  /* a run prefix that does not exist */
  ro.run_prefix = "/nonexistent/tec-emulator";
  o = small(1, &ro);
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.trials[0].status, TUNE_RUN_ERROR);
  snprintf(want, sizeof want, "remote %s: the program or its run prefix could not be run (exit status 127); it said: ", host_ok);
  ck_assert_msg(strncmp(r.trials[0].error, want, strlen(want)) == 0, "%s", r.trials[0].error);
  tu_assert_contains(r.trials[0].error, "/nonexistent/tec-emulator");
  tune_result_free(&r);

  /* every run over a time-out of 1 ns: the driver reports it */
  ro = remote(hosts, 1);
  o = small(1, &ro);
  o.timeout = 1e-9;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(r.trials[0].status == TUNE_TIMEOUT, "%s", r.trials[0].error);
  snprintf(want, sizeof want, "remote %s: a run took ", host_ok);
  ck_assert_msg(strncmp(r.trials[0].error, want, strlen(want)) == 0, "%s", r.trials[0].error);
  tu_assert_contains(r.trials[0].error, " s, over the time-out of 1e-09 s");
  tune_result_free(&r);
  ck_assert_int_eq(entries("rtmp"), 0);
  ck_assert_int_eq(entries("ltmp"), 0);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(remote_bad_options) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, NULL, &task);
  tune_result r;
  static const struct {
    const char *host, *err;
  } hosts[] = {
      {"-oProxyCommand=x", "tune: remote host '-oProxyCommand=x': a host name may hold letters, digits, '.', '-', '_' (not '-' first) ([user@]host[:port])"},
      {"me@box:0", "tune: remote host 'me@box:0': the port must be 1 to 65535 ([user@]host[:port])"},
      {"a b", "tune: remote host 'a b': a host name may hold letters, digits, '.', '-', '_' (not '-' first) ([user@]host[:port])"},
      {"x;rm@box", "tune: remote host 'x;rm@box': the user name may hold letters, digits, '.', '_', '-' (not first) ([user@]host[:port])"},
      {"[::1", "tune: remote host '[::1': an IPv6 address is written [ADDRESS]:PORT ([user@]host[:port])"},
  };
  for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
    const char *h[] = {hosts[i].host};
    tune_remote ro = remote(h, 1);
    tune_options o = small(1, &ro);
    ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
    assert_err(ctx, hosts[i].err);
    tec_ctx_clear_error(ctx);
  }
  const char *h[] = {host_ok};
  tune_remote ro = remote(h, 1);
  const char *bad_opt[] = {"BatchMode no"};
  ro.ssh_options = bad_opt, ro.nssh_options = 1;
  tune_options o = small(1, &ro);
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: ssh option 'BatchMode no': each is Key=Value (passed as ssh -o Key=Value)");
  tec_ctx_clear_error(ctx);
  ro = remote(h, 1);
  ro.runtime = NULL;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: remote measurement needs the runtime library built for the target (tune_remote.runtime: "
                  "libtec_runtime.a); '(none given)' cannot be read");
  tec_ctx_clear_error(ctx);
  ro = remote(h, 1);
  ro.cc = "/nonexistent/cc";
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: the C compiler for the target ('/nonexistent/cc') cannot be run: cannot run /nonexistent/cc: No "
                  "such file or directory");
  tec_ctx_clear_error(ctx);
  ro = remote(h, 0);
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: remote measurement needs 1 to 256 hosts; 0 given");
  tec_ctx_clear_error(ctx);
  tec_ctx_free(ctx);
}
END_TEST

/* The AArch64 flow: candidates for rasp4b, cross-linked, run under qemu-aarch64 as the run
 * prefix (one thread: qemu-user and the runtime's thread pool do not mix), outputs matched. */
START_TEST(remote_aarch64) {
  const char *rt = getenv("TEC_TEST_RUNTIME_AARCH64");
  ck_assert_ptr_nonnull(rt);
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, "rasp4b", &task);
  tu_assert_contains(task.target, "-mtriple=aarch64");
  const char *hosts[] = {host_ok};
  tune_remote ro = remote(hosts, 1);
  ro.runtime = rt, ro.cc = "aarch64-linux-gnu-gcc";
  ro.run_prefix = access("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1", R_OK) == 0
                      ? "env TEC_NUM_THREADS=1 qemu-aarch64 -L /usr/aarch64-linux-gnu"
                      : "env TEC_NUM_THREADS=1 qemu-aarch64 -L /";
  tune_options o = small(3, &ro);
  o.timeout = 10;
  char rec[300];
  snprintf(rec, sizeof rec, "%s/a64.jsonl", dir);
  o.records = rec;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 3);
  assert_ok_trials(&r, -1);
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 3);
  for (int i = 0; i < n; i++) ck_assert_str_eq(recs[i].target, task.target);
  ck_assert_int_eq(entries("rtmp"), 0);
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  int rc = start_sshd();
  if (rc) {
    if (rc != 77) stop_sshd();
    return rc;
  }
  Suite *s = suite_create("tune_remote");
  TCase *tc = tcase_create("remote");
  tcase_set_timeout(tc, 120);
  if (getenv("TEC_TEST_RUNTIME_AARCH64")) {
    tcase_add_test(tc, remote_aarch64);
  } else {
    tcase_add_test(tc, remote_dense);
    tcase_add_test(tc, remote_parallel);
    tcase_add_test(tc, remote_errors);
    tcase_add_test(tc, remote_bad_options);
  }
  suite_add_tcase(s, tc);
  rc = tu_run(s);
  stop_sshd();
  return rc;
}
