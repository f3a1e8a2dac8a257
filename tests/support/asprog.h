/* asprog.h — small programs for the auto-scheduler's tuned-mode suites (test_autosched_tuned,
 * test_autosched_tune): each built in a ctx with its arguments (inputs, then the output), its
 * output computed by plain C loops for the same seeded inputs, and the differential check of a
 * schedule against the unscheduled program. */
#ifndef TEC_TEST_ASPROG_H
#define TEC_TEST_ASPROG_H

#include "tec/tec.h"

typedef struct asprog {
  tec_ctx *ctx;
  int nargs; /* inputs, then the one output */
  te_tensor *args[4];
  int64_t shape[4][2];
  double k; /* the constant in the body (relu's floor, the stencil's weight) */
  int kind; /* 0 matmul, 1 stencil, 2 row sums */
} asprog;

/* E = max(A B + bias, k): A [m][kk], B [kk][n], bias [n] */
void asprog_matmul(asprog *g, tec_ctx *ctx, int64_t m, int64_t n, int64_t kk, double k);
/* bx[y][x] = in[y][x] + in[y][x+1] + in[y][x+2]; by[y][x] = k (bx[y][x] + bx[y+1][x] +
 * bx[y+2][x]): in [h+2][w+2] */
void asprog_stencil(asprog *g, tec_ctx *ctx, int64_t h, int64_t w, double k);
/* s[i] = sum over j of k x[i][j]: x [m][n] (few rows: the rfactor rule's) */
void asprog_rowsum(asprog *g, tec_ctx *ctx, int64_t m, int64_t n, double k);
/* The inputs filled from seed, the output zeroed (args[0..nargs)); free with asprog_free_args */
void asprog_args(const asprog *g, DLTensor *dl, unsigned seed);
void asprog_free_args(const asprog *g, DLTensor *dl);
/* The output for dl's inputs by plain C loops (malloc'd) */
float *asprog_plain(const asprog *g, const DLTensor *dl);
/* Lowers s, builds it for target (NULL: host), runs it on dl: 0, or -1 with the error in msg */
int asprog_run(const asprog *g, sch_schedule *s, const char *target, DLTensor *dl, char *msg,
               size_t cap);

#endif
