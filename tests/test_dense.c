/* test_dense.c — the dense / matmul template (topi/dense.c) against a naive C reference
 * (tu_ref_matmul, then bias, residual and the activation in C): sizes of 1, primes and tails of
 * every tile dimension, b transposed (the fully connected layer), b constant (packed once, in
 * prepare), several configs of the space, the space itself, bad problems and configs with their
 * exact messages, and the NEON lowering. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"


static topi_dense prob(int64_t m, int64_t n, int64_t k, int bt, int cb, int bias, int res,
                       topi_act act) {
  return (topi_dense){.m = m, .n = n, .k = k, .b_transposed = bt, .const_b = cb,
                      .epi = {.bias = bias, .residual = res, .act = act}};
}

/* The reference: a [m][k], b [k][n] or [n][k] (transposed), then + bias[j] + res[i][j], act. */
static void reference(const topi_dense *p, const float *a, const float *b, const float *bias,
                      const float *res, float *out) {
  float *bk = malloc(sizeof(float) * (size_t)(p->k * p->n));
  ck_assert_ptr_nonnull(bk);
  for (int64_t kk = 0; kk < p->k; kk++)
    for (int64_t j = 0; j < p->n; j++)
      bk[kk * p->n + j] = p->b_transposed ? b[j * p->k + kk] : b[kk * p->n + j];
  tu_ref_matmul(a, bk, out, p->m, p->n, p->k);
  for (int64_t i = 0; i < p->m; i++)
    for (int64_t j = 0; j < p->n; j++) {
      float v = out[i * p->n + j];
      if (bias) v += bias[j];
      if (res) v += res[i * p->n + j];
      if (p->epi.act != TOPI_ACT_NONE && v < 0) v = 0;
      if (p->epi.act == TOPI_ACT_RELU6 && v > 6) v = 6;
      out[i * p->n + j] = v;
    }
  free(bk);
}

static const char *pstr(tec_ctx *ctx, const topi_dense *p) {
  return tec_ctx_printf(ctx, "m=%lld n=%lld k=%lld bt=%d const=%d bias=%d res=%d act=%d",
                        (long long)p->m, (long long)p->n, (long long)p->k, p->b_transposed,
                        p->const_b, p->epi.bias, p->epi.residual, (int)p->epi.act);
}

/* float lanes of the host's vectors (16 with AVX-512, 4 on AArch64 NEON under qemu, 1
 * without SIMD: topi_target_lanes' rule) */
static int64_t host_lanes(void) {
  tec_ctx *ctx = tec_ctx_new();
  int bits = tec_target_vector_bits(ctx, NULL);
  tec_ctx_free(ctx);
  return bits >= 128 ? bits / 32 : 1;
}

/* Builds p with cfg (NULL: the host's default), runs it `calls` times and returns the max
 * error against the reference; *prepares gets tec_module_prepare_count (-1: no prepare). */

static double run_dense(const topi_dense *p, const topi_dense_config *cfg, int calls,
                        int64_t *prepares) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_op op;
  OK(ctx, topi_declare(ctx, "dense", p, &d));
  OK(ctx, topi_space_of(ctx, "dense", p, NULL, &sp));
  const topi_dense_config *c = cfg ? cfg : sp.default_config;
  ck_assert_msg(topi_schedule(&d, c, NULL, &op) == 0, "%s, %s: %s", pstr(ctx, p),
                tune_config_str(ctx, &sp, c), tec_ctx_error(ctx));
  ck_assert_int_eq(op.nargs, d.nargs);
  lower_func *f = tec_lower(op.sched, "dense", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s: %s", pstr(ctx, p), tec_ctx_error(ctx));
  /* b constant and packed: its packing is in prepare; otherwise there is no prepare */
  ck_assert_int_eq(f->prepare != NULL, p->const_b && c->pack != 2);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s: %s", pstr(ctx, p), tec_ctx_error(ctx));

  int64_t sa[2] = {p->m, p->k}, sb[2] = {p->b_transposed ? p->n : p->k, p->b_transposed ? p->k : p->n};
  int64_t so[2] = {p->m, p->n}, sbias = p->n;
  DLTensor a = tu_rand_f32(2, sa, 1), b = tu_rand_f32(2, sb, 2), bias = tu_rand_f32(1, &sbias, 3);
  DLTensor res = tu_rand_f32(2, so, 4), out = tu_zeros(TEC_F32, 2, so);
  float *want = malloc(sizeof(float) * (size_t)(p->m * p->n));
  ck_assert_ptr_nonnull(want);
  reference(p, a.data, b.data, p->epi.bias ? bias.data : NULL, p->epi.residual ? res.data : NULL,
            want);
  DLTensor *args[5];
  int na = 0;
  args[na++] = &a;
  args[na++] = &b;
  if (p->epi.bias) args[na++] = &bias;
  if (p->epi.residual) args[na++] = &res;
  args[na++] = &out;
  ck_assert_int_eq(na, op.nargs);
  double err = 0;
  for (int call = 0; call < calls; call++) {
    for (int64_t i = 0; i < p->m * p->n; i++) tu_f32(&out)[i] = 1234.0f; /* every one written */
    ck_assert_msg(tec_module_run(m, "dense", na, args) == 0, "%s: %s", pstr(ctx, p),
                  tec_rt_last_error());
    double e = tu_max_err(out.data, want, p->m * p->n);
    if (!(e <= err)) err = e;
  }
  if (prepares) *prepares = tec_module_prepare_count(m, "dense");
  free(want);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&bias), tec_dl_free(&res), tec_dl_free(&out);
  tec_ctx_free(ctx);
  return err;
}

