/* opsref.h — independent naive references for the pooling, softmax, residual-add and fully
 * connected templates (plain NCHW / row-major arrays, double accumulation), and drivers that
 * run a pool / softmax / eltwise template on seeded data and return the max error. */
#ifndef TEC_OPSREF_H
#define TEC_OPSREF_H

#include "tec/tec.h"

/* out [n][c][oh][ow] from x [n][c][h][w]: max / average pooling of p (global: the whole input,
 * oh = ow = 1). */
void or_pool2d(const topi_pool *p, int global, const float *x, float *out);
/* out[i][j] = exp(x[i][j] - max_i) / sum (double). */
void or_softmax(int64_t m, int64_t n, const float *x, float *out);
/* out = act(a + b) over n floats. */
void or_add(int64_t n, topi_act act, const float *a, const float *b, float *out);
/* out[i][j] = act(sum_k a[i][k] * w[j][k] + bias[j]) (bias may be NULL). */
void or_fc(int64_t m, int64_t n, int64_t k, const float *a, const float *w, const float *bias,
           topi_act act, float *out);

/* Runs template `name` ("pool2d" / "global_pool") on p with config (NULL: the default) on seeded
 * data and returns the max error (tu_max_err) against or_pool2d; also asserts that the lanes
 * past c of an NCHW[x]c output are zero. Fails the test on any error. */
double or_check_pool(const char *name, const topi_pool *p, const void *config);
double or_check_softmax(const topi_softmax *p, const void *config, float scale);
double or_check_eltwise(const topi_eltwise *p, const void *config);

#endif
