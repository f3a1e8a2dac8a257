/* test_compute_with.c — sch_compute_with (Halide's compute_with): two gradient stages A and B
 * of one input (Harris' Ix and Iy) fused into one loop nest at the root, at a consumer's row
 * loop, stored per strip and slid (store_at), and down to the row loop only; each exact
 * against plain C at sizes the vectors do not divide, and each lowered program checked to
 * have one nest (A's loops gone, named by B's); fused loops parallel, unrolled, and split
 * with different tail strategies; the pair dropped when the partner moves. The refusals, of
 * the primitive and of tec_lower (ranges that differ, a fused loop split afterwards, a stage
 * between the two reading the earlier, one of them computed in prepare, a producer at the
 * fused loop read by both), each followed by the legal schedule run exact; the trace printed
 * as C and replayed from JSON; the auto-scheduler pairing a small Harris' Ix and Iy and LCN's
 * box_x and box_x_sq (rule_with.c; also with 34 readers of the input ahead of them), exact
 * against plain C, its `with` knob at 0, and the fallback taking a pair apart only for the
 * pairing's own failure (a structured reason, not the message's words); the tuned space
 * offering no host column tile its vectors cannot take (LCN's output). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "autosched/internal.h" /* the fallback's reason (autosched_fallback_reason) */

enum { H = 13, W = 37 }; /* A and B are [H][W], the input [H + 2][W + 2], out [H - 1][W] */

typedef struct prog {
  tec_ctx *ctx;
  te_tensor *in, *a, *b, *out, *c; /* c: reads A (the dependence refusals) */
  sch_schedule *s;
  sch_stage *sa, *sb, *so;
} prog;

#define I(v) ir_int(ctx, (v))
#define AT(t, y, x) TE_AT(t, y, x)
/* A: differences along x (Ix's shape), B: along y (Iy's) */
static const ir_expr *a_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *in = u;
  const ir_expr *y = i[0], *x = i[1], *y1 = ir_add(y, I(1)), *x2 = ir_add(x, I(2));
  return ir_add(ir_sub(AT(in, y, x2), AT(in, y, x)),
                ir_mul(ir_float(ctx, 2), ir_sub(AT(in, y1, x2), AT(in, y1, x))));
}
static const ir_expr *b_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *in = u;
  const ir_expr *y = i[0], *x = i[1], *y2 = ir_add(y, I(2)), *x1 = ir_add(x, I(1));
  return ir_add(ir_sub(AT(in, y2, x), AT(in, y, x)),
                ir_mul(ir_float(ctx, 2), ir_sub(AT(in, y2, x1), AT(in, y, x1))));
}
static const ir_expr *r_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *k = te_reduce_axis_n(ctx, "k", 3);
  return te_sum(TE_AT((te_tensor *)u, i[0], ir_add(i[1], k)), 1, &k, NULL);
}
static te_tensor *A_, *B_;
static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)u;
  const ir_expr *y = i[0], *x = i[1], *y1 = ir_add(y, I(1));
  return ir_add(ir_mul(AT(A_, y, x), AT(B_, y1, x)), ir_mul(AT(A_, y1, x), AT(B_, y, x)));
}
static const ir_expr *c_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 3));
}

static prog prog_new(int64_t bw) {
  prog g = {.ctx = tec_ctx_new()};
  tec_ctx *ctx = g.ctx;
  g.in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, H + 2, (bw > W ? bw : W) + 2));
  g.a = te_compute(ctx, &(te_compute_decl){.name = "A", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                           .body = a_body, .user = g.in});
  g.b = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, H, bw),
                                           .body = b_body, .user = g.in});
  A_ = g.a, B_ = g.b;
  g.out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2,
                                             .shape = TE_SHAPE(ctx, H - 1, W), .body = out_body});
  g.c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                           .body = c_body, .user = g.a});
  ck_assert_ptr_nonnull(g.out);
  g.s = sch_create(ctx, 1, &g.out);
  g.sa = sch_stage_of(g.s, g.a), g.sb = sch_stage_of(g.s, g.b), g.so = sch_stage_of(g.s, g.out);
  return g;
}

/* plain C: A and B of inputs ia and ib ([H + 2][W + 2], each times scale) */
static float ra[H][W], rb[H][W];
static void ref_ab(const float *ia, const float *ib, float scale) {
  const int iw = W + 2;
#define IA(y, x) (ia[(y) * iw + (x)] * scale)
#define IB(y, x) (ib[(y) * iw + (x)] * scale)
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      ra[y][x] = (IA(y, x + 2) - IA(y, x)) + 2.0f * (IA(y + 1, x + 2) - IA(y + 1, x));
      rb[y][x] = (IB(y + 2, x) - IB(y, x)) + 2.0f * (IB(y + 2, x + 1) - IB(y, x + 1));
    }
#undef IA
#undef IB
}
static void ref_out(const float *ia, const float *ib, float scale, float *out) {
  float (*a)[W] = ra, (*b)[W] = rb;
  ref_ab(ia, ib, scale);
  for (int y = 0; y < H - 1; y++)
    for (int x = 0; x < W; x++) out[y * W + x] = a[y][x] * b[y + 1][x] + a[y + 1][x] * b[y][x];
}

/* the lowered program as text (g's ctx owns it and the lowering) */
static const char *lowered_text(prog *g) {
  lower_func *f = tec_lower(g->s, "f", 2, (te_tensor *[]){g->in, g->out});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(g->ctx));
  return tec_lower_str(f);
}

/* runs g's schedule against plain C; the lowered text (one nest: no row loop of the fused
 * stage `gone`'s own) */
