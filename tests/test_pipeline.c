/* test_pipeline.c — the pass pipeline as a table (lower/pipeline.c): the passes in order, the
 * observer that sees every program-to-program step (no stderr redirection), stop_after, the
 * structural verifier (lower/verify.c) on good and broken programs, prefetch as its own step,
 * and the build-time passes (what used to be decided inside codegen_llvm/). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "lower/passes.h"

static tec_ctx *ctx;
static void setup(void) { ctx = tec_ctx_new(); }
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

static int count(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
  return n;
}

/* ---- the observer: records every pass name and the program after it ---- */
typedef struct seen {
  int n;
  const char *pass[64];
  const char *fname[64];
  const char *text[64];
} seen;
static void observe(void *user, const lower_func *f, const char *pass, const ir_stmt *body) {
  seen *s = user;
  ck_assert_int_lt(s->n, 64);
  s->pass[s->n] = pass;
  s->fname[s->n] = f->name;
  s->text[s->n] = ir_stmt_str(body);
  s->n++;
}
static const char *after(const seen *s, const char *pass) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->pass[i], pass) == 0) return s->text[i];
  ck_abort_msg("no observation after %s", pass);
  return NULL;
}

static const ir_expr *plus_one(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_add(te_read(in, in->ndim, idx), ir_float(c, 1));
}
static const ir_expr *times_two(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_mul(te_read(in, in->ndim, idx), ir_float(c, 2));
}
/* A[64, n] -> B = A + 1 -> C = B * 2 */
static te_tensor *A, *B, *C;
static sch_schedule *two_stage(int64_t rows, int64_t cols) {
  A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, rows, cols));
  B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                         .body = plus_one, .user = A});
  C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                         .body = times_two, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  ck_assert_msg(s != NULL, "%s", tec_ctx_error(ctx));
  return s;
}

/* ======== the table ======== */

START_TEST(table_order) {
  /* the program passes of tec_lower, then the build-time ones, in this order */
  static const char *const want[] = {
      "schedule_ops", "scan", "prefetch", "storage_flatten", "extern_call", "guard_loads", "simplify",
      "loop_partition", "partition simplify", "tensorize", "vectorize", "transpose_block", "unroll",
      "unroll simplify", "stream_store",
      "storage_rewrite", "unroll_rest", "slice_vectors", "bound_checkers", "launch_regions",
      "entry_checks"};
  int k = 0, ir, at_build, analyses = 0;
  const char *n;
  for (int i = 0; (n = tec_lower_pass_name(i, &ir, &at_build)); i++) {
    if (!ir && at_build) { /* the one build-time check: float16 arithmetic for the target */
      ck_assert_str_eq(n, "half_arith");
      ck_assert_str_eq(want[k], "slice_vectors");
      continue;
    }
    if (!ir) {
      analyses++;
      continue;
    }
    ck_assert_int_lt(k, 21);
    ck_assert_str_eq(n, want[k]);
    ck_assert_int_eq(at_build, k >= 16);
    k++;
  }
  ck_assert_int_eq(k, 21);
  /* inline, plan_precompute, check_schedule, infer_bounds, legality, read_bounds, check_sizes */
  ck_assert_int_eq(analyses, 7);
  ck_assert_ptr_null(tec_lower_pass_name(-1, NULL, NULL));
}
END_TEST

/* ======== the observer ======== */

START_TEST(observer_sees_every_step) {
  sch_schedule *s = two_stage(64, 32);
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn};
  lower_func *f = tec_lower_with(s, "f", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(sn.n, 16); /* every program pass of tec_lower, each once */
  for (int i = 0, k = 0; i < sn.n; i++, k++) {
    int ir, at_build;
    const char *n;
    while ((n = tec_lower_pass_name(k, &ir, &at_build)) && !ir) k++;
    ck_assert_str_eq(sn.pass[i], n);
    ck_assert_str_eq(sn.fname[i], "f");
  }
  /* what each left: tensors before flattening, buffers after */
  tu_assert_contains(after(&sn, "schedule_ops"), "realize B(");
  tu_assert_contains(after(&sn, "schedule_ops"), "B[i, j] = (A[i, j] + 1f)");
  tu_assert_contains(after(&sn, "storage_flatten"), "allocate B[float32 * 2048]");
  assert_not_contains(after(&sn, "storage_flatten"), "realize");
  /* the last program observed is the function's */
  ck_assert_str_eq(sn.text[sn.n - 1], ir_stmt_str(f->body));
  ck_assert_ptr_null(f->stopped_after);
  /* a lowering without the observer gives the same program */
  lower_func *g = tec_lower(s, "f", 2, (te_tensor *const[]){A, C});
  ck_assert_str_eq(ir_stmt_str(g->body), ir_stmt_str(f->body));
}
END_TEST