static void check_dense(const topi_dense *p, const topi_dense_config *cfg) {
  double err = run_dense(p, cfg, 1, NULL);
  ck_assert_msg(err < 1e-5, "m=%lld n=%lld k=%lld bt=%d: error %g", (long long)p->m,
                (long long)p->n, (long long)p->k, p->b_transposed, err);
}

/* ---------- sizes: 1, primes, tails of mr (6), nr (64), ku (8) and jb ---------- */
START_TEST(dense_sizes) {
  static const int64_t shapes[][3] = {
      {1, 1, 1},    {1, 5, 3},    {2, 17, 9},    {7, 13, 11},  {6, 64, 8},   {13, 67, 29},
      {5, 129, 16}, {12, 300, 7}, {31, 100, 37}, {3, 1000, 2}, {64, 256, 64}, {97, 47, 53},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    if (tu_emulated() && i % 3) continue;
    topi_dense p = prob(shapes[i][0], shapes[i][1], shapes[i][2], (int)(i % 2), 0, i % 3 != 1,
                        i % 4 == 2, (topi_act)(i % 3));
    check_dense(&p, NULL);
  }
}
END_TEST

/* ---------- configs of the space ---------- */
START_TEST(dense_configs) {
  topi_dense ps[] = {prob(19, 45, 21, 0, 0, 1, 1, TOPI_ACT_RELU6),
                     prob(14, 70, 12, 1, 0, 1, 0, TOPI_ACT_RELU)};
  for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
    tec_ctx *ctx = tec_ctx_new();
    tune_space sp;
    OK(ctx, topi_space_of(ctx, "dense", &ps[pi], NULL, &sp));
    int64_t range = tune_space_range(&sp);
    int n = tu_emulated() ? 2 : 4;
    for (int64_t k = 0, i = 13; k < n; i += 104729) { /* configs in the space (the rule's) */
      topi_dense_config c;
      if (tune_space_config(&sp, i % range, &c) == 0) check_dense(&ps[pi], &c), k++;
    }
    /* the last config in the space: the largest of every knob the register rule leaves (pack
     * none or panel, dynamic chunks) */
    topi_dense_config c;
    int64_t last = range - 1;
    while (tune_space_config(&sp, last, &c) != 0) last--;
    ck_assert_int_eq(c.parallel, 2);
    check_dense(&ps[pi], &c);
    tec_ctx_free(ctx);
  }
  /* hand-picked: jb 3 over 2 panels, serial, root packing, no unrolling */
  topi_dense p = prob(9, 100, 10, 0, 0, 0, 0, TOPI_ACT_NONE);
  topi_dense_config c = {.mr = 4, .nr = 16, .ku = 1, .jb = 3, .parallel = 0, .pack = 0};
  check_dense(&p, &c);
  /* nr: two of the host's vectors (32 with AVX-512, 8 on NEON: its legal widths are multiples) */
  c = (topi_dense_config){.mr = 1, .nr = 2 * host_lanes(), .ku = 4, .jb = 2, .parallel = 1,
                          .pack = 2};
  check_dense(&p, &c);
}
END_TEST

