/* test_dw_pw_fused.c — the depthwise + pointwise template (topi/dw_pw_fused.c).
 *
 * Every case is declared, scheduled (the host's default config, or one with knobs changed),
 * lowered, JIT-built and run twice through tec_module_run (prepare, then run), then compared
 * with the naive reference of tests/support/convref.c applied twice on plain NCHW arrays: the
 * depthwise conv (+ bias, activation; double accumulation, rounded to float as the template's
 * intermediate is), then the pointwise (+ bias, residual, activation). Covered: strides 1 and
 * 2, channel counts the blocks do not divide, n = 2, odd sizes, bias and relu/relu6 or none on
 * each conv, a residual on the pointwise, fused (every row tile of a small case) and unfused,
 * tiles from the space, the dw output tile's allocation inside the parallel loop when fused,
 * and bad problems and knobs with their exact messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"

#define NCHWC(b) ((topi_layout){.kind = TOPI_NCHWC, .block = (b)})

/* c x h x w, depthwise k3 stride s pad 1, then 1x1 to co; blocks bi (in, between) and bo (out). */
static topi_dw_pw block(int64_t n, int64_t c, int64_t h, int64_t w, int64_t co, int64_t s,
                        int64_t bi, int64_t bo, topi_epilogue de, topi_epilogue pe) {
  int64_t oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
  topi_dw_pw p;
  p.dw = (topi_conv2d){.n = n, .c_in = c, .h = h, .w = w, .c_out = c, .kh = 3, .kw = 3,
                       .stride_h = s, .stride_w = s, .pad_h = 1, .pad_w = 1, .groups = c,
                       .in_layout = NCHWC(bi), .out_layout = NCHWC(bi), .epi = de};
  p.pw = (topi_conv2d){.n = n, .c_in = c, .h = oh, .w = ow, .c_out = co, .kh = 1, .kw = 1,
                       .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = NCHWC(bi),
                       .out_layout = NCHWC(bo), .epi = pe};
  return p;
}

static const topi_epilogue BR = {.bias = 1, .act = TOPI_ACT_RELU},
                           BR6 = {.bias = 1, .act = TOPI_ACT_RELU6}, NONE = {.act = TOPI_ACT_NONE},
                           RES = {.bias = 1, .residual = 1, .act = TOPI_ACT_RELU};

/* Runs p with cfg (NULL: the default; else the default with the knobs of `knobs` set, as
 * tune_config_parse reads them) and returns the max error against the reference. */
