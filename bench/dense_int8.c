/* dense_int8.c — tec's int8 dense (topi_dense_int8: uint8 x int8 -> int32 on vpdpbusd / sdot
 * through sch_tensorize) beside tec's fp32 dense (the "dense" template's default config) on
 * the same m x n x k, 1 thread, interleaved rounds: per round each is run `reps` times and its
 * median kept; printed are the medians over rounds, the spread (max/min - 1 of the round
 * medians) and the ratio fp32 time / int8 time (> 1: int8 faster). The int8 result is checked
 * against a plain-C int32 reference once (a sample of rows).
 *
 *   dense_int8 [--size 1024] [--rounds 7] [--reps 5]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tec.h"

static tec_module *build(tec_ctx *ctx, topi_op *op, const char *name) {
  lower_func *f = tec_lower(op->sched, name, op->nargs, op->args);
  tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  if (!m) fprintf(stderr, "dense_int8: %s: %s\n", name, tec_ctx_error(ctx));
  return m;
}

static double time_one(tec_module *m, const char *name, DLTensor **args, int n) {
  double t0 = bench_now(CLOCK_MONOTONIC);
  if (tec_module_run(m, name, n, args)) {
    fprintf(stderr, "dense_int8: %s: %s\n", name, tec_rt_last_error());
    exit(1);
  }
  return bench_now(CLOCK_MONOTONIC) - t0;
}

int main(int argc, char **argv) {
  int64_t s = 1024;
  int rounds = 7, reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--size")) s = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: dense_int8 [--size N] [--rounds R] [--reps N]\n");
      return 2;
    }
  }
  if (s < 64 || rounds < 1 || rounds > 64 || reps < 1 || reps > 64) return 2;
  setenv("TEC_NUM_THREADS", "1", 1);
  tec_rt_set_num_threads(1);
  tec_ctx *ctx = tec_ctx_new();
  topi_op q, d;
  topi_dense p = {.m = s, .n = s, .k = s, .b_transposed = 1, .const_b = 1};
  if (topi_dense_int8(ctx, &(topi_dense_int8_problem){s, s, s, 0}, NULL, NULL, &q) ||
      topi_instantiate(ctx, topi_template_find("dense"), &p, NULL, &d)) {
    fprintf(stderr, "dense_int8: %s\n", tec_ctx_error(ctx));
    return 1;
  }
  tec_module *mq = build(ctx, &q, "q"), *md = build(ctx, &d, "d");
  if (!mq || !md) return 1;
  int64_t sh[2] = {s, s};
  DLTensor a8, w8, o32, af, wf, of;
  tec_dl_alloc(&a8, TEC_U8, 2, sh), tec_dl_alloc(&w8, TEC_I8, 2, sh), tec_dl_alloc(&o32, TEC_I32, 2, sh);
  tec_dl_alloc(&af, TEC_F32, 2, sh), tec_dl_alloc(&wf, TEC_F32, 2, sh), tec_dl_alloc(&of, TEC_F32, 2, sh);
  for (int64_t i = 0; i < s * s; i++) {
    ((uint8_t *)a8.data)[i] = (uint8_t)(i * 7 + 3), ((int8_t *)w8.data)[i] = (int8_t)(i * 13 + 5);
    ((float *)af.data)[i] = (float)(i % 17) / 17, ((float *)wf.data)[i] = (float)(i % 13) / 13;
  }
  DLTensor *qa[3] = {&a8, &w8, &o32}, *da[3] = {&af, &wf, &of};
  time_one(mq, "q", qa, 3), time_one(md, "d", da, 3); /* prepare (packing) and warm-up */
  for (int64_t i = 0; i < s; i += s / 8) /* a sample of rows against C */
    for (int64_t j = 0; j < s; j++) {
      int32_t want = 0;
      for (int64_t k = 0; k < s; k++)
        want += (int32_t)((uint8_t *)a8.data)[i * s + k] * ((int8_t *)w8.data)[j * s + k];
      if (((int32_t *)o32.data)[i * s + j] != want) {
        fprintf(stderr, "dense_int8: WRONG at [%lld, %lld]\n", (long long)i, (long long)j);
        return 1;
      }
    }
  double mq_r[64], md_r[64], x[64];
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < reps; k++) x[k] = time_one(mq, "q", qa, 3);
    mq_r[r] = bench_median(x, reps);
    for (int k = 0; k < reps; k++) x[k] = time_one(md, "d", da, 3);
    md_r[r] = bench_median(x, reps);
  }
  double ops = 2.0 * (double)s * (double)s * (double)s, tq = bench_median(mq_r, rounds);
  double td = bench_median(md_r, rounds);
  printf("size %lld, 1 thread, %d rounds x %d reps (medians)\n", (long long)s, rounds, reps);
  printf("int8 dense (dot4)  %8.3f ms  %7.1f GOP/s   spread %.1f %%\n", tq * 1e3, ops / tq / 1e9,
         (mq_r[rounds - 1] / mq_r[0] - 1) * 100);
  printf("fp32 dense         %8.3f ms  %7.1f GFLOP/s spread %.1f %%\n", td * 1e3, ops / td / 1e9,
         (md_r[rounds - 1] / md_r[0] - 1) * 100);
  printf("fp32 / int8 time   %.2fx\n", td / tq);
  tec_dl_free(&a8), tec_dl_free(&w8), tec_dl_free(&o32);
  tec_dl_free(&af), tec_dl_free(&wf), tec_dl_free(&of);
  tec_ctx_free(ctx);
  return 0;
}