static void check_run(prog *g, const char *gone) {
  tec_packed_fn fn = tu_build(g->ctx, g->s, "f", 2, (te_tensor *[]){g->in, g->out});
  DLTensor in = tu_rand_f32(2, (int64_t[]){H + 2, W + 2}, 7);
  DLTensor out = tu_zeros(TEC_F32, 2, (int64_t[]){H - 1, W});
  ck_assert_int_eq(tec_call(fn, 2, (DLTensor *[]){&in, &out}), 0);
  static float ref[(H - 1) * W];
  ref_out(tu_f32(&in), tu_f32(&in), 1, ref);
  double err = tu_max_err(tu_f32(&out), ref, (H - 1) * W);
  ck_assert_msg(err < 1e-5, "error %g", err);
  const char *text = lowered_text(g);
  tu_assert_contains(text, "produce A");
  tu_assert_contains(text, "produce B");
  if (gone) assert_not_contains(text, gone);
  tec_dl_free(&in), tec_dl_free(&out);
}

/* the column loop of st split by 8 (a tail: W = 37), the inner vectorized; its outer part */
static sch_iter *vec8(prog *g, sch_stage *st) {
  sch_iter *o, *i;
  OK(g->ctx, sch_split(st, sch_axis(st, 1), 8, &o, &i));
  OK(g->ctx, sch_vectorize(st, i));
  return o;
}

START_TEST(fused_at_root) {
  prog g = prog_new(W);
  vec8(&g, g.sa);
  sch_iter *bo = vec8(&g, g.sb);
  OK(g.ctx, sch_compute_with(g.sa, g.sb, bo));
  sch_iter *at;
  ck_assert_ptr_eq(sch_stage_compute_with(g.sa, &at), g.sb);
  ck_assert_ptr_eq(at, bo);
  ck_assert_ptr_null(sch_stage_compute_with(g.sb, NULL));
  check_run(&g, "for (A.i");
  tec_ctx_free(g.ctx);
}
END_TEST

/* at a row loop of the consumer; then stored per strip of 4 rows and slid (folded) */
START_TEST(fused_attached) {
  for (int slide = 0; slide < 2; slide++) {
    prog g = prog_new(W);
    sch_iter *yo, *yi;
    OK(g.ctx, sch_split(g.so, sch_axis(g.so, 0), 4, &yo, &yi));
    OK(g.ctx, sch_compute_at(g.sa, g.so, yi));
    OK(g.ctx, sch_compute_at(g.sb, g.so, yi));
    if (slide) {
      OK(g.ctx, sch_store_at(g.sa, g.so, yo));
      OK(g.ctx, sch_store_at(g.sb, g.so, yo));
    }
    vec8(&g, g.sa);
    sch_iter *bo = vec8(&g, g.sb);
    OK(g.ctx, sch_compute_with(g.sa, g.sb, bo));
    check_run(&g, "for (A.i");
    tec_ctx_free(g.ctx);
  }
}
END_TEST

/* down to the row loop only: each stage's column loops inside it, one after the other */
START_TEST(fused_rows_only) {
  prog g = prog_new(W);
  OK(g.ctx, sch_compute_with(g.sb, g.sa, sch_axis(g.sa, 0)));
  check_run(&g, "for (B.i");
  const char *text = lowered_text(&g);
  tu_assert_contains(text, "for (B.j"); /* B's column loop stays its own */
  tec_ctx_free(g.ctx);
}
END_TEST

START_TEST(refused) {
  prog g = prog_new(W);
  tec_ctx *ctx = g.ctx;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(g.sa, g.sa, sch_axis(g.sa, 0)), -1);
  assert_err(ctx, "compute_with: stage 'A' cannot be fused with itself");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(NULL, g.sb, sch_axis(g.sb, 0)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "compute_with: the stage is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(g.sa, g.sb, sch_axis(g.sa, 0)), -1);
  tu_assert_contains(tec_ctx_error(ctx),
                     "compute_with: loop 'i' is not a loop of stage 'B' (it belongs to 'A')");
  /* C reads A (C is not in the schedule: a schedule of C's own) */
  tec_ctx_clear_error(ctx);
  sch_schedule *s2 = sch_create(ctx, 2, (te_tensor *[]){g.out, g.c});
  ck_assert_int_eq(sch_compute_with(sch_stage_of(s2, g.c), sch_stage_of(s2, g.a),
                                    sch_axis(sch_stage_of(s2, g.a), 0)),
                   -1);
  assert_err(ctx, "compute_with: 'C' reads 'A' (directly or through other stages); stages in "
                  "one loop must not depend on each other");
  /* at different places */
  sch_iter *y = sch_axis(g.so, 0);
  OK(ctx, sch_compute_at(g.sa, g.so, y));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(g.sa, g.sb, sch_axis(g.sb, 0)), -1);
  assert_err(ctx, "compute_with: 'A' is computed at loop 'i' of 'out' and 'B' at the root; fused "
                  "loops need both computed at the same place (compute_at 'A' there first)");
  OK(ctx, sch_compute_at(g.sb, g.so, y));
  /* loop kinds that differ */
  sch_iter *bo, *bi;
  vec8(&g, g.sa);
  OK(ctx, sch_split(g.sb, sch_axis(g.sb, 1), 8, &bo, &bi));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(g.sa, g.sb, bi), -1);
  assert_err(ctx, "compute_with: loop 'j.inner' of 'A' is vectorized and loop 'j.inner' of 'B' "
                  "serial; fused loops need the same kind");
  OK(ctx, sch_compute_with(g.sa, g.sb, bo));
  /* one pair per stage */
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(g.sb, g.sa, sch_axis(g.sa, 0)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "compute_with: 'A' is already fused with 'B'");
  /* compute_root drops the fusion; an inlined stage */
  OK(ctx, sch_compute_root(g.sa));
  ck_assert_ptr_null(sch_stage_compute_with(g.sa, NULL));
  prog g2 = prog_new(W);
  OK(g2.ctx, sch_compute_inline(g2.sa));
  ck_assert_int_eq(sch_compute_with(g2.sa, g2.sb, sch_axis(g2.sb, 0)), -1);
  tu_assert_contains(tec_ctx_error(g2.ctx), "compute_with: 'A' is inlined (it has no loops)");
  tec_ctx_free(g2.ctx);
  /* a reduction: R[y][x] = the sum of 3 inputs along the row */
  te_tensor *r = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, H, W),
                                                    .body = r_body, .user = g.in});
  sch_schedule *s3 = sch_create(ctx, 2, (te_tensor *[]){r, g.out});
  sch_stage *sr = sch_stage_of(s3, r), *sb3 = sch_stage_of(s3, g.b);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_with(sr, sb3, sch_axis(sb3, 0)), -1);
  assert_err(ctx, "compute_with: 'R' is a reduction; compute_with fuses the loops of two "
                  "element-wise stages that keep their loops");
  tec_ctx_free(ctx);
}
END_TEST

