/* test_fidelity.c — schedules a TVM or Halide user writes (issue 13): valid ones compile and
 * compute the right numbers, what tec cannot honour is refused with a message or reported in
 * the lowered function's notes, deep inline chains lower in linear time, and the smaller
 * expressiveness gaps (duplicate names, unused placeholders, shape expressions). Numbers are
 * checked against naive C loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"

/* ---------- item 2: cache_write of a reduction whose extent depends on an output index ---------- */
/* C[i, j] = sum(A[i, r] for r in [0, j + 1)): a prefix sum along each row (TVM's triangular
 * reduction). */
typedef struct tri { te_tensor *A; } tri;
static const ir_expr *tri_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  tri *t = u;
  const ir_expr *r = te_reduce_axis(ctx, "r", ir_int(ctx, 0), ir_add(i[1], ir_int(ctx, 1)));
  return te_sum(TE_AT(t->A, i[0], r), 1, &r, NULL);
}

static void run_tri(int how) {
  enum { M = 5, N = 13 };
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
  tri t = {A};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N), .body = tri_body,
                                                    .user = &t});
  ck_assert_msg(C != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *o, *in;
  if (how == 3) { /* no cache: the data axis the extent uses is split */
    OK(ctx, sch_split(sc, sch_axis(sc, 1), 4, &o, &in));
  } else {
    te_tensor *CL = sch_cache_write(s, C, "local");
    ck_assert_msg(CL != NULL, "%s", tec_ctx_error(ctx));
    sch_stage *sl = sch_stage_of(s, CL);
    if (how >= 1) OK(ctx, sch_compute_at(sl, sc, sch_axis(sc, 0)));
    if (how == 2) {
      OK(ctx, sch_split(sc, sch_axis(sc, 1), 4, &o, &in));
      OK(ctx, sch_compute_at(sl, sc, o));
    }
    if (how == 4) { /* the reduction split too: r.outer's extent is ceil((j + 1) / 3) */
      OK(ctx, sch_split(sl, sch_reduce_axis(sl, 0), 3, &o, &in));
      OK(ctx, sch_split(sc, sch_axis(sc, 1), 5, &o, &in));
      OK(ctx, sch_compute_at(sl, sc, o));
    }
  }
  tec_packed_fn fn = tu_build(ctx, s, "tri", 2, (te_tensor *[]){A, C});
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 3), c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  ck_assert_msg(fn((DLTensor *[]){&a, &c}, 2) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int r = 0; r <= j; r++) ref += tu_f32(&a)[i * N + r];
      ck_assert_msg(fabs(tu_f32(&c)[i * N + j] - ref) < 1e-4, "how %d [%d,%d]: %g vs %g", how, i,
                    j, tu_f32(&c)[i * N + j], ref);
    }
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(cache_write_triangular) {
  for (int how = 0; how < 5; how++) run_tri(how);
}
END_TEST

/* the loop a reduce axis's range depends on must stay outside it */
START_TEST(triangular_reorder_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 13));
  tri t = {A};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, 5, 13), .body = tri_body,
                                                    .user = &t});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  OK(ctx, sch_reorder(sc, 2, (sch_iter *[]){sch_reduce_axis(sc, 0), sch_axis(sc, 1)}));
  ck_assert_ptr_null(tec_lower(s, "tri", 2, (te_tensor *[]){A, C}));
  assert_err(ctx, "tec_lower 'tri': loop 'r' of stage 'C' runs from 0 for (j + 1) iterations, "
                  "which depends on loop 'j' inside it; reorder so that 'j' is outside 'r'");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- item 2: compute_at of a stage that reads through a gathered index ---------- */
/* B[i, j] = C[X[i, j], Y[i, j]] * 2;  D[i, j] = B[i, j] + 1, B computed at a loop of D. */
typedef struct gat { te_tensor *C, *X, *Y, *B, *CC; } gat;
static const ir_expr *gat_b(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  te_tensor *src = g->CC ? g->CC : g->C;
  return ir_mul(TE_AT(src, TE_AT(g->X, i[0], i[1]), TE_AT(g->Y, i[0], i[1])), ir_float(ctx, 2));
}
static const ir_expr *gat_cc(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  return ir_sub(TE_AT(g->C, i[0], i[1]), ir_float(ctx, 3));
}
static const ir_expr *gat_d(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  return ir_add(TE_AT(g->B, i[0], i[1]), ir_float(ctx, 1));
}

static void run_gather(int how) {
  enum { M = 6, N = 7, P = 5, Q = 9 };
  tec_ctx *ctx = tec_ctx_new();
  gat g = {0};
  g.C = te_placeholder(ctx, "C", TEC_F32, 2, TE_SHAPE(ctx, P, Q));
  /* how >= 3: the gathered tensor is itself computed (CC = C - 3) and attached */
  if (how >= 3)
    g.CC = te_compute(ctx, &(te_compute_decl){.name = "CC", .ndim = 2, .shape = TE_SHAPE(ctx, P, Q),
                                              .body = gat_cc, .user = &g});
  g.X = te_placeholder(ctx, "X", TEC_I32, 2, TE_SHAPE(ctx, M, N));
  g.Y = te_placeholder(ctx, "Y", TEC_I32, 2, TE_SHAPE(ctx, M, N));
  g.B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, M, N),
                                           .body = gat_b, .user = &g});
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N), .body = gat_d,
                                                    .user = &g});
  ck_assert_msg(D != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sd = sch_stage_of(s, D), *sb = sch_stage_of(s, g.B);
  if (how == 0) OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
  if (how == 1) OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 1)));
  if (how == 2) {
    /* the gathered index tensors themselves cached at the loop */
    te_tensor *XL = sch_cache_read(s, g.X, "local", 1, (te_tensor *[]){g.B});
    ck_assert_msg(XL != NULL, "%s", tec_ctx_error(ctx));
    OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
    OK(ctx, sch_compute_at(sch_stage_of(s, XL), sd, sch_axis(sd, 0)));
  }
  if (how == 3) OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sb, sch_axis(sb, 1)));
  if (how == 4) {
    OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
    OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sb, sch_axis(sb, 0)));
  }
  if (how == 5) {
    OK(ctx, sch_compute_inline(sb));
    OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sd, sch_axis(sd, 0)));
  }
  tec_packed_fn fn = tu_build(ctx, s, "gat", 4, (te_tensor *[]){g.C, g.X, g.Y, D});
  DLTensor c = tu_rand_f32(2, (int64_t[]){P, Q}, 4), d = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  DLTensor x = tu_zeros(TEC_I32, 2, (int64_t[]){M, N}), y = tu_zeros(TEC_I32, 2, (int64_t[]){M, N});
  int32_t *xs = x.data, *ys = y.data;
  for (int k = 0; k < M * N; k++) xs[k] = (k * 7 + 3) % P, ys[k] = (k * 5 + 1) % Q;
  ck_assert_msg(fn((DLTensor *[]){&c, &x, &y, &d}, 4) == 0, "%s", tec_rt_last_error());
  for (int k = 0; k < M * N; k++) {
    float ref = (tu_f32(&c)[xs[k] * Q + ys[k]] - (how >= 3 ? 3 : 0)) * 2 + 1;
    ck_assert_msg(fabsf(tu_f32(&d)[k] - ref) < 1e-6f, "how %d k %d: %g vs %g", how, k,
                  tu_f32(&d)[k], ref);
  }
  tec_dl_free(&c), tec_dl_free(&d), tec_dl_free(&x), tec_dl_free(&y);
  tec_ctx_free(ctx);
}