/* A prepare/run split lowers two functions: the observer sees each one's passes. */
START_TEST(observer_split_functions) {
  const ir_expr *sh = ir_int(ctx, 16);
  te_tensor *W = te_const_placeholder(ctx, "W", TEC_F32, 1, &sh);
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, &sh);
  te_tensor *P = te_compute(ctx, &(te_compute_decl){.name = "P", .ndim = 1, .shape = &sh,
                                                    .body = times_two, .user = W});
  te_tensor *Y = te_compute(ctx, &(te_compute_decl){.name = "Y", .ndim = 1, .shape = &sh,
                                                    .body = plus_one, .user = P});
  ck_assert_ptr_nonnull(Y);
  (void)X;
  sch_schedule *s = sch_create(ctx, 1, &Y);
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn};
  lower_func *f = tec_lower_with(s, "g", 2, (te_tensor *const[]){W, Y}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_ptr_nonnull(f->prepare);
  ck_assert_int_eq(sn.n, 32);
  ck_assert_str_eq(sn.fname[0], "g_run");
  ck_assert_str_eq(sn.fname[16], "g_prepare");
  ck_assert_str_eq(sn.text[15], ir_stmt_str(f->body));
  ck_assert_str_eq(sn.text[31], ir_stmt_str(f->prepare->body));
}
END_TEST

/* ======== stop_after ======== */

START_TEST(stop_after_pass) {
  sch_schedule *s = two_stage(64, 32);
  tec_lower_options o = {.stop_after = "schedule_ops"};
  lower_func *f = tec_lower_with(s, "f", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_str_eq(f->stopped_after, "schedule_ops");
  const char *t = ir_stmt_str(f->body);
  tu_assert_contains(t, "realize B(");
  tu_assert_contains(t, "produce C {");
  assert_not_contains(t, "allocate");
  /* a partly lowered function is not code: tec_build and tec_emit refuse it by name */
  ck_assert_ptr_null(tec_build(ctx, 1, &f, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "tec_build: function 'f' was lowered only up to pass "
                                         "'schedule_ops'");
  ck_assert_int_ne(tec_emit(ctx, 1, &f, NULL, TEC_EMIT_LLVM_IR, "/dev/null"), 0);
  tu_assert_contains(tec_ctx_error(ctx), "tec_emit: function 'f' was lowered only up to pass");

  o.stop_after = "storage_flatten";
  f = tec_lower_with(s, "f", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  t = ir_stmt_str(f->body);
  tu_assert_contains(t, "allocate B[float32 * 2048]");
  tu_assert_contains(t, "B[((i*32) + j)]"); /* flattened, not yet simplified */
  assert_not_contains(t, "realize");

  /* the last pass: the whole program, still marked */
  o.stop_after = "storage_rewrite";
  f = tec_lower_with(s, "f", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_str_eq(ir_stmt_str(f->body), ir_stmt_str(tec_lower(s, "f", 2, (te_tensor *const[]){A, C})->body));
}
END_TEST

START_TEST(stop_after_refused) {
  sch_schedule *s = two_stage(8, 8);
  static const char *const bad[] = {"no_such_pass", "infer_bounds", "slice_vectors", ""};
  for (int i = 0; i < 4; i++) {
    tec_lower_options o = {.stop_after = bad[i]};
    ck_assert_ptr_null(tec_lower_with(s, "f", 2, (te_tensor *const[]){A, C}, &o));
    const char *e = tec_ctx_error(ctx);
    tu_assert_contains(e, tec_ctx_printf(ctx, "tec_lower 'f': stop_after '%s' is not a pass of "
                                              "tec_lower that makes a program; the passes are "
                                              "'schedule_ops', 'scan', 'prefetch', 'storage_flatten'",
                                         bad[i]));
    const char *list = strstr(e, "the passes are ");
    tu_assert_contains(list, "'storage_rewrite'");
    assert_not_contains(list, "slice_vectors"); /* build-time passes cannot be stopped at */
    assert_not_contains(list, "infer_bounds");  /* nor analyses: they make no program */
  }
  /* and a later valid call is not failed by that refusal */
  ck_assert_ptr_nonnull(tec_lower(s, "f", 2, (te_tensor *const[]){A, C}));
}
END_TEST

/* ======== prefetch: its own step ======== */

static const ir_expr *mm_k;
static te_tensor *mA, *mB;
static const ir_expr *mm_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  return te_sum(ir_mul(TE_AT(mA, i[0], mm_k), TE_AT(mB, mm_k, i[1])), 1, &mm_k, NULL);
}

START_TEST(prefetch_own_step) {
  mA = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 16, 64));
  mB = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 64, 32));
  mm_k = te_reduce_axis_n(ctx, "k", 64);
  te_tensor *M = te_compute(ctx, &(te_compute_decl){.name = "M", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, 16, 32),
                                                    .body = mm_body});
  sch_schedule *s = sch_create(ctx, 1, &M);
  sch_stage *st = sch_stage_of(s, M);
  sch_iter *k = sch_reduce_axis(st, 0);
  OK(ctx, sch_reorder(st, 3, (sch_iter *[]){sch_axis(st, 0), k, sch_axis(st, 1)}));
  OK(ctx, sch_prefetch(st, mB, k, 4));
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn, .verify = 1};
  lower_func *f = tec_lower_with(s, "mm", 3, (te_tensor *const[]){mA, mB, M}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *so = after(&sn, "schedule_ops"), *pf = after(&sn, "prefetch");
  /* schedule_ops only marks the loop; the prefetch pass makes the statements */
  ck_assert_int_eq(count(so, "attr prefetch_scope"), 1);
  assert_not_contains(so, "prefetch(");
  assert_not_contains(pf, "prefetch_scope");
  /* B's row k + 4, 32 floats: a prefetch per 64-byte line */
  tu_assert_contains(pf, "for (pf.B.0, (k + 4), ");
  tu_assert_contains(pf, "prefetch(B[pf.B.0, ");
  ck_assert_int_eq(count(pf, "prefetch("), 1);
  tu_assert_contains(ir_stmt_str(f->body), "prefetch(");
  /* and it computes the product */
  tec_packed_fn fn = tu_build(ctx, s, "mm", 3, (te_tensor *const[]){mA, mB, M});
  int64_t sa[2] = {16, 64}, sb[2] = {64, 32}, sm[2] = {16, 32};
  DLTensor ta = tu_rand_f32(2, sa, 1), tb = tu_rand_f32(2, sb, 2), tm = tu_zeros(TEC_F32, 2, sm);
  float ref[16 * 32];
  tu_ref_matmul(tu_f32(&ta), tu_f32(&tb), ref, 16, 32, 64);
  ck_assert_int_eq(fn((DLTensor *[]){&ta, &tb, &tm}, 3), 0);
  ck_assert_double_lt(tu_max_err(tu_f32(&tm), ref, 16 * 32), 1e-4);
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tm);
}
END_TEST