/* ---------- b constant: packed once, in prepare ---------- */
START_TEST(dense_const_b) {
  /* the fully connected layer: batch 3, 50 -> 37 features, b [37][50] */
  topi_dense p = prob(3, 37, 50, 1, 1, 1, 0, TOPI_ACT_RELU);
  int64_t prepares = 0;
  double err = run_dense(&p, NULL, 3, &prepares);
  ck_assert_msg(err < 1e-5, "error %g", err);
  ck_assert_int_eq(prepares, 1);
  /* not transposed, all the knobs' largest values but pack root (panel is not legal) */
  p = prob(10, 70, 33, 0, 1, 0, 1, TOPI_ACT_NONE);
  topi_dense_config c = {.mr = 5, .nr = 3 * host_lanes(), .ku = 8, .jb = 2, .parallel = 2,
                         .pack = 0};
  err = run_dense(&p, &c, 2, &prepares);
  ck_assert_msg(err < 1e-5, "error %g", err);
  ck_assert_int_eq(prepares, 1);
  /* pack none: the run reads b in place, nothing to prepare */
  c.pack = 2;
  err = run_dense(&p, &c, 2, &prepares);
  ck_assert_msg(err < 1e-5, "error %g", err);
  ck_assert_int_eq(prepares, 0);
}
END_TEST

