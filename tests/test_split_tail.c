/* test_split_tail.c — the tail strategies of a split (sch_split_tail: guard_with_if,
 * shift_inwards, round_up, predicate) and splits by a symbolic factor (sch_split_expr): the
 * numbers against a plain C loop on extents that divide and do not divide the factor
 * (extent < factor included), the lowered IR's shape, the refusals with their messages, and
 * trace round trips of the new primitives.
 *
 * The pipeline:  B[i] = A[i]*2 + 1 (an intermediate),  C[i] = B[i] + A[i] (the output). */
#include <math.h>
#include <stdlib.h>
#include "testutil.h"

typedef struct graph {
  tec_ctx *ctx;
  const ir_expr *n;
  te_tensor *A, *B, *C;
  sch_schedule *s;
  sch_stage *sb, *sc;
} graph;

static const ir_expr *b_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor *A = user;
  return ir_add(ir_mul(TE_AT(A, i[0]), ir_float(ctx, 2)), ir_float(ctx, 1));
}
static const ir_expr *c_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  (void)ctx;
  graph *g = user;
  return ir_add(TE_AT(g->B, i[0]), TE_AT(g->A, i[0]));
}

/* n < 0: a size variable "n"; else the constant n */
static graph *make(int64_t n) {
  graph *g = calloc(1, sizeof *g);
  g->ctx = tec_ctx_new();
  g->n = n < 0 ? te_size_var(g->ctx, "n") : ir_int(g->ctx, n);
  g->A = te_placeholder(g->ctx, "A", TEC_F32, 1, &g->n);
  g->B = te_compute(g->ctx, &(te_compute_decl){"B", 1, &g->n, b_body, g->A, NULL, NULL});
  g->C = te_compute(g->ctx, &(te_compute_decl){"C", 1, &g->n, c_body, g, NULL, NULL});
  g->s = SCH_CREATE(g->ctx, g->C);
  g->sb = sch_stage_of(g->s, g->B);
  g->sc = sch_stage_of(g->s, g->C);
  ck_assert_ptr_nonnull(g->sc);
  return g;
}
static void done(graph *g) {
  tec_ctx_free(g->ctx);
  free(g);
}

static const char *lower_str(graph *g) {
  lower_func *f = TEC_LOWER(g->s, "f", g->A, g->C);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(g->ctx));
  return tec_lower_str(f);
}

/* builds g, runs it on extent n and compares C with the plain C loop */
static void check_numbers(graph *g, int64_t n, const char *what) {
  tec_packed_fn fn = tu_build(g->ctx, g->s, "f", 2, (te_tensor *[]){g->A, g->C});
  DLTensor a = tu_rand_f32(1, &n, 7), c = tu_zeros(TEC_F32, 1, &n);
  ck_assert_msg(tec_call(fn, 2, (DLTensor *[]){&a, &c}) == 0, "%s: %s", what,
                tec_rt_last_error());
  const float *x = tu_f32(&a), *y = tu_f32(&c);
  for (int64_t i = 0; i < n; i++) {
    float want = (x[i] * 2.0f + 1.0f) + x[i];
    ck_assert_msg(y[i] == want, "%s, n %lld: C[%lld] = %g, want %g", what, (long long)n,
                  (long long)i, (double)y[i], (double)want);
  }
  tec_dl_free(&a), tec_dl_free(&c);
}

static const int64_t extents[] = {16, 19, 8, 3};

/* guard_with_if: an if around the body where the factor does not divide */
START_TEST(guard_with_if) {
  for (size_t k = 0; k < sizeof extents / sizeof *extents; k++) {
    graph *g = make(extents[k]);
    sch_iter *o, *i;
    OK(g->ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_GUARD_WITH_IF, &o, &i));
    OK(g->ctx, sch_compute_inline(g->sb));
    const char *ir = lower_str(g);
    /* loop partitioning peels the guarded tail into its own loop */
    if (extents[k] == 19) tu_assert_contains(ir, "for (i.inner, 0, 3) {\n      C[(i.inner + 16)]");
    if (extents[k] == 16) assert_not_contains(ir, "for (i.inner, 0, 3)");
    check_numbers(g, extents[k], "guard_with_if");
    done(g);
  }
}
END_TEST