/* ======== the verifier ======== */

/* a hand-built function: one float buffer X[n] */
static lower_func *hand(const ir_stmt *body, te_tensor **x, const ir_expr **xb,
                        const ir_expr **n) {
  *n = te_size_var(ctx, "n");
  *x = te_placeholder(ctx, "X", TEC_F32, 1, n);
  *xb = ir_var(ctx, "X", TEC_HANDLET, IR_VAR_BUFFER);
  lower_func *f = tec_ctx_alloc(ctx, sizeof *f);
  f->ctx = ctx;
  f->name = "h";
  f->nargs = 1;
  f->args = tec_ctx_alloc(ctx, sizeof *f->args);
  f->arg_bufs = tec_ctx_alloc(ctx, sizeof *f->arg_bufs);
  f->args[0] = *x;
  f->arg_bufs[0] = *xb;
  f->nsize = 1;
  f->size_vars = tec_ctx_alloc(ctx, sizeof *f->size_vars);
  f->size_vars[0] = *n;
  f->body = body;
  return f;
}

START_TEST(verify_good_and_broken) {
  te_tensor *X;
  const ir_expr *xb, *n;
  lower_func *f = hand(NULL, &X, &xb, &n);
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *j = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *T = ir_var(ctx, "T", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *one = ir_float(ctx, 1), *zero = ir_int(ctx, 0);
  lower_verify_what flat = {.flat = 1, .sizes = 1}, tensors = {0};
  /* good: for i in [0, n): X[i] = X[i] + 1, with a temporary T */
  const ir_stmt *good = ir_allocate(T, TEC_F32, ir_int(ctx, 4), ir_for(i, zero, n, IR_FOR_SERIAL,
      ir_store(xb, i, ir_add(ir_load(TEC_F32, xb, i, NULL), one), NULL)));
  ck_assert_int_eq(lower_verify(f, good, "p", &flat), 0);
  ck_assert_ptr_null(tec_ctx_error(ctx));
  struct { const ir_stmt *s; const lower_verify_what *w; const char *msg; } bad[] = {
      /* j bound nowhere */
      {ir_for(i, zero, n, IR_FOR_SERIAL, ir_store(xb, j, one, NULL)), &flat,
       "variable is used outside the loop, let or reduction that binds it ('j')"},
      /* i used after its loop */
      {ir_seq2(ir_for(i, zero, n, IR_FOR_SERIAL, ir_store(xb, i, one, NULL)),
               ir_store(xb, i, one, NULL)), &flat,
       "variable is used outside the loop, let or reduction that binds it ('i')"},
      /* T never allocated */
      {ir_for(i, zero, n, IR_FOR_SERIAL, ir_store(T, i, one, NULL)), &flat,
       "buffer is neither an argument nor allocated around its use ('T')"},
      /* T read after its allocation ended */
      {ir_seq2(ir_allocate(T, TEC_F32, ir_int(ctx, 4), ir_store(T, zero, one, NULL)),
               ir_store(xb, zero, ir_load(TEC_F32, T, zero, NULL), NULL)), &flat,
       "buffer is neither an argument nor allocated around its use ('T')"},
      /* negative constant extent */
      {ir_for(i, zero, ir_int(ctx, -3), IR_FOR_SERIAL, ir_store(xb, i, one, NULL)), &flat,
       "a loop extent is missing or a negative constant"},
      {ir_allocate(T, TEC_F32, ir_int(ctx, -1), ir_store(T, zero, one, NULL)), &flat,
       "an allocation size is missing or a negative constant"},
      /* a tensor access after flattening */
      {ir_for(i, zero, n, IR_FOR_SERIAL, ir_store(xb, i, ir_read(ctx, X, 1, &i), NULL)), &flat,
       "a tensor READ is left after storage_flatten ('X')"},
      {ir_provide(X, 1, &zero, one), &flat, "a PROVIDE is left after storage_flatten ('X')"},
      /* a size variable no argument binds */
      {ir_for(i, zero, te_size_var(ctx, "m"), IR_FOR_SERIAL, ir_store(xb, i, one, NULL)), &flat,
       "size variable is not one of the function's ('m')"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    tec_ctx_error_rollback(ctx, 0); /* the ctx keeps the first error: start each case clean */
    ck_assert_ptr_nonnull(bad[k].s);
    ck_assert_int_eq(lower_verify(f, bad[k].s, "some_pass", bad[k].w), -1);
    ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_INTERNAL);
    tu_assert_contains(tec_ctx_error(ctx), "internal error: the program of 'h' is malformed "
                                           "after pass 'some_pass': ");
    tu_assert_contains(tec_ctx_error(ctx), bad[k].msg);
  }
  /* before flattening: a tensor outside its realize, unless it is an argument */
  te_tensor *Y = te_placeholder(ctx, "Y", TEC_F32, 1, &n);
  const ir_expr *mn[2] = {zero, n};
  const ir_stmt *rd = ir_provide(X, 1, &zero, ir_read(ctx, Y, 1, &zero));
  tec_ctx_error_rollback(ctx, 0);
  ck_assert_int_eq(lower_verify(f, rd, "p", &tensors), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tensor is read outside its realize and is no argument "
                                         "('Y')");
  ck_assert_int_eq(lower_verify(f, ir_realize(Y, 1, mn, rd), "p", &tensors), 0);
  /* size variables are checked only once check_sizes has run (it reports them to the user) */
  const ir_stmt *m = ir_for(i, zero, te_size_var(ctx, "m"), IR_FOR_SERIAL, ir_store(xb, i, one, NULL));
  lower_verify_what early = {.flat = 1};
  ck_assert_int_eq(lower_verify(f, m, "p", &early), 0);
}
END_TEST

/* A program that is broken when it reaches tec_build is caught by the verifier before codegen
 * when verification is on, naming the build-time pass. */
START_TEST(verify_at_build) {
  te_tensor *X;
  const ir_expr *xb, *n;
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *j = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  lower_func *f = hand(NULL, &X, &xb, &n);
  f->body = ir_for(i, ir_int(ctx, 0), n, IR_FOR_SERIAL, ir_store(xb, j, ir_float(ctx, 1), NULL));
  tec_lower_options o = {.verify = 1};
  f->options = &o;
  ck_assert_ptr_null(tec_build(ctx, 1, &f, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "the program of 'h' is malformed after pass "
                                         "'unroll_rest': variable is used outside");
}
END_TEST

/* Verification on over schedules that exercise most passes: they all verify. */
static const ir_expr *blur(tec_ctx *c, const ir_expr *const *i, void *u) {
  te_tensor *in = u;
  const ir_expr *j1 = ir_add(i[1], ir_int(c, 1));
  return ir_add(TE_AT(in, i[0], i[1]), TE_AT(in, i[0], j1));
}
START_TEST(verify_schedules) {
  for (int variant = 0; variant < 4; variant++) {
    A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 37, 51));
    B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, 37, 50),
                                           .body = blur, .user = A});
    C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = B->shape,
                                           .body = times_two, .user = B});
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sc = sch_stage_of(s, C), *sb = sch_stage_of(s, B);
    sch_iter *io, *ii, *jo, *ji;
    OK(ctx, sch_split(sc, sch_axis(sc, 1), 16, &jo, &ji)); /* a tail */
    if (variant >= 1) OK(ctx, sch_compute_at(sb, sc, jo));
    if (variant >= 2) OK(ctx, sch_vectorize(sc, ji));
    if (variant >= 3) {
      OK(ctx, sch_split(sc, sch_axis(sc, 0), 4, &io, &ii));
      OK(ctx, sch_parallel(sc, io));
      OK(ctx, sch_unroll(sc, ii));
    }
    seen sn = {0};
    tec_lower_options o = {.observe = observe, .user = &sn, .verify = 1};
    lower_func *f = tec_lower_with(s, "v", 2, (te_tensor *const[]){A, C}, &o);
    ck_assert_msg(f != NULL, "variant %d: %s", variant, tec_ctx_error(ctx));
    ck_assert_int_eq(sn.n, 16);
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "variant %d: %s", variant, tec_ctx_error(ctx));
    ck_assert_int_eq(sn.n, 21); /* the build-time passes, observed at build */
    ck_assert_str_eq(sn.pass[16], "unroll_rest");
    ck_assert_str_eq(sn.pass[17], "slice_vectors");
    ck_assert_str_eq(sn.pass[18], "bound_checkers"); /* off: the program unchanged */
    ck_assert_str_eq(sn.pass[19], "launch_regions");
    int64_t sa[2] = {37, 51}, sc2[2] = {37, 50};
    DLTensor ta = tu_rand_f32(2, sa, 3), tc = tu_zeros(TEC_F32, 2, sc2);
    ck_assert_int_eq(tec_module_get(m, "v")((DLTensor *[]){&ta, &tc}, 2), 0);
    for (int r = 0; r < 37; r++)
      for (int c = 0; c < 50; c++)
        ck_assert_float_eq_tol(tu_f32(&tc)[r * 50 + c],
                               2 * (tu_f32(&ta)[r * 51 + c] + tu_f32(&ta)[r * 51 + c + 1]), 1e-5);
    tec_dl_free(&ta), tec_dl_free(&tc);
  }
}
END_TEST