START_TEST(compute_at_gather) {
  for (int how = 0; how < 6; how++) run_gather(how);
}
END_TEST


/* ---------- item 5: nothing silently ignored ---------- */
static const ir_expr *ew_double(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2));
}
static const ir_expr *ew_plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1));
}

/* The elementwise chain most inlining and attachment tests use: A of the given shape,
 * B = A*2, C = B + 1 (in *B, *C); returns A. */
static te_tensor *double_plus1(tec_ctx *ctx, const ir_expr *const *shape, te_tensor **B,
                               te_tensor **C) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, shape);
  *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                          .body = ew_double, .user = A});
  *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                          .body = ew_plus1, .user = *B});
  ck_assert_msg(A && *B && *C, "%s", tec_ctx_error(ctx));
  return A;
}
typedef struct mmk { te_tensor *A; const ir_expr *k; } mmk;
static const ir_expr *rowsum(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mmk *m = u;
  (void)ctx;
  return te_sum(TE_AT(m->A, i[0], m->k), 1, &m->k, NULL);
}

START_TEST(vectorize_reduce_axis_refused) {
  tec_ctx *ctx = tec_ctx_new();
  mmk m = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 16)), te_reduce_axis_n(ctx, "k", 16)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 8), .body = rowsum,
                                                    .user = &m});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki));
  ck_assert_int_eq(sch_vectorize(sc, ki), -1);
  assert_err(ctx, "vectorize: 'k.inner' is a reduce axis of stage 'C'; every lane would add into "
                  "the same element, so only data-parallel loops are vectorized (vectorize a data "
                  "axis, or rfactor 'k.inner' to make it one)");
  ck_assert_int_eq(sch_trace_len(sch_get_trace(s)), 1); /* the refusal left no record */
  /* unroll of the reduce axis is fine */
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_unroll(sc, ki));
  ck_assert_ptr_nonnull(tec_lower(s, "rs", 2, (te_tensor *[]){m.A, C}));
  tec_ctx_free(ctx);
}
END_TEST

/* B = A*2 inlined into C = B + 1: annotations on B's loops would be dropped */
START_TEST(annotations_on_inlined_refused) {
  for (int how = 0; how < 7; how++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *B, *C, *A = double_plus1(ctx, TE_SHAPE(ctx, 8, 16), &B, &C);
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sb = sch_stage_of(s, B);
    sch_iter *j = sch_axis(sb, 1);
    const char *want = NULL;
    switch (how) {
    case 0: /* inline, then annotate */
      OK(ctx, sch_compute_inline(sb));
      ck_assert_int_eq(sch_vectorize(sb, j), -1);
      want = "vectorize: stage 'B' is inlined (compute_inline), so it has no loops or buffer to "
             "annotate; annotate the loops of its readers, or compute_root 'B' first";
      break;
    case 1:
      OK(ctx, sch_compute_inline(sb));
      ck_assert_int_eq(sch_pragma(sb, j, "auto_unroll_max_step", ir_int(ctx, 4)), -1);
      want = "pragma: stage 'B' is inlined (compute_inline), so it has no loops or buffer to "
             "annotate; annotate the loops of its readers, or compute_root 'B' first";
      break;
    case 2:
      OK(ctx, sch_compute_inline(sb));
      ck_assert_int_eq(sch_storage_align(sb, sch_axis(sb, 0), 8, 1), -1);
      want = "storage_align: stage 'B' is inlined (compute_inline), so it has no loops or buffer "
             "to annotate; annotate the loops of its readers, or compute_root 'B' first";
      break;
    case 3: /* annotate, then inline */
      OK(ctx, sch_parallel(sb, sch_axis(sb, 0)));
      ck_assert_int_eq(sch_compute_inline(sb), -1);
      want = "compute_inline: loop 'i' of stage 'B' is parallel; an inlined stage has no loops, "
             "so that would be lost (annotate the loops of its readers instead)";
      break;
    case 4:
      OK(ctx, sch_pragma(sb, j, "user_tag", NULL));
      ck_assert_int_eq(sch_compute_inline(sb), -1);
      want = "compute_inline: loop 'j' of stage 'B' is marked with a pragma; an inlined stage has "
             "no loops, so that would be lost (annotate the loops of its readers instead)";
      break;
    case 5:
      OK(ctx, sch_prefetch(sb, A, sch_axis(sb, 0), 1));
      ck_assert_int_eq(sch_compute_inline(sb), -1);
      want = "compute_inline: loop 'i' of stage 'B' is marked with a prefetch; an inlined stage "
             "has no loops, so that would be lost (annotate the loops of its readers instead)";
      break;
    case 6: /* inline, compute_root again: annotations allowed and honoured */
      OK(ctx, sch_compute_inline(sb));
      OK(ctx, sch_compute_root(sb));
      OK(ctx, sch_unroll(sb, sch_axis(sb, 0)));
      break;
    }
    if (want) assert_err(ctx, want);
    else {
      lower_func *f = tec_lower(s, "inl", 2, (te_tensor *[]){A, C});
      ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
      tu_assert_contains(tec_lower_str(f), "B[((");
      assert_not_contains(tec_lower_str(f), "for (B.i, 0, 8) {\n    for (B.j, 0, 16) {\n      B");
    }
    tec_ctx_free(ctx);
  }
}
END_TEST

/* B split and reordered, then inlined into C: B's loops are never made, so the split and the
 * reorder do nothing. Not refused (compute_root would honour them again) but a note; strict
 * mode refuses it; the numbers are the unscheduled program's. A split undone by compute_root
 * after the inline leaves no note. */