/* shift_inwards: no guard, the last chunk starts at min(i.outer*8, n - 8) */
START_TEST(shift_inwards) {
  for (size_t k = 0; k < 3; k++) { /* 3 < 8 is refused: shift_inwards_refusals */
    graph *g = make(extents[k]);
    sch_iter *o, *i;
    OK(g->ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_SHIFT_INWARDS, &o, &i));
    OK(g->ctx, sch_vectorize(g->sc, i));
    OK(g->ctx, sch_compute_inline(g->sb));
    const char *ir = lower_str(g);
    assert_not_contains(ir, "if (");
    if (extents[k] == 19) tu_assert_contains(ir, "min((i.outer*8), 11)");
    tu_assert_contains(ir, "ramp(");
    check_numbers(g, extents[k], "shift_inwards");
    done(g);
  }
  /* the extent known only at run time: shifted, with a guard for extents below the factor */
  static const int64_t ns[] = {3, 8, 19, 100};
  graph *g = make(-1);
  sch_iter *o, *i;
  OK(g->ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_SHIFT_INWARDS, &o, &i));
  OK(g->ctx, sch_compute_inline(g->sb));
  tu_assert_contains(lower_str(g), "min((i.outer*8), (n - 8))");
  for (size_t k = 0; k < 4; k++) check_numbers(g, ns[k], "shift_inwards, symbolic extent");
  done(g);
}
END_TEST

/* round_up on the intermediate B: its buffer is rounded up to 24, its stores are unguarded */
START_TEST(round_up) {
  for (size_t k = 0; k < sizeof extents / sizeof *extents; k++) {
    graph *g = make(extents[k]);
    sch_iter *o, *i;
    OK(g->ctx, sch_split_tail(g->sb, sch_axis(g->sb, 0), 8, SCH_TAIL_ROUND_UP, &o, &i));
    OK(g->ctx, sch_vectorize(g->sb, i));
    const char *ir = lower_str(g);
    if (extents[k] == 19) {
      tu_assert_contains(ir, "allocate B[float32 * 24]");
      tu_assert_contains(ir, "B[ramp((B.i.outer*8), 1, 8)] =");
      /* the loads past A's end: predicated */
      tu_assert_contains(ir, "A[ramp((B.i.outer*8), 1, 8)] if (ramp((B.i.outer*8), 1, 8) < x8(19))");
    }
    if (extents[k] == 3) tu_assert_contains(ir, "allocate B[float32 * 8]");
    check_numbers(g, extents[k], "round_up");
    done(g);
  }
}
END_TEST

/* predicate: no if; loads and stores are predicated, so the vectorized loop stays vector code */
START_TEST(predicate) {
  for (size_t k = 0; k < sizeof extents / sizeof *extents; k++) {
    graph *g = make(extents[k]);
    sch_iter *o, *i;
    OK(g->ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_PREDICATE, &o, &i));
    OK(g->ctx, sch_vectorize(g->sc, i));
    OK(g->ctx, sch_compute_inline(g->sb));
    const char *ir = lower_str(g);
    tu_assert_contains(ir, "ramp(");
    if (extents[k] == 19) {
      assert_not_contains(ir, "if (((i.outer*8) + i.inner)");
      tu_assert_contains(ir, "] if (");
    }
    check_numbers(g, extents[k], "predicate");
    done(g);
  }
}
END_TEST

/* with compute_at: a producer inside a shifted or predicated consumer loop, and a rounded-up
 * producer attached inside its consumer */
START_TEST(with_compute_at) {
  static const int64_t ns[] = {19, 16, 9};
  for (int tail = 0; tail < 4; tail++)
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
      graph *g = make(ns[k]);
      sch_iter *o, *i, *o2, *i2;
      if (tail == SCH_TAIL_ROUND_UP) { /* B rounded up, attached at C's outer loop */
        OK(g->ctx, sch_split(g->sc, sch_axis(g->sc, 0), 8, &o, &i));
        OK(g->ctx, sch_compute_at(g->sb, g->sc, o));
        OK(g->ctx, sch_split_tail(g->sb, sch_axis(g->sb, 0), 4, tail, &o2, &i2));
      } else {
        OK(g->ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, tail, &o, &i));
        OK(g->ctx, sch_compute_at(g->sb, g->sc, o));
      }
      char what[64];
      snprintf(what, sizeof what, "compute_at, tail %d", tail);
      lower_str(g);
      check_numbers(g, ns[k], what);
      done(g);
    }
}
END_TEST