/* what only tec_lower can tell: ranges that differ, a fused loop split afterwards */
START_TEST(refused_by_lower) {
  prog g = prog_new(W + 5); /* B is wider: its loops run longer */
  vec8(&g, g.sa);
  sch_iter *bo = vec8(&g, g.sb);
  OK(g.ctx, sch_compute_with(g.sa, g.sb, bo));
  ck_assert_ptr_null(tec_lower(g.s, "f", 2, (te_tensor *[]){g.in, g.out}));
  tu_assert_contains(tec_ctx_error(g.ctx), "tec_lower: compute_with('A', 'B', 'j.outer'): loop ");
  tu_assert_contains(tec_ctx_error(g.ctx), "fused loops need the same range and kind");
  tec_ctx_free(g.ctx);

  g = prog_new(W);
  OK(g.ctx, sch_compute_with(g.sa, g.sb, sch_axis(g.sb, 1)));
  sch_iter *o, *i;
  OK(g.ctx, sch_split(g.sb, sch_axis(g.sb, 1), 4, &o, &i));
  ck_assert_ptr_null(tec_lower(g.s, "f", 2, (te_tensor *[]){g.in, g.out}));
  tu_assert_contains(tec_ctx_error(g.ctx), "tec_lower: compute_with('A', 'B', 'j'): 'j' is no "
                                           "longer a loop of 'B'");
  tec_ctx_free(g.ctx);
}
END_TEST

/* the fused loops parallel, unrolled, and split with different tail strategies (A's guarded,
 * B's shifted inwards: the outer loops run over the same range, the inner ones differ) */
START_TEST(fused_kinds) {
  for (int v = 0; v < 3; v++) {
    prog g = prog_new(W);
    sch_iter *at = NULL, *o, *i;
    if (v == 0) { /* rows parallel, fused down to the columns' outer loop */
      OK(g.ctx, sch_parallel(g.sa, sch_axis(g.sa, 0)));
      OK(g.ctx, sch_parallel(g.sb, sch_axis(g.sb, 0)));
      vec8(&g, g.sa);
      at = vec8(&g, g.sb);
    } else if (v == 1) { /* rows split by 3 (a tail: H = 13), the inner part unrolled */
      OK(g.ctx, sch_split(g.sa, sch_axis(g.sa, 0), 3, &o, &i));
      OK(g.ctx, sch_unroll(g.sa, i));
      OK(g.ctx, sch_split(g.sb, sch_axis(g.sb, 0), 3, &o, &at));
      OK(g.ctx, sch_unroll(g.sb, at));
    } else {
      OK(g.ctx, sch_split(g.sa, sch_axis(g.sa, 1), 8, &o, &i));
      OK(g.ctx, sch_vectorize(g.sa, i));
      OK(g.ctx, sch_split_tail(g.sb, sch_axis(g.sb, 1), 8, SCH_TAIL_SHIFT_INWARDS, &at, &i));
      OK(g.ctx, sch_vectorize(g.sb, i));
    }
    OK(g.ctx, sch_compute_with(g.sa, g.sb, at));
    check_run(&g, "for (A.i");
    tec_ctx_free(g.ctx);
  }
}
END_TEST

/* the partner moved (compute_at of B, the stage A is computed with): the pair is dropped from
 * B's side too, and A is lowered in loops of its own again */
START_TEST(dropped_by_partner) {
  prog g = prog_new(W);
  sch_iter *bo = vec8(&g, g.sb);
  vec8(&g, g.sa);
  OK(g.ctx, sch_compute_with(g.sa, g.sb, bo));
  OK(g.ctx, sch_compute_at(g.sb, g.so, sch_axis(g.so, 0)));
  ck_assert_ptr_null(sch_stage_compute_with(g.sa, NULL));
  check_run(&g, NULL);
  const char *text = lowered_text(&g);
  tu_assert_contains(text, "for (A.i");
  tec_ctx_free(g.ctx);
}
END_TEST

/* a stage computed at the same place between the two that reads the earlier one; legal once it
 * is computed inside its consumer */
static te_tensor *Z_;
static const ir_expr *zb_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)u, (void)ctx;
  return ir_add(AT(Z_, i[0], i[1]), AT(B_, i[0], i[1]));
}
START_TEST(refused_between) {
  prog g = prog_new(W);
  tec_ctx *ctx = g.ctx;
  Z_ = g.c; /* C = 3 A */
  te_tensor *o2 = te_compute(ctx, &(te_compute_decl){.name = "o2", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, H, W), .body = zb_body});
  sch_schedule *s = sch_create(ctx, 1, &o2);
  sch_stage *sa = sch_stage_of(s, g.a), *sb = sch_stage_of(s, g.b), *sc = sch_stage_of(s, g.c);
  OK(ctx, sch_compute_with(sa, sb, sch_axis(sb, 0)));
  ck_assert_ptr_null(tec_lower(s, "f", 2, (te_tensor *[]){g.in, o2}));
  assert_err(ctx, "tec_lower: compute_with('A', 'B'): 'C', computed at the same place between "
                  "them, reads 'A'; the fused nest runs where 'B' would, after it: compute 'C' "
                  "inside a consumer (compute_at), or drop the compute_with");
  tec_ctx_clear_error(ctx);
  sch_stage *so2 = sch_stage_of(s, o2);
  OK(ctx, sch_compute_at(sc, so2, sch_axis(so2, 0)));
  tec_packed_fn fn = tu_build(ctx, s, "f", 2, (te_tensor *[]){g.in, o2});
  DLTensor in = tu_rand_f32(2, (int64_t[]){H + 2, W + 2}, 3);
  DLTensor out = tu_zeros(TEC_F32, 2, (int64_t[]){H, W});
  ck_assert_int_eq(tec_call(fn, 2, (DLTensor *[]){&in, &out}), 0);
  ref_ab(tu_f32(&in), tu_f32(&in), 1);
  static float ref[H * W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) ref[y * W + x] = ra[y][x] * 3 + rb[y][x];
  double err = tu_max_err(tu_f32(&out), ref, H * W);
  ck_assert_msg(err < 1e-5, "error %g", err);
  tec_dl_free(&in), tec_dl_free(&out);
  tec_ctx_free(ctx);
}
END_TEST

