/* test_topi.c — the operator-template layer: the registry, knob spaces, layouts and the layout
 * transform, the depthwise templates (NCHW[x]c and the NCHW spatial pack) against a naive C
 * reference over a shape sweep, their NEON code, and bad problems and configs. */
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"

static topi_conv2d dwp(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s,
                       int64_t pad, int64_t block) {
  topi_layout l = block ? (topi_layout){.kind = TOPI_NCHWC, .block = block}
                        : (topi_layout){.kind = TOPI_NCHW};
  return (topi_conv2d){.n = n, .c_in = c, .h = h, .w = w, .c_out = c, .kh = k, .kw = k,
                       .stride_h = s, .stride_w = s, .pad_h = pad, .pad_w = pad, .groups = c,
                       .in_layout = l, .out_layout = l,
                       .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
}

/* ---------- registry and spaces ---------- */
START_TEST(registry_and_spaces) {
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_ptr_null(topi_template_find("nope"));
  ck_assert_ptr_null(topi_template_at(topi_template_count()));
  topi_conv2d p = dwp(1, 20, 9, 9, 3, 1, 1, 16);
  topi_layout_problem lp = {.n = 1, .c = 20, .h = 9, .w = 9,
                            .from = {.kind = TOPI_NCHW, .block = 0},
                            .to = {.kind = TOPI_NCHWC, .block = 16}};
  for (int i = 0; i < topi_template_count(); i++) {
    const topi_template *t = topi_template_at(i);
    ck_assert_ptr_eq(topi_template_find(t->name), t);
    const void *prob = t->problem_kind == TOPI_PROBLEM_LAYOUT ? (const void *)&lp : (const void *)&p;
    /* the pool, softmax and eltwise templates: tests/test_ops.c */
    if ((t->problem_kind != TOPI_PROBLEM_CONV2D && t->problem_kind != TOPI_PROBLEM_LAYOUT) ||
        !t->applies(ctx, prob, NULL))
      continue;
    tune_space sp;
    ck_assert_msg(t->space(ctx, prob, NULL, &sp) == 0, "%s", tec_ctx_error(ctx));
    ck_assert_str_eq(sp.name, t->name);
    ck_assert_int_eq((int)sp.config_size, (int)t->config_size);
    ck_assert_int_eq(tune_space_check(ctx, &sp, sp.default_config), 0);
    int64_t size = tune_space_size(&sp), range = tune_space_range(&sp);
    ck_assert_int_ge(size, 1);
    ck_assert_int_eq(size, range - sp.pruned);
    ck_assert(sp.rule ? sp.pruned >= 0 : sp.pruned == 0);
    /* every config the enumeration gives is legal, the last index is the last values (in the
     * space or refused by its rule), the default is in the space */
    void *cfg = malloc(sp.config_size);
    ck_assert_int_ge(tune_space_config(&sp, range - 1, cfg), 0);
    ck_assert_int_eq(tune_space_check(ctx, &sp, cfg), 0);
    for (int k = 0; k < sp.nknobs; k++)
      ck_assert_int_eq(tune_config_get(&sp, cfg, k), sp.knobs[k].values[sp.knobs[k].nvalues - 1]);
    ck_assert_int_eq(tune_space_config(&sp, range, cfg), -1);
    ck_assert_int_eq(tune_space_allows_config(&sp, sp.default_config), 1);
    /* the default index is the default config, both ways */
    int64_t def = tune_space_default_index(&sp);
    ck_assert_int_eq(tune_space_index(&sp, sp.default_config), def);
    ck_assert_int_eq(tune_space_config(&sp, def, cfg), 0);
    ck_assert_int_eq(memcmp(cfg, sp.default_config, sp.config_size), 0);
    free(cfg);
  }
  /* the default is in the space on every target, also where the blocks are wide for the
   * registers (AVX2 and NEON with 16 or 64 channels a block: the default tile narrowed to what
   * the registers hold, at least 1 x 1) */
  static const char *const tg[] = {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "rasp4b", "rasp4b32",
                                   "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"};
  for (int ti = 0; ti < 4; ti++)
    for (int64_t blk = 4; blk <= 64; blk *= 4) {
      topi_conv2d q = dwp(1, 64, 28, 28, 3, 1, 1, blk);
      tune_space s2;
      ck_assert_msg(topi_space_of(ctx, "depthwise_nchwc", &q, tec_target_parse(ctx, tg[ti]), &s2) == 0, "%s: %s", tg[ti], tec_ctx_error(ctx));
      ck_assert_int_eq(tune_space_allows_config(&s2, s2.default_config), 1);
      ck_assert_int_ge(tune_space_size(&s2), 2);
      topi_conv2d c2 = q;
      c2.groups = 1, c2.c_out = 128;
      ck_assert_msg(topi_space_of(ctx, "conv2d_nchwc", &c2, tec_target_parse(ctx, tg[ti]), &s2) == 0, "%s: %s", tg[ti], tec_ctx_error(ctx));
      ck_assert_int_eq(tune_space_allows_config(&s2, s2.default_config), 1);
    }
  /* the depthwise template's space, exactly (AVX-512: 16 lanes, 32 registers; the rule
   * refuses oh_tile * ow_tile + 2 > 32: 4x8 and 4x9, each with parallel 0 and 1) */
  tune_space sp;
  ck_assert_int_eq(topi_space_of(ctx, "depthwise_nchwc", &p, tec_target_parse(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"), &sp), 0);
  ck_assert_int_eq(sp.nknobs, 3);
  ck_assert_str_eq(sp.knobs[0].name, "ow_tile");
  ck_assert_int_eq(sp.knobs[0].nvalues, 9); /* 1..9 */
  ck_assert_int_eq(tune_space_range(&sp), 9 * 4 * 2);
  ck_assert_int_eq(tune_space_size(&sp), 9 * 4 * 2 - 2 * 2);
  topi_depthwise_nchwc_config c = {.ow_tile = 3, .oh_tile = 2, .parallel = 0};
  ck_assert_str_eq(tune_config_str(ctx, &sp, &c), "ow_tile=3 oh_tile=2 parallel=0");
  c.ow_tile = 10;
  ck_assert_int_ne(tune_space_check(ctx, &sp, &c), 0);
  assert_err(ctx, "depthwise_nchwc: knob 'ow_tile' = 10 is not legal for this problem and target "
                  "(legal: 1, 2, 3, 4, 5, 6, 7, 8, 9)");
  tec_ctx_clear_error(ctx);
  /* parsing a config: the printed form round-trips, unnamed knobs keep the default */
  topi_depthwise_nchwc_config q;
  ck_assert_int_eq(tune_config_parse(ctx, &sp, "ow_tile=3 oh_tile=2 parallel=0", &q), 0);
  ck_assert_int_eq(q.ow_tile, 3);
  ck_assert_int_eq(q.oh_tile, 2);
  ck_assert_int_eq(q.parallel, 0);
  const topi_depthwise_nchwc_config *dc = sp.default_config;
  ck_assert_int_eq(tune_config_parse(ctx, &sp, " ow_tile=5,", &q), 0);
  ck_assert_int_eq(q.ow_tile, 5);
  ck_assert_int_eq(q.oh_tile, dc->oh_tile);
  ck_assert_int_eq(tune_config_parse(ctx, &sp, "", &q), 0);
  ck_assert_int_eq(q.ow_tile, dc->ow_tile);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "ow_tiles=3", &q), 0);
  assert_err(ctx, "depthwise_nchwc: config: no knob 'ow_tiles' (knobs: ow_tile, oh_tile, parallel)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "ow_tile=3x", &q), 0);
  assert_err(ctx, "depthwise_nchwc: config: knob 'ow_tile' needs an integer value, got '3x' "
                  "(legal: 1, 2, 3, 4, 5, 6, 7, 8, 9)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "ow_tile", &q), 0);
  assert_err(ctx, "depthwise_nchwc: config 'ow_tile' is not knob=value");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "ow_tile=", &q), 0);
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "ow_tile=12", &q), 0);
  assert_err(ctx, "depthwise_nchwc: knob 'ow_tile' = 12 is not legal for this problem and target "
                  "(legal: 1, 2, 3, 4, 5, 6, 7, 8, 9)");
  tec_ctx_clear_error(ctx);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- layouts ---------- */
/* ---------- the checked calls by name ---------- */
START_TEST(checked_calls) {
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d p = dwp(1, 16, 9, 9, 3, 1, 1, 16);
  topi_dense dp = {.m = 8, .n = 16, .k = 8};
  topi_decl d;
  tune_space sp;
  /* an unknown name lists the registered templates */
  ck_assert_int_eq(topi_declare(ctx, "densee", &dp, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "topi_declare: no template 'densee' (templates: conv2d_nchwc, ");
  tu_assert_contains(tec_ctx_error(ctx), "dense, ");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, NULL, &dp, NULL, &sp), -1);
  tu_assert_contains(tec_ctx_error(ctx), "topi_space_of: no template '(null)' (templates: ");
  tec_ctx_clear_error(ctx);
  /* a problem of another template's type */
  ck_assert_int_eq(topi_declare(ctx, "dense", &p, &d), -1);
  assert_err(ctx, "topi_declare: template 'dense' takes a topi_dense problem, not a topi_conv2d");
  tec_ctx_clear_error(ctx);
  const topi_conv2d *cp = &p;
  ck_assert_int_eq(topi_space_of(ctx, "layout_transform", cp, NULL, &sp), -1);
  assert_err(ctx, "topi_space_of: template 'layout_transform' takes a topi_layout_problem problem, "
                  "not a topi_conv2d");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, "dense", &dp, NULL, NULL), -1);
  assert_err(ctx, "topi_space_of: dense: the space (out) is NULL");
  tec_ctx_clear_error(ctx);
  /* the right types, and a void pointer (unchecked) reach the template */
  OK(ctx, topi_declare(ctx, "depthwise_nchwc", &p, &d));
  ck_assert_ptr_eq(d.tmpl, topi_template_find("depthwise_nchwc"));
  const void *vp = &p;
  OK(ctx, topi_space_of(ctx, "depthwise_nchwc", vp, NULL, &sp));
  ck_assert_str_eq(sp.name, "depthwise_nchwc");
  topi_depthwise_nchwc_config c = *(const topi_depthwise_nchwc_config *)sp.default_config;
  topi_op op;
  OK(ctx, topi_schedule(&d, &c, NULL, &op));
  ck_assert_ptr_eq(op.decl, &d);
  OK(ctx, topi_schedule(&d, sp.default_config, NULL, &op));
  /* a config of another type */
  topi_dense_config dc = {0};
  ck_assert_int_eq(topi_schedule(&d, &dc, NULL, &op), -1);
  assert_err(ctx, "topi_schedule: template 'depthwise_nchwc' reads a topi_depthwise_nchwc_config, "
                  "not a topi_dense_config");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(layout_parse) {
  tec_ctx *ctx = tec_ctx_new();
  topi_layout l;
  ck_assert_int_eq(topi_layout_parse(ctx, "NCHW16c", &l), 0);
  ck_assert_int_eq(l.kind, TOPI_NCHWC);
  ck_assert_int_eq(l.block, 16);
  ck_assert_str_eq(topi_layout_str(ctx, l), "NCHW16c");
  ck_assert_int_eq(topi_layout_parse(ctx, "NHWC", &l), 0);
  ck_assert_int_eq(l.kind, TOPI_NHWC);
  ck_assert_str_eq(topi_layout_str(ctx, l), "NHWC");
  static const char *const bad[] = {"NCHW0c", "NCHW16", "NCHW16cx", "nchw", "NCHW-4c", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tec_ctx_clear_error(ctx);
    ck_assert_int_ne(topi_layout_parse(ctx, bad[i], &l), 0);
    tu_assert_contains(tec_ctx_error(ctx), "(legal: NCHW, NHWC, NCHW<x>c with 1 <= x <= 4096");
  }
  tec_ctx_free(ctx);
}
END_TEST

