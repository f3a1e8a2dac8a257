/* test_extern.c — extern stages (te_extern): a C function computes a stage inside a scheduled
 * program. Numbers from the JIT against plain C; at compute_at, the region the function gets
 * per tile equals the region bound inference printed (the `realize` of the stage); a thread-safe
 * extern inside a parallel loop; the AOT header's declaration; every refusal with its message
 * (no function, a region outside the input, split/vectorize/parallel of its axes, a parallel
 * loop around a function not declared thread-safe, inlining, cache_write, a function that
 * fails at run time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

enum { R = 63, COLS = 32, MAXCALLS = 64 };

/* ---- the user's kernel: E[i, j] = A[i, j] + A[i + 1, j] over the region it is given ---- */
typedef struct call_rec {
  int64_t out_min[2], out_ext[2], in_min[2], in_ext[2];
} call_rec;
static call_rec calls[MAXCALLS];
static int ncalls;

/* exported (the test is linked with -rdynamic): the JIT resolves it by name */
int32_t pair_sum(const tec_extern_buffer *b, int32_t nbuf);
int32_t pair_sum(const tec_extern_buffer *b, int32_t nbuf) {
  if (nbuf != 2) return 3;
  const tec_extern_buffer *in = &b[0], *out = &b[1];
  if (ncalls < MAXCALLS) {
    call_rec *c = &calls[ncalls];
    for (int d = 0; d < 2; d++) {
      c->out_min[d] = out->min[d];
      c->out_ext[d] = out->dl.shape[d];
      c->in_min[d] = in->min[d];
      c->in_ext[d] = in->dl.shape[d];
    }
  }
  ncalls++;
  const float *a = in->dl.data;
  float *e = out->dl.data;
  /* the input region starts at the output region's row (region function below) */
  for (int64_t i = 0; i < out->dl.shape[0]; i++)
    for (int64_t j = 0; j < out->dl.shape[1]; j++)
      e[i * out->dl.strides[0] + j * out->dl.strides[1]] =
          a[i * in->dl.strides[0] + j * in->dl.strides[1]] +
          a[(i + 1) * in->dl.strides[0] + j * in->dl.strides[1]];
  return 0;
}

static int32_t pair_sum_quiet(const tec_extern_buffer *b, int32_t nbuf) {
  const tec_extern_buffer *in = &b[0], *out = &b[1];
  (void)nbuf;
  const float *a = in->dl.data;
  float *e = out->dl.data;
  for (int64_t i = 0; i < out->dl.shape[0]; i++)
    for (int64_t j = 0; j < out->dl.shape[1]; j++)
      e[i * out->dl.strides[0] + j] = a[i * in->dl.strides[0] + j] + a[(i + 1) * in->dl.strides[0] + j];
  return 0;
}

static int32_t fails(const tec_extern_buffer *b, int32_t nbuf) {
  (void)b, (void)nbuf;
  return 7;
}

/* Input rows [m*mul + add, m*mul + add + e + extra) for output rows [m, m + e), the same
 * columns: {1, 0, 1} is what pair_sum reads; the others ask outside A. */
typedef struct row_map {
  int64_t mul, add, extra;
} row_map;
static const row_map pair_rows = {1, 0, 1}, shifted_rows = {1, 5, 0}, doubled_rows = {2, 0, 0};

static int rows_region(tec_ctx *ctx, int input, const ir_expr *const *omin,
                       const ir_expr *const *oext, const ir_expr **imin, const ir_expr **iext,
                       void *user) {
  (void)input;
  const row_map *m = user;
  imin[0] = ir_add(ir_mul(omin[0], ir_int(ctx, m->mul)), ir_int(ctx, m->add));
  iext[0] = ir_add(oext[0], ir_int(ctx, m->extra));
  imin[1] = omin[1];
  iext[1] = oext[1];
  return 0;
}

static int failing_region(tec_ctx *ctx, int input, const ir_expr *const *omin,
                          const ir_expr *const *oext, const ir_expr **imin, const ir_expr **iext,
                          void *user) {
  (void)ctx, (void)input, (void)omin, (void)oext, (void)imin, (void)iext, (void)user;
  return -1;
}

typedef struct prog {
  tec_ctx *ctx;
  te_tensor *A, *E, *C;
  sch_schedule *s;
} prog;

static const ir_expr *times2(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  return ir_mul(TE_AT((te_tensor *)user, i[0], i[1]), ir_float(ctx, 2));
}