/* A reads constants alone (a te_const_placeholder): tec_lower computes it once in prepare, not
 * where B is; refused, and exact with the precompute off */
START_TEST(refused_prepare) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *w = te_const_placeholder(ctx, "w", TEC_F32, 2, TE_SHAPE(ctx, H + 2, W + 2));
  te_tensor *in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, H + 2, W + 2));
  A_ = te_compute(ctx, &(te_compute_decl){.name = "A", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                          .body = a_body, .user = w});
  B_ = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                          .body = b_body, .user = in});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2,
                                                      .shape = TE_SHAPE(ctx, H - 1, W), .body = out_body});
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *sb = sch_stage_of(s, B_);
  OK(ctx, sch_compute_with(sch_stage_of(s, A_), sb, sch_axis(sb, 0)));
  te_tensor *args[] = {in, w, out};
  ck_assert_ptr_null(tec_lower(s, "f", 3, args));
  tu_assert_contains(tec_ctx_error(ctx), "tec_lower: compute_with('A', 'B'): the two stages are "
                                         "not computed at the same place (one is computed once "
                                         "in prepare");
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_set_precompute(s, 0));
  tec_packed_fn fn = tu_build(ctx, s, "f", 3, args);
  DLTensor x = tu_rand_f32(2, (int64_t[]){H + 2, W + 2}, 4);
  DLTensor wt = tu_rand_f32(2, (int64_t[]){H + 2, W + 2}, 5);
  DLTensor o = tu_zeros(TEC_F32, 2, (int64_t[]){H - 1, W});
  ck_assert_int_eq(tec_call(fn, 3, (DLTensor *[]){&x, &wt, &o}), 0);
  static float ref[(H - 1) * W];
  ref_out(tu_f32(&wt), tu_f32(&x), 1, ref);
  double err = tu_max_err(tu_f32(&o), ref, (H - 1) * W);
  ck_assert_msg(err < 1e-5, "error %g", err);
  tec_dl_free(&x), tec_dl_free(&wt), tec_dl_free(&o);
  tec_ctx_free(ctx);
}
END_TEST

/* P computed at B's fused loop and read by A too (A is computed with B): refused naming
 * compute_with; exact with P at the root */
static const ir_expr *p_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 3));
}
START_TEST(refused_shared_producer) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, H + 2, W + 2));
  te_tensor *pt = te_compute(ctx, &(te_compute_decl){.name = "P", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, H + 2, W + 2),
                                                     .body = p_body, .user = in});
  A_ = te_compute(ctx, &(te_compute_decl){.name = "A", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                          .body = a_body, .user = pt});
  B_ = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, H, W),
                                          .body = b_body, .user = pt});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2,
                                                      .shape = TE_SHAPE(ctx, H - 1, W), .body = out_body});
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *sb = sch_stage_of(s, B_), *sp = sch_stage_of(s, pt);
  OK(ctx, sch_compute_with(sch_stage_of(s, A_), sb, sch_axis(sb, 0)));
  OK(ctx, sch_compute_at(sp, sb, sch_axis(sb, 0)));
  ck_assert_ptr_null(tec_lower(s, "f", 2, (te_tensor *[]){in, out}));
  assert_err(ctx, "compute_at: 'P' is computed at loop 'i' of 'B', but 'A', whose loops are "
                  "fused with 'B' (compute_with), reads it too; a stage computed inside fused "
                  "loops may be read only by the stage whose loop it is at: compute 'P' where "
                  "both are (compute_root, or the loop the pair is computed at), or drop the "
                  "compute_with");
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_compute_root(sp));
  tec_packed_fn fn = tu_build(ctx, s, "f", 2, (te_tensor *[]){in, out});
  DLTensor x = tu_rand_f32(2, (int64_t[]){H + 2, W + 2}, 6);
  DLTensor o = tu_zeros(TEC_F32, 2, (int64_t[]){H - 1, W});
  ck_assert_int_eq(tec_call(fn, 2, (DLTensor *[]){&x, &o}), 0);
  static float ref[(H - 1) * W];
  ref_out(tu_f32(&x), tu_f32(&x), 3, ref);
  double err = tu_max_err(tu_f32(&o), ref, (H - 1) * W);
  ck_assert_msg(err < 1e-5, "error %g", err);
  tec_dl_free(&x), tec_dl_free(&o);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(trace_round_trip) {
  prog g = prog_new(W);
  sch_iter *yo, *yi;
  OK(g.ctx, sch_split(g.so, sch_axis(g.so, 0), 4, &yo, &yi));
  OK(g.ctx, sch_compute_at(g.sa, g.so, yi));
  OK(g.ctx, sch_compute_at(g.sb, g.so, yi));
  OK(g.ctx, sch_store_at(g.sa, g.so, yo));
  OK(g.ctx, sch_store_at(g.sb, g.so, yo));
  vec8(&g, g.sa);
  sch_iter *bo = vec8(&g, g.sb);
  OK(g.ctx, sch_compute_with(g.sa, g.sb, bo));
  const sch_trace *t = sch_get_trace(g.s);
  tu_assert_contains(sch_trace_c(g.ctx, t), "sch_compute_with(s_A, s_B, B_j_outer);");
  const char *js = sch_trace_json(g.ctx, t);
  ck_assert_ptr_nonnull(js);
  const char *want = lowered_text(&g);
  sch_schedule *fresh = sch_create(g.ctx, 1, &g.out);
  OK(g.ctx, sch_trace_replay(fresh, sch_trace_parse_json(g.ctx, js)));
  ck_assert_ptr_eq(sch_stage_compute_with(sch_stage_of(fresh, g.a), NULL), sch_stage_of(fresh, g.b));
  g.s = fresh;
  const char *got = lowered_text(&g);
  ck_assert_str_eq(got, want);
  tec_ctx_free(g.ctx);
}
END_TEST