static void check_transform(topi_layout from, topi_layout to, int64_t n, int64_t c, int64_t h,
                            int64_t w) {
  tec_ctx *ctx = tec_ctx_new();
  topi_layout_problem p = {.n = n, .c = c, .h = h, .w = w, .from = from, .to = to};
  topi_op op;
  ck_assert_msg(topi_instantiate(ctx, topi_template_find("layout_transform"), &p, NULL, &op) == 0,
                "%s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "lt", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t s4[4] = {n, c, h, w}, si[5], so[5];
  DLTensor plain = tu_rand_f32(4, s4, 3);
  int ni = cr_shape(from, n, c, h, w, si), no = cr_shape(to, n, c, h, w, so);
  DLTensor in = tu_zeros(TEC_F32, ni, si), out = tu_zeros(TEC_F32, no, so);
  DLTensor want = tu_zeros(TEC_F32, no, so);
  cr_to_layout(from, n, c, h, w, plain.data, in.data);
  cr_to_layout(to, n, c, h, w, plain.data, want.data);
  for (int64_t i = 0; i < tec_dl_numel(&out); i++) tu_f32(&out)[i] = 7.0f; /* padding must be written */
  ck_assert_msg(tec_module_run(m, "lt", 2, (DLTensor *[]){&in, &out}) == 0, "%s",
                tec_rt_last_error());
  ck_assert_msg(memcmp(out.data, want.data, sizeof(float) * (size_t)tec_dl_numel(&out)) == 0,
                "%s -> %s, %lldx%lldx%lldx%lld: wrong values", topi_layout_str(ctx, from),
                topi_layout_str(ctx, to), (long long)n, (long long)c, (long long)h, (long long)w);
  tec_dl_free(&plain), tec_dl_free(&in), tec_dl_free(&out), tec_dl_free(&want);
  tec_ctx_free(ctx);
}

START_TEST(layout_transforms) {
  const topi_layout L[] = {{.kind = TOPI_NCHW}, {.kind = TOPI_NHWC},
                           {.kind = TOPI_NCHWC, .block = 16}, {.kind = TOPI_NCHWC, .block = 4}, {.kind = TOPI_NCHWC, .block = 1}};
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < 5; b++) {
      if (a == b || (tu_emulated() && a + b != 2)) continue;
      check_transform(L[a], L[b], 1, 20, 5, 7);  /* 20 channels: a partial block of 16 */
      check_transform(L[a], L[b], 2, 3, 1, 17);  /* fewer channels than a block, 1 row */
    }
  check_transform(L[0], L[2], 1, 32, 28, 28);
}
END_TEST