/* A[64, 32] -> E[63, 32] (extern) -> C = E * 2 */
static prog make(te_extern_fn fn, const row_map *rows, int thread_safe) {
  prog p = {tec_ctx_new(), NULL, NULL, NULL, NULL};
  p.A = te_placeholder(p.ctx, "A", TEC_F32, 2, TE_SHAPE(p.ctx, R + 1, COLS));
  p.E = te_extern(p.ctx, &(te_extern_decl){.name = "E", .type = TEC_F32, .ndim = 2,
                                           .shape = TE_SHAPE(p.ctx, R, COLS), .ninputs = 1,
                                           .inputs = &p.A, .symbol = "pair_sum", .fn = fn,
                                           .region = rows_region, .user = (void *)rows,
                                           .thread_safe = thread_safe});
  ck_assert_msg(p.E != NULL, "%s", tec_ctx_error(p.ctx));
  p.C = te_compute(p.ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                             .shape = TE_SHAPE(p.ctx, R, COLS), .body = times2,
                                             .user = p.E});
  p.s = sch_create(p.ctx, 1, &p.C);
  ck_assert_ptr_nonnull(p.s);
  return p;
}

static void check_result(const DLTensor *a, const DLTensor *c);
/* Runs f(A, C) on a fixed A and checks C = 2*(A[i] + A[i+1]). */
static void run_and_check(prog *p, tec_packed_fn f) {
  DLTensor a = tu_rand_f32(2, (int64_t[]){R + 1, COLS}, 11);
  DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){R, COLS});
  ck_assert_msg(TEC_CALL(f, &a, &c) == 0, "%s", tec_rt_last_error());
  check_result(&a, &c);
  tec_dl_free(&a);
  tec_dl_free(&c);
}

/* C = 2*(A[i] + A[i+1]) */
static void check_result(const DLTensor *a, const DLTensor *c) {
  const float *x = tu_f32(a), *y = tu_f32(c);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < COLS; j++) {
      float want = 2 * (x[i * COLS + j] + x[(i + 1) * COLS + j]);
      ck_assert_msg(y[i * COLS + j] == want, "C[%d, %d] = %g, want %g", i, j, y[i * COLS + j],
                    want);
    }
}

/* Builds p as scheduled, calls it, expects -1 with msg in the runtime's error; frees p. */
static void expect_call_fails(prog *p, const char *msg) {
  tec_packed_fn f = tu_build(p->ctx, p->s, "f", 2, (te_tensor *[]){p->A, p->C});
  DLTensor a = tu_rand_f32(2, (int64_t[]){R + 1, COLS}, 1);
  DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){R, COLS});
  ck_assert_int_eq(TEC_CALL(f, &a, &c), -1);
  tu_assert_contains(tec_rt_last_error(), msg);
  tec_dl_free(&a);
  tec_dl_free(&c);
  tec_ctx_free(p->ctx);
}

START_TEST(extern_root_whole_region) {
  /* no pointer: the JIT resolves the symbol "pair_sum" in this process */
  prog p = make(NULL, &pair_rows, 0);
  OK(p.ctx, sch_compute_root(sch_stage_of(p.s, p.E)));
  ncalls = 0;
  tec_packed_fn f = tu_build(p.ctx, p.s, "f", 2, (te_tensor *[]){p.A, p.C});
  run_and_check(&p, f);
  ck_assert_int_eq(ncalls, 1);
  ck_assert_int_eq(calls[0].out_min[0], 0);
  ck_assert_int_eq(calls[0].out_ext[0], R);
  ck_assert_int_eq(calls[0].out_ext[1], COLS);
  ck_assert_int_eq(calls[0].in_ext[0], R + 1);
  tec_ctx_free(p.ctx);
}
END_TEST

/* Reads "realize E([<min>, <ext>]" from the lowered text: the min must be `(i.outer*8)` and the
 * storage extent a number. */
static int64_t printed_extent(const char *text, const char **min_text) {
  const char *r = strstr(text, "realize E([");
  ck_assert_msg(r != NULL, "no realize of E in\n%s", text);
  r += strlen("realize E([");
  const char *comma = strstr(r, ", ");
  ck_assert_ptr_nonnull(comma);
  static char buf[64];
  snprintf(buf, sizeof buf, "%.*s", (int)(comma - r), r);
  *min_text = buf;
  return strtoll(comma + 2, NULL, 10);
}

static void keep_schedule_ops(void *user, const lower_func *f, const char *pass,
                              const ir_stmt *body) {
  (void)f;
  if (strcmp(pass, "schedule_ops") == 0) snprintf(user, 8192, "%s", ir_stmt_str(body));
}