/* a split by n / 4 (a symbolic factor), for several n: at n < 4 the factor counts as 1 */
START_TEST(symbolic_factor) {
  sch_iter *o, *i;
  graph *g;
  /* TEC_CHECK_TRACE replays the trace of every tec_lower: a symbolic factor cannot be in one */
  const char *check = getenv("TEC_CHECK_TRACE");
  if (check && *check && strcmp(check, "0") != 0) goto constant;
  g = make(-1);
  OK(g->ctx, sch_split_expr(g->sc, sch_axis(g->sc, 0), ir_floordiv(g->n, ir_int(g->ctx, 4)), &o,
                            &i));
  OK(g->ctx, sch_compute_inline(g->sb));
  tu_assert_contains(lower_str(g), "max((n / 4), 1)");
  static const int64_t ns[] = {1, 3, 4, 9, 19, 64, 1001};
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) check_numbers(g, ns[k], "n / 4");
  /* the trace cannot print a symbolic factor */
  ck_assert_ptr_null(sch_trace_json(g->ctx, sch_get_trace(g->s)));
  assert_err(g->ctx, "sch_trace_json: record 0 (split_expr): the value floordiv(n, 4) is not a "
                     "constant; a trace holds integer and float constants only");
  done(g);
constant: /* a constant expression is an ordinary split, and its trace round-trips */
  g = make(19);
  OK(g->ctx, sch_split_expr(g->sc, sch_axis(g->sc, 0), ir_int(g->ctx, 4), &o, &i));
  const char *want = lower_str(g);
  const char *js = sch_trace_json(g->ctx, sch_get_trace(g->s));
  ck_assert_msg(js != NULL, "%s", tec_ctx_error(g->ctx));
  tu_assert_contains(js, "\"prim\": \"split_expr\"");
  graph *h = make(19);
  OK(h->ctx, sch_trace_replay(h->s, sch_trace_parse_json(h->ctx, js)));
  ck_assert_str_eq(lower_str(h), want);
  done(h);
  done(g);
}
END_TEST

/* split_tail through the trace: C calls, JSON, replay lowers to the same program */
START_TEST(trace_round_trip) {
  for (int tail = 0; tail < 4; tail++) {
    graph *g = make(19);
    sch_stage *st = tail == SCH_TAIL_ROUND_UP ? g->sb : g->sc;
    sch_iter *o, *i;
    OK(g->ctx, sch_split_tail(st, sch_axis(st, 0), 8, tail, &o, &i));
    const char *c = sch_trace_c(g->ctx, sch_get_trace(g->s));
    ck_assert_msg(c != NULL, "%s", tec_ctx_error(g->ctx));
    tu_assert_contains(c, "sch_split_tail(");
    const char *js = sch_trace_json(g->ctx, sch_get_trace(g->s));
    char want_js[100];
    snprintf(want_js, sizeof want_js, "\"factor\": 8, \"tail\": %d", tail);
    tu_assert_contains(js, want_js);
    const char *want = lower_str(g);
    graph *h = make(19);
    const sch_trace *t = sch_trace_parse_json(h->ctx, js);
    ck_assert_msg(t != NULL, "%s", tec_ctx_error(h->ctx));
    OK(h->ctx, sch_trace_replay(h->s, t));
    ck_assert_str_eq(lower_str(h), want);
    ck_assert_str_eq(sch_trace_json(h->ctx, sch_get_trace(h->s)), js);
    done(h);
    done(g);
  }
}
END_TEST

static const ir_expr *sum_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor *A = user;
  const ir_expr *k = te_reduce_axis_n(ctx, "k", 16);
  return TE_SUM(TE_AT(A, ir_add(i[0], k)), k);
}