/* ---------- the registry and the space ---------- */
START_TEST(dense_space) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("dense");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->problem_kind, TOPI_PROBLEM_DENSE);
  ck_assert_int_eq((int)t->config_size, (int)sizeof(topi_dense_config));
  topi_dense p = prob(100, 50, 30, 0, 0, 0, 0, TOPI_ACT_NONE);
  ck_assert_int_eq(t->applies(ctx, &p, NULL), 1);
  /* NEON (AArch64): 4 lanes, tile 4 x 16 by default */
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "dense", &p, tec_target_parse(ctx, "rasp4b"), &sp));
  ck_assert_int_eq(sp.nknobs, 6);
  ck_assert_str_eq(tune_config_str(ctx, &sp, sp.default_config),
                   "mr=4 nr=16 ku=8 jb=1 parallel=1 pack=1");
  ck_assert_int_eq(sp.knobs[0].nvalues, 8);                        /* mr 1..8 */
  ck_assert_int_eq(sp.knobs[1].nvalues, 4);                        /* nr 4, 8, 12, 16 */
  ck_assert_int_eq(sp.knobs[1].values[3], 16);
  ck_assert_int_eq(sp.knobs[2].nvalues, 4);                        /* ku 1, 2, 4, 8 */
  ck_assert_int_eq(sp.knobs[3].nvalues, 4);                        /* jb 1..4 */
  ck_assert_int_eq(sp.knobs[5].nvalues, 3);                        /* pack root, panel, none */
  /* the register rule (32 q registers): mr * v + v + 1 <= 32 for v = nr / 4 vectors leaves
   * out mr 7 and 8 at 4 vectors */
  ck_assert_int_eq(tune_space_range(&sp), 8 * 4 * 4 * 4 * 3 * 3);
  ck_assert_int_eq(tune_space_size(&sp), (8 * 4 - 2) * 4 * 4 * 3 * 3);
  ck_assert_ptr_nonnull(strstr(sp.rule_doc, "registers: mr*(nr/4) + nr/4 + 1 <= 32"));
  topi_dense_config big = *(const topi_dense_config *)sp.default_config;
  big.mr = 7;
  ck_assert_int_eq(tune_space_allows_config(&sp, &big), 0);
  big.nr = 12;
  ck_assert_int_eq(tune_space_allows_config(&sp, &big), 1);
  /* ARMv7 NEON (16 q registers): 4 x 8, the k loop not unrolled (an unrolled one spills:
   * test_arm_tiles) */
  OK(ctx, topi_space_of(ctx, "dense", &p, tec_target_parse(ctx, "rasp4b32"), &sp));
  ck_assert_str_eq(tune_config_str(ctx, &sp, sp.default_config),
                   "mr=4 nr=8 ku=1 jb=1 parallel=1 pack=1");
  /* tiny sizes cap the knobs: m = 2, n = 3, k = 3 on NEON; b constant and transposed: root */
  topi_dense q = prob(2, 3, 3, 1, 1, 0, 0, TOPI_ACT_NONE);
  OK(ctx, topi_space_of(ctx, "dense", &q, tec_target_parse(ctx, "rasp4b"), &sp));
  ck_assert_str_eq(tune_config_str(ctx, &sp, sp.default_config),
                   "mr=2 nr=4 ku=2 jb=1 parallel=1 pack=0");
  ck_assert_int_eq(tune_space_size(&sp), 2 * 1 * 2 * 1 * 3 * 1);
  /* the host's default for the 1024 GEMM, when it has AVX-512: bench/gemm.c's schedule */
  topi_dense g = prob(1024, 1024, 1024, 0, 0, 0, 0, TOPI_ACT_NONE);
  if (tec_target_vector_bits(ctx, NULL) == 512) {
    OK(ctx, topi_space_of(ctx, "dense", &g, NULL, &sp));
    ck_assert_str_eq(tune_config_str(ctx, &sp, sp.default_config),
                     "mr=6 nr=64 ku=8 jb=2 parallel=1 pack=1");
  }
  /* every enumerated config has legal knob values; the rule refuses exactly the tiles over
   * the registers (counted here from the knobs) */
  OK(ctx, topi_space_of(ctx, "dense", &p, NULL, &sp));
  topi_dense_config c;
  int lanes = host_lanes(), regs = lanes >= 16 || lanes == 4 ? 32 : 16; /* zmm, q; ymm */
  for (int64_t i = 0; i < tune_space_range(&sp); i += 37) {
    int rc = tune_space_config(&sp, i, &c);
    int64_t v = (c.nr + lanes - 1) / lanes;
    int over = lanes >= 4 && c.mr * v + v + 1 > regs && !(c.mr == 1 && v == 1);
    ck_assert_int_eq(rc, over);
    OK(ctx, tune_space_check(ctx, &sp, &c));
  }
  /* instantiate through the registry */
  topi_op op;
  OK(ctx, topi_instantiate(ctx, t, &p, NULL, &op));
  ck_assert_ptr_nonnull(tec_lower(op.sched, "dense", op.nargs, op.args));
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- bad problems and configs ---------- */
START_TEST(dense_bad) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_op op;
  topi_dense p = prob(0, 4, 4, 0, 0, 0, 0, TOPI_ACT_NONE);
  ck_assert_int_ne(topi_declare(ctx, "dense", &p, &d), 0);
  assert_err(ctx, "dense: sizes must be >= 1 (got m=0 n=4 k=4)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_space_of(ctx, "dense", &p, NULL, &sp), 0);
  assert_err(ctx, "dense: sizes must be >= 1 (got m=0 n=4 k=4)");
  tec_ctx_clear_error(ctx);
  p = prob(4, 4, 4, 2, 0, 0, 0, TOPI_ACT_NONE);
  ck_assert_int_ne(topi_declare(ctx, "dense", &p, &d), 0);
  assert_err(ctx, "dense: b_transposed = 2 and const_b = 0 must be 0 or 1");
  tec_ctx_clear_error(ctx);
  p = prob(4, 4, 4, 0, 0, 0, 0, (topi_act)7);
  ck_assert_int_ne(topi_declare(ctx, "dense", &p, &d), 0);
  assert_err(ctx, "dense: activation 7 is not one of TOPI_ACT_NONE, _RELU, _RELU6");
  tec_ctx_clear_error(ctx);
  p = prob(4, 4, 4, 0, 0, 3, 0, TOPI_ACT_NONE);
  ck_assert_int_ne(topi_declare(ctx, "dense", &p, &d), 0);
  assert_err(ctx, "dense: epi.bias = 3 and epi.residual = 0 must be 0 or 1");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_declare(ctx, "dense", NULL, &d), 0);
  assert_err(ctx, "dense: the problem is NULL");
  tec_ctx_clear_error(ctx);
  const char *why = NULL;
  p = prob(4, -1, 4, 0, 0, 0, 0, TOPI_ACT_NONE);
  ck_assert_int_eq(topi_template_find("dense")->applies(ctx, &p, &why), 0);
  ck_assert_str_eq(why, "sizes must be >= 1 (got m=4 n=-1 k=4)");

  /* configs: a knob out of its legal set, on the host and on NEON */
  p = prob(10, 40, 20, 1, 1, 0, 0, TOPI_ACT_NONE);
  OK(ctx, topi_declare(ctx, "dense", &p, &d));
  topi_dense_config c = {.mr = 4, .nr = 16, .ku = 4, .jb = 1, .parallel = 1, .pack = 1};
  ck_assert_int_ne(topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op), 0);
  assert_err(ctx, "dense: knob 'pack' = 1 is not legal for this problem and target (legal: 0)");
  tec_ctx_clear_error(ctx);
  c.pack = 0;
  c.nr = 20;
  ck_assert_int_ne(topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op), 0);
  assert_err(ctx, "dense: knob 'nr' = 20 is not legal for this problem and target (legal: 4, 8, "
                  "12, 16)");
  tec_ctx_clear_error(ctx);
  c.nr = 16;
  c.mr = 11;
  ck_assert_int_ne(topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op), 0);
  assert_err(ctx, "dense: knob 'mr' = 11 is not legal for this problem and target (legal: 1, 2, "
                  "3, 4, 5, 6, 7, 8)");
  tec_ctx_clear_error(ctx);
  c.mr = 4;
  c.ku = 16;
  ck_assert_int_ne(topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op), 0);
  assert_err(ctx, "dense: knob 'ku' = 16 is not legal for this problem and target (legal: 1, 2, "
                  "4, 8)");
  tec_ctx_clear_error(ctx);
  c.ku = 4;
  c.parallel = 3;
  ck_assert_int_ne(topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op), 0);
  assert_err(ctx, "dense: knob 'parallel' = 3 is not legal for this problem and target (legal: "
                  "0, 1, 2)");
  tec_ctx_clear_error(ctx);
  c.parallel = 1;
  ck_assert_ptr_null(tec_target_parse(ctx, "no-such-board")); /* bad text: no value to schedule for */
  tu_assert_contains(tec_ctx_error(ctx), "no-such-board");
  tec_ctx_clear_error(ctx);
  OK(ctx, topi_schedule(&d, &c, tec_target_parse(ctx, "rasp4b"), &op));
  ck_assert_int_ne(topi_schedule(&d, NULL, tec_target_parse(ctx, "rasp4b"), &op), 0);
  /* a declaration of another template */
  topi_conv2d cp = {.n = 1, .c_in = 4, .h = 3, .w = 3, .c_out = 4, .kh = 1, .kw = 1,
                    .stride_h = 1, .stride_w = 1, .groups = 4,
                    .in_layout = {.kind = TOPI_NCHWC, .block = 4},
                    .out_layout = {.kind = TOPI_NCHWC, .block = 4}};
  topi_decl dd;
  OK(ctx, topi_declare(ctx, "depthwise_nchwc", &cp, &dd));
  ck_assert_int_ne(topi_schedule(&dd, &c, NULL, &op), 0); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'depthwise_nchwc' reads a topi_depthwise_nchwc_config, not a topi_dense_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_ne(topi_template_find("dense")->schedule(&dd, &c, NULL, &op), 0);
  assert_err(ctx, "dense: the declaration is of template 'depthwise_nchwc'");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- NEON ---------- */