/* compute_at C's i.outer (tiles of 8 rows): one call per tile, on the tile's rows (the last
 * tile 7: the region clamped to E's 63 rows) and the input rows [8t, 8t + ext + 1). */
START_TEST(extern_at_tile_region_is_the_inferred_one) {
  prog p = make(pair_sum, &pair_rows, 0);
  sch_stage *c = sch_stage_of(p.s, p.C);
  sch_iter *io, *ii;
  OK(p.ctx, sch_split(c, sch_axis(c, 0), 8, &io, &ii));
  OK(p.ctx, sch_vectorize(c, sch_axis(c, 1)));
  OK(p.ctx, sch_compute_at(sch_stage_of(p.s, p.E), c, io));
  /* the program as schedule_ops builds it: the realize bound inference sized */
  static char text[8192];
  text[0] = 0;
  tec_lower_options opt = {.observe = keep_schedule_ops, .user = text};
  lower_func *lf = tec_lower_with(p.s, "f", 2, (te_tensor *[]){p.A, p.C}, &opt);
  ck_assert_msg(lf != NULL, "%s", tec_ctx_error(p.ctx));
  const char *min_text = NULL;
  int64_t store = printed_extent(text, &min_text);
  ck_assert_str_eq(min_text, "(i.outer*8)");
  ck_assert_int_eq(store, 8);
  tec_module *m = tec_build(p.ctx, 1, &lf, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(p.ctx));
  ncalls = 0;
  run_and_check(&p, tec_module_get(m, "f"));
  ck_assert_int_eq(ncalls, (R + 7) / 8);
  for (int t = 0; t < ncalls; t++) {
    const call_rec *r = &calls[t];
    int64_t ext = store < R - 8 * t ? store : R - 8 * t; /* the printed region, clamped */
    ck_assert_int_eq(r->out_min[0], 8 * t); /* (i.outer*8) at i.outer = t */
    ck_assert_int_eq(r->out_ext[0], ext);
    ck_assert_int_eq(r->out_min[1], 0);
    ck_assert_int_eq(r->out_ext[1], COLS);
    ck_assert_int_eq(r->in_min[0], 8 * t);
    ck_assert_int_eq(r->in_ext[0], ext + 1);
  }
  tec_ctx_free(p.ctx);
}
END_TEST

/* C's rows in parallel tiles of 16, E computed per tile. */
static void parallel_tiles(prog *p) {
  sch_stage *c = sch_stage_of(p->s, p->C);
  sch_iter *io, *ii;
  OK(p->ctx, sch_split(c, sch_axis(c, 0), 16, &io, &ii));
  OK(p->ctx, sch_parallel(c, io));
  OK(p->ctx, sch_compute_at(sch_stage_of(p->s, p->E), c, io));
}

/* A thread-safe extern at the tile loop of a parallel consumer: every tile computed. */
START_TEST(extern_thread_safe_in_parallel_loop) {
  prog p = make(pair_sum_quiet, &pair_rows, 1);
  parallel_tiles(&p);
  tec_packed_fn f = tu_build(p.ctx, p.s, "f", 2, (te_tensor *[]){p.A, p.C});
  run_and_check(&p, f);
  tec_ctx_free(p.ctx);
}
END_TEST

/* "All of it" (no region function) and an extern that is the function's output. */
static int32_t copy_all(const tec_extern_buffer *b, int32_t nbuf) {
  if (nbuf != 2 || b[0].dl.shape[0] != 10 || b[1].dl.shape[0] != 5) return 1;
  const float *x = b[0].dl.data;
  float *y = b[1].dl.data;
  for (int i = 0; i < 5; i++) y[i] = x[2 * i] + x[2 * i + 1];
  return 0;
}

START_TEST(extern_as_output_whole_input) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, TE_SHAPE(ctx, 10));
  te_tensor *Y = te_extern(ctx, &(te_extern_decl){.name = "Y", .type = TEC_F32, .ndim = 1,
                                                  .shape = TE_SHAPE(ctx, 5), .ninputs = 1,
                                                  .inputs = &X, .fn = copy_all});
  ck_assert_msg(Y != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &Y);
  tec_packed_fn f = tu_build(ctx, s, "g", 2, (te_tensor *[]){X, Y});
  DLTensor x = tu_rand_f32(1, (int64_t[]){10}, 3), y = tu_zeros(TEC_F32, 1, (int64_t[]){5});
  ck_assert_int_eq(TEC_CALL(f, &x, &y), 0);
  for (int i = 0; i < 5; i++)
    ck_assert(tu_f32(&y)[i] == tu_f32(&x)[2 * i] + tu_f32(&x)[2 * i + 1]);
  tec_dl_free(&x);
  tec_dl_free(&y);
  tec_ctx_free(ctx);
}
END_TEST

