/* remote_driver.c — the C driver a remote candidate is linked with: generated per candidate as
 * the prototypes of its raw functions (declared with void * buffers, so no header beyond libc
 * is needed where it is compiled), the byte size of each buffer (the user's arguments, then
 * the packed tensors prepare writes), and a fixed main. The main fills input k exactly as
 * measure.c does (TUNE_FILL_SEED), sets the output to NaN, runs prepare once, then warm-up
 * and timed runs of run, each held to the time-out, and writes on stdout:
 *
 *   tec-tune 1                started (after the buffers are ready)
 *   p                         prepare done
 *   r                         per run
 *   status ok | status run MESSAGE | status timeout MESSAGE
 *   costs N C1 ... CN         seconds per call of each timed run (ok only): a timed run makes
 *                             the calls a calibration after the warm-up found to last
 *                             MIN_REPEAT_MS (as measure.c), back to back; the cost is their mean
 *   out BYTES                 then the first run's output, raw (ok only)
 *
 * alarm() ends it if it outlives its own time budget (the SSH session was cut). Usage:
 *   driver WARMUP REPEATS TIMEOUT MIN_REPEAT_MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

static const char driver_main[] =
    "static double now_s(void) {\n"
    "  struct timespec t;\n"
    "  clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n"
    "}\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  if (argc != 5) {\n"
    "    fprintf(stderr, \"usage: %s WARMUP REPEATS TIMEOUT MIN_REPEAT_MS\\n\", argv[0]);\n"
    "    return 2;\n"
    "  }\n"
    "  int warmup = atoi(argv[1]), repeats = atoi(argv[2]);\n"
    "  double timeout = atof(argv[3]), min_ms = atof(argv[4]);\n"
    "  if (warmup < 0 || warmup > 1000 || repeats < 1 || repeats > 16 || !(timeout > 0) || timeout > 1e5 ||\n"
    "      !(min_ms >= 0) || min_ms > 1000.0 * timeout) {\n"
    "    fprintf(stderr, \"driver: bad WARMUP %s, REPEATS %s, TIMEOUT %s or MIN_REPEAT_MS %s\\n\", argv[1], argv[2], argv[3], argv[4]);\n"
    "    return 2;\n"
    "  }\n"
    "  int runs = warmup + repeats;\n"
    "  alarm((unsigned)(10.0 + 10.0 * timeout + runs * (2.0 * timeout + 1.0) + repeats * 2e-3 * min_ms));\n"
    "  void *b[TT_NBUF] = {0};\n"
    "  float *first = NULL;\n"
    "  printf(\"tec-tune 1\\n\");\n"
    "  for (int i = 0; i < TT_NBUF; i++) {\n"
    "    size_t n = ((size_t)tt_bytes[i] + 63) / 64 * 64;\n"
    "    b[i] = aligned_alloc(64, n ? n : 64);\n"
    "    if (!b[i]) {\n"
    "      printf(\"status run out of memory allocating %lld bytes\\n\", tt_bytes[i]);\n"
    "      goto out;\n"
    "    }\n"
    "    memset(b[i], 0, n ? n : 64);\n"
    "  }\n"
    "  for (int i = 0; i < TT_NUSER; i++) {\n"
    "    unsigned s = 12345u + 977u * (unsigned)i;\n"
    "    float *x = b[i];\n"
    "    for (long long e = 0; e < tt_bytes[i] / 4; e++)\n"
    "      s = s * 1103515245u + 12345u, x[e] = (float)((s >> 9) & 0xffff) / 32768.0f - 1.0f;\n"
    "  }\n"
    "  float *o = b[TT_NUSER - 1];\n"
    "  long long nout = tt_bytes[TT_NUSER - 1] / 4;\n"
    "  for (long long e = 0; e < nout; e++) o[e] = NAN;\n"
    "  if (!(first = malloc((size_t)nout * 4 + 4))) {\n"
    "    printf(\"status run out of memory\\n\");\n"
    "    goto out;\n"
    "  }\n"
    "  fflush(stdout);\n"
    "  if (tt_prepare(b) != 0) {\n"
    "    printf(\"status run prepare failed (a heap temporary could not be allocated)\\n\");\n"
    "    goto out;\n"
    "  }\n"
    "  printf(\"p\\n\");\n"
    "  fflush(stdout);\n"
    "  double costs[16];\n"
    "  int nc = 0;\n"
    "  long long number = 1;\n"
    "  for (int i = 0; i < runs; i++) {\n"
    "    int rc = 0;\n"
    "    for (int step = 0; i == warmup && min_ms > 0 && step < 24 && rc == 0; step++) {\n"
    "      double c0 = now_s();\n"
    "      for (long long k = 0; k < number && rc == 0; k++) rc = tt_run(b);\n"
    "      double cs = now_s() - c0;\n"
    "      printf(\"r\\n\");\n"
    "      fflush(stdout);\n"
    "      if (cs >= 1e-3 * min_ms || number >= 100000 || cs > timeout) break;\n"
    "      double n = ceil(min_ms * 1e-3 / (cs / (double)number > 1e-9 ? cs / (double)number : 1e-9));\n"
    "      long long next = n > 100000 ? 100000 : (long long)n;\n"
    "      number = next > 2 * number ? next : 2 * number;\n"
    "      if (number > 100000) number = 100000;\n"
    "    }\n"
    "    long long calls = i >= warmup ? number : 1;\n"
    "    double t0 = now_s();\n"
    "    for (long long k = 0; k < calls && rc == 0; k++) rc = tt_run(b);\n"
    "    double dt = (now_s() - t0) / (double)calls;\n"
    "    if (rc != 0) {\n"
    "      printf(\"status run run failed (a heap temporary could not be allocated)\\n\");\n"
    "      goto out;\n"
    "    }\n"
    "    if (dt > timeout) {\n"
    "      printf(\"status timeout a run took %.3g s, over the time-out of %g s\\n\", dt, timeout);\n"
    "      goto out;\n"
    "    }\n"
    "    if (i == 0) memcpy(first, o, (size_t)nout * 4);\n"
    "    if (i >= warmup && nc < 16) costs[nc++] = dt;\n"
    "    printf(\"r\\n\");\n"
    "    fflush(stdout);\n"
    "  }\n"
    "  printf(\"status ok\\ncosts %d\", nc);\n"
    "  for (int k = 0; k < nc; k++) printf(\" %.9g\", costs[k]);\n"
    "  printf(\"\\nout %lld\\n\", nout * 4);\n"
    "  fwrite(first, 4, (size_t)nout, stdout);\n"
    "out:\n"
    "  fflush(stdout);\n"
    "  free(first);\n"
    "  for (int i = 0; i < TT_NBUF; i++) free(b[i]);\n"
    "  return 0;\n"
    "}\n";

static int64_t tensor_bytes(const te_tensor *t) {
  int64_t n = (t->type.bits + 7) / 8 * (t->type.lanes > 1 ? t->type.lanes : 1), e;
  if (te_has_margin(t)) return -1; /* tune_bench_new refuses margins first */
  for (int d = 0; d < t->ndim; d++) {
    if (!ir_is_const_int(t->shape[d], &e)) return -1;
    n *= e;
  }
  return n;
}

