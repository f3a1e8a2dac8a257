/* test_attach.c — the whole schedule, end to end: compute_at (with halo), compute_inline,
 * compute_root, cache_read (including of a placeholder, into a packed layout), cache_write,
 * parallel, vectorize, unroll, pragmas, storage_align — numbers against naive C loops — and
 * the misuse each of them must refuse, asserted as text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"


/* ---------- a 3-point stencil over a producer: compute_at with halo ---------- */
static const ir_expr *scale(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 2.0));
}
static const ir_expr *stencil(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *B = u;
  return ir_add(ir_add(TE_AT(B, i[0]), TE_AT(B, ir_add(i[0], ir_int(ctx, 1)))),
                TE_AT(B, ir_add(i[0], ir_int(ctx, 2))));
}

static void run_stencil(int how, int64_t n) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *nv = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, (const ir_expr *[]){ir_add(nv, ir_int(ctx, 2))});
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = scale, .user = A});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &nv,
                                                    .body = stencil, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C), *sb = sch_stage_of(s, B);
  sch_iter *o, *in;
  OK(ctx, sch_split(sc, sch_axis(sc, 0), 8, &o, &in));
  if (how == 0) OK(ctx, sch_compute_at(sb, sc, o));
  if (how == 1) OK(ctx, sch_compute_inline(sb));
  if (how == 2) {
    OK(ctx, sch_compute_at(sb, sc, o));
    OK(ctx, sch_compute_root(sb));
  }
  if (how == 3) OK(ctx, sch_compute_at(sb, sc, in));
  lower_func *f = tec_lower(s, "stencil", 2, (te_tensor *[]){A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *txt = tec_lower_str(f);
  if (how == 0) tu_assert_contains(txt, "allocate B[float32 * 10]"); /* 8 + 2 halo */
  if (how == 1) ck_assert_ptr_null(strstr(txt, "allocate B"));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(m, "stencil");
  int64_t na = n + 2;
  DLTensor a = tu_rand_f32(1, &na, 5), c = tu_zeros(TEC_F32, 1, &n);
  ck_assert_msg(fn((DLTensor *[]){&a, &c}, 2) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < n; i++) {
    float *x = tu_f32(&a);
    float ref = x[i] * 2.0f + x[i + 1] * 2.0f + x[i + 2] * 2.0f;
    ck_assert_msg(fabsf(tu_f32(&c)[i] - ref) < 1e-5f, "how %d n %lld i %lld: %g vs %g", how,
                  (long long)n, (long long)i, tu_f32(&c)[i], ref);
  }
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(stencil_compute_at) {
  static const int64_t ns[] = {1, 5, 8, 13, 64, 100};
  for (int how = 0; how < 4; how++)
    for (int k = 0; k < 6; k++) run_stencil(how, ns[k]);
}
END_TEST

/* ---------- 2-d convolution with zero padding: inline pad, compute_at a cache ---------- */
typedef struct conv { te_tensor *in, *w, *pad; const ir_expr *rc, *ry, *rx; int64_t H, W; } conv;

static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  conv *cv = u;
  const ir_expr *h = ir_sub(i[1], ir_int(ctx, 1)), *w = ir_sub(i[2], ir_int(ctx, 1));
  const ir_expr *inb = ir_and(ir_and(ir_ge(h, ir_int(ctx, 0)), ir_lt(h, ir_int(ctx, cv->H))),
                              ir_and(ir_ge(w, ir_int(ctx, 0)), ir_lt(w, ir_int(ctx, cv->W))));
  return ir_select(inb, TE_AT(cv->in, i[0], h, w), ir_float(ctx, 0.0));
}
static const ir_expr *conv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  conv *cv = u;
  const ir_expr *x = TE_AT(cv->pad, cv->rc, ir_add(i[1], cv->ry), ir_add(i[2], cv->rx));
  return te_sum(ir_mul(x, TE_AT(cv->w, i[0], cv->rc, cv->ry, cv->rx)), 3,
                (const ir_expr *[]){cv->rc, cv->ry, cv->rx}, NULL);
}

