/* unroll_worst.c — each template's config with the largest unrolled body, and what it costs to
 * build (issue #38 item 3: every config of a space builds in seconds).
 *
 *   unroll_worst [--no-build] [--timeout S] [--heaviest N] TEMPLATE SHAPE [TEMPLATE SHAPE ...]
 *   unroll_worst depthwise_nchwc c=96,h=56,w=56,k=7,pad=3,in=NCHW16c,out=NCHW16c
 *   unroll_worst --config ow_tile=14 depthwise_nchwc c=96,h=56,w=56,k=7,pad=3
 *
 * For each pair: every config the space holds for the host (its rule applied) is scheduled
 * and lowered, and its program measured (tec_lower_program_size); the line names the config
 * with the largest unrolled body, its body and its program's stores and IR nodes, and how many
 * configs were lowered. Then that config is JIT-built at -O3 in a forked child (killed after
 * --timeout CPU seconds, default 300): CPU seconds (user + system, one thread: the figure to
 * compare on a loaded machine), wall seconds and peak RSS. --config builds that config instead of
 * searching; --heaviest N lowers only the N configs of the largest knob values (the product of
 * 1 + each value, as tests/test_unroll_cap.c picks them) where a space is too large to lower
 * whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"
#include "tec/tec.h"
#include "tec/topi.h"

static double now(void) { return bench_now(CLOCK_MONOTONIC); }

/* config cfg of declaration d scheduled and lowered: its function, or NULL */
static lower_func *lower_config(const topi_decl *d, const tec_target *tg, const void *cfg) {
  topi_op op;
  if (topi_schedule_as(d, NULL, cfg, tg, &op)) return NULL;
  return tec_lower(op.sched, "f", op.nargs, op.args);
}

static int heaviest = 0; /* > 0: lower only that many configs, those of the largest knob values */

static int one(const char *tname, const char *shape, const char *given, int build, int timeout) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(tname);
  topi_problem p;
  topi_decl d;
  tune_space sp;
  const tec_target *tg = tec_target_parse(ctx, "llvm");
  if (!t || !tg || topi_problem_parse(ctx, t, shape, &p) ||
      topi_declare_as(ctx, tname, NULL, &p, &d) ||
      topi_space_as(ctx, tname, NULL, &p, tg, &sp)) {
    printf("%s %s: %s\n", tname, shape, t ? tec_ctx_error(ctx) : "unknown template");
    tec_ctx_free(ctx);
    return 1;
  }
  void *cfg = tec_ctx_alloc(ctx, sp.config_size), *worst = tec_ctx_alloc(ctx, sp.config_size);
  int64_t nlow = 0, best = -1;
  tec_program_size bs = {0, 0, 0};
  double t0 = now();
  if (given) {
    if (tune_config_parse(ctx, &sp, given, worst)) {
      printf("%s %s: %s\n", tname, shape, tec_ctx_error(ctx));
      tec_ctx_free(ctx);
      return 1;
    }
    lower_func *f = lower_config(&d, tg, worst);
    if (f) bs = tec_lower_program_size(f), nlow = 1;
  } else {
    int64_t range = tune_space_range(&sp), n = 0, *order = calloc((size_t)range, sizeof *order);
    double *w = calloc((size_t)range, sizeof *w);
    for (int64_t i = 0; order && w && i < range; i++) {
      if (!tune_space_allows(&sp, i)) continue;
      w[i] = 1;
      for (int k = 0; k < sp.nknobs; k++) w[i] *= 1.0 + (double)tune_space_get(&sp, i, k)[0];
      order[n++] = i;
    }
    if (heaviest > 0 && heaviest < n) { /* the heaviest by knob values, a selection sort */
      for (int64_t a = 0; a < heaviest; a++)
        for (int64_t b = a + 1; b < n; b++)
          if (w[order[b]] > w[order[a]]) {
            int64_t x = order[a];
            order[a] = order[b], order[b] = x;
          }
      n = heaviest;
    }
    for (int64_t j = 0; j < n; j++) {
      int64_t i = order[j];
      if (tune_space_config(&sp, i, cfg)) continue;
      tec_ctx *c2 = tec_ctx_new(); /* each lowering in its own arena */
      topi_decl d2;
      if (topi_declare_as(c2, tname, NULL, &p, &d2) == 0) {
        lower_func *f = lower_config(&d2, tg, cfg);
        if (f) {
          tec_program_size s = tec_lower_program_size(f);
          nlow++;
          if (s.unrolled_body > best)
            best = s.unrolled_body, bs = s, memcpy(worst, cfg, sp.config_size);
        }
      }
      tec_ctx_free(c2);
    }
    free(order), free(w);
  }
  printf("%-20s %s\n  worst: %s  unrolled body %lld stores, program %lld stores %lld nodes "
         "(%lld configs "
         "lowered in %.1f s)\n",
         tname, shape, tune_config_str(ctx, &sp, worst), (long long)bs.unrolled_body,
         (long long)bs.stores, (long long)bs.nodes, (long long)nlow, now() - t0);
  fflush(stdout);
  if (!build || !nlow) return tec_ctx_free(ctx), 0;
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit cpu_limit = {(rlim_t)timeout, (rlim_t)timeout}; /* CPU seconds: load-proof */
    setrlimit(RLIMIT_CPU, &cpu_limit);
    double w0 = now();
    lower_func *f = lower_config(&d, tg, worst);
    tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("  build: %s cpu %.1f s wall %.1f s peak %.0f MB\n", m ? "ok" : tec_ctx_error(ctx),
           (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec),
           now() - w0, (double)ru.ru_maxrss / 1024);
    fflush(stdout);
    _exit(m ? 0 : 1);
  }
  int st = 0;
  double w0 = now();
  if (pid > 0) waitpid(pid, &st, 0);
  if (pid > 0 && WIFSIGNALED(st)) {
    printf("  build: killed after %d CPU s, %.0f s wall (signal %d)\n", timeout, now() - w0,
           WTERMSIG(st));
  }
  tec_ctx_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int build = 1, timeout = 300, a = 1, rc = 0;
  const char *given = NULL;
  for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
    if (strcmp(argv[a], "--no-build") == 0) build = 0;
    else if (strcmp(argv[a], "--timeout") == 0 && a + 1 < argc) timeout = atoi(argv[++a]);
    else if (strcmp(argv[a], "--config") == 0 && a + 1 < argc) given = argv[++a];
    else if (strcmp(argv[a], "--heaviest") == 0 && a + 1 < argc) heaviest = atoi(argv[++a]);
    else return fprintf(stderr, "unroll_worst: unknown option %s\n", argv[a]), 2;
  }
  if (a >= argc || (argc - a) % 2)
    return fprintf(stderr, "usage: unroll_worst [--no-build] [--timeout S] [--config C] "
                           "[--heaviest N] "
                           "TEMPLATE SHAPE ...\n"), 2;
  tec_rt_set_num_threads(1);
  for (; a + 1 < argc; a += 2) rc |= one(argv[a], argv[a + 1], given, build, timeout);
  return rc;
}