/* ======== build-time passes ======== */

/* A 48-lane vectorized loop: slice_vectors (a lowering pass now, run for the target at
 * build) cuts each 48-lane store into native-width ones; the observer sees it. */
START_TEST(slice_vectors_at_build) {
  A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 48));
  C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                         .body = times_two, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  OK(ctx, sch_vectorize(sc, sch_axis(sc, 1)));
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn};
  lower_func *f = tec_lower_with(s, "w", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tu_assert_contains(ir_stmt_str(f->body), "ramp((i*48), 1, 48)");
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int native = tec_target_vector_bits(ctx, NULL) / 32;
  const char *sl = after(&sn, "slice_vectors");
  if (native < 48 && native > 1) {
    ck_assert_int_eq(count(sl, "C["), 48 / native);
    tu_assert_contains(sl, tec_ctx_printf(ctx, "ramp((i*48), 1, %d)", native));
    assert_not_contains(sl, ", 1, 48)");
  }
  /* the lowered function itself is unchanged: it can be built for another target */
  tu_assert_contains(ir_stmt_str(f->body), "ramp((i*48), 1, 48)");
  char *ir = tu_emit_text(ctx, f, "llvm -mtriple=aarch64-linux-gnu", TEC_EMIT_LLVM_IR);
  ck_assert_ptr_null(strstr(ir, "<48 x float>"));
  tu_assert_contains(ir, "<4 x float>");
  free(ir);
  int64_t sh[2] = {4, 48};
  DLTensor ta = tu_rand_f32(2, sh, 5), tc = tu_zeros(TEC_F32, 2, sh);
  ck_assert_int_eq(tec_module_get(m, "w")((DLTensor *[]){&ta, &tc}, 2), 0);
  for (int k = 0; k < 4 * 48; k++) ck_assert_float_eq(tu_f32(&tc)[k], 2 * tu_f32(&ta)[k]);
  tec_dl_free(&ta), tec_dl_free(&tc);
}
END_TEST