START_TEST(conv2d_padded) {
  const int64_t CI = 3, CO = 4, H = 9, W = 11;
  for (int how = 0; how < 4; how++) {
    tec_ctx *ctx = tec_ctx_new();
    conv cv = {0};
    cv.H = H, cv.W = W;
    cv.in = te_placeholder(ctx, "data", TEC_F32, 3, TE_SHAPE(ctx, CI, H, W));
    cv.w = te_const_placeholder(ctx, "kernel", TEC_F32, 4, TE_SHAPE(ctx, CO, CI, 3, 3));
    cv.pad = te_compute(ctx, &(te_compute_decl){.name = "pad", .ndim = 3,
                                                .shape = TE_SHAPE(ctx, CI, H + 2, W + 2),
                                                .body = pad_body, .user = &cv});
    cv.rc = te_reduce_axis_n(ctx, "rc", CI);
    cv.ry = te_reduce_axis_n(ctx, "ry", 3);
    cv.rx = te_reduce_axis_n(ctx, "rx", 3);
    te_tensor *out = te_compute(ctx, &(te_compute_decl){
                                        .name = "out", .ndim = 3, .shape = TE_SHAPE(ctx, CO, H, W),
                                        .body = conv_body, .user = &cv,
                                        .axis_names = (const char *[]){"co", "h", "w"}});
    sch_schedule *s = sch_create(ctx, 1, &out);
    sch_stage *so = sch_stage_of(s, out), *sp = sch_stage_of(s, cv.pad);
    sch_iter *ho, *hi;
    OK(ctx, sch_split(so, sch_axis(so, 1), 4, &ho, &hi));
    if (how == 0) OK(ctx, sch_compute_inline(sp));
    if (how == 1) OK(ctx, sch_compute_at(sp, so, ho)); /* rows of the padded input + halo */
    if (how >= 2) {
      /* weights through a cache (packing happens there), padded input inlined */
      te_tensor *wc = sch_cache_read(s, cv.w, "global", 1, &out);
      ck_assert_msg(wc != NULL, "%s", tec_ctx_error(ctx));
      OK(ctx, sch_compute_inline(sp));
      if (how == 3) { /* the accumulator in the split layout [co, h.outer, h.inner, w] */
        te_tensor *ol = sch_cache_write(s, out, "local");
        ck_assert_msg(ol != NULL, "%s", tec_ctx_error(ctx));
        ck_assert_int_eq(ol->ndim, 4);
        ck_assert_int_eq(sch_stage_nleaf(sch_stage_of(s, out)), 3); /* out's loops start over */
      }
    }
    /* the kernel is a constant: with a cache of it the packing may run in a prepare step,
     * so call through tec_module_run */
    lower_func *lf = tec_lower(s, "conv", 3, (te_tensor *[]){cv.in, cv.w, out});
    ck_assert_msg(lf != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(lf->prepare != NULL, how >= 2);
    tec_module *mod = tec_build(ctx, 1, &lf, NULL);
    ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
    int64_t si[3] = {CI, H, W}, sw[4] = {CO, CI, 3, 3}, so_[3] = {CO, H, W};
    DLTensor d = tu_rand_f32(3, si, 21), k = tu_rand_f32(4, sw, 22), o = tu_zeros(TEC_F32, 3, so_);
    ck_assert_msg(tec_module_run(mod, "conv", 3, (DLTensor *[]){&d, &k, &o}) == 0, "%s",
                  tec_rt_last_error());
    float *pd = tu_f32(&d), *pk = tu_f32(&k);
    float *ref = calloc((size_t)(CO * H * W), sizeof(float));
    for (int co = 0; co < CO; co++)
      for (int h = 0; h < H; h++)
        for (int w = 0; w < W; w++) {
          double acc = 0;
          for (int c = 0; c < CI; c++)
            for (int y = 0; y < 3; y++)
              for (int x = 0; x < 3; x++) {
                int hh = h + y - 1, ww = w + x - 1;
                if (hh < 0 || hh >= H || ww < 0 || ww >= W) continue;
                acc += (double)pd[(c * H + hh) * W + ww] * pk[((co * CI + c) * 3 + y) * 3 + x];
              }
          ref[(co * H + h) * W + w] = (float)acc;
        }
    ck_assert_msg(tu_max_err(tu_f32(&o), ref, CO * H * W) < 1e-5, "conv schedule %d", how);
    free(ref);
    tec_dl_free(&d), tec_dl_free(&k), tec_dl_free(&o);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---------- GEMM: packed B, cache_write accumulator, vectorize, unroll, parallel ---------- */
typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

static void run_gemm(int64_t M, int64_t N, int64_t K, int how) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  mm m = {A, B, te_reduce_axis_n(ctx, "k", K)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N), .body = mm_body,
                                                    .user = &m});
  sch_schedule *s = sch_create(ctx, 1, &C);
  te_tensor *CL = sch_cache_write(s, C, "local");
  ck_assert_msg(CL != NULL, "%s", tec_ctx_error(ctx));
  sch_stage *sc = sch_stage_of(s, C), *sl = sch_stage_of(s, CL);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  OK(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 16, &io, &jo, &ii, &ji));
  OK(ctx, sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
  OK(ctx, sch_split(sl, lk, 4, &ko, &ki));
  OK(ctx, sch_reorder(sl, 4, (sch_iter *[]){ko, ki, li, lj}));
  if (how >= 1) {
    OK(ctx, sch_vectorize(sl, lj));
    OK(ctx, sch_vectorize(sc, ji));
  }
  if (how >= 2) OK(ctx, sch_unroll(sl, li));
  if (how >= 3) OK(ctx, sch_parallel(sc, io));
  if (how >= 4) {
    te_tensor *BP = sch_cache_read(s, B, "global", 1, &CL); /* packed copy of B */
    ck_assert_msg(BP != NULL, "%s", tec_ctx_error(ctx));
    sch_stage *sb = sch_stage_of(s, BP);
    sch_iter *bo, *bi;
    OK(ctx, sch_split(sb, sch_axis(sb, 1), 16, &bo, &bi));
    OK(ctx, sch_reorder(sb, 3, (sch_iter *[]){bo, sch_axis(sb, 0), bi}));
    OK(ctx, sch_vectorize(sb, bi));
  }
  if (how >= 5) OK(ctx, sch_pragma(sl, ko, "auto_unroll_max_step", ir_int(ctx, 16)));
  if (how >= 6) { /* the packed panel of B per column tile: read by C.local, attached to C */
    te_tensor *BP = NULL;
    for (int i = 0; i < sch_schedule_nstage(s); i++)
      if (strcmp(sch_stage_tensor(sch_schedule_stage(s, i))->name, "B.global") == 0)
        BP = sch_stage_tensor(sch_schedule_stage(s, i));
    ck_assert_ptr_nonnull(BP);
    OK(ctx, sch_compute_at(sch_stage_of(s, BP), sc, jo));
  }
  tec_packed_fn fn = tu_build(ctx, s, "gemm", 3, (te_tensor *[]){A, B, C});
  int64_t sa[2] = {M, K}, sb_[2] = {K, N}, sc_[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 31), b = tu_rand_f32(2, sb_, 32), c = tu_zeros(TEC_F32, 2, sc_);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  double err = tu_max_err(tu_f32(&c), ref, M * N);
  ck_assert_msg(err < 1e-4, "gemm %lldx%lldx%lld how %d: error %g", (long long)M, (long long)N,
                (long long)K, how, err);
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(gemm_schedules) {
  for (int how = 0; how <= 6; how++) {
    run_gemm(64, 48, 80, how);
    run_gemm(37, 50, 19, how);
  }
}
END_TEST

/* ---------- pragmas: debug_skip_region drops the region (wrong output by design) -------- */
START_TEST(pragma_debug_skip_region) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 16));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = scale, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *sb = sch_stage_of(s, B);
  OK(ctx, sch_pragma(sb, sch_axis(sb, 0), "debug_skip_region", NULL));
  tec_packed_fn fn = tu_build(ctx, s, "skip", 2, (te_tensor *[]){A, B});
  int64_t n = 16;
  DLTensor a = tu_rand_f32(1, &n, 1), b = tu_zeros(TEC_F32, 1, &n);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b}, 2), 0);
  for (int i = 0; i < 16; i++) ck_assert_float_eq(tu_f32(&b)[i], 0.0f); /* never written */
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- storage_align pads the row stride of an intermediate ---------- */
static const ir_expr *copy2(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
}
START_TEST(storage_align_pads) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 7));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                                    .body = copy2, .user = A});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                    .body = copy2, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sb = sch_stage_of(s, B);
  OK(ctx, sch_storage_align(sb, sch_axis(sb, 0), 16, 1));
  lower_func *f = tec_lower(s, "aligned", 2, (te_tensor *[]){A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tu_assert_contains(tec_lower_str(f), "allocate B[float32 * 85]"); /* stride 17, 5 rows */
  tec_packed_fn fn = tu_build(ctx, s, "aligned2", 2, (te_tensor *[]){A, C});
  int64_t sh[2] = {5, 7};
  DLTensor a = tu_rand_f32(2, sh, 9), c = tu_zeros(TEC_F32, 2, sh);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &c}, 2), 0);
  for (int i = 0; i < 35; i++) ck_assert_float_eq_tol(tu_f32(&c)[i], tu_f32(&a)[i] + 2.0f, 1e-6);
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- misuse ---------- */
typedef struct red { te_tensor *a; const ir_expr *k; } red;
static const ir_expr *rowsum(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  red *r = u;
  return te_sum(TE_AT(r->a, i[0], r->k), 1, &r->k, NULL);
}
static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 1.0));
}

