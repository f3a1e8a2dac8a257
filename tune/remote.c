/* remote.c — remote measurement, this side: the options checked (each host "[user@]host[:port]"
 * with its characters validated, ssh options "Key=Value", the run prefix quoted word by word
 * for the remote shell, the target's C compiler found and runnable, its runtime library
 * readable), a private work directory, and each candidate built there: tec_emit's object for
 * the task's target, the generated driver (remote_driver.c), linked by the target's compiler
 * into one program. Every command is spawned with its arguments as an argv (no local shell).
 * remote_ssh.c sends and runs the program. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tune/remote.h"

extern char **environ;

int tune_spawn(char *const *argv, int in, int out, int err, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  int fds[3] = {in, out, err}, rc = 0;
  for (int i = 0; i < 3 && !rc; i++)
    rc = fds[i] >= 0 ? posix_spawn_file_actions_adddup2(&fa, fds[i], i)
                     : posix_spawn_file_actions_addopen(&fa, i, "/dev/null", i ? O_WRONLY : O_RDONLY, 0);
  if (!rc) rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) errno = rc;
  return rc ? -1 : 0;
}

void tune_trim_message(char *dst, size_t size, const char *s) {
  size_t k = 0;
  int sep = 0; /* 1: a blank pending, 2: a "; " pending */
  for (; s && *s && k + 3 < size; s++) {
    if (*s == '\n' || *s == '\r') sep = k ? 2 : 0;
    else if (isspace((unsigned char)*s)) sep = sep ? sep : (k ? 1 : 0);
    else if ((unsigned char)*s < 32) continue;
    else {
      if (sep == 2) dst[k++] = ';', dst[k++] = ' ';
      else if (sep == 1) dst[k++] = ' ';
      sep = 0;
      dst[k++] = *s;
    }
  }
  if (size) dst[k < size ? k : size - 1] = 0;
}

/* Splits text on blanks into words (malloc'd, NULL-terminated). -1 if more than max. */
static int split_words(const char *text, char **words, int max) {
  int n = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ' ' && *e != '\t') e++;
    if (n == max) return -1;
    words[n++] = strndup(p, (size_t)(e - p));
    p = e;
  }
  words[n] = NULL;
  return n;
}

/* Runs argv; its stdout and stderr (at most size-1 bytes kept) in out. The exit status, 128 +
 * the signal, or -1 if it could not be started (errno's text in out). */
static int run_capture(char *const *argv, char *out, size_t size) {
  int p[2];
  out[0] = 0;
  if (pipe2(p, O_CLOEXEC) != 0) {
    snprintf(out, size, "cannot make a pipe: %s", strerror(errno));
    return -1;
  }
  pid_t pid;
  if (tune_spawn(argv, -1, p[1], p[1], &pid) != 0) {
    snprintf(out, size, "cannot run %s: %s", argv[0], strerror(errno));
    close(p[0]), close(p[1]);
    return -1;
  }
  close(p[1]);
  size_t n = 0;
  char junk[512];
  for (;;) {
    ssize_t k = n + 1 < size ? read(p[0], out + n, size - 1 - n) : read(p[0], junk, sizeof junk);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (n + 1 < size) n += (size_t)k;
  }
  out[n] = 0;
  close(p[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int valid_chars(const char *s, const char *extra) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr(extra, *s)) return 0;
  return 1;
}

/* "[user@]host[:port]" or "[user@][v6]:port" into h; NULL, or why not. */
static const char *parse_host(const char *spec, tune_rhost *h) {
  memset(h, 0, sizeof *h);
  h->spec = spec;
  const char *at = strchr(spec, '@'), *p = spec;
  if (at) {
    size_t n = (size_t)(at - spec);
    if (n == 0 || n >= sizeof h->user) return "the user name is empty or longer than 64 characters";
    memcpy(h->user, spec, n);
    if (h->user[0] == '-' || !valid_chars(h->user, "._-")) return "the user name may hold letters, digits, '.', '_', '-' (not first)";
    p = at + 1;
  }
  const char *colon;
  if (*p == '[') {
    const char *close = strchr(p, ']');
    if (!close || close == p + 1) return "an IPv6 address is written [ADDRESS]:PORT";
    if ((size_t)(close - p - 1) >= sizeof h->host) return "the host name is too long";
    memcpy(h->host, p + 1, (size_t)(close - p - 1));
    if (!valid_chars(h->host, ":.%")) return "an IPv6 address holds hex digits, ':' and '.'";
    colon = close[1] == ':' ? close + 1 : NULL;
    if (close[1] && !colon) return "after ']' only ':PORT' may follow";
  } else {
    colon = strrchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    if (n == 0 || n >= sizeof h->host) return "the host name is empty or longer than 255 characters";
    memcpy(h->host, p, n);
    if (h->host[0] == '-' || !valid_chars(h->host, ".-_")) return "a host name may hold letters, digits, '.', '-', '_' (not '-' first)";
  }
  if (colon) {
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 1 || port > 65535 || !isdigit((unsigned char)colon[1])) return "the port must be 1 to 65535";
    snprintf(h->port, sizeof h->port, "%ld", port);
  }
  return NULL;
}