START_TEST(refusals) {
  graph *g = make(19);
  sch_iter *o, *i;
  tec_ctx *ctx = g->ctx;
  ck_assert_int_eq(sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, 7, &o, &i), -1);
  assert_err(ctx, "split_tail: tail strategy 7 for axis 'i' of stage 'C'; it must be 0 "
                  "(guard_with_if), 1 (shift_inwards), 2 (round_up) or 3 (predicate)");
  ck_assert_ptr_null(o);
  tec_ctx_clear_error(ctx);
  /* shift_inwards: an extent below the factor */
  ck_assert_int_eq(sch_split_tail(g->sc, sch_axis(g->sc, 0), 20, SCH_TAIL_SHIFT_INWARDS, &o, &i),
                   -1);
  assert_err(ctx, "split_tail: tail strategy shift_inwards on axis 'i' of stage 'C': its extent "
                  "19 is less than the factor 20, so no chunk fits inside it; use a factor <= "
                  "19, or guard_with_if or predicate");
  tec_ctx_clear_error(ctx);
  /* round_up: an output, a loop a split made */
  ck_assert_int_eq(sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_ROUND_UP, &o, &i), -1);
  assert_err(ctx, "split_tail: tail strategy round_up on axis 'i' of stage 'C', an output: the "
                  "loop runs past the extent and would write past the end of the caller's "
                  "buffer; round_up is legal on a stage whose buffer tec allocates (an "
                  "intermediate or a cache); use guard_with_if, predicate or shift_inwards");
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_split(g->sb, sch_axis(g->sb, 0), 8, &o, &i));
  sch_iter *o2, *i2;
  ck_assert_int_eq(sch_split_tail(g->sb, o, 2, SCH_TAIL_ROUND_UP, &o2, &i2), -1);
  assert_err(ctx, "split_tail: tail strategy round_up on axis 'i.outer' of stage 'B', which a "
                  "split or fuse made: round_up rounds the tensor's own dimension up, so split a "
                  "data axis of the tensor itself with it (then split the parts as you like)");
  tec_ctx_clear_error(ctx);
  done(g);
  /* cache_write of a stage split with another strategy than guard_with_if */
  g = make(19);
  ctx = g->ctx;
  OK(ctx, sch_split_tail(g->sc, sch_axis(g->sc, 0), 8, SCH_TAIL_PREDICATE, &o, &i));
  ck_assert_ptr_null(sch_cache_write(g->s, g->C, "local"));
  assert_err(ctx, "cache_write: axis 'i' of stage 'C' is split with tail strategy predicate; "
                  "cache_write lays the cache out in the split loops' order with a padded tail "
                  "and starts the stage's loops over, so only guard_with_if splits can be laid "
                  "out; call cache_write first, then split_tail the cache's or the stage's loops");
  done(g);
  /* round_up of a tensor passed as an argument: tec_lower refuses */
  g = make(19);
  ctx = g->ctx;
  OK(ctx, sch_split_tail(g->sb, sch_axis(g->sb, 0), 8, SCH_TAIL_ROUND_UP, &o, &i));
  ck_assert_ptr_null(TEC_LOWER(g->s, "f", g->A, g->B, g->C));
  assert_err(ctx, "tec_lower 'f': axis 'i' of stage 'B' is split with tail strategy round_up, "
                  "which writes past the tensor's end, but 'B' is an argument of the function "
                  "(the caller's buffer, which tec cannot round up); use guard_with_if, "
                  "predicate or shift_inwards, or do not pass 'B'");
  done(g);
  /* shift_inwards where an attached stage's range is smaller than the factor */
  g = make(19);
  ctx = g->ctx;
  OK(ctx, sch_split(g->sc, sch_axis(g->sc, 0), 4, &o, &i));
  OK(ctx, sch_compute_at(g->sb, g->sc, o));
  OK(ctx, sch_split_tail(g->sb, sch_axis(g->sb, 0), 8, SCH_TAIL_SHIFT_INWARDS, &o2, &i2));
  ck_assert_ptr_null(TEC_LOWER(g->s, "f", g->A, g->C));
  assert_err(ctx, "tec_lower 'f': axis 'i' of stage 'B' is split by 8 with tail strategy "
                  "shift_inwards, but here it has 4 iterations, fewer than the factor, so no "
                  "chunk fits inside it; use a factor <= 4, or guard_with_if or predicate");
  done(g);
  /* a reduction: no shift_inwards, no round_up on its reduce axis */
  g = make(19);
  ctx = g->ctx;
  te_tensor *S = te_compute(ctx, &(te_compute_decl){"S", 1, TE_SHAPE(ctx, 3), sum_body, g->A,
                                                    NULL, NULL});
  sch_schedule *s = SCH_CREATE(ctx, S);
  sch_stage *ss = sch_stage_of(s, S);
  ck_assert_int_eq(sch_split_tail(ss, sch_axis(ss, 0), 2, SCH_TAIL_SHIFT_INWARDS, &o, &i), -1);
  assert_err(ctx, "split_tail: tail strategy shift_inwards on axis 'i' of stage 'S', a "
                  "reduction: the shifted last chunk computes some points twice, and a "
                  "reduction's update is not idempotent; use guard_with_if or predicate (or "
                  "round_up on a data axis of a stage that is not an output)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split_tail(ss, sch_reduce_axis(ss, 0), 5, SCH_TAIL_ROUND_UP, &o, &i), -1);
  assert_err(ctx, "split_tail: tail strategy round_up on reduce axis 'k' of stage 'S': the loop "
                  "would reduce past the axis' extent; round_up applies to data axes; use "
                  "guard_with_if or predicate");
  tec_ctx_clear_error(ctx);
  /* split_expr: what a factor may not be */
  ck_assert_int_eq(sch_split_expr(ss, sch_axis(ss, 0), NULL, &o, &i), -1);
  assert_err(ctx, "split_expr: the factor for axis 'i' of stage 'S' is NULL; give an integer "
                  "expression of size variables");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split_expr(ss, sch_axis(ss, 0), ir_float(ctx, 2), &o, &i), -1);
  assert_err(ctx, "split_expr: the factor 2f for axis 'i' of stage 'S' is not a scalar integer; "
                  "give an integer expression of size variables");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split_expr(ss, sch_axis(ss, 0), sch_iter_var(sch_reduce_axis(ss, 0)), &o, &i), -1);
  assert_err(ctx, "split_expr: the factor k for axis 'i' of stage 'S' uses 'k', which is not a "
                  "size variable; a factor may use constants and size variables only (it is "
                  "fixed before the loops run)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split_expr(ss, sch_axis(ss, 0), ir_int(ctx, 0), &o, &i), -1);
  assert_err(ctx, "split_expr: factor 0 for axis 'i' of stage 'S'; it must be >= 1");
  tec_ctx_clear_error(ctx);
  /* predicate and guard on the reduce axis: exact sums */
  OK(ctx, sch_split_tail(ss, sch_reduce_axis(ss, 0), 5, SCH_TAIL_PREDICATE, &o, &i));
  tec_packed_fn fn = tu_build(ctx, s, "sum", 2, (te_tensor *[]){g->A, S});
  int64_t n = 19, three = 3;
  DLTensor a = tu_rand_f32(1, &n, 3), r = tu_zeros(TEC_F32, 1, &three);
  ck_assert_msg(tec_call(fn, 2, (DLTensor *[]){&a, &r}) == 0, "%s", tec_rt_last_error());
  for (int x = 0; x < 3; x++) {
    float want = 0;
    for (int k = 0; k < 16; k++) want += tu_f32(&a)[x + k];
    ck_assert_msg(fabsf(tu_f32(&r)[x] - want) < 1e-5f, "S[%d] = %g, want %g", x,
                  (double)tu_f32(&r)[x], (double)want);
  }
  tec_dl_free(&a), tec_dl_free(&r);
  done(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("split_tail");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, guard_with_if);
  tcase_add_test(tc, shift_inwards);
  tcase_add_test(tc, round_up);
  tcase_add_test(tc, predicate);
  tcase_add_test(tc, with_compute_at);
  tcase_add_test(tc, symbolic_factor);
  tcase_add_test(tc, trace_round_trip);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
