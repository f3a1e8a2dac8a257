/* test_partition.c — likely() and the partitioning of padded loops: the intrinsic itself
 * (construction, printing, folding, vectorizing), loop_partition on hand-built programs with
 * likely-marked selects and load predicates (and what it must leave alone: unmarked selects,
 * conditions it cannot prove), and a padded depthwise convolution declared with the public
 * API: its lowered IR (a clean hot loop: no select, no predicated load) and its numbers from
 * the JIT against a naive C reference over strides, paddings, tiny and symbolic sizes. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "arith/arith.h"
#include "lower/passes.h"

static int count(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
  return n;
}

#define EXPR_IS(e, want)                                                                   \
  do {                                                                                     \
    const ir_expr *e_ = (e);                                                               \
    ck_assert_msg(e_ != NULL, "NULL: %s", tec_ctx_error(ctx));                              \
    ck_assert_str_eq(ir_expr_str(e_), (want));                                             \
  } while (0)

/* ================= the intrinsic ================= */

START_TEST(likely_builds_prints_folds) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *n = ir_var(ctx, "n", TEC_INDEX, IR_VAR_SIZE);
  const ir_expr *c = ir_lt(i, n), *l = ir_likely(c);
  EXPR_IS(l, "likely((i < n))");
  ck_assert(tec_dtype_eq(l->type, TEC_BOOLT));
  ck_assert_int_eq(l->kind, IR_CALL);
  ck_assert_int_eq(l->v.i, IR_INTRIN_LIKELY);
  ck_assert_str_eq(ir_intrinsic_name(IR_INTRIN_LIKELY), "likely");
  /* vector conditions keep their lanes */
  const ir_expr *v = ir_likely(ir_lt(ir_ramp(i, ir_int(ctx, 1), 4), ir_broadcast(n, 4)));
  EXPR_IS(v, "likely((ramp(i, 1, 4) < x4(n)))");
  ck_assert_int_eq(v->type.lanes, 4);
  /* NULL in, NULL out (no new error); a non-bool argument is refused */
  ck_assert_ptr_null(ir_likely(NULL));
  ck_assert_ptr_null(tec_ctx_error(ctx));
  ck_assert_ptr_null(ir_likely(i));
  assert_err(ctx, "ir_likely: condition is int64; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_likely(ir_float(ctx, 1)));
  assert_err(ctx, "ir_likely: condition is float32; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_LIKELY, 2, (const ir_expr *const[]){c, c}));
  assert_err(ctx, "ir_call: likely takes 1 argument(s), got 2");
  tec_ctx_clear_error(ctx);
  /* the simplifier folds constants and keeps the mark otherwise */
  EXPR_IS(arith_simplify(ir_likely(ir_lt(ir_int(ctx, 3), ir_int(ctx, 5))), NULL), "true");
  EXPR_IS(arith_simplify(ir_likely(ir_ge(ir_int(ctx, 3), ir_int(ctx, 5))), NULL), "false");
  ck_assert_ptr_eq(arith_simplify(l, NULL), l);
  EXPR_IS(arith_simplify(ir_likely(l), NULL), "likely((i < n))");
  EXPR_IS(arith_simplify(ir_and(l, ir_likely(ir_bool(ctx, 1))), NULL), "likely((i < n))");
  EXPR_IS(arith_simplify(ir_select(ir_likely(ir_bool(ctx, 0)), i, n), NULL), "n");
  /* inside an IF on likely(i < 5), i < 5 is known (arith_env_assume sees through it) */
  const ir_expr *A = ir_var(ctx, "A", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_stmt *st = ir_store(A, i, ir_float(ctx, 1), NULL);
  const ir_stmt *s = ir_for(i, ir_int(ctx, 0), ir_int(ctx, 10), IR_FOR_SERIAL,
                            ir_if(ir_likely(ir_lt(i, ir_int(ctx, 5))),
                                  ir_if(ir_lt(i, ir_int(ctx, 7)), st, NULL), NULL));
  ck_assert_str_eq(ir_stmt_str(lower_simplify(s)), "for (i, 0, 10) {\n"
                                                   "  if (likely((i < 5))) {\n"
                                                   "    A[i] = 1f\n"
                                                   "  }\n"
                                                   "}\n");
  tec_ctx_free(ctx);
}
END_TEST

/* A shift by the row number: B[j, i] = select(likely(i >= j), A[j, i - j], -1) over 6 x 8 with
 * i vectorized. Row 0 is clean; in rows [1, 6) the threshold of i is j, not a constant, so
 * likely() stays as a lane mask (a vectorized loop splits only at constants): the JIT
 * computes it, and the masked load reads nothing outside A. */
typedef struct shift { te_tensor *a; } shift;
static const ir_expr *shift_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  shift *m = u;
  return ir_select(ir_likely(ir_ge(i[1], i[0])), TE_AT(m->a, i[0], ir_sub(i[1], i[0])),
                   ir_float(ctx, -1));
}

START_TEST(likely_vector_mask_jit) {
  tec_ctx *ctx = tec_ctx_new();
  shift m = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 6, 8))};
  te_tensor *b = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, 6, 8),
                                                    .body = shift_body, .user = &m,
                                                    .axis_names = (const char *[]){"j", "i"}});
  sch_schedule *s = sch_create(ctx, 1, &b);
  sch_stage *sb = sch_stage_of(s, b);
  OK(ctx, sch_vectorize(sb, sch_axis(sb, 1)));
  lower_func *f = tec_lower(s, "shift", 2, (te_tensor *[]){m.a, b});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *ir = tec_lower_str(f);
  tu_assert_contains(ir, "select(likely((ramp(0, 1, 8) >= x8(j))), A[ramp((j*7), 1, 8)] if "
                         "likely((ramp(0, 1, 8) >= x8(j))), x8(-1f))");
  tu_assert_contains(ir, "B[ramp(0, 1, 8)] = A[ramp(0, 1, 8)]\n"); /* row 0: clean */
  tec_module *mod = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(mod, "shift");
  int64_t sh[2] = {6, 8};
  DLTensor a = tu_rand_f32(2, sh, 9), o = tu_zeros(TEC_F32, 2, sh);
  ck_assert_msg(tec_call(fn, 2, (DLTensor *[]){&a, &o}) == 0, "%s", tec_rt_last_error());
  const float *pa = tu_f32(&a), *po = tu_f32(&o);
  for (int j = 0; j < 6; j++)
    for (int i = 0; i < 8; i++) {
      float want = i >= j ? pa[j * 8 + i - j] : -1.0f;
      ck_assert_msg(po[j * 8 + i] == want, "B[%d, %d] = %g, want %g", j, i, po[j * 8 + i], want);
    }
  tec_dl_free(&a), tec_dl_free(&o);
  tec_ctx_free(ctx);
}
END_TEST

