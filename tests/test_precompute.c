/* test_precompute.c — constant weights packed once: the prepare/run split.
 * Stages computed from constant placeholders alone run in <name>_prepare, once; every call
 * runs <name>_run. Checked on a matmul with a packed constant B and on the depthwise
 * spatial-pack template: prepare runs once across many calls, results equal the build without
 * the split and a naive C reference, new weights can be bound, and the AOT header declares
 * both halves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"

/* ---------- matmul, B constant and packed into [N/16][K][16] ---------- */
typedef struct mm { te_tensor *a, *b, *bp; const ir_expr *k; } mm;
static const ir_expr *pack_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u; /* Bp[jo, k, ji] = B[k, jo*16 + ji] */
  return TE_AT(m->b, i[1], ir_add(ir_mul(i[0], ir_int(ctx, 16)), i[2]));
}
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  const ir_expr *b = TE_AT(m->bp, ir_div(i[1], ir_int(ctx, 16)), m->k, ir_mod(i[1], ir_int(ctx, 16)));
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), b), 1, &m->k, NULL);
}

static tec_module *build_mm(tec_ctx *ctx, int precompute, int64_t M, int64_t N, int64_t K,
                            lower_func **out) {
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  m->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  m->b = te_const_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  m->k = te_reduce_axis_n(ctx, "k", K);
  m->bp = te_compute(ctx, &(te_compute_decl){.name = "Bp", .ndim = 3,
                                             .shape = TE_SHAPE(ctx, N / 16, K, 16),
                                             .body = pack_body, .user = m});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N), .body = mm_body,
                                                    .user = m});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *jo, *ji;
  ck_assert_int_eq(sch_split(sc, sch_axis(sc, 1), 16, &jo, &ji), 0);
  ck_assert_int_eq(sch_reorder(sc, 4, (sch_iter *[]){sch_axis(sc, 0), jo, sch_reduce_axis(sc, 0), ji}), 0);
  ck_assert_int_eq(sch_vectorize(sc, ji), 0);
  sch_set_precompute(s, precompute);
  lower_func *f = tec_lower(s, "mm", 3, (te_tensor *[]){m->a, m->b, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *mod = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
  if (out) *out = f;
  return mod;
}

START_TEST(matmul_packed_b_prepared_once) {
  const int64_t M = 24, N = 48, K = 20;
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f, *g;
  tec_module *split = build_mm(ctx, 1, M, N, K, &f);
  tec_module *whole = build_mm(ctx, 0, M, N, K, &g);
  ck_assert_ptr_nonnull(f->prepare);
  ck_assert_str_eq(f->name, "mm_run");
  ck_assert_str_eq(f->prepare->name, "mm_prepare");
  ck_assert_int_eq(f->npacked, 1);
  ck_assert_str_eq(f->packed[0]->name, "Bp");
  ck_assert_ptr_null(g->prepare);                 /* the switch keeps packing in every call */
  tu_assert_contains(tec_lower_str(g), "Bp");
  ck_assert_ptr_null(strstr(ir_stmt_str(f->body), "produce Bp")); /* run only reads it */
  tu_assert_contains(ir_stmt_str(f->prepare->body), "produce Bp");
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 1), b = tu_rand_f32(2, sb, 2);
  DLTensor c1 = tu_zeros(TEC_F32, 2, sc), c2 = tu_zeros(TEC_F32, 2, sc);
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  for (int call = 0; call < 10; call++) {
    ck_assert_msg(tec_module_run(split, "mm", 3, (DLTensor *[]){&a, &b, &c1}) == 0, "%s",
                  tec_rt_last_error());
    ck_assert_msg(tec_module_run(whole, "mm", 3, (DLTensor *[]){&a, &b, &c2}) == 0, "%s",
                  tec_rt_last_error());
  }
  ck_assert_int_eq(tec_module_prepare_count(split, "mm"), 1); /* once across ten runs */
  ck_assert_int_eq(tec_module_prepare_count(whole, "mm"), 0);
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  ck_assert_double_lt(tu_max_err(tu_f32(&c1), ref, M * N), 1e-5);
  ck_assert_double_lt(tu_max_err(tu_f32(&c2), tu_f32(&c1), M * N), 1e-6);
  /* after the first call the constant argument is not read: NULL is fine */
  ck_assert_int_eq(tec_module_run(split, "mm", 3, (DLTensor *[]){&a, NULL, &c1}), 0);
  /* new weights: bind them, and the packed buffer follows */
  DLTensor b2 = tu_rand_f32(2, sb, 3);
  ck_assert_int_eq(tec_module_bind_constants(split, "mm", 3, (DLTensor *[]){NULL, &b2, NULL}), 0);
  ck_assert_int_eq(tec_module_prepare_count(split, "mm"), 2);
  ck_assert_int_eq(tec_module_run(split, "mm", 3, (DLTensor *[]){&a, &b2, &c1}), 0);
  tu_ref_matmul(tu_f32(&a), tu_f32(&b2), ref, M, N, K);
  ck_assert_double_lt(tu_max_err(tu_f32(&c1), ref, M * N), 1e-5);
  /* a bad constant is refused by prepare's own checks */
  int64_t bad[2] = {K + 1, N};
  DLTensor b3 = tu_rand_f32(2, bad, 4);
  ck_assert_int_ne(tec_module_bind_constants(split, "mm", 3, (DLTensor *[]){NULL, &b3, NULL}), 0);
  tu_assert_contains(tec_rt_last_error(), "mm_prepare: argument 0 ('B') shape[0] is 21");
  ck_assert_int_ne(tec_module_run(split, "nope", 3, (DLTensor *[]){&a, &b, &c1}), 0);
  tu_assert_contains(tec_rt_last_error(), "no function 'nope'");
  ck_assert_int_ne(tec_module_run(split, "mm", 2, (DLTensor *[]){&a, &b}), 0);
  tu_assert_contains(tec_rt_last_error(), "expected 3 arguments, got 2");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_module_get(split, "mm"));
  tu_assert_contains(tec_ctx_error(ctx), "call it with tec_module_run");
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&b2), tec_dl_free(&b3);
  tec_dl_free(&c1), tec_dl_free(&c2);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- the depthwise spatial-pack template ---------- */