START_TEST(loops_of_inlined_noted) {
  for (int how = 0; how < 4; how++) {
    tec_ctx *ctx = tec_ctx_new();
    tec_ctx_set_strict(ctx, how == 2);
    te_tensor *B, *C, *A = double_plus1(ctx, TE_SHAPE(ctx, 8, 16), &B, &C);
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sb = sch_stage_of(s, B);
    sch_iter *jo, *ji;
    const char *note;
    if (how == 1) { /* a reorder alone */
      OK(ctx, sch_reorder(sb, 2, (sch_iter *[]){sch_axis(sb, 1), sch_axis(sb, 0)}));
      note = "compute_inline: stage 'B' is inlined, so its loops as scheduled (j, i) are never "
             "made: its reorder has no effect (schedule the loops of its readers, or "
             "compute_root 'B')";
    } else {
      OK(ctx, sch_split(sb, sch_axis(sb, 1), 4, &jo, &ji));
      OK(ctx, sch_reorder(sb, 2, (sch_iter *[]){ji, jo}));
      note = "compute_inline: stage 'B' is inlined, so its loops as scheduled (i, j.inner, "
             "j.outer) are never made: its splits and fuses have no effect (schedule the loops "
             "of its readers, or compute_root 'B')";
    }
    OK(ctx, sch_compute_inline(sb));
    if (how == 3) OK(ctx, sch_compute_root(sb));
    lower_func *f = tec_lower(s, "inl", 2, (te_tensor *[]){A, C});
    if (how == 2) {
      ck_assert_ptr_null(f);
      char want[512];
      snprintf(want, sizeof want, "tec_lower 'inl' (strict mode): %s", note);
      assert_err(ctx, want);
      tec_ctx_free(ctx);
      continue;
    }
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    if (how == 3) ck_assert_int_eq(f->nnotes, 0);
    else {
      ck_assert_int_eq(f->nnotes, 1);
      ck_assert_str_eq(f->notes[0], note);
    }
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    DLTensor a = tu_rand_f32(2, (int64_t[]){8, 16}, 5), c = tu_zeros(TEC_F32, 2, (int64_t[]){8, 16});
    ck_assert_int_eq(tec_call(tec_module_get(m, "inl"), 2, (DLTensor *[]){&a, &c}), 0);
    for (int e = 0; e < 8 * 16; e++) ck_assert(fabsf(tu_f32(&c)[e] - (tu_f32(&a)[e] * 2 + 1)) < 1e-5f);
    tec_dl_free(&a), tec_dl_free(&c);
    tec_ctx_free(ctx);
  }
}
END_TEST

START_TEST(unknown_pragma_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 16));
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                    .body = ew_double, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  ck_assert_int_eq(sch_pragma(sc, sch_axis(sc, 0), "loop_fusion", NULL), -1);
  assert_err(ctx, "pragma: key 'loop_fusion' on loop 'i' of stage 'C' has no effect in tec; known "
                  "keys: auto_unroll_max_step, debug_skip_region, parallel_dynamic, "
                  "parallel_launch_point, sched_pressure, stream_store, tensorize, transpose_block, "
                  "unroll, "
                  "or user_<name> (kept in the lowered "
                  "IR as an annotation, with no effect)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(sc, sch_axis(sc, 0), "user_", NULL), -1); /* a name is needed */
  tu_assert_contains(tec_ctx_error(ctx), "pragma: key 'user_' on loop 'i'");
  tec_ctx_clear_error(ctx);
  /* a user_ key is kept as an annotation, visible in the lowered IR; "unroll" unrolls */
  OK(ctx, sch_pragma(sc, sch_axis(sc, 0), "user_origin", ir_int(ctx, 7)));
  OK(ctx, sch_pragma(sc, sch_axis(sc, 1), "unroll", NULL));
  ck_assert_int_eq(sch_trace_len(sch_get_trace(s)), 2);
  lower_func *f = tec_lower(s, "pr", 2, (te_tensor *[]){A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *txt = tec_lower_str(f);
  tu_assert_contains(txt, "pragma_user_origin");
  tu_assert_contains(txt, "C[((i*16) + 15)] = ");
  assert_not_contains(txt, "for (j");
  tec_ctx_free(ctx);
}
END_TEST

/* vectorize j of the triangular sum: r's extent depends on j, so the vectorizer keeps j
 * serial: a note, the right numbers; strict mode (ctx or TEC_STRICT) refuses it */
static lower_func *tri_vec(tec_ctx *ctx, te_tensor **out_a, te_tensor **out_c) {
  tri *t = tec_ctx_alloc(ctx, sizeof *t);
  t->A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 8));
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, 5, 8), .body = tri_body,
                                                    .user = t});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  OK(ctx, sch_vectorize(sc, sch_axis(sc, 1)));
  *out_a = t->A, *out_c = C;
  return tec_lower(s, "trivec", 2, (te_tensor *[]){t->A, C});
}

#define TRI_NOTE "vectorize: loop 'j' stays a serial loop: the bounds of an inner loop depend on the loop variable"