/* ================= the depthwise convolution ================= */

/* out[oy, ox, c] = sum_{ky, kx} pad[oy*s + ky, ox*s + kx, c] * w[ky, kx, c], with
 * pad[py, px, c] = select(likely(in bounds), data[py - p, px - p, c], 0) inlined. */
typedef struct dw {
  te_tensor *data, *w, *pad;
  const ir_expr *ky, *kx, *H, *W;
  int64_t s, p;
  int marked; /* wrap the padding condition in likely() */
} dw;

static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dw *d = u;
  const ir_expr *y = ir_sub(i[0], ir_int(ctx, d->p)), *x = ir_sub(i[1], ir_int(ctx, d->p));
  const ir_expr *in = ir_and(ir_and(ir_ge(y, ir_int(ctx, 0)), ir_lt(y, d->H)),
                             ir_and(ir_ge(x, ir_int(ctx, 0)), ir_lt(x, d->W)));
  return ir_select(d->marked ? ir_likely(in) : in, TE_AT(d->data, y, x, i[2]), ir_float(ctx, 0));
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dw *d = u;
  const ir_expr *py = ir_add(ir_mul(i[0], ir_int(ctx, d->s)), d->ky);
  const ir_expr *px = ir_add(ir_mul(i[1], ir_int(ctx, d->s)), d->kx);
  return te_sum(ir_mul(TE_AT(d->pad, py, px, i[2]), TE_AT(d->w, d->ky, d->kx, i[2])), 2,
                (const ir_expr *[]){d->ky, d->kx}, NULL);
}

typedef struct dw_case {
  int64_t H, W, C, s, p; /* input H x W x C, 3x3 window, stride s, padding p */
  int64_t xs;            /* split factor of the output x loop (0: no split) */
  int symbolic;          /* H and W are size variables */
  int marked;            /* likely() around the padding condition */
  int fast;              /* unroll ky, kx, x.inner; vectorize c */
} dw_case;

static int64_t out_size(int64_t n, int64_t s, int64_t p) { return (n + 2 * p - 3) / s + 1; }