START_TEST(dense_neon) {
  tec_ctx *ctx = tec_ctx_new();
  topi_dense p = prob(24, 64, 32, 0, 0, 1, 0, TOPI_ACT_RELU);
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find("dense"), &p, tec_target_parse(ctx, "rasp4b"), &op));
  lower_func *f = tec_lower(op.sched, "dense", op.nargs, op.args);
  char *s = tu_emit_text(ctx, f, "rasp4b", TEC_EMIT_ASM);
  tu_assert_contains(s, "fmla\tv");
  tu_assert_contains(s, ".4s");
  free(s);
  /* the fully connected layer, b constant and transposed, on ARMv7 */
  p = prob(1, 30, 40, 1, 1, 1, 0, TOPI_ACT_RELU6);
  OK(ctx, topi_instantiate(ctx, topi_template_find("dense"), &p, tec_target_parse(ctx, "rasp4b32"), &op));
  f = tec_lower(op.sched, "fc", op.nargs, op.args);
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(f->prepare);
  s = tu_emit_text(ctx, f, "rasp4b32", TEC_EMIT_ASM);
  /* ARMv7 NEON's multiply-accumulate on q registers */
  ck_assert_msg(strstr(s, "\tvfma.f32\tq") || strstr(s, "\tvmla.f32\tq"), "no vfma/vmla .f32 q:\n%.3000s", s);
  free(s);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dense");
  TCase *tc = tcase_create("dense");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, dense_sizes);
  tcase_add_test(tc, dense_configs);
  tcase_add_test(tc, dense_const_b);
  tcase_add_test(tc, dense_space);
  tcase_add_test(tc, dense_bad);
  tcase_add_test(tc, dense_neon);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