START_TEST(vectorize_fallback_noted) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A, *C;
  lower_func *f = tri_vec(ctx, &A, &C);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(f->nnotes, 1);
  ck_assert_str_eq(f->notes[0], TRI_NOTE);
  const char *txt = tec_lower_str(f);
  ck_assert_msg(strncmp(txt, "// note: " TRI_NOTE "\n", strlen("// note: " TRI_NOTE "\n")) == 0,
                "%s", txt);
  assert_not_contains(txt, "vectorized");
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  DLTensor a = tu_rand_f32(2, (int64_t[]){5, 8}, 9), c = tu_zeros(TEC_F32, 2, (int64_t[]){5, 8});
  ck_assert_int_eq(tec_call(tec_module_get(m, "trivec"), 2, (DLTensor *[]){&a, &c}), 0);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 8; j++) {
      double ref = 0;
      for (int r = 0; r <= j; r++) ref += tu_f32(&a)[i * 8 + r];
      ck_assert(fabs(tu_f32(&c)[i * 8 + j] - ref) < 1e-4);
    }
  tec_dl_free(&a), tec_dl_free(&c);
  /* a vectorize that works leaves no note */
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 2, TE_SHAPE(ctx, 8, 16));
  te_tensor *Y = te_compute(ctx, &(te_compute_decl){.name = "Y", .ndim = 2, .shape = X->shape,
                                                    .body = ew_double, .user = X});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  OK(ctx, sch_vectorize(sch_stage_of(s, Y), sch_axis(sch_stage_of(s, Y), 1)));
  lower_func *g = tec_lower(s, "ok", 2, (te_tensor *[]){X, Y});
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(g->nnotes, 0);
  assert_not_contains(tec_lower_str(g), "// note");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(strict_mode_refuses_notes) {
  for (int how = 0; how < 2; how++) {
    tec_ctx *ctx = tec_ctx_new();
    if (how == 0) tec_ctx_set_strict(ctx, 1);
    else setenv("TEC_STRICT", "1", 1);
    ck_assert_int_eq(tec_ctx_strict(ctx), 1);
    te_tensor *A, *C;
    ck_assert_ptr_null(tri_vec(ctx, &A, &C));
    assert_err(ctx, "tec_lower 'trivec' (strict mode): " TRI_NOTE);
    unsetenv("TEC_STRICT");
    tec_ctx_set_strict(ctx, 0);
    ck_assert_int_eq(tec_ctx_strict(ctx), 0);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* W constant, WP = W * 2 computed at C's loop: the precompute split moves it into prepare */
static const ir_expr *add_wp(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor **t = u;
  (void)ctx;
  return ir_add(TE_AT(t[0], i[0], i[1]), TE_AT(t[1], i[0], i[1]));
}

START_TEST(precompute_move_noted) {
  for (int strict = 0; strict < 2; strict++) {
    tec_ctx *ctx = tec_ctx_new();
    tec_ctx_set_strict(ctx, strict);
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
    te_tensor *W = te_const_placeholder(ctx, "W", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
    te_tensor *WP = te_compute(ctx, &(te_compute_decl){.name = "WP", .ndim = 2, .shape = W->shape,
                                                       .body = ew_double, .user = W});
    te_tensor *in[2] = {A, WP};
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                      .body = add_wp, .user = in});
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sc = sch_stage_of(s, C);
    OK(ctx, sch_compute_at(sch_stage_of(s, WP), sc, sch_axis(sc, 0)));
    lower_func *f = tec_lower(s, "pc", 3, (te_tensor *[]){A, W, C});
    const char *note = "precompute: 'WP' is computed at loop 'i' of 'C', but it depends on "
                       "constants alone: it is computed whole, once, in pc_prepare "
                       "(sch_set_precompute(s, 0) keeps it at the loop)";
    if (strict) {
      ck_assert_ptr_null(f);
      assert_err(ctx, tec_ctx_printf(ctx, "tec_lower 'pc' (strict mode): %s", note));
    } else {
      ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
      ck_assert_int_eq(f->nnotes, 1);
      ck_assert_str_eq(f->notes[0], note);
      tu_assert_contains(tec_lower_str(f), tec_ctx_printf(ctx, "// note: %s\n", note));
      /* with the split off, the attachment is honoured and nothing is noted */
      OK(ctx, sch_set_precompute(s, 0));
      lower_func *g = tec_lower(s, "pc", 3, (te_tensor *[]){A, W, C});
      ck_assert_ptr_nonnull(g);
      ck_assert_int_eq(g->nnotes, 0);
      tu_assert_contains(tec_lower_str(g), "for (i, 0, 4) {\n        produce WP {");
    }
    tec_ctx_free(ctx);
  }
}
END_TEST


/* ---------- item 1: deep inline chains lower in linear time ---------- */
/* B0 = A * 1.5;  Bk[i, j] = (B(k-1)[i, j] * B(k-1)[i, j] + B(k-1)[i, j]) * 0.25, every Bk
 * inlined: each stage reads its producer three times at the same element (Halide's deep
 * inline case), so substituting copies makes 3^N nodes. */
static const ir_expr *deep_first(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.5));
}
static const ir_expr *deep_next(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *p = u;
  const ir_expr *x = TE_AT(p, i[0], i[1]), *y = TE_AT(p, i[0], i[1]), *z = TE_AT(p, i[0], i[1]);
  return ir_mul(ir_add(ir_mul(x, y), z), ir_float(ctx, 0.25));
}

/* Lowers (and, with run, builds and checks) a chain of n inlined layers; returns the length of
 * the lowered text. */
static size_t deep_chain(int n, int run, double *seconds) {
  enum { M = 3, N = 16 };
  struct timespec t0, t1;
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B0", .ndim = 2, .shape = A->shape,
                                                    .body = deep_first, .user = A});
  te_tensor **all = tec_ctx_alloc(ctx, sizeof *all * (size_t)(n + 1));
  all[0] = B;
  for (int k = 1; k <= n; k++) {
    B = te_compute(ctx, &(te_compute_decl){.name = tec_ctx_printf(ctx, "B%d", k), .ndim = 2,
                                           .shape = A->shape, .body = deep_next, .user = B});
    ck_assert_ptr_nonnull(B);
    all[k] = B;
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sch_schedule *s = sch_create(ctx, 1, &B);
  for (int k = 0; k < n; k++) OK(ctx, sch_compute_inline(sch_stage_of(s, all[k])));
  OK(ctx, sch_vectorize(sch_stage_of(s, B), sch_axis(sch_stage_of(s, B), 1)));
  lower_func *f = tec_lower(s, "deep", 2, (te_tensor *[]){A, B});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  size_t len = strlen(tec_lower_str(f));
  if (run) {
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 11), b = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
    ck_assert_int_eq(tec_call(tec_module_get(m, "deep"), 2, (DLTensor *[]){&a, &b}), 0);
    for (int e = 0; e < M * N; e++) {
      double x = tu_f32(&a)[e] * 1.5;
      for (int k = 1; k <= n; k++) x = (x * x + x) * 0.25;
      ck_assert_msg(fabs(tu_f32(&b)[e] - x) < 1e-5, "n %d element %d: %g vs %g", n, e,
                    tu_f32(&b)[e], x);
    }
    tec_dl_free(&a), tec_dl_free(&b);
  } else {
    clock_gettime(CLOCK_MONOTONIC, &t1);
  }
  if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  tec_ctx_free(ctx);
  return len;
}

START_TEST(deep_inline_linear) {
  double secs;
  size_t l20 = deep_chain(20, 0, NULL), l40 = deep_chain(40, 0, NULL);
  size_t l80 = deep_chain(80, 0, NULL);
  /* the lowered program grows by a constant per layer */
  ck_assert_msg(l40 - l20 > 0 && l80 - l40 < 2 * (l40 - l20) + 64 && l80 - l40 + 64 > 2 * (l40 - l20),
                "sizes %zu %zu %zu", l20, l40, l80);
  ck_assert_msg(l80 < 100 * 80 + 2000, "80 layers: %zu characters", l80);
  /* 40 layers lowered, JIT-compiled and checked against the plain C layers; 100 layers lower
   * to the size the per-layer constant gives (counts, not times: the time is bench/'s) */
  deep_chain(40, 1, &secs);
  size_t l100 = deep_chain(100, 0, &secs);
  ck_assert_msg(l100 - l80 < (l80 - l40) / 2 + 64 && l100 - l80 + 64 > (l80 - l40) / 2,
                "100 layers: %zu characters after %zu at 80", l100, l80);
}
END_TEST


