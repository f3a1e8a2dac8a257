/* depthwise_spatial_pack.c — the arm_cpu depthwise conv2d schedule of TVM's topi (2018),
 * written in tec, with the kernel packing computed once (prepare) instead of on every call.
 *
 * For each MobileNet v1 depthwise layer: build the operator twice — constants precomputed
 * (the default) and packing inside every call (sch_set_precompute(s, 0)) — check both against
 * a naive loop, and time the per-call function of each. Prints the lowered prepare and run
 * functions of the first layer.
 *   usage: depthwise_spatial_pack [--reps N] [--layer NAME]   (default 50, every layer; --help) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "example_args.h"
#include "tec/tec.h"

typedef struct layer { const char *name; int64_t c, h, w, stride; } layer;

static const layer layers[] = {
    {"32x112x112", 32, 112, 112, 1},  {"64x112x112 s2", 64, 112, 112, 2},
    {"256x28x28", 256, 28, 28, 1},    {"512x14x14", 512, 14, 14, 1},
    {"1024x7x7", 1024, 7, 7, 1},
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* naive depthwise 3x3, pad 1, then bias and relu */
static void reference(const topi_conv2d *p, const float *x, const float *k, const float *b,
                      float *out, int64_t oh, int64_t ow) {
  for (int64_t c = 0; c < p->c_in; c++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++) {
        float acc = 0;
        for (int64_t i = 0; i < 3; i++)
          for (int64_t j = 0; j < 3; j++) {
            int64_t yy = y * p->stride_h + i - 1, xj = xx * p->stride_w + j - 1;
            if (yy >= 0 && yy < p->h && xj >= 0 && xj < p->w)
              acc += x[(c * p->h + yy) * p->w + xj] * k[(c * 3 + i) * 3 + j];
          }
        acc += b[c];
        out[(c * oh + y) * ow + xx] = acc > 0 ? acc : 0;
      }
}

/* Builds the operator with the split on or off; NULL (and status set) on failure. */
static tec_module *build(tec_ctx *ctx, const topi_conv2d *p, int precompute, int print,
                         int *status) {
  /* 16 lanes: one AVX-512 vector (4 on NEON) */
  topi_dw_spatial_pack_config cfg = {.vc = 16, .tile_h = 2, .tile_w = 4, .parallel = 1};
  topi_decl d;
  topi_op op;
  lower_func *f = NULL;
  tec_module *m = NULL;
  if (topi_declare(ctx, "dw_spatial_pack", p, &d) == 0 &&
      topi_schedule(&d, &cfg, NULL, &op) == 0 &&
      sch_set_precompute(op.sched, precompute) == 0 &&
      (f = tec_lower(op.sched, "dw", op.nargs, op.args)) != NULL)
    m = tec_build(ctx, 1, &f, NULL);
  if (!m) {
    fprintf(stderr, "depthwise: %s\n", tec_ctx_error(ctx));
    *status = 1;
  } else if (print) {
    tec_lower_print(stdout, f);
  }
  return m;
}

/* Median ms of each module's per-call function, the two timed alternately (same conditions). */
static void time_pair(tec_module *a, tec_module *b, DLTensor **args, int reps, double *ta,
                      double *tb) {
  double *x = malloc(sizeof *x * (size_t)reps), *y = malloc(sizeof *y * (size_t)reps);
  *ta = *tb = -1;
  if (!x || !y) {
    free(x), free(y);
    return;
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    tec_module_run(a, "dw", 4, args);
    double t1 = now();
    tec_module_run(b, "dw", 4, args);
    double t2 = now();
    x[r] = (t1 - t0) * 1e3;
    y[r] = (t2 - t1) * 1e3;
  }
  qsort(x, (size_t)reps, sizeof *x, cmp);
  qsort(y, (size_t)reps, sizeof *y, cmp);
  *ta = x[reps / 2];
  *tb = y[reps / 2];
  free(x), free(y);
}

static double max_err(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = a[i] - b[i];
    e = e < 0 ? -e : e;
    if (!(e <= m)) m = e;
  }
  return m;
}