/* Declares and schedules the convolution; *args gets (data, w, out). */
static sch_schedule *dw_schedule(tec_ctx *ctx, const dw_case *k, dw *d, te_tensor **args) {
  memset(d, 0, sizeof *d);
  d->s = k->s, d->p = k->p, d->marked = k->marked;
  d->H = k->symbolic ? te_size_var(ctx, "H") : ir_int(ctx, k->H);
  d->W = k->symbolic ? te_size_var(ctx, "W") : ir_int(ctx, k->W);
  const ir_expr *C = ir_int(ctx, k->C), *two_p = ir_int(ctx, 2 * k->p);
  const ir_expr *PH = ir_add(d->H, two_p), *PW = ir_add(d->W, two_p);
  const ir_expr *OH = ir_add(ir_floordiv(ir_sub(PH, ir_int(ctx, 3)), ir_int(ctx, k->s)), ir_int(ctx, 1));
  const ir_expr *OW = ir_add(ir_floordiv(ir_sub(PW, ir_int(ctx, 3)), ir_int(ctx, k->s)), ir_int(ctx, 1));
  d->data = te_placeholder(ctx, "data", TEC_F32, 3, (const ir_expr *[]){d->H, d->W, C});
  d->w = te_placeholder(ctx, "w", TEC_F32, 3, TE_SHAPE(ctx, 3, 3, k->C));
  d->pad = te_compute(ctx, &(te_compute_decl){.name = "pad", .ndim = 3,
                                              .shape = (const ir_expr *[]){PH, PW, C},
                                              .body = pad_body, .user = d,
                                              .axis_names = (const char *[]){"py", "px", "c"}});
  d->ky = te_reduce_axis_n(ctx, "ky", 3);
  d->kx = te_reduce_axis_n(ctx, "kx", 3);
  te_tensor *out = te_compute(ctx, &(te_compute_decl){
                                      .name = "out", .ndim = 3,
                                      .shape = (const ir_expr *[]){OH, OW, C}, .body = out_body,
                                      .user = d, .axis_names = (const char *[]){"oy", "ox", "c"}});
  ck_assert_msg(out != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &out);
  sch_stage *so = sch_stage_of(s, out);
  OK(ctx, sch_compute_inline(sch_stage_of(s, d->pad)));
  sch_iter *oy = sch_axis(so, 0), *ox = sch_axis(so, 1), *c = sch_axis(so, 2);
  sch_iter *ky = sch_reduce_axis(so, 0), *kx = sch_reduce_axis(so, 1), *xo = ox, *xi = NULL;
  if (k->xs) {
    OK(ctx, sch_split(so, ox, k->xs, &xo, &xi));
    OK(ctx, sch_reorder(so, 6, (sch_iter *[]){oy, xo, ky, kx, xi, c}));
  } else {
    OK(ctx, sch_reorder(so, 5, (sch_iter *[]){oy, ky, kx, ox, c}));
  }
  if (k->fast) {
    OK(ctx, sch_unroll(so, ky));
    OK(ctx, sch_unroll(so, kx));
    if (xi) OK(ctx, sch_unroll(so, xi));
    OK(ctx, sch_vectorize(so, c));
  }
  args[0] = d->data, args[1] = d->w, args[2] = out;
  return s;
}

/* Runs the lowered convolution through the JIT on one shape and compares with the naive
 * reference (padding by bounds checks, double accumulation). */