/* ---- Harris (apps/harris's shape, small): gray of 3 planes, Ix and Iy of gray, the 3x3 sums
 * of their products, det - 0.04 trace^2 ---- */
enum { HH = 40, HW = 70 };
static te_tensor *hg, *hix, *hiy, *hin;
static const ir_expr *h_gray(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)u;
  return ir_add(ir_add(ir_mul(ir_float(ctx, 0.299), TE_AT(hin, I(0), i[0], i[1])),
                       ir_mul(ir_float(ctx, 0.587), TE_AT(hin, I(1), i[0], i[1]))),
                ir_mul(ir_float(ctx, 0.114), TE_AT(hin, I(2), i[0], i[1])));
}
static const ir_expr *h_grad(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  int kind = (int)(intptr_t)u; /* 0: Ix, 1: Iy */
  const ir_expr *e = NULL;
  for (int d = 0; d < 3; d += 2)
    for (int k = 0; k < 3; k++) {
      const ir_expr *y = ir_add(i[0], I(kind ? d : k)), *x = ir_add(i[1], I(kind ? k : d));
      const ir_expr *t = ir_mul(TE_AT(hg, y, x), ir_float(ctx, (d ? 1.0 : -1.0) * (k == 1 ? 2 : 1) / 12));
      e = e ? ir_add(e, t) : t;
    }
  return e;
}
static const ir_expr *h_out(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)u;
  const ir_expr *sxx = NULL, *syy = NULL, *sxy = NULL;
  for (int dy = 0; dy < 3; dy++)
    for (int dx = 0; dx < 3; dx++) {
      const ir_expr *y = ir_add(i[0], I(dy)), *x = ir_add(i[1], I(dx));
      const ir_expr *gx = TE_AT(hix, y, x), *gy = TE_AT(hiy, y, x);
      sxx = sxx ? ir_add(sxx, ir_mul(gx, gx)) : ir_mul(gx, gx);
      syy = syy ? ir_add(syy, ir_mul(gy, gy)) : ir_mul(gy, gy);
      sxy = sxy ? ir_add(sxy, ir_mul(gx, gy)) : ir_mul(gx, gy);
    }
  const ir_expr *tr = ir_add(sxx, syy);
  return ir_sub(ir_sub(ir_mul(sxx, syy), ir_mul(sxy, sxy)),
                ir_mul(ir_mul(ir_float(ctx, 0.04), tr), tr));
}

static void harris_ref(const float *in, float *out) {
  static float g[HH + 4][HW + 4], ix[HH + 2][HW + 2], iy[HH + 2][HW + 2];
  const int n = (HH + 4) * (HW + 4);
  for (int y = 0; y < HH + 4; y++)
    for (int x = 0; x < HW + 4; x++) {
      int p = y * (HW + 4) + x;
      g[y][x] = 0.299f * in[p] + 0.587f * in[n + p] + 0.114f * in[2 * n + p];
    }
  for (int y = 0; y < HH + 2; y++)
    for (int x = 0; x < HW + 2; x++) {
      float ex = 0, ey = 0;
      for (int d = 0; d < 3; d += 2)
        for (int k = 0; k < 3; k++) {
          float c = (float)((d ? 1.0 : -1.0) * (k == 1 ? 2 : 1) / 12);
          ex += g[y + k][x + d] * c;
          ey += g[y + d][x + k] * c;
        }
      ix[y][x] = ex, iy[y][x] = ey;
    }
  for (int y = 0; y < HH; y++)
    for (int x = 0; x < HW; x++) {
      float sxx = 0, syy = 0, sxy = 0;
      for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++) {
          float gx = ix[y + dy][x + dx], gy = iy[y + dy][x + dx];
          sxx += gx * gx, syy += gy * gy, sxy += gx * gy;
        }
      float tr = sxx + syy;
      out[y * HW + x] = (sxx * syy - sxy * sxy) - 0.04f * tr * tr;
    }
}

/* the small Harris in ctx: its output */
static te_tensor *harris_new(tec_ctx *ctx) {
  hin = te_placeholder(ctx, "input", TEC_F32, 3, TE_SHAPE(ctx, 3, HH + 4, HW + 4));
  hg = te_compute(ctx, &(te_compute_decl){.name = "gray", .ndim = 2,
                                          .shape = TE_SHAPE(ctx, HH + 4, HW + 4), .body = h_gray});
  hiy = te_compute(ctx, &(te_compute_decl){.name = "Iy", .ndim = 2, .shape = TE_SHAPE(ctx, HH + 2, HW + 2),
                                           .body = h_grad, .user = (void *)(intptr_t)1});
  hix = te_compute(ctx, &(te_compute_decl){.name = "Ix", .ndim = 2, .shape = TE_SHAPE(ctx, HH + 2, HW + 2),
                                           .body = h_grad, .user = (void *)(intptr_t)0});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "output", .ndim = 2,
                                                      .shape = TE_SHAPE(ctx, HH, HW), .body = h_out});
  ck_assert_ptr_nonnull(out);
  return out;
}