/* Issue #38 item 3: each layer reads its producer at two different elements, one at a
 * squared index kept in range by a mod: Bk[i] = (B(k-1)[i] + B(k-1)[i*i % 64]) * 0.5. Copies
 * make a tree of 2^N reads with indices that double each layer; one table of (producer,
 * element) for the whole expression and LETs for large indices keep it to the distinct
 * elements read (O(N^2) here). The lowered program (IR nodes) grows at most quadratically and
 * stays bounded at 100 layers, and the numbers match the plain C layers. */
enum { SQ_N = 64 };
static const ir_expr *sq_first(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 0.5));
}
static const ir_expr *sq_next(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *p = u;
  const ir_expr *sq = ir_mod(ir_mul(i[0], i[0]), ir_int(ctx, SQ_N));
  return ir_mul(ir_add(TE_AT(p, i[0]), TE_AT(p, sq)), ir_float(ctx, 0.5));
}

/* Occurrences of pat in text. */
static int occurrences(const char *text, const char *pat) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, pat)) != NULL; p += strlen(pat)) n++;
  return n;
}

/* The lowered program's size in IR nodes (tec_lower_program_size: every use of a shared node
 * counted, what codegen walks); with opt, built (JIT at that level) and checked against plain
 * C, and *hints: the loops marked for LLVM's loop vectorizer to leave alone in its IR. */
static int64_t square_chain(int n, const char *opt, int *hints) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, SQ_N));
  te_tensor **all = tec_ctx_alloc(ctx, sizeof *all * (size_t)(n + 1));
  all[0] = te_compute(ctx, &(te_compute_decl){.name = "B0", .ndim = 1, .shape = A->shape,
                                              .body = sq_first, .user = A});
  for (int k = 1; k <= n; k++)
    all[k] = te_compute(ctx, &(te_compute_decl){.name = tec_ctx_printf(ctx, "B%d", k),
                                                .ndim = 1, .shape = A->shape, .body = sq_next,
                                                .user = all[k - 1]});
  sch_schedule *s = sch_create(ctx, 1, &all[n]);
  for (int k = 0; k < n; k++) OK(ctx, sch_compute_inline(sch_stage_of(s, all[k])));
  lower_func *f = tec_lower(s, "chain", 2, (te_tensor *[]){A, all[n]});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_program_size size = tec_lower_program_size(f);
  ck_assert_int_eq(size.stores, 1); /* one loop, one store: every layer inlined */
  if (opt) {
    tec_module *m = tec_build(ctx, 1, &f, opt);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    if (hints) {
      const char *ir = tec_module_llvm_ir(m);
      ck_assert_ptr_nonnull(ir);
      *hints = occurrences(ir, "!{!\"llvm.loop.vectorize.enable\", i1 false}");
      /* a marked loop is left scalar (the vectorizer marks the loops it makes) */
      if (*hints) ck_assert_int_eq(occurrences(ir, "llvm.loop.isvectorized"), 0);
    }
    DLTensor a = tu_rand_f32(1, (int64_t[]){SQ_N}, 5), b = tu_zeros(TEC_F32, 1, (int64_t[]){SQ_N});
    ck_assert_int_eq(TEC_RUN(m, "chain", &a, &b), 0);
    double cur[SQ_N], nx[SQ_N];
    for (int i = 0; i < SQ_N; i++) cur[i] = tu_f32(&a)[i] * 0.5;
    for (int k = 1; k <= n; k++) {
      for (int i = 0; i < SQ_N; i++) nx[i] = (cur[i] + cur[(i * i) % SQ_N]) * 0.5;
      memcpy(cur, nx, sizeof cur);
    }
    for (int i = 0; i < SQ_N; i++)
      ck_assert_msg(fabs(tu_f32(&b)[i] - cur[i]) < 1e-5, "n %d element %d: %g vs %g", n, i,
                    tu_f32(&b)[i], cur[i]);
    tec_dl_free(&a), tec_dl_free(&b);
  }
  tec_ctx_free(ctx);
  return size.nodes;
}

/* Issue #38's target: 100 layers lower and build in < 2 s and < 200 MB (bench/inline_chain:
 * 0.06-0.11 CPU s to lower, 0.64-0.95 to build at -O3, 83 MB, on a loaded machine; before the
 * hash tables and the loop vectorizer hint, 0.25-0.36 and 1.4-1.6). Not timed here: the
 * program's size is what is held. 100 layers measured 44387 IR nodes (2026-12-06); an
 * exponential tree passes the bound by 10^25. */
START_TEST(square_index_chain) {
  int64_t n25 = square_chain(25, NULL, NULL), n50 = square_chain(50, NULL, NULL),
          n100 = square_chain(100, "llvm -O0", NULL);
  /* quadratic at most in the layers (the distinct elements), never exponential: a doubling
   * costs at most 4.5x */
  ck_assert_msg(n50 <= 9 * n25 / 2 && n100 <= 9 * n50 / 2, "IR nodes %lld %lld %lld",
                (long long)n25, (long long)n50, (long long)n100);
  ck_assert_msg(n100 < 60000, "100 layers: %lld IR nodes", (long long)n100);
}
END_TEST

/* A loop whose body is one block of more than 2048 scalar instructions is marked for LLVM's
 * loop vectorizer to leave alone (codegen_stmt.c: its plans were 0.76 of 1.3 CPU s building
 * 100 layers at -O3, time quadratic in the uses of the constant 0.5): the 30-layer chain
 * (2952 instructions in its loop as emitted) carries the mark on its one loop and stays
 * scalar, the 8-layer one (20 layers: 1676) none; both built at -O3 and checked against C. */
START_TEST(square_chain_loop_vectorizer_hint) {
  int h8 = -1, h30 = -1;
  square_chain(8, "llvm -O3", &h8);
  square_chain(30, "llvm -O3", &h30);
  ck_assert_int_eq(h8, 0);
  ck_assert_int_eq(h30, 1);
}
END_TEST