START_TEST(misuse_refused) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, ir_int(ctx, 8)});
  red r = {A, te_reduce_axis_n(ctx, "k", 8)};
  te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1, .shape = &n,
                                                    .body = rowsum, .user = &r});
  te_tensor *S = te_compute(ctx, &(te_compute_decl){.name = "S", .ndim = 1, .shape = &n,
                                                    .body = plus1, .user = R});
  te_tensor *T = te_compute(ctx, &(te_compute_decl){.name = "T", .ndim = 1, .shape = &n,
                                                    .body = plus1, .user = S});
  sch_schedule *s = sch_create(ctx, 1, &T);
  sch_stage *sr = sch_stage_of(s, R), *ss = sch_stage_of(s, S), *st = sch_stage_of(s, T);
#define REFUSED(call, text)                                                  \
  do {                                                                       \
    tec_ctx_clear_error(ctx);                                                \
    ck_assert_int_ne((call), 0);                                             \
    tu_assert_contains(tec_ctx_error(ctx), text);                            \
  } while (0)
  REFUSED(sch_compute_inline(sr), "compute_inline: 'R' is a reduction");
  REFUSED(sch_compute_inline(st), "'T' is an output");
  REFUSED(sch_compute_at(sr, st, sch_axis(st, 0)), "stage 'T' does not read 'R'");
  REFUSED(sch_compute_at(sr, ss, sch_axis(st, 0)), "is not a loop of stage 'S'");
  REFUSED(sch_vectorize(st, sch_reduce_axis(sr, 0)), "does not belong to stage 'T'");
  REFUSED(sch_parallel(sr, sch_reduce_axis(sr, 0)), "is a reduce axis");
  sch_iter *o, *in;
  OK(ctx, sch_split(st, sch_axis(st, 0), 4, &o, &in));
  OK(ctx, sch_parallel(st, o));
  REFUSED(sch_parallel(st, in), "nested parallel");
  REFUSED(sch_cache_write(s, A, "local") ? 0 : -1, "is a placeholder");
  REFUSED(sch_cache_read(s, A, "shared", 1, &R) ? 0 : -1, "scope 'shared' is unknown");
  REFUSED(sch_cache_read(s, A, "global", 1, &T) ? 0 : -1, "stage 'T' does not read 'A'");
  REFUSED(sch_pragma(st, o, "", NULL), "the key is empty");
  sch_iter *ko, *ki;
  OK(ctx, sch_split(sr, sch_reduce_axis(sr, 0), 2, &ko, &ki));
  REFUSED(sch_cache_write(s, R, "local") ? 0 : -1, "its reduce axes were split");
  REFUSED(sch_cache_write(s, T, "local") ? 0 : -1, "annotated or attached");
  REFUSED(sch_pragma(st, o, "auto_unroll_max_step", NULL), "needs a constant integer");
  REFUSED(sch_storage_align(ss, sch_axis(ss, 0), 8, 0), "innermost dimension");
  /* vectorize of a non-constant extent is refused when lowering */
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_vectorize(ss, sch_axis(ss, 0)));
  ck_assert_ptr_null(tec_lower(s, "bad", 2, (te_tensor *[]){A, T}));
  tu_assert_contains(tec_ctx_error(ctx), "vectorize: loop 'i' of stage 'S' has extent n");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- rfactor ---------- */
