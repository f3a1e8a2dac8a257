/* my_ops.c — a generator outside the tec tree: one operator, `scale` (y = s * x over n floats,
 * vectorized by 4), registered with TEC_GENERATOR; linked with the installed libtec_driver it
 * is a command with the `tec` verbs:  ./my_ops print scale --shape n=10,s=3 */
#include <tec/driver.h>

typedef struct scale_in { te_tensor *x; const ir_expr *s; } scale_in;

static const ir_expr *scale_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  scale_in *in = user;
  return ir_mul(in->s, TE_AT(in->x, i[0]));
}

static lower_func *scale(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
  int64_t n = tec_gen_int(p, "n", 64), s = tec_gen_int(p, "s", 2);
  scale_in in = {te_placeholder(ctx, "x", TEC_F32, 1, TE_SHAPE(ctx, n)), ir_float(ctx, (double)s)};
  te_tensor *y = te_compute(ctx, &(te_compute_decl){.name = "y", .ndim = 1, .shape = TE_SHAPE(ctx, n),
                                                     .body = scale_body, .user = &in});
  if (!in.x || !y) return NULL;
  sch_schedule *sch = sch_create(ctx, 1, &y);
  sch_stage *st = sch_stage_of(sch, y);
  sch_iter *o, *v;
  if (sch_split(st, sch_axis(st, 0), 4, &o, &v) != 0 || sch_vectorize(st, v) != 0) return NULL;
  return tec_lower(sch, name, 2, (te_tensor *[]){in.x, y});
}
TEC_GENERATOR(scale, "y = s * x, vectorized by 4 (n, s)", scale)
