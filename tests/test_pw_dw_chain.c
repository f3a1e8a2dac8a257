/* test_pw_dw_chain.c — the pieces a pointwise -> depthwise fusion chains (topi/internal.h):
 * topi_depthwise_nchwc_declare_on (the depthwise over a producer's output instead of its own
 * placeholder) and topi_depthwise_nchwc_schedule_in with rows_outer (its loops (n, row tiles)
 * fused outermost, then the channel blocks, the fused loop returned: where the producer of the
 * rows a tile reads is computed, recomputing the halo row between tiles).
 *
 * Each case: a 1x1 conv2d_nchwc (c -> m, bias, ReLU) declared on its placeholder, the depthwise
 * 3x3 (stride 1 or 2, pad 1, bias, ReLU) declared on its output, both scheduled in one
 * schedule at their default configs but oh_tile = R, the pointwise computed at the returned
 * loop (or at root), lowered, JIT-built and run; compared with tests/support/convref.c's naive
 * reference applied twice on NCHW arrays. Covered: stride 2 and 1, odd sizes (the last row
 * tile short, the halo past the image's bottom and top), channels the 16-blocks do not
 * divide, R from 1 to past the output height, rows_outer without a producer (the plain
 * template's result, other loop order), margins on the chain's input and output, and the
 * declaration's errors.
 */
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"
#include "topi/internal.h"

#define NCHWC(b) ((topi_layout){.kind = TOPI_NCHWC, .block = (b)})

static const topi_epilogue BR = {.bias = 1, .act = TOPI_ACT_RELU};

/* The template names its tensors alike (kernel, kernel_p, bias_p, out): prefix the producer's. */
static void prefix_names(tec_ctx *ctx, te_tensor *t) {
  if ((t->op == TE_PLACEHOLDER && !t->is_const) || !strncmp(t->name, "pw_", 3)) return;
  t->name = tec_ctx_printf(ctx, "pw_%s", t->name);
  for (int i = 0; i < t->ninputs; i++) prefix_names(ctx, (te_tensor *)t->inputs[i]);
}

/* the slid chain's register tile (fused 2): T columns x B channel blocks */
static int64_t slid_t = 4, slid_b = 2;

/* c x h x w --1x1--> m --dw 3x3 stride s, tiles of R rows--> m x oh x ow; fused 1: the
 * pointwise at the depthwise's row loop; 2: its conv there, stored at the top level with a
 * sliding window (topi_conv2d_nchwc_declare_rows / _schedule_slid: no row computed twice, the
 * lowering must say nothing about the store), else at root. Returns the max error against the
 * reference. */