/* A hand-built unrolled loop reaches tec_build: the build-time unroll_rest pass unrolls it
 * (codegen has no unroller of its own). */
START_TEST(unroll_rest_at_build) {
  te_tensor *X;
  const ir_expr *xb, *n;
  lower_func *f = hand(NULL, &X, &xb, &n);
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  f->body = ir_for(i, ir_int(ctx, 0), ir_int(ctx, 3), IR_FOR_UNROLLED,
                   ir_store(xb, i, ir_cast(TEC_F32, ir_mul(i, i)), NULL));
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn, .verify = 1};
  f->options = &o;
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  const char *u = after(&sn, "unroll_rest");
  assert_not_contains(u, "for (");
  ck_assert_int_eq(count(u, "X["), 3);
  int64_t len = 3;
  DLTensor tx = tu_zeros(TEC_F32, 1, &len);
  ck_assert_int_eq(tec_module_get(m, "h")((DLTensor *[]){&tx}, 1), 0);
  for (int k = 0; k < 3; k++) ck_assert_float_eq(tu_f32(&tx)[k], (float)(k * k));
  tec_dl_free(&tx);
}
END_TEST

/* A launch region, hand-built so every kind of statement is in it (X[3], Y[8] zeroed):
 *   launch_point: for (k, 0, 3) {
 *     X[0] = X[0] + 1                          shared store: task 0, then a barrier
 *     allocate P[1] {                          per task
 *       for (q, 0, 1) { P[0] = k; X[2] = X[2] + P[0] }   every task; X's store in task 0
 *       for (j, 0, 8) parallel { Y[j] = Y[j] + X[0] }     a chunk per task, then a barrier
 *     } }
 * X = {3, 0, 0 + 1 + 2}, Y[j] = 1 + 2 + 3 with any number of threads. */