/* runs the Harris schedule s against plain C */
static void harris_check(tec_ctx *ctx, sch_schedule *s, te_tensor *out, const char *report) {
  tec_packed_fn fn = tu_build(ctx, s, "harris", 2, (te_tensor *[]){hin, out});
  DLTensor in = tu_rand_f32(3, (int64_t[]){3, HH + 4, HW + 4}, 11);
  DLTensor o = tu_zeros(TEC_F32, 2, (int64_t[]){HH, HW});
  ck_assert_int_eq(tec_call(fn, 2, (DLTensor *[]){&in, &o}), 0);
  static float ref[HH * HW];
  harris_ref(tu_f32(&in), ref);
  double err = tu_max_err(tu_f32(&o), ref, HH * HW);
  ck_assert_msg(err < 1e-4, "error %g\n%s", err, report);
  tec_dl_free(&in), tec_dl_free(&o);
}

START_TEST(autosched_harris) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *out = harris_new(ctx);
  sch_schedule *s = sch_create(ctx, 1, &out);
  tec_autosched_report rep;
  ck_assert_msg(tec_autoschedule(s, NULL, NULL, &rep) == 0, "%s", tec_ctx_error(ctx));
  int with = 0;
  for (int k = 0; k < rep.nstages; k++) {
    const tec_autosched_stage *st = &rep.stages[k];
    if (st->choice.with) {
      with++;
      ck_assert_msg(!strcmp(st->stage, "Ix") || !strcmp(st->stage, "Iy"), "%s", rep.text);
      ck_assert_int_eq(st->choice.kind, TEC_AS_ATTACH);
    }
  }
  ck_assert_msg(with == 1, "one of Ix, Iy computed with the other:\n%s", rep.text);
  tu_assert_contains(rep.trace_c, "sch_compute_with(");
  harris_check(ctx, s, out, rep.text);
  /* the tuned space has the pair's knob, on by default */
  tune_space sp;
  ck_assert_msg(tec_autosched_space(sch_create(ctx, 1, &out), NULL, NULL, &sp) == 0, "%s",
                tec_ctx_error(ctx));
  int knob = -1;
  for (int k = 0; k < sp.nknobs; k++)
    if (strstr(sp.knobs[k].name, ".with")) knob = k;
  ck_assert_int_ge(knob, 0);
  ck_assert_int_eq(sp.knobs[knob].values[sp.knobs[knob].def], 1);
  /* the knob at 0: no pair, the same result */
  const tune_knob *kn = &sp.knobs[knob];
  const char *off = "0";
  for (int v = 0; v < kn->nvalues; v++)
    if (kn->values[v * kn->width] == 0 && kn->labels) off = kn->labels[v];
  int64_t idx;
  ck_assert_msg(tune_space_parse(ctx, &sp, tec_ctx_printf(ctx, "%s=%s", kn->name, off), &idx) == 0,
                "%s", tec_ctx_error(ctx));
  sch_schedule *s0 = sch_create(ctx, 1, &out);
  tec_autosched_report r0;
  ck_assert_msg(tec_autoschedule_config(s0, NULL, NULL, idx, &r0) == 0, "%s", tec_ctx_error(ctx));
  for (int k = 0; k < r0.nstages; k++)
    ck_assert_msg(!r0.stages[k].choice.with, "%s", r0.text);
  assert_not_contains(r0.trace_c, "sch_compute_with(");
  harris_check(ctx, s0, out, r0.text);
  tec_ctx_free(ctx);
}
END_TEST

/* The fallback's reason is structured (as_fail, autosched/fallback.c), not read from the
 * message: the pairing's failure takes the pair apart and keeps both stages attached; any
 * other failure of a paired stage moves it to its own loops, even with a message that names
 * compute_with (the fallback read the text before, and only unpaired it). */
START_TEST(autosched_fallback_reason) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *out = harris_new(ctx);
  as_prog p = {.ctx = ctx, .s = sch_create(ctx, 1, &out), .nout = 1, .outs = &out, .threads = 1};
  ck_assert_msg(as_prepare(&p, NULL) == 0, "%s", tec_ctx_error(ctx));
  const char *why = "tec_lower: compute_with('Ix', 'Iy'): a refusal naming the pair";
  for (int other = 0; other < 2; other++) {
    as_decide(&p);
    int b = -1;
    for (int i = 0; i < p.n; i++)
      if (p.st[i].with_to) b = i;
    ck_assert_int_ge(b, 0);
    int a = p.st[b].with_to - 1;
    ck_assert_int_eq(p.st[a].ch.kind, TEC_AS_ATTACH);
    ck_assert_int_eq(p.st[b].ch.kind, TEC_AS_ATTACH);
    /* the pairing failed: either stage named, the pair apart, both still attached */
    int named = other ? b : a;
    ck_assert_int_eq(as_fallback(&p, named, why, other ? AS_FAIL_OTHER : AS_FAIL_WITH), 0);
    ck_assert_int_eq(p.st[b].with_to, 0);
    ck_assert_int_eq(p.st[b].ch.with, 0);
    ck_assert_int_eq(p.st[a].ch.kind, TEC_AS_ATTACH);
    ck_assert_int_eq(p.st[b].ch.kind, other ? TEC_AS_LOOPS : TEC_AS_ATTACH);
    tu_assert_contains(other ? p.st[b].rule : p.st[b].why,
                       other ? "loops (fallback from attach)" : "not fused with");
  }
  tec_ctx_free(ctx);
}
END_TEST

/* ---- LCN's shape (bench/auto_progs.c 'lcn', small): two 5-wide box filters along rows of
 * one input (of it and of its square), 5-tall ones along columns, (in - mean) / sqrt(var) ---- */
enum { LH = 24, LW = 45 };
static te_tensor *lin, *lbx, *lbxs, *lmean, *lmsq;
/* readers of the input declared ahead of the box filters (none, or more than the 32 readers
 * the analysis lists per stage): each in * (k + 1) / 64, their sum added to the output */
