/* driver_run.c — the `tec` verbs that produce something: targets and list (tables), compile
 * (tec_emit: object, header, assembly, IR) and bench (JIT build, prepare once, the median of
 * timed runs on random data; a topi input's margin ring zeroed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tools/driver_internal.h"

static int err1(const char *verb, tec_ctx *ctx) {
  fprintf(stderr, "tec %s: ", verb);
  for (const char *c = tec_ctx_error(ctx); c && *c; c++) fputs(*c == '\n' ? (c[1] ? "; " : "") : (char[]){*c, 0}, stderr);
  fputc('\n', stderr);
  return 1;
}

int drv_targets(void) {
  printf("presets (--target NAME, optionally followed by -mcpu=/-mattr= to replace its own):\n");
  const tec_target_preset *p;
  for (int i = 0; (p = tec_target_preset_at(i)); i++)
    printf("  %-12s llvm -mtriple=%s -mcpu=%s -mattr=%s\n  %-12s   %s\n", p->name, p->triple, p->cpu,
           p->attr, "", p->what);
  const char *name;
  for (int a = 0; (name = tec_target_arch_name(a)); a++) {
    printf("%s (-mtriple=%s-...; also", name, name);
    for (int i = 1; tec_target_arch_alias(a, i); i++) printf(" %s", tec_target_arch_alias(a, i));
    printf(")\n  -mcpu:");
    for (int i = 0; tec_target_arch_cpu(a, i); i++) printf(" %s", tec_target_arch_cpu(a, i));
    printf("\n  -mattr:");
    for (int i = 0; tec_target_arch_feature(a, i); i++) printf(" +%s", tec_target_arch_feature(a, i));
    printf("\n");
  }
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = ctx ? tec_target_parse(ctx, NULL) : NULL;
  printf("host (\"llvm\"): %s\n", host ? host->str : "(unknown)");
  if (host) {
    printf("host CPU: -mcpu=%s (%s, %d-bit vectors, %d vector registers; tec features:",
           *host->cpu ? host->cpu : "generic", *host->arch_name ? host->arch_name : "?",
           host->vector_bits, host->vector_regs);
    int any = 0;
    for (int f = 0; f < TEC_FEATURE_COUNT; f++)
      if (tec_target_has(host, (tec_feature)f)) printf(" %s", tec_feature_name((tec_feature)f)), any = 1;
    printf("%s)\n", any ? "" : " none");
  }
  tec_ctx_free(ctx);
  return 0;
}

int drv_list(void) {
  printf("topi templates (tec print OP --shape KEY=V,...):\n");
  tec_ctx *ctx = tec_ctx_new();
  for (int i = 0; ctx && i < topi_template_count(); i++) {
    const topi_template *t = topi_template_at(i);
    printf("  %-18s %s\n  %-18s   --shape keys: %s\n", t->name, t->doc, "", topi_problem_key_names(ctx, t));
  }
  tec_ctx_free(ctx);
  extern tec_generator *drv_generators(void);
  tec_generator *g = drv_generators();
  printf("generators%s\n", g ? ":" : ": none linked in (see tec/driver.h)");
  for (; g; g = g->next) printf("  %-18s %s\n", g->name, g->doc ? g->doc : "");
  return 0;
}

/* FILE.o -> FILE + ext */
static char *with_ext(const char *out, const char *ext) {
  size_t n = strlen(out);
  const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
  if (dot && (!slash || dot > slash)) n = (size_t)(dot - out);
  char *s = malloc(n + strlen(ext) + 1);
  if (s) memcpy(s, out, n), strcpy(s + n, ext);
  return s;
}

int drv_compile(tec_ctx *ctx, lower_func *f, const char *target, const char *out, const char *emit) {
  static const struct { const char *name, *ext; tec_emit_kind kind; } kinds[] = {
      {"obj", NULL, TEC_EMIT_OBJECT}, {"h", ".h", TEC_EMIT_HEADER},
      {"asm", ".s", TEC_EMIT_ASM},    {"ll", ".ll", TEC_EMIT_LLVM_IR}};
  int want[4] = {0};
  const char *s = emit ? emit : "obj,h";
  while (*s) {
    size_t len = strcspn(s, ",");
    int k = -1;
    for (int i = 0; i < 4; i++)
      if (strlen(kinds[i].name) == len && !strncmp(s, kinds[i].name, len)) k = i;
    if (k < 0) {
      fprintf(stderr, "tec compile: --emit '%.*s'; the kinds are obj, h, asm, ll (comma separated)\n", (int)len, s);
      return 2;
    }
    want[k] = 1;
    s += len + (s[len] == ',');
  }
  /* target first on its own: a bad target is bad usage, not a failed build */
  const tec_target *tg = tec_target_parse(ctx, target); /* parsed once for every kind */
  if (!tg) {
    err1("compile", ctx);
    return 2;
  }
  for (int i = 0; i < 4; i++) {
    if (!want[i]) continue;
    char *path = kinds[i].ext ? with_ext(out, kinds[i].ext) : strdup(out);
    int rc = path ? tec_emit_for(ctx, 1, &f, tg, kinds[i].kind, path) : -1;
    if (rc == 0) printf("%s\n", path);
    free(path);
    if (rc != 0) return err1("compile", ctx);
  }
  return 0;
}