/* An extern stage of constants alone moves into the prepare step: two calls of the function,
 * one call of the extern. */
START_TEST(extern_of_constants_runs_in_prepare) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_const_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, R + 1, COLS));
  te_tensor *E = te_extern(ctx, &(te_extern_decl){.name = "E", .type = TEC_F32, .ndim = 2,
                                                  .shape = TE_SHAPE(ctx, R, COLS), .ninputs = 1,
                                                  .inputs = &A, .fn = pair_sum,
                                                  .region = rows_region,
                                                  .user = (void *)&pair_rows});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, R, COLS),
                                                    .body = times2, .user = E});
  lower_func *lf = tec_lower(sch_create(ctx, 1, &C), "f", 2, (te_tensor *[]){A, C});
  tec_module *m = lf ? tec_build(ctx, 1, &lf, NULL) : NULL;
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  DLTensor a = tu_rand_f32(2, (int64_t[]){R + 1, COLS}, 11);
  DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){R, COLS});
  ncalls = 0;
  for (int k = 0; k < 2; k++) {
    ck_assert_msg(tec_module_run(m, "f", 2, (DLTensor *[]){&a, &c}) == 0, "%s",
                  tec_rt_last_error());
    check_result(&a, &c);
  }
  ck_assert_int_eq(ncalls, 1);
  tec_dl_free(&a);
  tec_dl_free(&c);
  tec_ctx_free(ctx);
}
END_TEST

/* The AOT header declares the function to link; a pointer-only declaration cannot be emitted. */
START_TEST(extern_aot_header_and_pointer_only) {
  if (tu_emulated()) return; /* the same text from any host: emitted once, on the build machine */
  prog p = make(NULL, &pair_rows, 0);
  lower_func *lf = tec_lower(p.s, "f", 2, (te_tensor *[]){p.A, p.C});
  ck_assert_ptr_nonnull(lf);
  char *h = tu_emit_text(p.ctx, lf, "llvm -mtriple=aarch64-linux-gnu -mattr=+neon",
                         TEC_EMIT_HEADER);
  tu_assert_contains(h, "int32_t pair_sum(const struct tec_extern_buffer *bufs, int32_t nbuf);");
  free(h);
  char *asm_text = tu_emit_text(p.ctx, lf, "llvm -mtriple=aarch64-linux-gnu -mattr=+neon",
                                TEC_EMIT_ASM);
  tu_assert_contains(asm_text, "pair_sum");
  tu_assert_contains(asm_text, "tec_rt_extern_call");
  free(asm_text);
  asm_text = tu_emit_text(p.ctx, lf, "llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4",
                          TEC_EMIT_ASM); /* 32-bit pointers */
  tu_assert_contains(asm_text, "bl\ttec_rt_extern_call");
  free(asm_text);
  tec_ctx_free(p.ctx);

  tec_ctx *ctx = tec_ctx_new();
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, TE_SHAPE(ctx, 10));
  te_tensor *Y = te_extern(ctx, &(te_extern_decl){.name = "Y", .type = TEC_F32, .ndim = 1,
                                                  .shape = TE_SHAPE(ctx, 5), .ninputs = 1,
                                                  .inputs = &X, .fn = copy_all});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  lower_func *g = tec_lower(s, "g", 2, (te_tensor *[]){X, Y});
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(tec_emit(ctx, 1, &g, "llvm -mtriple=aarch64-linux-gnu", TEC_EMIT_ASM,
                            "/dev/null"), -1);
  assert_err(ctx, "tec_emit: extern stage 'Y' was given its function as a pointer only; an "
                  "object file references functions by name: set te_extern_decl.symbol");
  tec_ctx_free(ctx);
}
END_TEST

/* ---- bad input ---- */