static double chain_m(int64_t c, int64_t m, int64_t h, int64_t w, int64_t s, int64_t R, int fused,
                      int64_t margin) {
  topi_conv2d pw = {.n = 1, .c_in = c, .h = h, .w = w, .c_out = m, .kh = 1, .kw = 1,
                    .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = NCHWC(16),
                    .out_layout = NCHWC(16), .epi = BR};
  pw.in_layout.margin = margin;
  topi_conv2d dw = {.n = 1, .c_in = m, .h = h, .w = w, .c_out = m, .kh = 3, .kw = 3,
                    .stride_h = s, .stride_w = s, .pad_h = 1, .pad_w = 1, .groups = m,
                    .in_layout = NCHWC(16), .out_layout = NCHWC(16), .epi = BR};
  dw.out_layout.margin = margin;
  int64_t oh = (h - 1) / s + 1, ow = (w - 1) / s + 1;
  tec_ctx *ctx = tec_ctx_new();
  topi_decl dp, dd;
  tune_space psp, dsp;
  OK(ctx, fused == 2 ? topi_conv2d_nchwc_declare_rows(ctx, &pw, NULL, &dp)
                     : topi_conv2d_nchwc_declare_on(ctx, &pw, NULL, &dp));
  OK(ctx, topi_depthwise_nchwc_declare_on(ctx, &dw, dp.out, &dd));
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &pw, NULL, &psp));
  OK(ctx, topi_space_of(ctx, "depthwise_nchwc", &dw, NULL, &dsp));
  topi_conv2d_nchwc_config pc = *(const topi_conv2d_nchwc_config *)psp.default_config;
  topi_depthwise_nchwc_config dc = *(const topi_depthwise_nchwc_config *)dsp.default_config;
  pc.parallel = 0; /* inside the depthwise's parallel row loop */
  dc.oh_tile = R;
  prefix_names(ctx, dp.out);
  /* data, pw kernel, pw bias | dw kernel, dw bias, out */
  te_tensor *args[6] = {dp.args[0], dp.args[1], dp.args[2], dd.args[1], dd.args[2], dd.out};
  topi_decl fd = dd;
  fd.nargs = 6, fd.args = args;
  topi_op op;
  sch_iter *rows = NULL;
  OK(ctx, topi_op_begin(&fd, &op));
  if (fused == 2) {
    dc.parallel = 0; /* the window slides along a serial loop */
    pc.ow_tile = slid_t, pc.oc_tiles = slid_b;
  } else
    OK(ctx, topi_conv2d_nchwc_schedule_in(&dp, &pc, op.sched, 0, NULL));
  OK(ctx, topi_depthwise_nchwc_schedule_in(&dd, &dc, op.sched, 1, &rows));
  ck_assert_ptr_nonnull(rows);
  if (fused == 2)
    OK(ctx, topi_conv2d_nchwc_schedule_slid(&dp, &pc, op.sched, sch_stage_of(op.sched, dd.out), rows));
  else if (fused)
    OK(ctx, sch_compute_at(sch_stage_of(op.sched, dp.out), sch_stage_of(op.sched, dd.out), rows));
  lower_func *f = tec_lower(op.sched, "chain", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  if (fused == 2) /* slid, not computed in full per tile (store_at's note) */
    ck_assert_msg(f->nnotes == 0, "slid chain: %s", f->nnotes ? f->notes[0] : "");
  tec_module *mod = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));

  int64_t sx[4] = {1, c, h, w}, s1[4] = {m, c, 1, 1}, s2[4] = {m, 1, 3, 3};
  DLTensor x = tu_rand_f32(4, sx, 31), w1 = tu_rand_f32(4, s1, 32), b1 = tu_rand_f32(1, &m, 33);
  DLTensor w2 = tu_rand_f32(4, s2, 34), b2 = tu_rand_f32(1, &m, 35);
  float *mid = malloc(sizeof(float) * (size_t)(m * h * w));
  float *ref = malloc(sizeof(float) * (size_t)(m * oh * ow)), *got = malloc(sizeof(float) * (size_t)(m * oh * ow));
  cr_conv2d(&pw, x.data, w1.data, b1.data, NULL, mid);
  cr_conv2d(&dw, mid, w2.data, b2.data, NULL, ref);
  DLTensor xl = cr_make(pw.in_layout, 1, c, h, w, x.data), ol = cr_make(dw.out_layout, 1, m, oh, ow, NULL);
  DLTensor *a[6] = {&xl, &w1, &b1, &w2, &b2, &ol};
  ck_assert_msg(tec_module_run(mod, "chain", 6, a) == 0, "%s", tec_rt_last_error());
  cr_from_layout(dw.out_layout, 1, m, oh, ow, ol.data, got);
  double err = tu_max_err(got, ref, m * oh * ow);
  ck_assert_int_eq(cr_ring_written(dw.out_layout, 1, m, oh, ow, ol.data), 0); /* out's margin */
  free(mid), free(ref), free(got);
  tec_dl_free(&x), tec_dl_free(&w1), tec_dl_free(&b1), tec_dl_free(&w2), tec_dl_free(&b2);
  tec_dl_free(&xl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

static double chain(int64_t c, int64_t m, int64_t h, int64_t w, int64_t s, int64_t R, int fused) {
  return chain_m(c, m, h, w, s, R, fused, 0);
}

#define CHECK(c, m, h, w, s, R, fused)                                                            \
  do {                                                                                            \
    double e_ = chain(c, m, h, w, s, R, fused);                                                   \
    ck_assert_msg(e_ < 1e-4, "%dx%dx%d -> %d s%d R=%d fused=%d: error %g", c, h, w, m, s, R,      \
                  fused, e_);                                                                     \
  } while (0)

START_TEST(stride2_fused) {
  CHECK(16, 32, 8, 8, 2, 1, 1);   /* the halo row recomputed by every tile */
  CHECK(24, 40, 11, 13, 2, 2, 1); /* odd sizes: last tile short; 24, 40: partial blocks */
  CHECK(8, 16, 9, 7, 2, 8, 1);    /* R past the output height (5): one tile */
}
END_TEST

/* The sliding window: each tile computes the pointwise's new rows only, into a folded
 * buffer; tiles whose columns divide the width or not (a guarded last tile), R = 1 and 2, the
 * last tile short, the window past the image's bottom, partial channel blocks, stride 1 (two
 * halo rows). */
START_TEST(stride2_slid) {
  slid_t = 4, slid_b = 2;
  CHECK(16, 32, 8, 8, 2, 1, 2);
  CHECK(24, 48, 11, 13, 2, 2, 2); /* 13 columns: tiles of 4 and a guarded one */
  CHECK(24, 40, 12, 12, 2, 1, 2); /* 40 channels: 3 blocks, tiles of 2 and a guarded one */
  CHECK(16, 32, 10, 9, 1, 2, 2);
  slid_t = 3, slid_b = 1;
  CHECK(8, 16, 9, 7, 2, 3, 2);
  double e = chain_m(24, 48, 11, 13, 2, 2, 2, 1); /* margins on the chain's input and output */
  ck_assert_msg(e < 1e-4, "slid, margins: error %g", e);
}
END_TEST

START_TEST(stride1_and_unfused) {
  CHECK(16, 32, 10, 9, 1, 2, 1); /* stride 1: two halo rows per tile */
  CHECK(24, 40, 9, 7, 2, 3, 0);  /* rows outer, the pointwise at root */
}
END_TEST

/* The chain's input read at + 1 in a buffer with a zero ring, its output written into the
 * interior of one (the ring left alone: cr_ring_written); the intermediate takes none. */
START_TEST(margins) {
  double e = chain_m(24, 40, 11, 13, 2, 2, 1, 1);
  ck_assert_msg(e < 1e-4, "margins: error %g", e);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_conv2d dw = {.n = 1, .c_in = 16, .h = 8, .w = 8, .c_out = 16, .kh = 3, .kw = 3,
                    .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .groups = 16,
                    .in_layout = NCHWC(16), .out_layout = NCHWC(16), .epi = BR};
  ck_assert_int_ne(topi_depthwise_nchwc_declare_on(ctx, NULL, NULL, &d), 0);
  assert_err(ctx, "depthwise_nchwc: problem and decl are required");
  tec_ctx_free(ctx);
  ctx = tec_ctx_new(); /* the first error of a context is kept */
  dw.groups = 1;
  ck_assert_int_ne(topi_depthwise_nchwc_declare_on(ctx, &dw, NULL, &d), 0);
  assert_err(ctx, "depthwise_nchwc: not depthwise (needs groups == c_in == c_out)");
  tec_ctx_free(ctx);
  /* the slid schedule takes only a 1x1 declared with rows apart */
  topi_conv2d pw = {.n = 1, .c_in = 16, .h = 8, .w = 8, .c_out = 16, .kh = 1, .kw = 1,
                    .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = NCHWC(16),
                    .out_layout = NCHWC(16), .epi = BR};
  topi_conv2d_nchwc_config cfg = {.ow_tile = 4, .oc_tiles = 1, .ic_split = 1};
  topi_op op;
  for (int k = 0; k < 2; k++) {
    ctx = tec_ctx_new();
    topi_conv2d q = pw;
    if (k) q.kh = q.kw = 3, q.pad_h = q.pad_w = 1;
    if (k) OK(ctx, topi_conv2d_nchwc_declare_rows(ctx, &q, NULL, &d));
    else OK(ctx, topi_conv2d_nchwc_declare_on(ctx, &q, NULL, &d));
    OK(ctx, topi_op_begin(&d, &op));
    sch_stage *so = sch_stage_of(op.sched, d.out);
    ck_assert_int_ne(topi_conv2d_nchwc_schedule_slid(&d, &cfg, op.sched, so, sch_axis(so, 2)), 0);
    assert_err(ctx, "conv2d_nchwc: a slid schedule needs a 1x1, stride 1, unpadded conv declared "
                    "by topi_conv2d_nchwc_declare_rows");
    tec_ctx_free(ctx);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("pw_dw_chain");
  TCase *tc = tcase_create("chain");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, stride2_fused);
  tcase_add_test(tc, stride2_slid);
  tcase_add_test(tc, stride1_and_unfused);
  tcase_add_test(tc, margins);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