static void dw_check(tec_ctx *ctx, tec_packed_fn fn, const dw_case *k, int64_t H, int64_t W,
                     unsigned seed) {
  int64_t C = k->C, OH = out_size(H, k->s, k->p), OW = out_size(W, k->s, k->p);
  int64_t sd[3] = {H, W, C}, sw[3] = {3, 3, C}, so[3] = {OH, OW, C};
  DLTensor d = tu_rand_f32(3, sd, seed), w = tu_rand_f32(3, sw, seed + 1);
  DLTensor o = tu_zeros(TEC_F32, 3, so);
  ck_assert_msg(tec_call(fn, 3, (DLTensor *[]){&d, &w, &o}) == 0, "%s", tec_rt_last_error());
  const float *pd = tu_f32(&d), *pw = tu_f32(&w);
  float *ref = malloc(sizeof(float) * (size_t)(OH * OW * C));
  for (int64_t oy = 0; oy < OH; oy++)
    for (int64_t ox = 0; ox < OW; ox++)
      for (int64_t c = 0; c < C; c++) {
        double acc = 0;
        for (int64_t ky = 0; ky < 3; ky++)
          for (int64_t kx = 0; kx < 3; kx++) {
            int64_t y = oy * k->s + ky - k->p, x = ox * k->s + kx - k->p;
            if (y < 0 || y >= H || x < 0 || x >= W) continue;
            acc += (double)pd[(y * W + x) * C + c] * pw[(ky * 3 + kx) * C + c];
          }
        ref[(oy * OW + ox) * C + c] = (float)acc;
      }
  double err = tu_max_err(tu_f32(&o), ref, OH * OW * C);
  ck_assert_msg(err < 1e-5, "H=%lld W=%lld C=%lld stride %lld pad %lld split %lld%s%s%s: error %g",
                (long long)H, (long long)W, (long long)C, (long long)k->s, (long long)k->p,
                (long long)k->xs, k->symbolic ? " symbolic" : "", k->marked ? " likely" : "",
                k->fast ? " unrolled+vectorized" : "", err);
  free(ref);
  tec_dl_free(&d), tec_dl_free(&w), tec_dl_free(&o);
  (void)ctx;
}

/* Lowers case k in a fresh ctx; returns the printed IR (malloc'd) and checks the numbers on
 * its own shape (constant sizes) or on every H, W in [1, 6] it admits (symbolic). */
static char *dw_run(const dw_case *k) {
  tec_ctx *ctx = tec_ctx_new();
  dw d;
  te_tensor *args[3];
  sch_schedule *s = dw_schedule(ctx, k, &d, args);
  lower_func *f = tec_lower(s, "dw", 3, args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  char *ir = strdup(tec_lower_str(f));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(m, "dw");
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  if (!k->symbolic) {
    dw_check(ctx, fn, k, k->H, k->W, 5);
  } else {
    for (int64_t H = 1; H <= 6; H++)
      for (int64_t W = 1; W <= 6; W++)
        if (H + 2 * k->p >= 3 && W + 2 * k->p >= 3) dw_check(ctx, fn, k, H, W, (unsigned)(H * 7 + W));
    dw_check(ctx, fn, k, 28, 29, 3);
  }
  tec_ctx_free(ctx);
  return ir;
}

/* The text of the program from the first line containing `from` on. */
static const char *from_line(const char *ir, const char *from) {
  const char *p = strstr(ir, from);
  ck_assert_msg(p != NULL, "expected to find %s in\n%.3000s", from, ir);
  return p;
}

/* The block (a loop) whose first line contains `from`, up to its closing brace (malloc'd). */
static char *block(const char *ir, const char *from) {
  const char *p = from_line(ir, from), *line = p;
  while (line > ir && line[-1] != '\n') line--;
  char close[80] = "\n";
  int indent = (int)strspn(line, " ");
  ck_assert_int_lt(indent, 70);
  memset(close + 1, ' ', (size_t)indent);
  strcpy(close + 1 + indent, "}\n");
  const char *end = strstr(p, close);
  ck_assert_ptr_nonnull(end);
  return strndup(line, (size_t)(end - line) + strlen(close));
}

START_TEST(depthwise_28x28_clean_hot_loop) {
  /* 3x3, stride 1, pad 1 over 28x28 (8 channels), x split by 14, ky/kx/x.inner unrolled, the
   * channels vectorized: oy splits into [0, 1) [1, 27) [27, 28); in each, ox.outer's two
   * iterations become parts of their own (extent 1, then substituted), so every tap's
   * condition is a constant after unrolling. */
  dw_case k = {28, 28, 8, 1, 1, 14, 0, 1, 1};
  char *ir = dw_run(&k);
  ck_assert_int_eq(count(ir, "for (oy"), 1); /* head and tail rows are straight-line code */
  char *hot = block(ir, "for (oy, 1, 26) {");
  ck_assert_int_eq(count(hot, "select("), 0);
  ck_assert_int_eq(count(hot, "likely("), 0);
  ck_assert_int_eq(count(hot, " if "), 0); /* no predicated load */
  ck_assert_int_eq(count(ir, "select("), 0);
  /* the taps that fall outside multiply a zero (floats: x*0 is not folded, NaN*0 is NaN, as
   * the select computed); the others load. Printed rows: oy = 0, the hot row, oy = 27. */
  int outside = 0, inside = 0;
  for (int row = 0; row < 3; row++)
    for (int ox = 0; ox < 28; ox++)
      for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
          int y = (row == 0 ? 0 : row == 1 ? 1 : 27) + ky - 1, x = ox + kx - 1;
          if (y < 0 || y >= 28 || x < 0 || x >= 28) outside++;
          else inside++;
        }
  ck_assert_int_eq(outside, 182);
  ck_assert_int_eq(count(ir, "(x8(0f)*w["), outside);
  ck_assert_int_eq(count(ir, "data["), inside);
  ck_assert_int_eq(count(hot, "(x8(0f)*w["), 6); /* the left and right columns' taps */
  ck_assert_int_eq(count(hot, "data["), 28 * 9 - 6);
  free(hot);
  free(ir);
}
END_TEST