/* No pointer and a symbol the process does not have: the JIT build fails, naming it. */
START_TEST(extern_unresolved_symbol) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, TE_SHAPE(ctx, 10));
  te_tensor *Y = te_extern(ctx, &(te_extern_decl){.name = "Y", .type = TEC_F32, .ndim = 1,
                                                  .shape = TE_SHAPE(ctx, 5), .ninputs = 1,
                                                  .inputs = &X, .symbol = "tec_no_such_fn"});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  lower_func *g = tec_lower(s, "g", 2, (te_tensor *[]){X, Y});
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_null(tec_build(ctx, 1, &g, NULL));
  assert_err(ctx, "tec_build: extern stage 'Y': no function 'tec_no_such_fn' in this process; "
                  "export it (a shared library's, or the executable's when linked with "
                  "-rdynamic) or give its pointer (te_extern_decl.fn)");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(extern_refuses_no_function_and_bad_regions) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, R + 1, COLS));
  te_extern_decl d = {.name = "E", .type = TEC_F32, .ndim = 2, .shape = TE_SHAPE(ctx, R, COLS),
                      .ninputs = 1, .inputs = &A, .region = rows_region,
                      .user = (void *)&pair_rows};
  ck_assert_ptr_null(te_extern(ctx, &d));
  assert_err(ctx, "te_extern 'E': no function: give symbol (the C function's name, which AOT "
                  "objects reference and the JIT resolves) or fn (a pointer, JIT only)");
  tec_ctx_clear_error(ctx);
  d.symbol = "not a name";
  ck_assert_ptr_null(te_extern(ctx, &d));
  assert_err(ctx, "te_extern 'E': symbol \"not a name\" is not a C identifier");
  tec_ctx_clear_error(ctx);
  d.symbol = NULL;
  d.fn = pair_sum;
  d.user = (void *)&shifted_rows;
  ck_assert_ptr_null(te_extern(ctx, &d));
  assert_err(ctx, "te_extern 'E': for the whole output the region function asks input 0 ('A') "
                  "for [5, 68) in dimension 0, outside its shape [0, 64); a region must lie in "
                  "the input (clamp it with ir_max/ir_min)");
  tec_ctx_clear_error(ctx);
  d.region = failing_region;
  ck_assert_ptr_null(te_extern(ctx, &d));
  assert_err(ctx, "te_extern 'E': the region function failed for input 0 ('A') or left a "
                  "dimension without a scalar integer min and extent; it must fill "
                  "in_min[0..2) and in_extent[0..2) and return 0");
  tec_ctx_clear_error(ctx);
  d.region = rows_region;
  d.user = (void *)&pair_rows;
  d.inputs = (te_tensor *[]){NULL};
  ck_assert_ptr_null(te_extern(ctx, &d));
  assert_err(ctx, "te_extern 'E': input 0 is NULL");
  tec_ctx_free(ctx);
}
END_TEST

/* A region that is inside the input for the whole output but not for a tile (rows
 * [2m, 2m + e): fine for m = 0, past the end for later tiles): checked at run time. */
START_TEST(extern_tile_region_outside_input_checked) {
  prog p = make(pair_sum_quiet, &doubled_rows, 0);
  sch_stage *c = sch_stage_of(p.s, p.C);
  sch_iter *io, *ii;
  OK(p.ctx, sch_split(c, sch_axis(c, 0), 8, &io, &ii));
  OK(p.ctx, sch_compute_at(sch_stage_of(p.s, p.E), c, io));
  expect_call_fails(&p, "extern stage 'E': its region function asks input 0 ('A') for 8 "
                        "elements from 64 in dimension 0, outside its shape [0, 64)");
}
END_TEST

START_TEST(extern_refuses_loop_primitives) {
  prog p = make(pair_sum, &pair_rows, 1);
  sch_stage *e = sch_stage_of(p.s, p.E);
  sch_iter *o, *i;
  ck_assert_int_eq(sch_split(e, sch_axis(e, 0), 4, &o, &i), -1);
  assert_err(p.ctx, "split: stage 'E' is an extern stage (the C function 'pair_sum' computes it "
                    "in one call per region): it has no loops, and axis 'i' is a dimension of "
                    "the region passed to the function, so it cannot be split, fused, reordered, "
                    "vectorized, parallelized, unrolled or annotated, nor can a stage be "
                    "computed at it; schedule the loops of its consumer and compute 'E' at one "
                    "of them (compute_at) or at root");
  tec_ctx_clear_error(p.ctx);
  ck_assert_int_eq(sch_vectorize(e, sch_axis(e, 1)), -1);
  tu_assert_contains(tec_ctx_error(p.ctx), "vectorize: stage 'E' is an extern stage");
  tec_ctx_clear_error(p.ctx);
  ck_assert_int_eq(sch_parallel(e, sch_axis(e, 0)), -1);
  tu_assert_contains(tec_ctx_error(p.ctx), "parallel: stage 'E' is an extern stage");
  tec_ctx_clear_error(p.ctx);
  ck_assert_int_eq(sch_compute_inline(e), -1);
  assert_err(p.ctx, "compute_inline: stage 'E' is an extern stage: a C function computes it in "
                    "one call per region, so it has no expression to substitute into its "
                    "readers; compute it at root or at a loop of its consumer");
  tec_ctx_clear_error(p.ctx);
  ck_assert_ptr_null(sch_cache_write(p.s, p.E, "local"));
  tu_assert_contains(tec_ctx_error(p.ctx), "cache_write: 'E' is an extern stage");
  tec_ctx_free(p.ctx);
}
END_TEST