/* The architecture tec itself was built for (a target of it compiles with "cc"). */
static tec_arch host_arch(void) {
#if defined(__x86_64__)
  return TEC_ARCH_X86_64;
#elif defined(__aarch64__)
  return TEC_ARCH_AARCH64;
#elif defined(__arm__)
  return TEC_ARCH_ARMV7;
#else
  return TEC_ARCH_OTHER;
#endif
}

static void free_words(char **w) {
  for (int i = 0; w[i]; i++) free(w[i]), w[i] = NULL;
}

/* The run prefix with each word in single quotes ("'\''" for a quote), then a space. */
static char *quote_prefix(const char *prefix) {
  char *w[TUNE_REMOTE_MAXWORDS + 1] = {0};
  if (!prefix) return strdup("");
  if (split_words(prefix, w, TUNE_REMOTE_MAXWORDS) < 0) {
    free_words(w);
    return NULL;
  }
  size_t n = 1;
  for (int i = 0; w[i]; i++) n += 4 * strlen(w[i]) + 3;
  char *q = malloc(n), *o = q;
  for (int i = 0; q && w[i]; i++) {
    *o++ = '\'';
    for (const char *c = w[i]; *c; c++)
      if (*c == '\'') memcpy(o, "'\\''", 4), o += 4;
      else *o++ = *c;
    *o++ = '\'', *o++ = ' ';
  }
  if (q) *o = 0;
  free_words(w);
  return q;
}

static int bad(tec_ctx *ctx, tune_remote_run *r, const char *fmt, const char *a, const char *b) {
  tec_ctx_set_error(ctx, fmt, a, b);
  tune_remote_close(r);
  return -1;
}