START_TEST(launch_regions_as_ir) {
  const ir_expr *s3 = ir_int(ctx, 3), *s8 = ir_int(ctx, 8), *zero = ir_int(ctx, 0);
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, &s3);
  te_tensor *Y = te_placeholder(ctx, "Y", TEC_F32, 1, &s8);
  const ir_expr *xb = ir_var(ctx, "X", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *yb = ir_var(ctx, "Y", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *pb = ir_var(ctx, "P", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *k = ir_var(ctx, "k", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *q = ir_var(ctx, "q", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *j = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *two = ir_int(ctx, 2), *x0 = ir_load(TEC_F32, xb, zero, NULL);
  const ir_stmt *inc = ir_store(xb, zero, ir_add(x0, ir_float(ctx, 1)), NULL);
  const ir_stmt *guard_items[2] = {
      ir_store(pb, zero, ir_cast(TEC_F32, k), NULL),
      ir_store(xb, two, ir_add(ir_load(TEC_F32, xb, two, NULL), ir_load(TEC_F32, pb, zero, NULL)),
               NULL)};
  const ir_stmt *pitems[2] = {
      ir_for(q, zero, ir_int(ctx, 1), IR_FOR_SERIAL, ir_seq(ctx, 2, guard_items)),
      ir_for(j, zero, s8, IR_FOR_PARALLEL,
             ir_store(yb, j, ir_add(ir_load(TEC_F32, yb, j, NULL), x0), NULL))};
  const ir_stmt *kitems[2] = {inc, ir_allocate(pb, TEC_F32, ir_int(ctx, 1), ir_seq(ctx, 2, pitems))};
  const ir_stmt *body = ir_attr("pragma_parallel_launch_point", NULL,
                                ir_for(k, zero, s3, IR_FOR_SERIAL, ir_seq(ctx, 2, kitems)));
  lower_func *f = tec_ctx_alloc(ctx, sizeof *f);
  *f = (lower_func){.ctx = ctx, .name = "lr", .nargs = 2,
                    .args = (te_tensor *[]){X, Y}, .arg_bufs = (const ir_expr *[]){xb, yb},
                    .body = body};
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn, .verify = 1};
  f->options = &o;
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  const char *lr = after(&sn, "launch_regions");
  assert_not_contains(lr, "pragma_parallel_launch_point");
  ck_assert_int_eq(count(lr, "// attr launch_region\n"), 1);
  ck_assert_int_eq(count(lr, "// attr launch_sync\n"), 3);  /* task-0 group, guard, loop */
  ck_assert_int_eq(count(lr, "// attr launch_task0\n"), 2); /* X[0]'s store, X[2]'s */
  ck_assert_int_eq(count(lr, "// attr launch_per_task\n"), 1);
  /* the order: the task-0 store, then P's loop, then the chunked loop */
  const char *t0 = strstr(lr, "// attr launch_task0\n"), *pt = strstr(lr, "launch_per_task");
  const char *par = strstr(lr, ") parallel {");
  ck_assert_msg(t0 && pt && par && t0 < pt && pt < par, "%s", lr);
  /* the function is unchanged: the decisions are made per build */
  assert_not_contains(ir_stmt_str(f->body), "launch_sync");
  static const int threads[] = {1, 2, 3};
  for (int t = 0; t < 3; t++) {
    tec_rt_set_num_threads(threads[t]);
    int64_t n3 = 3, n8 = 8;
    DLTensor tx = tu_zeros(TEC_F32, 1, &n3), ty = tu_zeros(TEC_F32, 1, &n8);
    ck_assert_int_eq(tec_module_get(m, "lr")((DLTensor *[]){&tx, &ty}, 2), 0);
    ck_assert_float_eq(tu_f32(&tx)[0], 3);
    ck_assert_float_eq(tu_f32(&tx)[1], 0);
    ck_assert_float_eq(tu_f32(&tx)[2], 3);
    for (int q2 = 0; q2 < 8; q2++) ck_assert_float_eq(tu_f32(&ty)[q2], 6);
    tec_dl_free(&tx), tec_dl_free(&ty);
  }
  /* a per-task buffer written inside the parallel loop: refused at build, by name */
  const ir_stmt *bad_par = ir_for(j, zero, s8, IR_FOR_PARALLEL,
                                  ir_store(pb, zero, ir_cast(TEC_F32, j), NULL));
  f->body = ir_attr("pragma_parallel_launch_point", NULL,
                    ir_for(k, zero, s3, IR_FOR_SERIAL,
                           ir_allocate(pb, TEC_F32, ir_int(ctx, 1), bad_par)));
  ck_assert_ptr_null(tec_build(ctx, 1, &f, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "tec_build 'lr': pragma parallel_launch_point on loop "
                                         "'k': buffer 'P' is allocated inside the marked loop "
                                         "but outside parallel loop 'j', which writes it");
  /* no parallel loop: the pragma is dropped, plain code */
  sn.n = 0;
  f->body = ir_attr("pragma_parallel_launch_point", NULL, ir_for(k, zero, s3, IR_FOR_SERIAL, inc));
  m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  assert_not_contains(after(&sn, "launch_regions"), "launch");
  ck_assert_ptr_null(strstr(tec_module_llvm_ir(m), "tec_rt_parallel_launch"));
}
END_TEST

/* The checked entry's argument checks are an IR program (entry_checks): printed, observed,
 * verified, and the call's messages are its assert texts. */
START_TEST(entry_checks_as_ir) {
  const ir_expr *n = te_size_var(ctx, "n");
  A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *const[]){n, ir_int(ctx, 4)});
  C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                         .body = times_two, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &C);
  seen sn = {0};
  tec_lower_options o = {.observe = observe, .user = &sn, .verify = 1};
  lower_func *f = tec_lower_with(s, "e", 2, (te_tensor *const[]){A, C}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  const char *ec = after(&sn, "entry_checks");
  /* in order: the count, the array, then per argument; n bound by a let from A's shape[0] */
  const char *p1 = strstr(ec, "assert((dl_arg(0, 0, 0) == 2), \"e: expected 2 arguments, got "
                              "%lld\", dl_arg(0, 0, 0))");
  const char *p2 = strstr(ec, "\"e: argument 0 ('A') is NULL\"");
  const char *p3 = strstr(ec, "let n = dl_arg(9, 0, 0)");
  const char *p4 = strstr(ec, "\"e: argument 1 ('C') shape[0] is %lld, expected %lld (n, bound by "
                              "argument 0 'A')\"");
  const char *p5 = strstr(ec, "// attr entry_call");
  ck_assert_msg(p1 && p2 && p3 && p4 && p5 && p1 < p2 && p2 < p3 && p3 < p4 && p4 < p5, "%s", ec);
  ck_assert_int_eq(count(ec, "has dtype (code %lld, bits %lld), expected float32"), 2);
  /* compact and aligned: the kernel on the arguments as they are; else the strided path */
  ck_assert_int_eq(count(ec, "dl_arg(14, "), 2);
  tu_assert_contains(ec, "// attr entry_call = 1");
  /* the checks run: a wrong extent gets the assert's text */
  int64_t sa[2] = {3, 4}, sc_bad[2] = {2, 4};
  DLTensor ta = tu_rand_f32(2, sa, 7), tc = tu_zeros(TEC_F32, 2, sc_bad);
  ck_assert_int_eq(tec_module_get(m, "e")((DLTensor *[]){&ta, &tc}, 2), -1);
  ck_assert_str_eq(tec_rt_last_error(), "e: argument 1 ('C') shape[0] is 2, expected 3 (n, bound "
                                        "by argument 0 'A')");
  ck_assert_int_eq(tec_module_get(m, "e")((DLTensor *[]){&ta}, 1), -1);
  ck_assert_str_eq(tec_rt_last_error(), "e: expected 2 arguments, got 1");
  tec_dl_free(&tc);
  tc = tu_zeros(TEC_F32, 2, sa);
  ck_assert_int_eq(tec_module_get(m, "e")((DLTensor *[]){&ta, &tc}, 2), 0);
  for (int k = 0; k < 12; k++) ck_assert_float_eq(tu_f32(&tc)[k], 2 * tu_f32(&ta)[k]);
  tec_dl_free(&ta), tec_dl_free(&tc);
  /* dl_arg is made by ir_dl_arg only */
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_DL_ARG, 3, (const ir_expr *const[]){n, n, n}));
  tu_assert_contains(tec_ctx_error(ctx), "use ir_dl_arg");
}
END_TEST