START_TEST(layout_bad_problem) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_layout_problem p = {.n = 1, .c = 0, .h = 5, .w = 5, .from = {.kind = TOPI_NCHW, .block = 0},
                           .to = {.kind = TOPI_NCHWC, .block = 16}};
  ck_assert_int_ne(topi_declare(ctx, "layout_transform", &p, &d), 0);
  assert_err(ctx, "topi_layout_declare: sizes must be >= 1 (got n=1 c=0 h=5 w=5)");
  tec_ctx_clear_error(ctx);
  p.c = 4;
  p.to.block = 0;
  ck_assert_int_ne(topi_declare(ctx, "layout_transform", &p, &d), 0);
  assert_err(ctx, "topi_layout_declare: to layout {kind 2, block 0} is not legal (TOPI_NCHW or "
                  "TOPI_NHWC with block 0, TOPI_NCHWC with 1 <= block <= 4096)");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- depthwise NCHW[x]c ---------- */
static void check_dw(const char *tmpl, topi_conv2d p, const void *cfg) {
  double err = cr_check_template(tmpl, &p, cfg);
  ck_assert_msg(err < 1e-5, "%s n=%lld c=%lld %lldx%lld k=%lld s=%lld pad=%lld block=%lld: "
                            "error %g", tmpl, (long long)p.n, (long long)p.c_in, (long long)p.h,
                (long long)p.w, (long long)p.kh, (long long)p.stride_h, (long long)p.pad_h,
                (long long)p.in_layout.block, err);
}