/* one call of the benched function (tec_rt_time) */
typedef struct bench_call {
  tec_module *m;
  const char *name;
  int n;
  DLTensor **args;
} bench_call;

static int32_t bench_one(void *user) {
  const bench_call *c = user;
  return tec_module_run(c->m, c->name, c->n, c->args);
}

int drv_bench(tec_ctx *ctx, lower_func *f, const char *target, int repeat, double flops,
              const topi_template *tmpl, const void *problem) {
  int n = f->nuser;
  DLTensor *t = calloc((size_t)n, sizeof *t);
  DLTensor **args = calloc((size_t)n, sizeof *args);
  double *times = calloc((size_t)repeat, sizeof *times);
  int status = 1;
  if (!t || !args || !times) {
    fprintf(stderr, "tec bench: out of memory\n");
    goto done;
  }
  int nalloc = 0;
  for (int i = 0; i < n; i++, nalloc++) {
    const te_tensor *a = f->user_args[i];
    int64_t shape[8];
    if (a->ndim > 8) goto symbolic;
    for (int d = 0; d < a->ndim; d++)
      if (!ir_is_const_int(te_buffer_shape(a)[d], &shape[d])) goto symbolic; /* with a margin */
    if (tec_dl_alloc(&t[i], a->type, a->ndim, shape) != 0) {
      fprintf(stderr, "tec bench: cannot allocate argument %s\n", a->name);
      goto done;
    }
    args[i] = &t[i];
    int64_t count = 1;
    for (int d = 0; d < a->ndim; d++) count *= shape[d];
    if (a->type.code == TEC_FLOAT && a->type.bits == 32) {
      unsigned s = 12345u + (unsigned)i;
      for (int64_t e = 0; e < count; e++)
        s = s * 1103515245u + 12345u, ((float *)t[i].data)[e] = (float)((s >> 9) & 0xffff) / 32768.0f - 1.0f;
      int64_t before[8], after[8]; /* an input with a margin: its ring holds zeros */
      if (topi_arg_zero_ring(tmpl, problem, i, before, after) == a->ndim)
        topi_zero_ring(t[i].data, a->ndim, shape, before, after);
    } else {
      memset(t[i].data, 0, (size_t)(count * tec_dtype_bytes(a->type)));
    }
    continue;
  symbolic:
    fprintf(stderr, "tec bench: argument %s has a symbolic or too-high-dimensional shape; bench needs constant shapes\n",
            a->name);
    status = 2;
    goto done;
  }
  tec_module *m = tec_build(ctx, 1, &f, target);
  if (!m) {
    err1("bench", ctx);
    /* a target this host cannot run (or an unknown one) is bad usage: tec compile is the verb
     * for it */
    if (tec_ctx_error_kind(ctx) == TEC_ERR_UNSUPPORTED || tec_ctx_error_kind(ctx) == TEC_ERR_USER)
      status = 2;
    goto done;
  }
  bench_call call = {m, f->user_name, n, args};
  double first; /* prepare (if any) and a first run, timed alone; then the repeats */
  if (tec_rt_time(bench_one, &call, 0, 1, 1, &first) != 0 || tec_rt_time(bench_one, &call, 0, repeat, 1, times) != 0) {
    fprintf(stderr, "tec bench: %s\n", tec_rt_last_error());
    goto done;
  }
  double med = tec_rt_median(times, repeat); /* sorts: times[0] is the fastest */
  printf("%s: median %.4f ms, fastest %.4f ms over %d runs (first call %.4f ms%s)", f->user_name,
         1e3 * med, 1e3 * times[0], repeat, 1e3 * first, f->prepare ? ", with prepare" : "");
  if (flops > 0) printf(", %.2f GFLOP/s", flops / med * 1e-9);
  printf("\n");
  status = 0;
done:
  for (int i = 0; t && i < n; i++)
    if (args && args[i]) tec_dl_free(&t[i]);
  free(t), free(args), free(times);
  return status;
}