tune_remote_run *tune_remote_open(tec_ctx *ctx, const tune_task *task, const tune_options *o) {
  const tune_remote *ro = o->remote;
  if (ro->nhosts < 1 || !ro->hosts || ro->nhosts > 256) {
    tec_ctx_set_error(ctx, "tune: remote measurement needs 1 to 256 hosts; %d given", ro->nhosts);
    return NULL;
  }
  if (task->fill) { /* the remote driver fills the arguments with the seeded sequence only */
    tec_ctx_set_error(ctx, "tune: %s: remote measurement does not fill inputs with a margin "
                           "(their rings must be zero); measure here, or use margin 0",
                      task->workload);
    return NULL;
  }
  if (task->build) { /* the hosts run an object built for their driver, not the task's module */
    tec_ctx_set_error(ctx, "tune: %s: remote measurement builds its own object for the hosts' driver and "
                           "cannot use the task's build function; measure here, or leave tune_task.build NULL",
                      task->workload);
    return NULL;
  }
  tune_remote_run *r = calloc(1, sizeof *r);
  if (!r || !(r->hosts = calloc((size_t)ro->nhosts, sizeof *r->hosts))) {
    free(r);
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    return NULL;
  }
  pthread_mutex_init(&r->mu, NULL);
  r->opt = ro, r->nhosts = ro->nhosts;
  /* the task's parsed target (a task made by hand may have only its text: parsed once here) */
  r->target = task->target_value ? task->target_value : tec_target_parse(ctx, task->target_arg);
  if (!r->target) {
    tune_remote_close(r);
    return NULL;
  }
  for (int i = 0; i < ro->nhosts; i++) {
    const char *why = ro->hosts[i] ? parse_host(ro->hosts[i], &r->hosts[i]) : "it is NULL";
    if (why && bad(ctx, r, "tune: remote host '%s': %s ([user@]host[:port])", ro->hosts[i] ? ro->hosts[i] : "", why)) return NULL;
  }
  if (ro->nssh_options < 0 || ro->nssh_options > 64) {
    tec_ctx_set_error(ctx, "tune: %d ssh options; 0 to 64 are legal", ro->nssh_options);
    tune_remote_close(r);
    return NULL;
  }
  for (int i = 0; i < ro->nssh_options; i++) {
    const char *s = ro->ssh_options ? ro->ssh_options[i] : NULL, *eq = s ? strchr(s, '=') : NULL;
    int ok = eq && eq > s && eq[1];
    for (const char *c = s; ok && c < eq; c++) ok = isalnum((unsigned char)*c);
    for (const char *c = eq; ok && *c; c++) ok = *c != '\n' && *c != '\r';
    if (!ok && bad(ctx, r, "tune: ssh option '%s'%s: each is Key=Value (passed as ssh -o Key=Value)", s ? s : "(null)", ""))
      return NULL;
  }
  if (ro->identity && (!*ro->identity || access(ro->identity, R_OK) != 0) &&
      bad(ctx, r, "tune: the ssh identity file '%s' cannot be read%s", ro->identity, ""))
    return NULL;
  if (ro->run_prefix && strpbrk(ro->run_prefix, "\n\r") &&
      bad(ctx, r, "tune: the run prefix '%s' holds a line break%s; it is words split on spaces", ro->run_prefix, ""))
    return NULL;
  if (!(r->prefix_quoted = quote_prefix(ro->run_prefix)) &&
      bad(ctx, r, "tune: the run prefix '%s' has more than 32 words%s", ro->run_prefix, ""))
    return NULL;
  if (strlen(r->prefix_quoted) > 1200 &&
      bad(ctx, r, "tune: the run prefix '%.60s...' is longer than 1000 characters%s", ro->run_prefix, ""))
    return NULL;
  /* the compiler and the runtime library for the target */
  const char *cc = ro->cc;
  if (!cc) {
    tec_arch arch = r->target->arch;
    if (arch == host_arch()) cc = "cc";
    else if (arch == TEC_ARCH_AARCH64) cc = "aarch64-linux-gnu-gcc";
    else if (arch == TEC_ARCH_ARMV7) cc = "arm-linux-gnueabihf-gcc";
    else if (bad(ctx, r, "tune: no C compiler known for the target's architecture '%s'%s; set tune_remote.cc",
                 r->target->arch_name, ""))
      return NULL;
  }
  if (split_words(cc, r->cc, TUNE_REMOTE_MAXWORDS - 8) < 1 &&
      bad(ctx, r, "tune: the C compiler '%s'%s is empty or has more than 24 words", cc, ""))
    return NULL;
  char msg[512];
  char *ver[TUNE_REMOTE_MAXWORDS + 2] = {0};
  int nw = 0;
  for (; r->cc[nw]; nw++) ver[nw] = r->cc[nw];
  ver[nw] = "--version";
  if (run_capture(ver, msg, sizeof msg) != 0) {
    char m[300];
    tune_trim_message(m, sizeof m, msg);
    if (bad(ctx, r, "tune: the C compiler for the target ('%s') cannot be run: %s", cc, m)) return NULL;
  }
  if ((!ro->runtime || access(ro->runtime, R_OK) != 0) &&
      bad(ctx, r, "tune: remote measurement needs the runtime library built for the target (tune_remote.runtime: "
                  "libtec_runtime.a); '%s' cannot be read%s", ro->runtime ? ro->runtime : "(none given)", ""))
    return NULL;
  const char *tmp = getenv("TMPDIR");
  snprintf(r->dir, sizeof r->dir, "%s/tec-tune-XXXXXX", tmp && *tmp && strlen(tmp) < 200 ? tmp : "/tmp");
  if (!mkdtemp(r->dir)) {
    const char *e = strerror(errno);
    r->dir[0] = 0;
    if (bad(ctx, r, "tune: cannot make a work directory for the remote programs: %s%s", e, "")) return NULL;
  }
  return r;
}