START_TEST(depthwise_nchwc_sweep) {
  /* n, c, h, w, k, stride, pad, block */
  static const int64_t shapes[][8] = {
      {1, 16, 8, 8, 3, 1, 1, 16},  {1, 20, 9, 7, 3, 1, 1, 16},  {2, 5, 5, 5, 3, 2, 1, 4},
      {1, 1, 1, 1, 1, 1, 0, 16},   {1, 1, 1, 1, 3, 1, 1, 16},   {1, 3, 2, 2, 3, 1, 2, 8},
      {1, 13, 13, 11, 3, 2, 0, 8}, {1, 17, 17, 17, 5, 1, 2, 16}, {1, 7, 3, 29, 3, 2, 2, 4},
      {1, 32, 31, 30, 3, 1, 1, 16}, {1, 4, 6, 6, 1, 2, 0, 4},   {1, 8, 4, 4, 3, 1, 0, 1},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    if (tu_emulated() && i % 3) continue;
    const int64_t *s = shapes[i];
    topi_conv2d p = dwp(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    p.epi.act = (topi_act)(i % 3);
    p.epi.bias = i % 4 != 1;
    p.epi.residual = i % 2;
    check_dw("depthwise_nchwc", p, NULL);
    /* a few configs of its space besides the default */
    tec_ctx *ctx = tec_ctx_new();
    tune_space sp;
    ck_assert_int_eq(topi_space_of(ctx, "depthwise_nchwc", &p, NULL, &sp), 0);
    int64_t size = tune_space_range(&sp);
    for (int64_t k = 0; k < 1 && !tu_emulated(); k++) {
      topi_depthwise_nchwc_config c;
      int64_t idx = (k * 7919 + (int64_t)i) % size;
      while (tune_space_config(&sp, idx, &c) == 1) idx = (idx + 1) % size; /* in the space */
      check_dw("depthwise_nchwc", p, &c);
    }
    tec_ctx_free(ctx);
  }
}
END_TEST

START_TEST(depthwise_nchwc_mobilenet) {
  /* the depthwise layers of MobileNet v1: c, h, stride */
  static const int64_t L[][3] = {{32, 112, 1}, {64, 112, 2}, {128, 56, 1}, {128, 56, 2},
                                 {256, 28, 1}, {256, 28, 2}, {512, 14, 1}, {512, 14, 2},
                                 {1024, 7, 1}};
  size_t n = tu_emulated() ? 2 : sizeof L / sizeof L[0];
  for (size_t i = 0; i < n; i++)
    check_dw("depthwise_nchwc", dwp(1, L[i][0], L[i][1], L[i][1], 3, L[i][2], 1, 16), NULL);
}
END_TEST

START_TEST(dw_spatial_pack_sweep) {
  static const int64_t shapes[][7] = {{1, 16, 8, 8, 3, 1, 1}, {2, 20, 9, 7, 3, 2, 1},
                                      {1, 3, 1, 1, 3, 1, 1},  {1, 9, 6, 6, 5, 1, 2}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int64_t *s = shapes[i];
    topi_conv2d p = dwp(s[0], s[1], s[2], s[3], s[4], s[5], s[6], 0);
    p.epi.act = (topi_act)(i % 3);
    p.epi.residual = i % 2;
    check_dw("dw_spatial_pack", p, NULL);
  }
}
END_TEST

START_TEST(depthwise_bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_op op;
  topi_conv2d p = dwp(1, 16, 8, 8, 3, 1, 1, 16);
  p.groups = 1;
  ck_assert_int_ne(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  assert_err(ctx, "depthwise_nchwc: not depthwise (needs groups == c_in == c_out)");
  tec_ctx_clear_error(ctx);
  p = dwp(1, 16, 8, 8, 3, 1, 1, 16);
  p.out_layout.block = 8;
  ck_assert_int_ne(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  assert_err(ctx, "depthwise_nchwc: reads and writes NCHW[x]c with the same block (got NCHW16c -> "
                  "NCHW8c)");
  tec_ctx_clear_error(ctx);
  p = dwp(1, 16, 8, 8, 3, 0, 1, 16);
  ck_assert_int_ne(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "depthwise_nchwc: sizes, kernel and strides must be >= 1");
  tec_ctx_clear_error(ctx);
  p = dwp(1, 16, 2, 2, 5, 1, 0, 16);
  ck_assert_int_ne(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  assert_err(ctx, "depthwise_nchwc: the 5x5 kernel is larger than the padded 2x2 input");
  tec_ctx_clear_error(ctx);
  p = dwp(1, 16, 8, 8, 3, 1, 1, 16);
  p.epi.act = (topi_act)7;
  ck_assert_int_ne(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  assert_err(ctx, "depthwise_nchwc: activation 7 is not one of TOPI_ACT_NONE, _RELU, _RELU6");
  tec_ctx_clear_error(ctx);
  /* a config out of the space; a declaration of another template */
  p = dwp(1, 16, 8, 8, 3, 1, 1, 16);
  ck_assert_int_eq(topi_declare(ctx, "depthwise_nchwc", &p, &d), 0);
  topi_depthwise_nchwc_config c = {.ow_tile = 4, .oh_tile = 9, .parallel = 1};
  ck_assert_int_ne(topi_schedule(&d, &c, NULL, &op), 0);
  assert_err(ctx, "depthwise_nchwc: knob 'oh_tile' = 9 is not legal for this problem and target "
                  "(legal: 1, 2, 3, 4)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "rasp9")); /* a bad text gives no value */
  tu_assert_contains(tec_ctx_error(ctx), "rasp9");
  tec_ctx_clear_error(ctx);
  topi_decl dl;
  topi_layout_problem lp = {.n = 1, .c = 4, .h = 2, .w = 2, .from = {.kind = TOPI_NCHW, .block = 0},
                            .to = {.kind = TOPI_NHWC, .block = 0}};
  ck_assert_int_eq(topi_declare(ctx, "layout_transform", &lp, &dl), 0);
  c.oh_tile = 1;
  ck_assert_int_ne(topi_schedule(&dl, &c, NULL, &op), 0); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'layout_transform' reads a topi_layout_config, not a topi_depthwise_nchwc_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_ne(topi_template_find("depthwise_nchwc")->schedule(&dl, &c, NULL, &op), 0);
  assert_err(ctx, "depthwise_nchwc: the declaration is of template 'layout_transform'");
  /* the spatial pack and the layout transform check it too (they read another template's
   * structs before: a crash, an out-of-bounds read) */
  tec_ctx_clear_error(ctx);
  topi_decl dd;
  ck_assert_int_eq(topi_declare(ctx, "depthwise_nchwc", &p, &dd), 0);
  topi_dw_spatial_pack_config spc = {.vc = 16, .tile_h = 2, .tile_w = 4, .parallel = 1};
  ck_assert_int_ne(topi_schedule(&dd, &spc, NULL, &op), 0); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'depthwise_nchwc' reads a topi_depthwise_nchwc_config, not a topi_dw_spatial_pack_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_ne(topi_template_find("dw_spatial_pack")->schedule(&dd, &spc, NULL, &op), 0);
  assert_err(ctx, "dw_spatial_pack: the declaration is of template 'depthwise_nchwc'");
  tec_ctx_clear_error(ctx);
  topi_layout_config lc = {.vectorize = 1, .parallel = 1};
  ck_assert_int_ne(topi_schedule(&dd, &lc, NULL, &op), 0); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'depthwise_nchwc' reads a topi_depthwise_nchwc_config, not a topi_layout_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_ne(topi_template_find("layout_transform")->schedule(&dd, &lc, NULL, &op), 0);
  assert_err(ctx, "layout_transform: the declaration is of template 'depthwise_nchwc'");
  tec_ctx_free(ctx);
}
END_TEST

/* The NEON default: 4-lane blocks, vector FMAs on v registers, no scalar FP in the kernel. */
START_TEST(depthwise_nchwc_neon) {
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_int_eq(tec_target_vector_bits(ctx, "rasp4b"), 128);
  topi_conv2d p = dwp(1, 32, 14, 14, 3, 1, 1, 4);
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find("depthwise_nchwc"), &p, tec_target_parse(ctx, "rasp4b"), &op));
  lower_func *f = tec_lower(op.sched, "dw", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  char *s = tu_emit_text(ctx, f, "rasp4b", TEC_EMIT_ASM);
  tu_assert_contains(s, "\tfmla\tv");
  assert_not_contains(s, "\tfmadd\ts");
  free(s);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("topi");
  TCase *tc = tcase_create("topi");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, registry_and_spaces);
  tcase_add_test(tc, checked_calls);
  tcase_add_test(tc, layout_parse);
  tcase_add_test(tc, layout_transforms);
  tcase_add_test(tc, layout_bad_problem);
  tcase_add_test(tc, depthwise_nchwc_sweep);
  tcase_add_test(tc, depthwise_nchwc_mobilenet);
  tcase_add_test(tc, dw_spatial_pack_sweep);
  tcase_add_test(tc, depthwise_bad_input);
  tcase_add_test(tc, depthwise_nchwc_neon);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