/* The buffer index of tensor t: a user argument (0..nuser-1) or a packed one (nuser + k). */
static int buffer_of(const lower_func *f, const te_tensor *t) {
  for (int k = 0; k < f->nuser; k++)
    if (f->user_args[k] == t) return k;
  for (int k = 0; k < f->npacked; k++)
    if (f->packed[k] == t) return f->nuser + k;
  return -1;
}

/* "int32_t NAME_raw(void *, ...);" and "static int WRAP(void **b) { return NAME_raw(b[i], ...); }" */
static int write_call(FILE *o, const lower_func *run, const lower_func *g, const char *wrap) {
  fprintf(o, "int32_t %s_raw(", g->name);
  for (int a = 0; a < g->nargs; a++) fprintf(o, "%svoid *", a ? ", " : "");
  fprintf(o, "%s);\nstatic int %s(void **b) {\n  return %s_raw(", g->nargs ? "" : "void", wrap, g->name);
  for (int a = 0; a < g->nargs; a++) {
    int k = buffer_of(run, g->args[a]);
    if (k < 0) return -1;
    fprintf(o, "%sb[%d]", a ? ", " : "", k);
  }
  fprintf(o, ");\n}\n");
  return 0;
}

char *tune_remote_driver_source(const lower_func *f, const char **why) {
  *why = NULL;
  if (f->nsize > 0 || (f->prepare && f->prepare->nsize > 0)) {
    *why = "the candidate has symbolic sizes; remote measurement needs constant shapes";
    return NULL;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&text, &len);
  if (!o) {
    *why = "out of memory writing the driver";
    return NULL;
  }
  int nbuf = f->nuser + f->npacked;
  fprintf(o, "/* the remote driver of a tec tune candidate (tune/remote_driver.c) */\n"
             "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
             "#include <string.h>\n#include <time.h>\n#include <unistd.h>\n\n"
             "#define TT_NBUF %d\n#define TT_NUSER %d\nstatic const long long tt_bytes[TT_NBUF] = {",
          nbuf, f->nuser);
  int bad = f->nuser < 1;
  for (int i = 0; i < nbuf; i++) {
    int64_t n = tensor_bytes(i < f->nuser ? f->user_args[i] : f->packed[i - f->nuser]);
    if (n < 0) bad = 1;
    fprintf(o, "%s%lld", i ? ", " : "", (long long)n);
  }
  fprintf(o, "};\n");
  if (f->prepare) bad |= write_call(o, f, f->prepare, "tt_prepare") != 0;
  else fprintf(o, "static int tt_prepare(void **b) {\n  (void)b;\n  return 0;\n}\n");
  bad |= write_call(o, f, f, "tt_run") != 0;
  fputs(driver_main, o);
  if (fclose(o) != 0 || !text) {
    free(text);
    *why = "out of memory writing the driver";
    return NULL;
  }
  if (bad) {
    free(text);
    *why = "the candidate has a buffer of symbolic size or an argument the driver cannot place";
    return NULL;
  }
  return text;
}