START_TEST(rfactor_rowsum) {
  for (int how = 0; how < 4; how++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 13, 70));
    red r = {A, te_reduce_axis_n(ctx, "k", 70)};
    te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1,
                                                      .shape = TE_SHAPE(ctx, 13), .body = rowsum,
                                                      .user = &r});
    sch_schedule *s = sch_create(ctx, 1, &R);
    sch_stage *sr = sch_stage_of(s, R);
    sch_iter *ko, *ki;
    te_tensor *RF;
    if (how == 0) { /* factor the whole axis: partials are the elements themselves */
      RF = sch_rfactor(s, R, sch_reduce_axis(sr, 0), 0);
    } else {
      OK(ctx, sch_split(sr, sch_reduce_axis(sr, 0), 8, &ko, &ki)); /* 70 = 8*8 + 6: a tail */
      RF = sch_rfactor(s, R, how == 1 ? ki : ko, how == 3 ? 1 : 0);
    }
    ck_assert_msg(RF != NULL, "%s", tec_ctx_error(ctx));
    sch_stage *sf = sch_stage_of(s, RF);
    if (how == 1) OK(ctx, sch_vectorize(sf, sch_axis(sf, 0))); /* 8 partial lanes */
    if (how == 2) OK(ctx, sch_parallel(sf, sch_axis(sf, 0)));
    tec_packed_fn fn = tu_build(ctx, s, "rf", 2, (te_tensor *[]){A, R});
    int64_t sh[2] = {13, 70}, n = 13;
    DLTensor a = tu_rand_f32(2, sh, 4), o = tu_zeros(TEC_F32, 1, &n);
    ck_assert_msg(fn((DLTensor *[]){&a, &o}, 2) == 0, "%s", tec_rt_last_error());
    for (int i = 0; i < 13; i++) {
      double acc = 0;
      for (int k = 0; k < 70; k++) acc += tu_f32(&a)[i * 70 + k];
      ck_assert_msg(fabs(tu_f32(&o)[i] - acc) < 1e-4, "rfactor how %d row %d: %g vs %g", how, i,
                    tu_f32(&o)[i], acc);
    }
    tec_dl_free(&a), tec_dl_free(&o);
    tec_ctx_free(ctx);
  }
}
END_TEST