/* ---------- item 6: names unique, unused inputs ---------- */
START_TEST(duplicate_names_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A1 = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  te_tensor *A2 = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  te_tensor *in[2] = {A1, A2};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A1->shape,
                                                    .body = add_wp, .user = in});
  ck_assert_ptr_null(sch_create(ctx, 1, &C));
  assert_err(ctx, "sch_create: two different tensors are called 'A' (a placeholder and a "
                  "placeholder); tensor names must be unique in a schedule (stages, traces, "
                  "buffers and the lowered IR name them): rename one");
  tec_ctx_clear_error(ctx);
  /* a compute op named like an input */
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "A", .ndim = 2, .shape = A1->shape,
                                                    .body = ew_double, .user = A1});
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2, .shape = A1->shape,
                                                    .body = ew_plus1, .user = B});
  ck_assert_ptr_null(sch_create(ctx, 1, &D));
  tu_assert_contains(tec_ctx_error(ctx), "two different tensors are called 'A' (a placeholder and "
                                         "a compute op)");
  tec_ctx_clear_error(ctx);
  /* equal names in separate schedules of one ctx are fine */
  te_tensor *E = te_compute(ctx, &(te_compute_decl){.name = "E", .ndim = 2, .shape = A1->shape,
                                                    .body = ew_double, .user = A1});
  te_tensor *F = te_compute(ctx, &(te_compute_decl){.name = "E", .ndim = 2, .shape = A2->shape,
                                                    .body = ew_double, .user = A2});
  ck_assert_ptr_nonnull(sch_create(ctx, 1, &E));
  ck_assert_ptr_nonnull(sch_create(ctx, 1, &F));
  /* an unused argument named like a used tensor */
  sch_schedule *s = sch_create(ctx, 1, &E);
  ck_assert_ptr_null(tec_lower(s, "f", 3, (te_tensor *[]){A1, A2, E}));
  assert_err(ctx, "tec_lower 'f': argument 1 is a tensor called 'A' that the schedule does not "
                  "use, but it uses another tensor of that name; names must be unique");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(unused_placeholder_accepted) {
  for (int constant = 0; constant < 2; constant++) {
    tec_ctx *ctx = tec_ctx_new();
    const ir_expr *n = te_size_var(ctx, "n");
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
    te_tensor *W = te_const_placeholder(ctx, "W", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
    te_tensor *U = constant ? te_const_placeholder(ctx, "U", TEC_F32, 1, &n)
                            : te_placeholder(ctx, "U", TEC_F32, 1, &n);
    te_tensor *WP = te_compute(ctx, &(te_compute_decl){.name = "WP", .ndim = 2, .shape = W->shape,
                                                       .body = ew_double, .user = W});
    te_tensor *in[2] = {A, WP};
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                      .body = add_wp, .user = in});
    sch_schedule *s = sch_create(ctx, 1, &C);
    te_tensor *args[4] = {A, U, W, C};
    lower_func *f = tec_lower(s, "un", 4, args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_ptr_nonnull(f->prepare); /* WP packed once */
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    int64_t nu = 5;
    DLTensor a = tu_rand_f32(2, (int64_t[]){4, 8}, 1), w = tu_rand_f32(2, (int64_t[]){4, 8}, 2);
    DLTensor u = tu_rand_f32(1, &nu, 3), c = tu_zeros(TEC_F32, 2, (int64_t[]){4, 8});
    ck_assert_msg(tec_module_run(m, "un", 4, (DLTensor *[]){&a, &u, &w, &c}) == 0, "%s",
                  tec_rt_last_error());
    for (int e = 0; e < 32; e++)
      ck_assert(fabsf(tu_f32(&c)[e] - (tu_f32(&a)[e] + 2 * tu_f32(&w)[e])) < 1e-6f);
    tec_dl_free(&a), tec_dl_free(&w), tec_dl_free(&u), tec_dl_free(&c);
    tec_ctx_free(ctx);
  }
}
END_TEST


/* ---------- item 4: the attachment follows split and fuse of its loop ---------- */
START_TEST(attachment_follows_split_fuse) {
  enum { M = 7, N = 10 };
  for (int how = 0; how < 3; how++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *B, *C, *A = double_plus1(ctx, TE_SHAPE(ctx, M, N), &B, &C);
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sc = sch_stage_of(s, C), *sb = sch_stage_of(s, B);
    sch_iter *o, *in, *f;
    OK(ctx, sch_compute_at(sb, sc, sch_axis(sc, 0)));
    const char *want = NULL;
    if (how == 0) { /* split the attach loop: B moves to i.inner */
      OK(ctx, sch_split(sc, sch_axis(sc, 0), 3, &o, &in));
      want = "for (i.inner, 0, 3) {\n          produce B {";
    }
    if (how == 1) { /* fuse it with j: B moves to the fused loop, one element per iteration */
      OK(ctx, sch_fuse(sc, sch_axis(sc, 0), sch_axis(sc, 1), &f));
      want = "for (i.j.fused, 0, 70) {\n        produce B {";
    }
    if (how == 2) { /* fuse, then split the fused loop */
      OK(ctx, sch_fuse(sc, sch_axis(sc, 0), sch_axis(sc, 1), &f));
      OK(ctx, sch_split(sc, f, 8, &o, &in));
      want = "for (i.j.fused.inner, 0, 8) {";
    }
    lower_func *lf = tec_lower(s, "mv", 2, (te_tensor *[]){A, C});
    ck_assert_msg(lf != NULL, "how %d: %s", how, tec_ctx_error(ctx));
    tu_assert_contains(tec_lower_str(lf), want);
    tec_module *m = tec_build(ctx, 1, &lf, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 4), c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
    ck_assert_int_eq(tec_call(tec_module_get(m, "mv"), 2, (DLTensor *[]){&a, &c}), 0);
    for (int e = 0; e < M * N; e++)
      ck_assert_msg(fabsf(tu_f32(&c)[e] - (2 * tu_f32(&a)[e] + 1)) < 1e-6f, "how %d e %d", how, e);
    tec_dl_free(&a), tec_dl_free(&c);
    tec_ctx_free(ctx);
  }
}
END_TEST


/* ---------- item 3: bounds through fuse then split ---------- */
/* B = A * 2 computed at the outer loop of C's fused-then-split (i, j): with symbolic extents
 * the region B must cover per 3 elements of C is one or two rows, not the whole tensor. */
