/* difftest.c — tec-difftest: random schedules of the difftest programs, each compared with
 * the unscheduled program (see include/tec/difftest.h).
 *
 *   tec-difftest --seed 7 --count 5000            # every program
 *   tec-difftest --seed 7 --case 1234 --verbose   # replay one case, print its schedule
 *   tec-difftest --program conv2d --count 200
 *   tec-difftest --fast-build --count 5000        # build with "llvm -O0": several times faster
 *
 * Each case runs in a child process (a crash is reported with its schedule); a failing
 * schedule is shrunk and printed as C calls. Exit status: 0 no failures, 1 failures, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tec/tec.h"
#include "tec/difftest.h"

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--seed N] [--count N] [--case N] [--program NAME]... [--max-prims N] [--jobs N]\n"
          "          [--verbose] [--stop-on-fail] [--no-isolate] [--no-shrink]\n"
          "          [--fast-build | --target STR]  (tec_build's target; --fast-build: \"llvm -O0\")\n"
          "programs:",
          argv0);
  for (int p = 0; p < DT_NPROGRAMS; p++) fprintf(stderr, " %s", dt_program_name((dt_program)p));
  fprintf(stderr, "\n");
  return 2;
}

static int number(const char *s, long long *out) {
  char *end;
  if (!s || !*s) return -1;
  *out = strtoll(s, &end, 0);
  return *end ? -1 : 0;
}

int main(int argc, char **argv) {
  dt_options o = {.seed = 1, .count = 500, .isolate = 1, .minimize = 1, .log = stdout};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long long n;
    if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) o.verbose++;
    else if (strcmp(a, "--stop-on-fail") == 0) o.stop_on_fail = 1;
    else if (strcmp(a, "--no-isolate") == 0) o.isolate = 0;
    else if (strcmp(a, "--no-shrink") == 0) o.minimize = 0;
    else if (strcmp(a, "--fast-build") == 0) o.target = "llvm -O0";
    else if (strcmp(a, "--target") == 0 && v) o.target = v, i++;
    else if (strcmp(a, "--jobs") == 0 && number(v, &n) == 0 && n > 0) o.jobs = (int)n, i++;
    else if (strcmp(a, "--seed") == 0 && number(v, &n) == 0) o.seed = (uint64_t)n, i++;
    else if (strcmp(a, "--count") == 0 && number(v, &n) == 0 && n > 0) o.count = (int)n, i++;
    else if (strcmp(a, "--case") == 0 && number(v, &n) == 0 && n >= 0) {
      o.first_case = (int)n, o.count = 1, i++;
      if (!o.verbose) o.verbose = 2;
    } else if (strcmp(a, "--max-prims") == 0 && number(v, &n) == 0 && n > 0) o.max_prims = (int)n, i++;
    else if (strcmp(a, "--program") == 0 && v) {
      int p = dt_program_by_name(v);
      if (p < 0) {
        fprintf(stderr, "%s: unknown program '%s'\n", argv[0], v);
        return usage(argv[0]);
      }
      o.programs |= 1u << p;
      i++;
    } else return usage(argv[0]);
  }
  if (o.target) { /* a bad target is a usage error, not a failure of every case */
    tec_ctx *ctx = tec_ctx_new();
    const char *ok = ctx ? tec_target_str(ctx, o.target) : NULL;
    if (!ok) fprintf(stderr, "%s: --target: %s\n", argv[0], ctx ? tec_ctx_error(ctx) : "out of memory");
    tec_ctx_free(ctx);
    if (!ok) return usage(argv[0]);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (!o.jobs) o.jobs = cpus > 1 ? (int)cpus : 1;
  dt_report r;
  int rc = dt_run(&o, &r);
  dt_report_print(stdout, &r);
  return rc == 0 ? 0 : rc > 0 ? 1 : 2;
}