START_TEST(rfactor_misuse) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  red r = {A, te_reduce_axis_n(ctx, "k", 8)};
  te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 4), .body = rowsum,
                                                    .user = &r});
  te_tensor *S = te_compute(ctx, &(te_compute_decl){.name = "S", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 4), .body = plus1,
                                                    .user = R});
  sch_schedule *s = sch_create(ctx, 1, &S);
  sch_stage *sr = sch_stage_of(s, R);
  ck_assert_ptr_null(sch_rfactor(s, S, sch_axis(sch_stage_of(s, S), 0), 0));
  tu_assert_contains(tec_ctx_error(ctx), "'S' is not a reduction");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_rfactor(s, R, sch_axis(sr, 0), 0));
  tu_assert_contains(tec_ctx_error(ctx), "is a data-parallel loop");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_rfactor(s, R, sch_reduce_axis(sr, 0), 5));
  tu_assert_contains(tec_ctx_error(ctx), "factor_axis 5");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(compute_at_nested_parallel) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 64));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = plus1, .user = A});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = A->shape,
                                                    .body = plus1, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sb = sch_stage_of(s, B), *sc = sch_stage_of(s, C);
  sch_iter *o, *in;
  OK(ctx, sch_split(sc, sch_axis(sc, 0), 8, &o, &in));
  OK(ctx, sch_parallel(sc, o));
  OK(ctx, sch_compute_at(sb, sc, o));
  OK(ctx, sch_parallel(sb, sch_axis(sb, 0)));
  ck_assert_ptr_null(tec_lower(s, "np", 2, (te_tensor *[]){A, C}));
  tu_assert_contains(tec_ctx_error(ctx), "nested parallel");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("attach");
  TCase *tc = tcase_create("attach");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, stencil_compute_at);
  tcase_add_test(tc, conv2d_padded);
  tcase_add_test(tc, gemm_schedules);
  tcase_add_test(tc, pragma_debug_skip_region);
  tcase_add_test(tc, storage_align_pads);
  tcase_add_test(tc, misuse_refused);
  tcase_add_test(tc, compute_at_nested_parallel);
  tcase_add_test(tc, rfactor_rowsum);
  tcase_add_test(tc, rfactor_misuse);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