static double run(const topi_dw_pw *p, const char *knobs, char **ir_out) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_op op;
  OK(ctx, topi_declare(ctx, "dw_pw_fused", p, &d));
  OK(ctx, topi_space_of(ctx, "dw_pw_fused", p, NULL, &sp));
  topi_dw_pw_fused_config cfg;
  OK(ctx, tune_config_parse(ctx, &sp, knobs ? knobs : "", &cfg));
  OK(ctx, topi_schedule(&d, &cfg, NULL, &op));
  lower_func *f = tec_lower(op.sched, "block", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_msg(f->prepare != NULL, "the kernel packing is not in prepare");
  if (ir_out) *ir_out = strdup(tec_lower_str(f));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));

  const topi_conv2d *dw = &p->dw, *pw = &p->pw;
  int64_t c = dw->c_in, co = pw->c_out, oh = pw->h, ow = pw->w, n = dw->n;
  int64_t sx[4] = {n, c, dw->h, dw->w}, sdw[4] = {c, 1, 3, 3}, spw[4] = {co, c, 1, 1};
  int64_t so[4] = {n, co, oh, ow};
  DLTensor x = tu_rand_f32(4, sx, 21), wd = tu_rand_f32(4, sdw, 22), bd = tu_rand_f32(1, &c, 23);
  DLTensor wp = tu_rand_f32(4, spw, 24), bp = tu_rand_f32(1, &co, 25), r = tu_rand_f32(4, so, 26);
  int64_t nm = n * c * oh * ow, no = n * co * oh * ow;
  float *mid = malloc(sizeof(float) * (size_t)nm), *ref = malloc(sizeof(float) * (size_t)no);
  float *got = malloc(sizeof(float) * (size_t)no);
  cr_conv2d(dw, x.data, wd.data, dw->epi.bias ? bd.data : NULL, NULL, mid);
  cr_conv2d(pw, mid, wp.data, pw->epi.bias ? bp.data : NULL, pw->epi.residual ? r.data : NULL,
            ref);

  DLTensor xl = cr_make(dw->in_layout, n, c, dw->h, dw->w, x.data);
  DLTensor rl = cr_make(pw->out_layout, n, co, oh, ow, r.data);
  DLTensor ol = cr_make(pw->out_layout, n, co, oh, ow, NULL);
  DLTensor *args[7];
  int na = 0;
  args[na++] = &xl;
  args[na++] = &wd;
  if (dw->epi.bias) args[na++] = &bd;
  args[na++] = &wp;
  if (pw->epi.bias) args[na++] = &bp;
  if (pw->epi.residual) args[na++] = &rl;
  args[na++] = &ol;
  ck_assert_int_eq(na, op.nargs);
  for (int call = 0; call < 2; call++)
    ck_assert_msg(tec_module_run(m, "block", na, args) == 0, "%s", tec_rt_last_error());
  ck_assert_int_eq(tec_module_prepare_count(m, "block"), 1);
  cr_from_layout(pw->out_layout, n, co, oh, ow, ol.data, got);
  double err = tu_max_err(got, ref, no);
  ck_assert_int_eq(cr_ring_written(pw->out_layout, n, co, oh, ow, ol.data), 0); /* margin */
  int64_t B = pw->out_layout.block, cb = (co + B - 1) / B;
  for (int64_t i = 0; co % B && !pw->out_layout.margin && i < n * oh * ow; i++) /* past c_out: 0 */
    for (int64_t v = co % B; v < B; v++) {
      float e = ((float *)ol.data)[((i / (oh * ow) * cb + cb - 1) * oh * ow + i % (oh * ow)) * B + v];
      ck_assert_msg(e == 0.0f, "padded output lane %lld is %g, not 0", (long long)v, (double)e);
    }
  free(mid), free(ref), free(got);
  tec_dl_free(&x), tec_dl_free(&wd), tec_dl_free(&bd), tec_dl_free(&wp), tec_dl_free(&bp);
  tec_dl_free(&r), tec_dl_free(&xl), tec_dl_free(&rl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

static void check(const topi_dw_pw *p, const char *knobs) {
  double err = run(p, knobs, NULL);
  ck_assert_msg(err < 1e-4, "%lldx%lldx%lld s%lld -> %lld [%s]: relative error %g",
                (long long)p->dw.c_in, (long long)p->dw.h, (long long)p->dw.w,
                (long long)p->dw.stride_h, (long long)p->pw.c_out, knobs ? knobs : "default",
                err);
}

START_TEST(shape_sweep) {
  const topi_dw_pw ps[] = {
      block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR),
      block(1, 40, 11, 9, 24, 2, 16, 16, BR6, BR6), /* stride 2, 40 = 2.5 blocks, odd sizes */
      block(2, 20, 7, 8, 33, 1, 16, 8, NONE, RES),  /* n = 2, residual, blocks 16 -> 8 */
      block(1, 13, 10, 10, 5, 2, 4, 4, BR, NONE),   /* 4-lane blocks, few channels */
      block(1, 16, 1, 1, 16, 1, 16, 16, BR6, BR),   /* 1x1 image */
  };
  /* fused per row and unfused each; under qemu the first two shapes */
  const char *cfgs[] = {"fused=1", "fused=0", "fused=1 parallel=0", "fused=0 parallel=0"};
  size_t n = tu_emulated() ? 2 : sizeof ps / sizeof ps[0];
  for (size_t i = 0; i < n; i++) {
    check(&ps[i], cfgs[i % 4]);
    check(&ps[i], cfgs[(i + 1) % 4]);
  }
}
END_TEST

/* Margins: data's (dw reads its padding from the ring) and out's and the residual's (pw writes
 * the window); the intermediate between them takes none. */
