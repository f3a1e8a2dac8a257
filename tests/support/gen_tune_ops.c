/* gen_tune_ops.c — a generator defined outside the library, with its own knobs, for test_cli:
 * `blur` (a separable 3x3 box blur: blur_x along rows, then out along columns) declares three
 * knobs with tec_gen_knob — the output's rows per outer iteration, the vector width, and where
 * blur_x is computed (root, or per row block of out) — so `gen_tune_ops tune blur` searches
 * them. TEC_TEST_BLUR_EDIT=1 in the environment edits the compute (a weight of the horizontal
 * pass becomes 2), as a user editing their operator would: its records must not apply then.
 * `bad` misuses the knob API (a default that is not among the values). */
#include <stdlib.h>
#include "tec/driver.h"

typedef struct blur_in { te_tensor *in, *bx; double w0; } blur_in;

static const ir_expr *bx_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  blur_in *b = user;
  const ir_expr *x1 = ir_add(i[1], ir_int(ctx, 1)), *x2 = ir_add(i[1], ir_int(ctx, 2));
  const ir_expr *s = ir_add(ir_mul(ir_float(ctx, b->w0), TE_AT(b->in, i[0], i[1])),
                            ir_add(TE_AT(b->in, i[0], x1), TE_AT(b->in, i[0], x2)));
  return ir_mul(s, ir_float(ctx, 1.0 / 3));
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  blur_in *b = user;
  const ir_expr *y1 = ir_add(i[0], ir_int(ctx, 1)), *y2 = ir_add(i[0], ir_int(ctx, 2));
  const ir_expr *s = ir_add(TE_AT(b->bx, i[0], i[1]), ir_add(TE_AT(b->bx, y1, i[1]), TE_AT(b->bx, y2, i[1])));
  return ir_mul(s, ir_float(ctx, 1.0 / 3));
}

static lower_func *blur(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
  int64_t h = tec_gen_int(p, "h", 64), w = tec_gen_int(p, "w", 64);
  int64_t rows = tec_gen_knob(p, "rows", 4, (const int64_t[]){1, 4, 8, 16}, 8);
  int64_t vec = tec_gen_knob(p, "vec", 3, (const int64_t[]){4, 8, 16}, 8);
  int64_t at = tec_gen_knob(p, "at", 2, (const int64_t[]){0, 1}, 1);
  const char *edit = getenv("TEC_TEST_BLUR_EDIT");
  blur_in b = {te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, h + 2, w + 2)), NULL,
               edit && *edit == '1' ? 2.0 : 1.0};
  b.bx = te_compute(ctx, &(te_compute_decl){.name = "blur_x", .ndim = 2, .shape = TE_SHAPE(ctx, h + 2, w),
                                             .body = bx_body, .user = &b});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2, .shape = TE_SHAPE(ctx, h, w),
                                                       .body = out_body, .user = &b});
  if (!b.in || !b.bx || !out) return NULL;
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *so = sch_stage_of(s, out), *sx = sch_stage_of(s, b.bx);
  sch_iter *yo, *yi, *xo, *xi, *bxo, *bxi;
  if (sch_split(so, sch_axis(so, 0), rows, &yo, &yi) != 0 || sch_split(so, sch_axis(so, 1), vec, &xo, &xi) != 0 ||
      sch_reorder(so, 4, (sch_iter *[]){yo, yi, xo, xi}) != 0 || sch_vectorize(so, xi) != 0)
    return NULL;
  if (at && sch_compute_at(sx, so, yo) != 0) return NULL;
  if (sch_split(sx, sch_axis(sx, 1), vec, &bxo, &bxi) != 0 || sch_vectorize(sx, bxi) != 0) return NULL;
  return tec_lower(s, name, 2, (te_tensor *[]){b.in, out});
}
TEC_GENERATOR(blur, "separable 3x3 box blur with knobs rows, vec, at (h, w)", blur)

static lower_func *bad(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
  (void)name;
  tec_gen_knob(p, "v", 2, (const int64_t[]){4, 8}, 3);
  tec_ctx_set_error(ctx, "bad: not built");
  return NULL;
}
TEC_GENERATOR(bad, "misuses tec_gen_knob (its default is not among its values)", bad)