int main(int argc, char **argv) {
  int64_t reps = 50;
  const char *only = "all";
  ex_opt opts[] = {{"reps", EX_INT, &reps, 1, 1e6, "timed calls per variant"},
                   {"layer", EX_WORD, &only, 0, 0, "one layer by name (see the table), or all"}};
  int rc = ex_args_parse("MobileNet v1's depthwise layers, TVM's arm_cpu spatial-pack schedule, kernel packed once.",
                         argc, argv, opts, 2);
  if (rc) return rc == 1 ? 0 : 2;
  int found = !strcmp(only, "all");
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) found |= !strcmp(only, layers[l].name);
  if (!found) {
    fprintf(stderr, "depthwise_spatial_pack: no layer '%s'; the layers:", only);
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) fprintf(stderr, " %s", layers[l].name);
    fprintf(stderr, " (or all)\n");
    return 2;
  }
  int status = 0;
  printf("%-16s %12s %14s %8s %10s\n", "layer", "split (ms)", "no split (ms)", "saved", "max error");
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
    const layer *L = &layers[l];
    if (strcmp(only, "all") && strcmp(only, L->name)) continue;
    topi_conv2d p = {.n = 1, .c_in = L->c, .h = L->h, .w = L->w, .c_out = L->c, .kh = 3, .kw = 3,
                     .stride_h = L->stride, .stride_w = L->stride, .pad_h = 1, .pad_w = 1,
                     .groups = L->c, .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
    int64_t oh = (L->h + 2 - 3) / L->stride + 1, ow = (L->w + 2 - 3) / L->stride + 1;
    int64_t sx[4] = {1, L->c, L->h, L->w}, sk[4] = {L->c, 1, 3, 3}, sb = L->c;
    int64_t so[4] = {1, L->c, oh, ow};
    DLTensor x, k, b, o;
    tec_dl_alloc(&x, TEC_F32, 4, sx);
    tec_dl_alloc(&k, TEC_F32, 4, sk);
    tec_dl_alloc(&b, TEC_F32, 1, &sb);
    tec_dl_alloc(&o, TEC_F32, 4, so);
    float *px = x.data, *pk = k.data, *pb = b.data, *po = o.data;
    for (int64_t i = 0; i < tec_dl_numel(&x); i++) px[i] = (float)((i * 7) % 17) / 17.0f - 0.4f;
    for (int64_t i = 0; i < tec_dl_numel(&k); i++) pk[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < L->c; i++) pb[i] = (float)(i % 7) / 7.0f - 0.3f;
    float *ref = malloc(sizeof *ref * (size_t)tec_dl_numel(&o));
    reference(&p, px, pk, pb, ref, oh, ow);
    DLTensor *args[4] = {&x, &k, &b, &o};
    tec_ctx *ctx = tec_ctx_new();
    tec_module *split = build(ctx, &p, 1, l == 0, &status);
    tec_module *whole = build(ctx, &p, 0, 0, &status);
    double err = 1e30, t_split = -1, t_whole = -1;
    if (split && whole) {
      /* the first call of the split module packs the kernel (prepare), once */
      if (tec_module_run(split, "dw", 4, args) != 0) fprintf(stderr, "%s\n", tec_rt_last_error());
      err = max_err(po, ref, tec_dl_numel(&o));
      if (tec_module_run(whole, "dw", 4, args) != 0) fprintf(stderr, "%s\n", tec_rt_last_error());
      double e2 = max_err(po, ref, tec_dl_numel(&o));
      err = e2 > err ? e2 : err;
      time_pair(split, whole, args, reps, &t_split, &t_whole);
      if (tec_module_prepare_count(split, "dw") != 1) status = 1;
    }
    tec_ctx_free(ctx);
    if (err > 1e-4) status = 1;
    printf("%-16s %12.4f %14.4f %7.1f%% %10.2g\n", L->name, t_split, t_whole,
           t_whole > 0 ? 100.0 * (t_whole - t_split) / t_whole : 0.0, err);
    free(ref);
    tec_dl_free(&x), tec_dl_free(&k), tec_dl_free(&b), tec_dl_free(&o);
  }
  return status;
}