START_TEST(margins) {
  topi_dw_pw ps[] = {block(1, 32, 12, 12, 48, 1, 16, 16, BR, RES),
                     block(1, 40, 11, 9, 24, 2, 16, 8, BR6, BR6)};
  ps[0].dw.in_layout.margin = 1, ps[0].pw.out_layout.margin = 1;
  ps[1].dw.in_layout.margin = 2, ps[1].pw.out_layout.margin = 1;
  for (int i = 0; i < 2; i++) {
    check(&ps[i], "fused=1");
    check(&ps[i], "fused=0");
  }
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  ps[0].dw.out_layout.margin = ps[0].pw.in_layout.margin = 1;
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &ps[0], &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "dw_pw_fused: dw's output layout NCHW16c+m1 has a "
                                         "margin of 1; dw_pw_fused's intermediate takes margin 0 only");
  tec_ctx_free(ctx);
}
END_TEST

/* Every row tile of one case, fused, with tiles that leave tails. */
START_TEST(every_row_tile) {
  topi_dw_pw p = block(1, 24, 12, 12, 20, 2, 8, 16, BR6, BR6); /* 6x6 out */
  const char *cfgs[] = {"fused=2 ow_tile=5 oc_tiles=2 dw_ow_tile=4 dw_oh_tile=2",
                        "fused=3 ow_tile=7 ic_split=3 ic_unroll=1 dw_ow_tile=5 dw_oh_tile=3",
                        "fused=6 ow_tile=12", "fused=0 ow_tile=5 oc_tiles=2 dw_oh_tile=2"};
  size_t n = tu_emulated() ? 1 : sizeof cfgs / sizeof cfgs[0];
  for (size_t i = 0; i < n; i++) check(&p, cfgs[i]);
}
END_TEST

/* A dilated depthwise (dilation 2, padding 2: the same output size), fused and not: the fused
 * row tiles read the input rows the dilated kernel spans. */
START_TEST(dilated) {
  topi_dw_pw p = block(1, 24, 12, 11, 20, 1, 8, 16, BR6, BR);
  p.dw.dilation_h = p.dw.dilation_w = 2, p.dw.pad_h = p.dw.pad_w = 2;
  check(&p, "fused=2");
  check(&p, "fused=0");
  p = block(1, 16, 13, 12, 16, 2, 16, 16, BR, NONE); /* stride 2, dilation 2x1, padding 2x1 */
  p.dw.dilation_h = 2, p.dw.pad_h = 2;
  check(&p, "fused=1");
}
END_TEST

/* MobileNet v1's 28x28 block (mb09_dw + mb10_pw) fused and not. */
START_TEST(mobilenet_28) {
  topi_dw_pw p = block(1, 256, 28, 28, 256, 1, 16, 16, BR, BR);
  check(&p, "fused=1 ow_tile=28");
  if (!tu_emulated()) check(&p, "fused=0");
}
END_TEST

/* Fused, the dw output tile is allocated inside the parallel row loop: R rows x ow x all blocks
 * (2 x 10 x 2 x 16 floats here); unfused, the whole dw output before the pointwise's nest. */
START_TEST(tile_in_loop) {
  topi_dw_pw p = block(1, 32, 20, 10, 16, 2, 16, 16, BR, BR); /* 10x5 out */
  char *ir = NULL;
  ck_assert_double_lt(run(&p, "fused=2 ow_tile=5", &ir), 1e-4);
  const char *par = strstr(ir, "parallel"), *alloc = strstr(ir, "dw_out");
  ck_assert_msg(par && alloc && par < alloc, "dw_out not inside the parallel loop:\n%.3000s", ir);
  tu_assert_contains(ir, "allocate dw_out[float32 * 320]");
  free(ir);
  ck_assert_double_lt(run(&p, "fused=0", &ir), 1e-4);
  tu_assert_contains(ir, "allocate dw_out[float32 * 1600]");
  free(ir);
}
END_TEST