int tune_remote_nhosts(const tune_remote_run *r) { return r->nhosts; }
const char *tune_remote_host_name(const tune_remote_run *r, int h) { return r->hosts[h].spec; }

void tune_remote_drop(tune_remote_run *r, int h, const char *why) {
  pthread_mutex_lock(&r->mu);
  if (!r->hosts[h].dropped)
    fprintf(stderr, "tune: remote %s cannot be reached; measuring on the other hosts without it: %s\n", r->hosts[h].spec, why);
  r->hosts[h].dropped = 1;
  pthread_mutex_unlock(&r->mu);
}

void tune_remote_close(tune_remote_run *r) {
  if (!r) return;
  for (int i = 0; r->hosts && i < r->nhosts; i++) {
    const tune_rhost *h = &r->hosts[i];
    if (!h->dropped && h->failed > 0 && h->ok == 0)
      fprintf(stderr, "tune: remote %s: all %d of its candidates failed; the first: %s\n", h->spec, h->failed, h->first_error);
  }
  if (r->dir[0]) {
    DIR *d = opendir(r->dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
        snprintf(p, sizeof p, "%s/%s", r->dir, e->d_name), unlink(p);
    if (d) closedir(d);
    rmdir(r->dir);
  }
  free_words(r->cc);
  free(r->prefix_quoted);
  pthread_mutex_destroy(&r->mu);
  free(r->hosts);
  free(r);
}

static char *fail(char **error, const char *fmt, const char *a, const char *b) {
  size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
  *error = malloc(n);
  if (*error) snprintf(*error, n, fmt, a, b);
  return NULL;
}

char *tune_remote_build(tune_remote_run *r, tec_ctx *ctx, const lower_func *f, char **error) {
  unsigned k = __atomic_fetch_add(&r->counter, 1, __ATOMIC_RELAXED);
  char src[300], obj[300], exe[300];
  snprintf(src, sizeof src, "%s/c%u.c", r->dir, k);
  snprintf(obj, sizeof obj, "%s/c%u.o", r->dir, k);
  snprintf(exe, sizeof exe, "%s/c%u", r->dir, k);
  *error = NULL;
  const char *why;
  char *text = tune_remote_driver_source(f, &why);
  if (!text) return fail(error, "%s%s", why, "");
  FILE *o = fopen(src, "w");
  int werr = !o || fputs(text, o) < 0;
  if (o && fclose(o) != 0) werr = 1;
  free(text);
  if (werr) return fail(error, "cannot write the driver %s: %s", src, strerror(errno));
  lower_func *fl = (lower_func *)f;
  if (tec_emit_for(ctx, 1, &fl, r->target, TEC_EMIT_OBJECT, obj) != 0) {
    unlink(src);
    return fail(error, "%s%s", tec_ctx_error(ctx), "");
  }
  char *argv[TUNE_REMOTE_MAXWORDS + 12];
  int n = 0;
  for (; r->cc[n]; n++) argv[n] = r->cc[n];
  const char *tail[] = {"-O2", "-o", exe, src, obj, r->opt->runtime, "-lm", "-lpthread", NULL};
  for (int i = 0; i < 9; i++) argv[n++] = (char *)tail[i];
  char out[2048], m[700];
  int st = run_capture(argv, out, sizeof out);
  unlink(src), unlink(obj);
  if (st != 0) {
    tune_trim_message(m, sizeof m, out);
    unlink(exe);
    return fail(error, "the C compiler (%s) failed to link the candidate's driver: %s", r->cc[0], m);
  }
  char *p = strdup(exe);
  if (!p) return fail(error, "out of memory%s%s", "", "");
  return p;
}