START_TEST(depthwise_symbolic_clean_hot_loop) {
  /* H and W size variables: the splits are symbolic; the middle row loop's middle ox.outer
   * loop is clean (the unrolled x.inner of the other parts keeps the split's guards) */
  dw_case k = {0, 0, 8, 1, 1, 14, 1, 1, 1};
  char *ir = dw_run(&k);
  ck_assert_int_eq(count(ir, "for (oy"), 3);
  const char *mid = from_line(ir, "for (oy, min(1, H), ");
  char *clean = block(mid, "for (ox.outer, min(1, ");
  ck_assert_int_eq(count(clean, "select("), 0);
  ck_assert_int_eq(count(clean, "likely("), 0);
  ck_assert_int_eq(count(clean, " if "), 0);
  ck_assert_int_eq(count(clean, "data["), 126); /* 14 columns x 9 taps, all loads */
  free(clean);
  free(ir);
}
END_TEST

START_TEST(depthwise_unmarked_select_stays) {
  /* the same padding without likely(): no partitioning for it (code growth), one row loop */
  dw_case k = {28, 28, 8, 1, 1, 14, 0, 0, 1};
  char *ir = dw_run(&k);
  ck_assert_int_eq(count(ir, "likely("), 0);
  ck_assert_int_eq(count(ir, "for (oy, 0, 28) {"), 1);
  /* after unrolling, the simplifier drops the conjuncts it proves; ox.outer stays a loop of
   * two: the selects of rows ky = 0 and 2 (3 x 14 taps each), and of row ky = 1 the first
   * and last taps (x = ox.outer*14 - 1 and ox.outer*14 + 14) */
  ck_assert_int_eq(count(ir, "select("), 2 * 42 + 2);
  free(ir);
}
END_TEST

START_TEST(depthwise_shapes) {
  /* constant sizes 1..5 (head and tail overlap, or no interior), strides 1 and 2, pads 0..2,
   * channel counts 4 and 3 (vector and odd lanes), split or not, unrolled or not */
  for (int64_t H = 1; H <= 5; H++)
    for (int64_t s = 1; s <= 2; s++)
      for (int64_t p = 0; p <= 2; p++) {
        int64_t W = (H * 2) % 5 + 1;
        if (H + 2 * p < 3 || W + 2 * p < 3) continue;
        if (tu_emulated() && (H + s + p) % 3) continue; /* under qemu, a third */
        dw_case k = {H, W, H % 2 ? 4 : 3, s, p, (H + p) % 3, 0, 1, (H + s) % 2 == 0 || p == 1};
        free(dw_run(&k));
      }
  dw_case big = {9, 13, 4, 2, 2, 4, 0, 1, 1};
  free(dw_run(&big));
}
END_TEST

START_TEST(depthwise_symbolic_shapes) {
  /* one function per stride and pad, run on every H, W in [1, 6] and 28x29 */
  for (int64_t s = 1; s <= 2; s++)
    for (int64_t p = 0; p <= 2; p++) {
      if (tu_emulated() && (s + p) % 2) continue; /* under qemu, half */
      dw_case k = {0, 0, 4, s, p, s == 1 ? 4 : 2, 1, 1, p != 2};
      free(dw_run(&k));
    }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("partition");
  TCase *tc = tcase_create("partition");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, likely_builds_prints_folds);
  tcase_add_test(tc, likely_vector_mask_jit);
  tcase_add_test(tc, depthwise_28x28_clean_hot_loop);
  tcase_add_test(tc, depthwise_symbolic_clean_hot_loop);
  tcase_add_test(tc, depthwise_unmarked_select_stays);
  tcase_add_test(tc, depthwise_shapes);
  tcase_add_test(tc, depthwise_symbolic_shapes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