START_TEST(space_and_names) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("dw_pw_fused");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->problem_kind, TOPI_PROBLEM_DW_PW);
  topi_dw_pw p = block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR);
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "dw_pw_fused", &p, NULL, &sp));
  ck_assert_int_eq(sp.nknobs, 8);
  ck_assert_str_eq(sp.knobs[0].name, "fused");
  ck_assert_int_eq(sp.knobs[0].nvalues, 7); /* 0 and the divisors of 12 */
  ck_assert_int_eq(sp.knobs[0].values[6], 12);
  ck_assert_int_eq(tune_space_check(ctx, &sp, sp.default_config), 0);
  topi_decl d;
  OK(ctx, topi_declare(ctx, "dw_pw_fused", &p, &d));
  ck_assert_int_eq(d.nargs, 6);
  const char *want[] = {"data", "dw_kernel", "dw_bias", "pw_kernel", "pw_bias", "out"};
  for (int i = 0; i < 6; i++) ck_assert_str_eq(d.args[i]->name, want[i]);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_dw_pw p = block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR);
  p.pw.c_in = 48;
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &p, &d), 0);
  assert_err(ctx, "dw_pw_fused: pw must read dw's output: n=1 c_in=32 h=12 w=12 in NCHW16c "
                  "(got n=1 c_in=48 h=12 w=12 in NCHW16c)");
  tec_ctx_clear_error(ctx);
  p = block(1, 32, 12, 12, 48, 2, 16, 16, BR, BR);
  p.pw.h = 12;
  ck_assert_int_ne(topi_space_of(ctx, "dw_pw_fused", &p, NULL, &sp), 0);
  assert_err(ctx, "dw_pw_fused: pw must read dw's output: n=1 c_in=32 h=6 w=6 in NCHW16c "
                  "(got n=1 c_in=32 h=12 w=6 in NCHW16c)");
  tec_ctx_clear_error(ctx);
  p = block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR);
  p.pw.kh = p.pw.kw = 3;
  p.pw.pad_h = p.pw.pad_w = 1;
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &p, &d), 0);
  assert_err(ctx, "dw_pw_fused: pw must be 1x1, stride 1, unpadded (got kernel 3x3, stride 1x1, "
                  "pad 1x1)");
  tec_ctx_clear_error(ctx);
  p = block(1, 32, 12, 12, 48, 1, 16, 16, RES, BR);
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &p, &d), 0);
  assert_err(ctx, "dw_pw_fused: dw: a residual is not supported (the pointwise may have one)");
  tec_ctx_clear_error(ctx);
  p = block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR);
  p.dw.groups = 1;
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &p, &d), 0);
  assert_err(ctx, "dw_pw_fused: dw: not depthwise (needs groups == c_in == c_out)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", NULL, &d), 0);
  assert_err(ctx, "dw_pw_fused: problem and decl are required");
  tec_ctx_clear_error(ctx);
  /* knobs: a row tile that does not divide the output height, a tile out of range */
  p = block(1, 32, 12, 12, 48, 1, 16, 16, BR, BR);
  OK(ctx, topi_space_of(ctx, "dw_pw_fused", &p, NULL, &sp));
  topi_dw_pw_fused_config cfg;
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "fused=5", &cfg), 0);
  assert_err(ctx, "dw_pw_fused: knob 'fused' = 5 is not legal for this problem and target "
                  "(legal: 0, 1, 2, 3, 4, 6, 12)");
  tec_ctx_clear_error(ctx);
  OK(ctx, topi_declare(ctx, "dw_pw_fused", &p, &d));
  cfg = *(const topi_dw_pw_fused_config *)sp.default_config;
  cfg.oc_tiles = 4;
  topi_op op;
  ck_assert_int_ne(topi_schedule(&d, &cfg, NULL, &op), 0);
  assert_err(ctx, "dw_pw_fused: knob 'oc_tiles' = 4 is not legal for this problem and target "
                  "(legal: 1, 2, 3)");
  tec_ctx_clear_error(ctx);
  /* a declaration of another template */
  topi_decl other;
  OK(ctx, topi_declare(ctx, "depthwise_nchwc", &p.dw, &other));
  cfg = *(const topi_dw_pw_fused_config *)sp.default_config;
  ck_assert_int_ne(topi_schedule(&other, &cfg, NULL, &op), 0); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'depthwise_nchwc' reads a topi_depthwise_nchwc_config, not a topi_dw_pw_fused_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_ne(topi_template_find("dw_pw_fused")->schedule(&other, &cfg, NULL, &op), 0);
  assert_err(ctx, "dw_pw_fused: the declaration is of template 'depthwise_nchwc'");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dw_pw_fused");
  const struct {
    const char *name;
    const TTest *test;
  } cases[] = {{"shape_sweep", shape_sweep},   {"every_row_tile", every_row_tile},
               {"mobilenet_28", mobilenet_28}, {"dilated", dilated}, {"tile_in_loop", tile_in_loop},
               {"space_and_names", space_and_names}, {"bad_input", bad_input},
               {"margins", margins}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return tu_run(s);
}