/* ======== scoped memory ======== */

/* A 64x64 matmul, tiled, vectorized and unrolled: a lowering that goes through most passes. */
static sch_schedule *mm_tiled(te_tensor **M) {
  mA = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 64, 64));
  mB = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 64, 64));
  mm_k = te_reduce_axis_n(ctx, "k", 64);
  *M = te_compute(ctx, &(te_compute_decl){.name = "M", .ndim = 2, .shape = TE_SHAPE(ctx, 64, 64),
                                          .body = mm_body});
  sch_schedule *s = sch_create(ctx, 1, M);
  sch_stage *st = sch_stage_of(s, *M);
  sch_iter *io, *jo, *ii, *ji;
  OK(ctx, sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), 4, 16, &io, &jo, &ii, &ji));
  OK(ctx, sch_vectorize(st, ji));
  OK(ctx, sch_unroll(st, ii));
  return s;
}

/* 10^4 lowerings of one declaration, each freed: the arena gives every byte back (it ends
 * where it started after each one) and the heap does not grow with the count. */
START_TEST(lower_cycles_bounded) {
  te_tensor *M;
  sch_schedule *s = mm_tiled(&M);
  te_tensor *args[] = {mA, mB, M};
  /* one lowering first: what one costs when kept */
  lower_func *f = tec_lower(s, "mm", 3, args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  size_t base = tec_ctx_arena_bytes(ctx);
  const char *want = tec_ctx_strdup(ctx, ir_stmt_str(f->body));
  tec_lower_free(f);
  size_t after_free = tec_ctx_arena_bytes(ctx);
  ck_assert_msg(after_free + 8192 < base, "a freed lowering gave back %zu of %zu bytes",
                base - after_free, base);
  base = tec_ctx_arena_bytes(ctx);
  struct mallinfo2 m0 = mallinfo2();
  int n = tu_emulated() ? 1000 : 10000;
  for (int r = 0; r < n; r++) {
    f = tec_lower(s, "mm", 3, args);
    ck_assert_msg(f != NULL, "cycle %d: %s", r, tec_ctx_error(ctx));
    if (r == n - 1) ck_assert_str_eq(ir_stmt_str(f->body), want); /* (printed in the ctx) */
    tec_lower_free(f);
    if (r < n - 1) ck_assert_uint_eq(tec_ctx_arena_bytes(ctx), base);
  }
  struct mallinfo2 m1 = mallinfo2();
  /* the one printed string above, and malloc's own slack: far below one lowering per cycle */
  ck_assert_uint_le(tec_ctx_arena_bytes(ctx), base + 65536);
  ck_assert_msg(m1.uordblks < m0.uordblks + (1u << 20), "heap grew from %zu to %zu bytes",
                m0.uordblks, m1.uordblks);
}
END_TEST

/* Lower + build + run + free cycles at the default level: each module gives all its memory
 * back with tec_module_free, its handle's slot included (a later call on the handle still says
 * it was freed). 10^4 cycles at -O0: tests/test_cycles.c. */
START_TEST(build_cycles_bounded) {
  te_tensor *M;
  sch_schedule *s = mm_tiled(&M);
  te_tensor *args[] = {mA, mB, M};
  int64_t sh[2] = {64, 64};
  DLTensor ta = tu_rand_f32(2, sh, 1), tb = tu_rand_f32(2, sh, 2), tm = tu_zeros(TEC_F32, 2, sh);
  float *ref = malloc(sizeof(float) * 64 * 64);
  tu_ref_matmul(tu_f32(&ta), tu_f32(&tb), ref, 64, 64, 64);
  size_t base = 0;
  struct mallinfo2 m0 = {0};
  int n = tu_emulated() ? 10 : 200, warm = 5;
  for (int r = 0; r < n; r++) {
    if (r == warm) base = tec_ctx_arena_bytes(ctx), m0 = mallinfo2();
    lower_func *f = tec_lower(s, "mm", 3, args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(tec_module_get(m, "mm")((DLTensor *[]){&ta, &tb, &tm}, 3), 0);
    ck_assert_double_lt(tu_max_err(tu_f32(&tm), ref, 64 * 64), 1e-4);
    tec_module_free(m);
    tec_lower_free(f);
    ck_assert_ptr_null(tec_module_get(m, "mm"));
    tu_assert_contains(tec_ctx_error(ctx), "the module was freed");
  }
  struct mallinfo2 m1 = mallinfo2();
  size_t grew = tec_ctx_arena_bytes(ctx) - base;
  /* constant bounds, whatever n: nothing in the arena, and on the heap what LLVM and malloc
   * keep in their caches, where a kept lowering and module cost hundreds of kilobytes */
  ck_assert_msg(grew == 0, "arena grew %zu bytes over %d builds", grew, n - warm);
  ck_assert_msg(m1.uordblks < m0.uordblks + (512u << 10),
                "heap grew from %zu to %zu bytes over %d builds", m0.uordblks, m1.uordblks,
                n - warm);
  fprintf(stderr, "build cycles: arena +%zu bytes, heap %zu -> %zu over %d\n", grew,
          m0.uordblks, m1.uordblks, n - warm);
  free(ref);
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tm);
}
END_TEST

static Suite *pipeline_suite(void) {
  Suite *s = suite_create("pipeline");
  TCase *t = tcase_create("table");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, table_order);
  tcase_add_test(t, observer_sees_every_step);
  tcase_add_test(t, observer_split_functions);
  tcase_add_test(t, stop_after_pass);
  tcase_add_test(t, stop_after_refused);
  tcase_add_test(t, prefetch_own_step);
  suite_add_tcase(s, t);
  TCase *v = tcase_create("verify");
  tcase_add_checked_fixture(v, setup, teardown);
  tcase_add_test(v, verify_good_and_broken);
  tcase_add_test(v, verify_at_build);
  tcase_add_test(v, verify_schedules);
  suite_add_tcase(s, v);
  TCase *b = tcase_create("build");
  tcase_add_checked_fixture(b, setup, teardown);
  tcase_add_test(b, slice_vectors_at_build);
  tcase_add_test(b, unroll_rest_at_build);
  tcase_add_test(b, launch_regions_as_ir);
  tcase_add_test(b, entry_checks_as_ir);
  suite_add_tcase(s, b);
  TCase *mem = tcase_create("memory");
  tcase_add_checked_fixture(mem, setup, teardown);
  tcase_set_timeout(mem, 600);
  tcase_add_test(mem, lower_cycles_bounded);
  tcase_add_test(mem, build_cycles_bounded);
  suite_add_tcase(s, mem);
  return s;
}

int main(void) { return tu_run(pipeline_suite()); }