static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  return ir_add(TE_AT((te_tensor *)user, i[0], i[1]), ir_float(ctx, 1));
}

START_TEST(extern_refuses_inlined_input) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, R + 1, COLS));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, R + 1, COLS),
                                                    .body = plus1, .user = A});
  te_tensor *E = te_extern(ctx, &(te_extern_decl){.name = "E", .type = TEC_F32, .ndim = 2,
                                                  .shape = TE_SHAPE(ctx, R, COLS), .ninputs = 1,
                                                  .inputs = &B, .fn = pair_sum_quiet,
                                                  .region = rows_region, .user = (void *)&pair_rows});
  sch_schedule *s = sch_create(ctx, 1, &E);
  ck_assert_int_eq(sch_compute_inline(sch_stage_of(s, B)), -1);
  assert_err(ctx, "compute_inline: 'B' is read by the extern stage 'E', whose C function reads "
                  "the buffer of 'B' itself; it must stay a tensor of its own (compute it at "
                  "root or at a loop)");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(extern_refuses_parallel_without_thread_safety_and_vector_loops) {
  prog p = make(pair_sum_quiet, &pair_rows, 0);
  parallel_tiles(&p);
  ck_assert_ptr_null(tec_lower(p.s, "f", 2, (te_tensor *[]){p.A, p.C}));
  assert_err(p.ctx, "tec_lower 'f': extern stage 'E' is computed inside parallel loop 'i.outer' "
                    "of 'C', so its function pair_sum would run on several threads at once, "
                    "but it is not declared thread-safe; set te_extern_decl.thread_safe = 1 if "
                    "it may (each call writes its own output region), or compute 'E' outside "
                    "the parallel loop (compute_root, or compute_at a loop around it)");
  tec_ctx_free(p.ctx);

  p = make(pair_sum_quiet, &pair_rows, 1);
  sch_stage *c = sch_stage_of(p.s, p.C);
  sch_iter *jo, *ji;
  OK(p.ctx, sch_split(c, sch_axis(c, 1), 8, &jo, &ji));
  OK(p.ctx, sch_vectorize(c, ji));
  OK(p.ctx, sch_compute_at(sch_stage_of(p.s, p.E), c, ji));
  ck_assert_ptr_null(tec_lower(p.s, "f", 2, (te_tensor *[]){p.A, p.C}));
  tu_assert_contains(tec_ctx_error(p.ctx), "extern stage 'E' is computed inside loop "
                                           "'j.inner' of 'C', which is vectorized");
  tec_ctx_free(p.ctx);
}
END_TEST

START_TEST(extern_failure_returns_error) {
  prog p = make(fails, &pair_rows, 0);
  expect_call_fails(&p, "extern stage 'E': its function returned 7");
}
END_TEST

int main(void) {
  Suite *s = suite_create("extern");
  TCase *tc = tcase_create("extern");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, extern_root_whole_region);
  tcase_add_test(tc, extern_at_tile_region_is_the_inferred_one);
  tcase_add_test(tc, extern_thread_safe_in_parallel_loop);
  tcase_add_test(tc, extern_as_output_whole_input);
  tcase_add_test(tc, extern_of_constants_runs_in_prepare);
  tcase_add_test(tc, extern_aot_header_and_pointer_only);
  tcase_add_test(tc, extern_unresolved_symbol);
  tcase_add_test(tc, extern_refuses_no_function_and_bad_regions);
  tcase_add_test(tc, extern_tile_region_outside_input_checked);
  tcase_add_test(tc, extern_refuses_loop_primitives);
  tcase_add_test(tc, extern_refuses_inlined_input);
  tcase_add_test(tc, extern_refuses_parallel_without_thread_safety_and_vector_loops);
  tcase_add_test(tc, extern_failure_returns_error);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