static const char *fuse_split(int64_t M, int64_t N, int run) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n"), *m = te_size_var(ctx, "m");
  te_tensor *B, *C, *A = double_plus1(ctx, (const ir_expr *[]){n, m}, &B, &C);
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *f, *o, *in;
  OK(ctx, sch_fuse(sc, sch_axis(sc, 0), sch_axis(sc, 1), &f));
  OK(ctx, sch_split(sc, f, 3, &o, &in));
  OK(ctx, sch_compute_at(sch_stage_of(s, B), sc, o));
  lower_func *lf = tec_lower(s, "fs", 2, (te_tensor *[]){A, C});
  ck_assert_msg(lf != NULL, "%s", tec_ctx_error(ctx));
  static char text[8192];
  snprintf(text, sizeof text, "%s", tec_lower_str(lf));
  if (run) {
    tec_module *mod = tec_build(ctx, 1, &lf, NULL);
    ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
    DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 4), c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
    ck_assert_int_eq(tec_call(tec_module_get(mod, "fs"), 2, (DLTensor *[]){&a, &c}), 0);
    for (int64_t e = 0; e < M * N; e++)
      ck_assert_msg(fabsf(tu_f32(&c)[e] - (2 * tu_f32(&a)[e] + 1)) < 1e-6f, "%lldx%lld e %lld",
                    (long long)M, (long long)N, (long long)e);
    tec_dl_free(&a), tec_dl_free(&c);
  }
  tec_ctx_free(ctx);
  return text;
}

START_TEST(fuse_split_symbolic_bound) {
  const char *txt = fuse_split(0, 0, 0);
  /* before: B's region was the whole tensor, `for (B.i, 0, n)` inside every outer iteration */
  assert_not_contains(txt, "for (B.i, 0, n)");
  tu_assert_contains(txt, "produce B {");
  static const int64_t sizes[][2] = {{1, 1}, {4, 5}, {7, 3}, {5, 2}, {3, 1}, {2, 9}};
  for (int k = 0; k < 6; k++) fuse_split(sizes[k][0], sizes[k][1], 1);
}
END_TEST

/* The constant-extent case: before, B covered rows lo/N .. M-1, every column, per chunk of F
 * elements of C (`allocate B[float32 * M*N]`, `for (i, 0, (M - ((i.j.fused.outer*F) / N)))`).
 * Now: F divides N: one row, F columns; N divides F: F/N whole rows; otherwise the rows the
 * chunk touches (at most 2 here) and their columns. */
static void fuse_split_const(int64_t M, int64_t N, int64_t F, const char *alloc,
                             const char *rows) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){"B", 2, A->shape, ew_double, A, NULL, NULL});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, A->shape, ew_plus1, B, NULL, NULL});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *f, *o, *in;
  OK(ctx, sch_fuse(sc, sch_axis(sc, 0), sch_axis(sc, 1), &f));
  OK(ctx, sch_split(sc, f, F, &o, &in));
  OK(ctx, sch_compute_at(sch_stage_of(s, B), sc, o));
  lower_func *lf = tec_lower(s, "fs", 2, (te_tensor *[]){A, C});
  ck_assert_msg(lf != NULL, "%s", tec_ctx_error(ctx));
  const char *txt = tec_lower_str(lf);
  tu_assert_contains(txt, alloc);
  if (rows) tu_assert_contains(txt, rows);
  else assert_not_contains(txt, "for (B.i, "); /* one row: no row loop */
  char before[64];
  snprintf(before, sizeof before, "for (B.i, 0, (%lld - ", (long long)M);
  assert_not_contains(txt, before);
  tec_module *mod = tec_build(ctx, 1, &lf, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 5), c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  ck_assert_int_eq(tec_call(tec_module_get(mod, "fs"), 2, (DLTensor *[]){&a, &c}), 0);
  for (int64_t e = 0; e < M * N; e++)
    ck_assert_msg(tu_f32(&c)[e] == 2 * tu_f32(&a)[e] + 1, "%lldx%lld by %lld: e %lld",
                  (long long)M, (long long)N, (long long)F, (long long)e);
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(fuse_split_const_bound) {
  /* 3 divides 9: a chunk stays in its row (before: allocate B[float32 * 72]) */
  fuse_split_const(8, 9, 3, "allocate B[float32 * 3]", NULL);
  fuse_split_const(7, 8, 4, "allocate B[float32 * 4]", NULL);
  /* 3 divides 6: two whole rows per chunk of 6 */
  fuse_split_const(8, 3, 6, "allocate B[float32 * 6]", "for (B.i, 0, 2) {\n");
  /* neither: one or two rows (before: 80, 24, 32 and 35 elements) */
  fuse_split_const(8, 10, 3, "allocate B[float32 * 20]",
                   "for (B.i, 0, min((8 - ((i.j.fused.outer*3) / 10)), 2)) {");
  fuse_split_const(6, 4, 3, "allocate B[float32 * 8]", "min((6 - ");
  /* 6 from a residue 0 or 2 of 4 spans 2 rows, never 3 */
  fuse_split_const(8, 4, 6, "allocate B[float32 * 8]", "for (B.i, 0, 2) {\n");
  fuse_split_const(5, 7, 4, "allocate B[float32 * 14]", "min((5 - ");
}
END_TEST


/* ---------- item 4: a producer with two readers, attached in either order ---------- */
/* B = A * 2;  C = B + 1;  D = C + B */
static const ir_expr *c_plus_b(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor **t = u;
  (void)ctx;
  return ir_add(TE_AT(t[0], i[0], i[1]), TE_AT(t[1], i[0], i[1]));
}

START_TEST(two_readers_any_order) {
  enum { M = 5, N = 6 };
  for (int how = 0; how < 5; how++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *B, *C, *A = double_plus1(ctx, TE_SHAPE(ctx, M, N), &B, &C);
    te_tensor *cb[2] = {C, B};
    te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2, .shape = A->shape,
                                                      .body = c_plus_b, .user = cb});
    sch_schedule *s = sch_create(ctx, 1, &D);
    sch_stage *sb = sch_stage_of(s, B), *sc = sch_stage_of(s, C), *sd = sch_stage_of(s, D);
    const char *refusal = NULL;
    switch (how) {
    case 0: /* producer first, then its other reader: legal once both are placed */
      OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
      OK(ctx, sch_compute_at(sc, sd, sch_axis(sd, 0)));
      break;
    case 1: /* the other order */
      OK(ctx, sch_compute_at(sc, sd, sch_axis(sd, 0)));
      OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
      break;
    case 2: /* B at the outer loop, C at the inner one: B covers what C needs */
      OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
      OK(ctx, sch_compute_at(sc, sd, sch_axis(sd, 1)));
      break;
    case 3: /* C left at root reads B before D's loop runs: refused, naming C */
      OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
      refusal = "compute_at: 'B' is computed at loop 'i' of 'D', but the stage that reads it "
                "('C') is not computed inside that loop; attach 'B' to a loop of 'C' or of a "
                "stage around it";
      break;
    case 4: /* B inside the loop C is computed at: C would read it before it exists */
      OK(ctx, sch_compute_at(sc, sd, sch_axis(sd, 0)));
      OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 1)));
      refusal = "compute_at: 'B' is computed at loop 'j' of 'D', but its reader 'C' is computed "
                "at the outer loop 'i'; attach 'B' at 'i' or outside it";
      break;
    }
    lower_func *f = tec_lower(s, "two", 2, (te_tensor *[]){A, D});
    if (refusal) {
      ck_assert_ptr_null(f);
      assert_err(ctx, refusal);
    } else {
      ck_assert_msg(f != NULL, "how %d: %s", how, tec_ctx_error(ctx));
      assert_not_contains(tec_lower_str(f), "allocate B[float32 * 30]"); /* a row, not all */
      tec_module *m = tec_build(ctx, 1, &f, NULL);
      ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
      DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 6), d = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
      ck_assert_int_eq(tec_call(tec_module_get(m, "two"), 2, (DLTensor *[]){&a, &d}), 0);
      for (int e = 0; e < M * N; e++) {
        float b = 2 * tu_f32(&a)[e];
        ck_assert_msg(fabsf(tu_f32(&d)[e] - (b + 1 + b)) < 1e-5f, "how %d e %d", how, e);
      }
      tec_dl_free(&a), tec_dl_free(&d);
    }
    tec_ctx_free(ctx);
  }
}
END_TEST