enum { LXTRA = 34 };
static te_tensor *lxtra[LXTRA];
static int nxtra;
static const ir_expr *l_xtra(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT(lin, i[0], i[1]), ir_float(ctx, (double)((intptr_t)u + 1) / 64));
}
static const ir_expr *l_box_x(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *e = NULL;
  for (int k = 0; k < 5; k++) {
    const ir_expr *t = TE_AT(lin, i[0], ir_add(i[1], I(k)));
    if (u) t = ir_mul(t, t);
    e = e ? ir_add(e, t) : t;
  }
  return ir_mul(e, ir_float(ctx, 0.2));
}
static const ir_expr *l_box_y(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *e = NULL;
  for (int k = 0; k < 5; k++) {
    const ir_expr *t = TE_AT((te_tensor *)u, ir_add(i[0], I(k)), i[1]);
    e = e ? ir_add(e, t) : t;
  }
  return ir_mul(e, ir_float(ctx, 0.2));
}
static const ir_expr *l_out(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)u;
  const ir_expr *m = TE_AT(lmean, i[0], i[1]);
  const ir_expr *var = ir_add(ir_sub(TE_AT(lmsq, i[0], i[1]), ir_mul(m, m)), ir_float(ctx, 1e-3));
  const ir_expr *r = ir_div(ir_sub(TE_AT(lin, ir_add(i[0], I(2)), ir_add(i[1], I(2))), m), ir_sqrt(var));
  const ir_expr *x = NULL; /* the extra readers first: they come first in the stage order */
  for (int k = 0; k < nxtra; k++) {
    const ir_expr *t = TE_AT(lxtra[k], ir_add(i[0], I(2)), ir_add(i[1], I(2)));
    x = x ? ir_add(x, t) : t;
  }
  return x ? ir_add(x, r) : r;
}
static void lcn_ref(const float *in, float *out, int extra) {
  static float bx[LH + 4][LW], bxs[LH + 4][LW];
  const int iw = LW + 4;
  for (int y = 0; y < LH + 4; y++)
    for (int x = 0; x < LW; x++) {
      float s = 0, q = 0;
      for (int k = 0; k < 5; k++) {
        float v = in[y * iw + x + k];
        s += v, q += v * v;
      }
      bx[y][x] = s * 0.2f, bxs[y][x] = q * 0.2f;
    }
  for (int y = 0; y < LH; y++)
    for (int x = 0; x < LW; x++) {
      float m = 0, q = 0;
      for (int k = 0; k < 5; k++) m += bx[y + k][x], q += bxs[y + k][x];
      m *= 0.2f, q *= 0.2f;
      float v = in[(y + 2) * iw + x + 2], xs = 0;
      for (int k = 0; k < extra; k++) xs += v * (float)(k + 1) / 64;
      out[y * LW + x] = xs + (v - m) / sqrtf(q - m * m + 1e-3f);
    }
}

/* the auto-scheduler computes box_x_sq with box_x (extra: readers of the input ahead of
 * them); exact against plain C */
/* the small LCN in ctx (extra: readers of the input ahead of the box filters): its output */
static te_tensor *lcn_new(tec_ctx *ctx, int extra) {
  lin = te_placeholder(ctx, "input", TEC_F32, 2, TE_SHAPE(ctx, LH + 4, LW + 4));
  nxtra = extra;
  for (int k = 0; k < extra; k++)
    lxtra[k] = te_compute(ctx, &(te_compute_decl){.name = tec_ctx_printf(ctx, "x%d", k), .ndim = 2,
                                                  .shape = TE_SHAPE(ctx, LH + 4, LW + 4),
                                                  .body = l_xtra, .user = (void *)(intptr_t)k});
  lbx = te_compute(ctx, &(te_compute_decl){.name = "box_x", .ndim = 2,
                                           .shape = TE_SHAPE(ctx, LH + 4, LW), .body = l_box_x});
  lbxs = te_compute(ctx, &(te_compute_decl){.name = "box_x_sq", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, LH + 4, LW), .body = l_box_x,
                                            .user = (void *)1});
  lmean = te_compute(ctx, &(te_compute_decl){.name = "mean", .ndim = 2,
                                             .shape = TE_SHAPE(ctx, LH, LW), .body = l_box_y,
                                             .user = lbx});
  lmsq = te_compute(ctx, &(te_compute_decl){.name = "mean_sq", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, LH, LW), .body = l_box_y,
                                            .user = lbxs});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){.name = "output", .ndim = 2,
                                                      .shape = TE_SHAPE(ctx, LH, LW), .body = l_out});
  ck_assert_ptr_nonnull(out);
  return out;
}

/* runs the LCN schedule s against plain C */
static void lcn_check(tec_ctx *ctx, sch_schedule *s, te_tensor *out, int extra, const char *report) {
  tec_packed_fn fn = tu_build(ctx, s, "lcn", 2, (te_tensor *[]){lin, out});
  DLTensor in = tu_rand_f32(2, (int64_t[]){LH + 4, LW + 4}, 12);
  DLTensor o = tu_zeros(TEC_F32, 2, (int64_t[]){LH, LW});
  ck_assert_int_eq(tec_call(fn, 2, (DLTensor *[]){&in, &o}), 0);
  static float ref[LH * LW];
  lcn_ref(tu_f32(&in), ref, extra);
  double err = tu_max_err(tu_f32(&o), ref, LH * LW);
  ck_assert_msg(err < 1e-3, "error %g\n%s", err, report);
  tec_dl_free(&in), tec_dl_free(&o);
}

