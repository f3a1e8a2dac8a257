/* gen_ops.c — your own operators as a generator (tec/driver.h): each TEC_GENERATOR declares
 * and schedules one operator from --shape parameters; linked with libtec_driver this file is
 * a command with the `tec` verbs:
 *   gen_ops list
 *   gen_ops print axpy --shape n=1000,lanes=8
 *   gen_ops compile axpy --shape n=1000 --target rasp4b -o axpy.o      (+ axpy.h)
 *   gen_ops bench rowsum --shape m=512,n=512 */
#include "tec/driver.h"

typedef struct axpy_in { te_tensor *x, *y; const ir_expr *a; } axpy_in;

static const ir_expr *axpy_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  axpy_in *in = user;
  return ir_add(ir_mul(in->a, TE_AT(in->x, i[0])), TE_AT(in->y, i[0]));
}

/* out = a * x + y over n floats (a: --shape a=, an integer here), split by lanes and vectorized. */
static lower_func *axpy(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
  int64_t n = tec_gen_int(p, "n", 1024), lanes = tec_gen_int(p, "lanes", 4);
  int64_t a = tec_gen_int(p, "a", 2);
  if (n < 1 || lanes < 1) {
    tec_ctx_set_error(ctx, "axpy: n and lanes must be >= 1 (n=%lld, lanes=%lld)", (long long)n,
                      (long long)lanes);
    return NULL;
  }
  const ir_expr *const *shape = TE_SHAPE(ctx, n);
  axpy_in in = {te_placeholder(ctx, "x", TEC_F32, 1, shape), te_placeholder(ctx, "y", TEC_F32, 1, shape),
                ir_float(ctx, (double)a)};
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 1, .shape = shape,
                                                       .body = axpy_body, .user = &in});
  if (!in.x || !in.y || !out) return NULL;
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *st = sch_stage_of(s, out);
  sch_iter *o, *v;
  if (sch_split(st, sch_axis(st, 0), lanes, &o, &v) != 0 || sch_vectorize(st, v) != 0) return NULL;
  return tec_lower(s, name, 3, (te_tensor *[]){in.x, in.y, out});
}
TEC_GENERATOR(axpy, "out = a * x + y, split by lanes and vectorized (n, lanes, a)", axpy)

typedef struct rowsum_in { te_tensor *m; const ir_expr *k; } rowsum_in;

static const ir_expr *rowsum_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  rowsum_in *in = user;
  return te_sum(TE_AT(in->m, i[0], in->k), 1, &in->k, NULL);
}

/* out[i] = sum over j of m[i, j], rows in parallel. */
static lower_func *rowsum(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
  int64_t m = tec_gen_int(p, "m", 64), n = tec_gen_int(p, "n", 64);
  rowsum_in in = {te_placeholder(ctx, "m", TEC_F32, 2, TE_SHAPE(ctx, m, n)), te_reduce_axis_n(ctx, "j", n)};
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 1, .shape = TE_SHAPE(ctx, m),
                                                       .body = rowsum_body, .user = &in});
  if (!in.m || !out) return NULL;
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *st = sch_stage_of(s, out);
  if (sch_parallel(st, sch_axis(st, 0)) != 0) return NULL;
  return tec_lower(s, name, 2, (te_tensor *[]){in.m, out});
}
TEC_GENERATOR(rowsum, "out[i] = sum_j m[i, j], rows in parallel (m, n)", rowsum)