/* The LET never hoists a read out of a select's arm (its condition keeps the load in bounds)
 * nor binds an index: C[i] = select(i > 0, B[i - 1] * B[i - 1], 0) with B = A * 2 inlined,
 * and D[i] = E[XI[i]] + E[XI[i]] with XI = X + 1 inlined. */
typedef struct pin { te_tensor *A, *B, *X, *XI, *E; } pin;
static const ir_expr *pin_b(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT(((pin *)u)->A, i[0]), ir_float(ctx, 2));
}
static const ir_expr *pin_c(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pin *p = u;
  const ir_expr *j = ir_sub(i[0], ir_int(ctx, 1));
  return ir_select(ir_gt(i[0], ir_int(ctx, 0)), ir_mul(TE_AT(p->B, j), TE_AT(p->B, j)),
                   ir_float(ctx, 0));
}
static const ir_expr *pin_xi(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT(((pin *)u)->X, i[0]), ir_int_t(ctx, TEC_I32, 1));
}
static const ir_expr *pin_d(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pin *p = u;
  (void)ctx;
  return ir_add(TE_AT(p->E, TE_AT(p->XI, i[0])), TE_AT(p->E, TE_AT(p->XI, i[0])));
}

START_TEST(inline_let_not_hoisted) {
  enum { N = 9 };
  tec_ctx *ctx = tec_ctx_new();
  pin p;
  p.A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, N));
  p.B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = TE_SHAPE(ctx, N),
                                           .body = pin_b, .user = &p});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, N), .body = pin_c,
                                                    .user = &p});
  sch_schedule *s = sch_create(ctx, 1, &C);
  OK(ctx, sch_compute_inline(sch_stage_of(s, p.B)));
  lower_func *f = tec_lower(s, "pinc", 2, (te_tensor *[]){p.A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  assert_not_contains(tec_lower_str(f), "let");
  p.X = te_placeholder(ctx, "X", TEC_I32, 1, TE_SHAPE(ctx, N));
  p.E = te_placeholder(ctx, "E", TEC_F32, 1, TE_SHAPE(ctx, N + 1));
  p.XI = te_compute(ctx, &(te_compute_decl){.name = "XI", .ndim = 1, .shape = TE_SHAPE(ctx, N),
                                            .body = pin_xi, .user = &p});
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, N), .body = pin_d,
                                                    .user = &p});
  sch_schedule *s2 = sch_create(ctx, 1, &D);
  OK(ctx, sch_compute_inline(sch_stage_of(s2, p.XI)));
  tec_packed_fn fn = tu_build(ctx, s2, "pind", 3, (te_tensor *[]){p.X, p.E, D});
  int64_t n = N, n1 = N + 1;
  DLTensor x = tu_zeros(TEC_I32, 1, &n), e = tu_rand_f32(1, &n1, 8), d = tu_zeros(TEC_F32, 1, &n);
  int32_t *xs = x.data;
  for (int k = 0; k < N; k++) xs[k] = (k * 4) % N;
  ck_assert_int_eq(tec_call(fn, 3, (DLTensor *[]){&x, &e, &d}), 0);
  for (int k = 0; k < N; k++)
    ck_assert(fabsf(tu_f32(&d)[k] - 2 * tu_f32(&e)[xs[k] + 1]) < 1e-6f);
  tec_dl_free(&x), tec_dl_free(&e), tec_dl_free(&d);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fidelity");
  TCase *valid = tcase_create("valid_schedules");
  tcase_set_timeout(valid, 120);
  tcase_add_test(valid, cache_write_triangular);
  tcase_add_test(valid, triangular_reorder_refused);
  tcase_add_test(valid, compute_at_gather);
  suite_add_tcase(s, valid);
  TCase *ignored = tcase_create("nothing_ignored");
  tcase_set_timeout(ignored, 120);
  tcase_add_test(ignored, vectorize_reduce_axis_refused);
  tcase_add_test(ignored, annotations_on_inlined_refused);
  tcase_add_test(ignored, loops_of_inlined_noted);
  tcase_add_test(ignored, unknown_pragma_refused);
  tcase_add_test(ignored, vectorize_fallback_noted);
  tcase_add_test(ignored, strict_mode_refuses_notes);
  tcase_add_test(ignored, precompute_move_noted);
  suite_add_tcase(s, ignored);
  TCase *deep = tcase_create("deep_inline");
  tcase_set_timeout(deep, 120);
  tcase_add_test(deep, deep_inline_linear);
  tcase_add_test(deep, square_index_chain);
  tcase_add_test(deep, square_chain_loop_vectorizer_hint);
  tcase_add_test(deep, inline_let_not_hoisted);
  suite_add_tcase(s, deep);
  TCase *expr = tcase_create("expressiveness");
  tcase_set_timeout(expr, 120);
  tcase_add_test(expr, duplicate_names_refused);
  tcase_add_test(expr, unused_placeholder_accepted);
  suite_add_tcase(s, expr);
  TCase *att = tcase_create("attachment");
  tcase_set_timeout(att, 120);
  tcase_add_test(att, attachment_follows_split_fuse);
  tcase_add_test(att, fuse_split_symbolic_bound);
  tcase_add_test(att, fuse_split_const_bound);
  tcase_add_test(att, two_readers_any_order);
  suite_add_tcase(s, att);
  return tu_run(s);
}