/* A depthwise problem with bias and ReLU fused (square stride and padding). */
static topi_conv2d dw_problem(int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride,
                              int64_t pad) {
  return (topi_conv2d){.n = 1, .c_in = c, .h = h, .w = w, .c_out = c, .kh = k, .kw = k,
                       .stride_h = stride, .stride_w = stride, .pad_h = pad, .pad_w = pad,
                       .groups = c, .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
}

static void run_dw(const topi_conv2d *p, const topi_dw_spatial_pack_config *cfg) {
  int64_t oh, ow;
  ck_assert_int_eq(topi_conv2d_out_hw(NULL, p, &oh, &ow), 0);
  int64_t sx[4] = {1, p->c_in, p->h, p->w}, sw[4] = {p->c_in, 1, p->kh, p->kw}, sb = p->c_in;
  int64_t so[4] = {1, p->c_in, oh, ow};
  DLTensor x = tu_rand_f32(4, sx, 5), w = tu_rand_f32(4, sw, 6), b = tu_rand_f32(1, &sb, 7);
  DLTensor o1 = tu_zeros(TEC_F32, 4, so), o2 = tu_zeros(TEC_F32, 4, so);
  int64_t n = p->c_in * oh * ow;
  float *ref = malloc(sizeof(float) * (size_t)n);
  cr_conv2d(p, tu_f32(&x), tu_f32(&w), tu_f32(&b), NULL, ref); /* tests/support/convref.c */
  for (int precompute = 1; precompute >= 0; precompute--) {
    tec_ctx *ctx = tec_ctx_new();
    topi_decl d;
    topi_op op;
    ck_assert_msg(topi_declare(ctx, "dw_spatial_pack", p, &d) == 0 &&
                      topi_schedule(&d, cfg, NULL, &op) == 0,
                  "%s", tec_ctx_error(ctx));
    sch_set_precompute(op.sched, precompute);
    lower_func *f = tec_lower(op.sched, "dw", op.nargs, op.args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(f->prepare != NULL, precompute);
    if (precompute) {
      /* the kernel's packing moved: prepare writes kernel.global, run only reads it */
      tu_assert_contains(ir_stmt_str(f->prepare->body), "kernel.global.global[");
      tu_assert_contains(tec_lower_str(f), "func dw_prepare(kernel: float32");
    }
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    DLTensor *out = precompute ? &o1 : &o2;
    for (int call = 0; call < 5; call++)
      ck_assert_msg(tec_module_run(m, "dw", 4, (DLTensor *[]){&x, &w, &b, out}) == 0, "%s",
                    tec_rt_last_error());
    ck_assert_int_eq(tec_module_prepare_count(m, "dw"), precompute ? 1 : 0);
    tec_ctx_free(ctx);
  }
  ck_assert_msg(tu_max_err(tu_f32(&o1), ref, n) < 1e-5, "split vs reference");
  ck_assert_msg(tu_max_err(tu_f32(&o2), tu_f32(&o1), n) < 1e-6, "split vs no split");
  free(ref);
  tec_dl_free(&x), tec_dl_free(&w), tec_dl_free(&b), tec_dl_free(&o1), tec_dl_free(&o2);
}

START_TEST(depthwise_spatial_pack) {
  topi_conv2d p1 = dw_problem(32, 14, 14, 3, 1, 1);
  topi_dw_spatial_pack_config c1 = {.vc = 8, .tile_h = 2, .tile_w = 4, .parallel = 1};
  run_dw(&p1, &c1);
  topi_conv2d p2 = dw_problem(20, 15, 13, 3, 2, 1); /* stride 2, channels not a multiple of 8 */
  topi_dw_spatial_pack_config c2 = {.vc = 8, .tile_h = 3, .tile_w = 5, .parallel = 0};
  run_dw(&p2, &c2);
}
END_TEST

START_TEST(depthwise_bad_problem) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_op op;
  topi_conv2d p = dw_problem(8, 2, 2, 5, 1, 0);
  topi_dw_spatial_pack_config c = {.vc = 8, .tile_h = 2, .tile_w = 2, .parallel = 0};
  ck_assert_int_ne(topi_declare(ctx, "dw_spatial_pack", &p, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "kernel is larger than the padded 2x2 input");
  tec_ctx_clear_error(ctx);
  p.kh = p.kw = 1;
  c.vc = 0;
  ck_assert_int_eq(topi_declare(ctx, "dw_spatial_pack", &p, &d), 0);
  ck_assert_int_ne(topi_schedule(&d, &c, NULL, &op), 0);
  tu_assert_contains(tec_ctx_error(ctx), "knob 'vc' = 0 is not legal for this problem and target "
                                         "(legal: 1, 2, 4, 8, 16, 32)");
  tec_ctx_clear_error(ctx);
  p.groups = 1; /* not depthwise */
  ck_assert_int_ne(topi_declare(ctx, "dw_spatial_pack", &p, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "not depthwise (needs groups == c_in == c_out)");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- AOT: the header declares both halves ---------- */
START_TEST(aot_header_declares_prepare_and_run) {
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f;
  build_mm(ctx, 1, 8, 16, 4, &f);
  char *text = tu_emit_text(ctx, f, NULL, TEC_EMIT_HEADER);
  tu_assert_contains(text, "mm_prepare(");
  tu_assert_contains(text, "mm_run(");
  tu_assert_contains(text, "MM_PACKED_BP_BYTES");
  free(text);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("precompute");
  TCase *tc = tcase_create("precompute");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, matmul_packed_b_prepared_once);
  tcase_add_test(tc, depthwise_spatial_pack);
  tcase_add_test(tc, depthwise_bad_problem);
  tcase_add_test(tc, aot_header_declares_prepare_and_run);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