static void lcn_with(int extra) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *out = lcn_new(ctx, extra);
  sch_schedule *s = sch_create(ctx, 1, &out);
  tec_autosched_report rep;
  ck_assert_msg(tec_autoschedule(s, NULL, NULL, &rep) == 0, "%s", tec_ctx_error(ctx));
  int with = 0;
  for (int k = 0; k < rep.nstages; k++)
    if (rep.stages[k].choice.with) {
      with++;
      ck_assert_msg(!strcmp(rep.stages[k].stage, "box_x_sq"), "%s", rep.text);
    }
  ck_assert_msg(with == 1, "box_x_sq computed with box_x:\n%s", rep.text);
  tu_assert_contains(rep.trace_c, "sch_compute_with(s_box_x_sq, s_box_x, ");
  lcn_check(ctx, s, out, extra, rep.text);
  tec_ctx_free(ctx);
}

START_TEST(autosched_lcn) { lcn_with(0); }
END_TEST

/* The tuned space offers no column tile the host's vector loop cannot take (a tile of one
 * vector beside vectors of two's lanes: apply refused it and the config fell back): every
 * (vector, cols) pair of LCN's output, the other knobs at their defaults, is in the space
 * exactly when cols is 0, the whole row or more, a multiple of the vector, or any tile > 1
 * without vectors (or it is the instant pair); those schedule with no fallback, the others
 * (never proposed by the tuner; applied when asked for by index) fall back naming the tile;
 * the widest vector with its own tile runs exact. */
static void space_cols(int extra) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *out = lcn_new(ctx, extra);
  tune_space sp;
  ck_assert_msg(tec_autosched_space(sch_create(ctx, 1, &out), NULL, NULL, &sp) == 0, "%s",
                tec_ctx_error(ctx));
  int kv = tune_space_find(&sp, "output.vector"), kc = tune_space_find(&sp, "output.cols");
  ck_assert_int_ge(kv, 0);
  ck_assert_int_ge(kc, 0);
  const tune_knob *V = &sp.knobs[kv], *C = &sp.knobs[kc];
  int64_t vdef = V->values[V->def], cdef = C->values[C->def], e = LW;
  int64_t *ki = tec_ctx_alloc(ctx, sizeof *ki * (size_t)sp.nknobs);
  ck_assert_ptr_nonnull(ki);
  int refused = 0, tried = 0;
  for (int a = 0; a < V->nvalues; a++)
    for (int b = 0; b < C->nvalues; b++) {
      int64_t v = V->values[a], c = C->values[b];
      int fits = c == 0 || c >= e || (v == 0 ? c > 1 : v < e && c % v == 0) || (v == vdef && c == cdef);
      for (int k = 0; k < sp.nknobs; k++) ki[k] = sp.knobs[k].def;
      ki[kv] = a, ki[kc] = b;
      int64_t idx = tune_space_encode(&sp, ki);
      ck_assert_int_ge(idx, 0);
      ck_assert_msg(tune_space_allows(&sp, idx) == fits, "vector=%lld cols=%lld", (long long)v,
                    (long long)c);
      tec_autosched_report rep;
      int rc = tec_autoschedule_config(sch_create(ctx, 1, &out), NULL, NULL, idx, &rep);
      ck_assert_msg(rc == 0, "%s", tec_ctx_error(ctx));
      if (!fits) { /* asked for by index anyway: refused by the apply step, said */
        refused++;
        tu_assert_contains(rep.text, "is not a whole number of its");
        continue;
      }
      tried++;
      assert_not_contains(rep.text, "fallback");
    }
  ck_assert_int_eq(sp.pruned > 0, refused > 0);
  ck_assert_int_gt(tried, 1);
  /* on a 16-lane target (AVX-512): vector 32 beside a tile of 16 is the pair refused (past
   * the 32 knobs a rule can read, the tile of 16 would not be offered at all) */
  int v32 = V->values[V->nvalues - 1] == 32, c16 = 0;
  for (int b = 0; b < C->nvalues; b++) c16 |= C->values[b] == 16;
  if (v32 && cdef != 16) ck_assert_int_eq(refused > 0, kc < 32);
  if (v32 && cdef != 16) ck_assert_int_eq(c16, kc < 32);
  /* the widest vector with a tile of its own width: exact */
  int64_t vw = V->values[V->nvalues - 1];
  char cfg[96];
  snprintf(cfg, sizeof cfg, "output.vector=%lld output.cols=%lld", (long long)vw, (long long)vw);
  int64_t idx;
  if (vw < e && tune_space_parse(ctx, &sp, cfg, &idx) == 0) {
    sch_schedule *s = sch_create(ctx, 1, &out);
    tec_autosched_report rep;
    ck_assert_msg(tec_autoschedule_config(s, NULL, NULL, idx, &rep) == 0, "%s", tec_ctx_error(ctx));
    lcn_check(ctx, s, out, extra, rep.text);
  }
  tec_ctx_clear_error(ctx);
  tec_ctx_free(ctx);
}

START_TEST(autosched_space_cols) { space_cols(0); }
END_TEST

/* the input read by 34 stages before the box filters: the pair is still found (the rule
 * read only a producer's first 32 readers, and missed it) */
START_TEST(autosched_lcn_many_readers) { lcn_with(LXTRA); }
END_TEST

int main(void) {
  Suite *s = suite_create("compute_with");
  TCase *tc = tcase_create("compute_with");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fused_at_root);
  tcase_add_test(tc, fused_attached);
  tcase_add_test(tc, fused_rows_only);
  tcase_add_test(tc, refused);
  tcase_add_test(tc, refused_by_lower);
  tcase_add_test(tc, fused_kinds);
  tcase_add_test(tc, dropped_by_partner);
  tcase_add_test(tc, refused_between);
  tcase_add_test(tc, refused_prepare);
  tcase_add_test(tc, refused_shared_producer);
  tcase_add_test(tc, trace_round_trip);
  tcase_add_test(tc, autosched_harris);
  tcase_add_test(tc, autosched_fallback_reason);
  tcase_add_test(tc, autosched_lcn);
  tcase_add_test(tc, autosched_lcn_many_readers);
  tcase_add_test(tc, autosched_space_cols);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
