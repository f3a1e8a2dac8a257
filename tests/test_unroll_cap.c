/* test_unroll_cap.c — no config of a template's space unrolls more than TOPI_UNROLL_MAX
 * statements into one loop body (issue #38 item 3: a 7x7 depthwise at its default config built
 * for 444 s). The configs are lowered and their bodies counted (tec_lower_program_size), not
 * timed and not estimated: each space's rule estimates its body from the knobs, and this test
 * is what holds that estimate to the program lowering makes. Problems are small (lowering is
 * fast) but wide enough that every tile knob reaches its largest value, with 7x7 kernels where
 * a template takes any kernel. A space of more than 32 configs is checked on the 24 with the
 * largest knob values (the product of 1 + each value: bodies grow with the tiles) and 8 more
 * spread over it, the default always. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tec/topi.h"
#include "topi/internal.h"

typedef struct cap_case {
  const char *tmpl, *shape;
} cap_case;

static const cap_case cases[] = {
    {"depthwise_nchwc", "c=16,h=28,w=28,k=7,pad=3,in=NCHW16c,out=NCHW16c"},
    {"depthwise_nchwc", "c=16,h=28,w=28,k=7,pad=3,in=NCHW8c,out=NCHW8c"},
    {"dw_spatial_pack", "c=16,h=16,w=16,k=7,pad=3,in=NCHW,out=NCHW"},
    {"conv2d_spatial_pack", "c=8,h=16,w=16,oc=32,k=7,pad=3,in=NCHW,out=NCHW"},
    {"conv2d_nchwc", "c=32,h=14,w=14,oc=64,k=3,pad=1,in=NCHW16c,out=NCHW16c"},
    {"conv2d_nchwc", "c=3,h=28,w=28,oc=32,k=7,stride=2,pad=3,in=NCHW,out=NCHW16c"},
    {"conv2d_winograd", "c=16,h=16,w=16,oc=32,k=3,pad=1,in=NCHW16c,out=NCHW16c"},
    {"conv2d_im2col", "c=8,h=14,w=14,oc=32,k=7,pad=3,in=NCHW,out=NHWC"},
    {"dense", "m=32,n=64,k=32"},
    {"batch_matmul", "batch=2,m=16,n=64,k=16"},
    {"pool2d", "c=16,h=14,w=14,k=7,pad=3,in=NCHW16c,out=NCHW16c"},
    {"pool2d", "c=16,h=14,w=14,k=7,pad=3,in=NHWC,out=NHWC"},
    {"dw_pw_fused", "c=16,h=14,w=14,oc=32,k=3,layout=NCHW16c"},
};

/* The unrolled body of config cfg of template t on problem p; -1 when it does not lower. */
static int64_t body_of(const topi_template *t, const void *p, const void *cfg,
                       const char **err) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_op op;
  int64_t body = -1;
  lower_func *f = NULL;
  if (t->declare(ctx, p, &d) == 0 && t->schedule(&d, cfg, NULL, &op) == 0)
    f = tec_lower(op.sched, "f", op.nargs, op.args);
  if (f) body = tec_lower_program_size(f).unrolled_body;
  else *err = strdup(tec_ctx_error(ctx));
  tec_ctx_free(ctx);
  return body;
}

typedef struct ranked {
  int64_t index;
  double weight;
} ranked;

static int by_weight(const void *a, const void *b) {
  double x = ((const ranked *)a)->weight, y = ((const ranked *)b)->weight;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The configs to lower: all, or the 24 heaviest and 8 spread, the default first. */
static int pick(const tune_space *sp, int64_t *out, int max) {
  int64_t range = tune_space_range(sp), n = 0;
  ranked *r = malloc(sizeof *r * (size_t)range);
  ck_assert_ptr_nonnull(r);
  for (int64_t i = 0; i < range; i++) {
    if (!tune_space_allows(sp, i)) continue;
    double w = 1;
    for (int k = 0; k < sp->nknobs; k++) w *= 1.0 + (double)tune_space_get(sp, i, k)[0];
    r[n++] = (ranked){i, w};
  }
  int m = 0;
  out[m++] = tune_space_default_index(sp);
  if (n <= 32) {
    for (int64_t i = 0; i < n; i++) out[m++] = r[i].index;
  } else {
    for (int64_t s = 0; s < 8; s++) out[m++] = r[s * n / 8].index;
    qsort(r, (size_t)n, sizeof *r, by_weight);
    for (int i = 0; i < 24; i++) out[m++] = r[i].index;
  }
  free(r);
  ck_assert_int_le(m, max);
  return m;
}

/* Every picked config of t's space on problem p lowers to a body within the cap. */
static void check_space(const topi_template *t, const void *p, const char *what) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  OK(ctx, t->space(ctx, p, NULL, &sp));
  int64_t idx[48], worst = 0;
  int n = pick(&sp, idx, 48);
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  for (int k = 0; k < n; k++) {
    OK(ctx, tune_space_config(&sp, idx[k], cfg));
    const char *err = NULL;
    int64_t body = body_of(t, p, cfg, &err);
    ck_assert_msg(body >= 0, "%s %s %s: %s", t->name, what, tune_config_str(ctx, &sp, cfg), err);
    ck_assert_msg(body <= TOPI_UNROLL_MAX, "%s %s: config %s unrolls %lld statements (cap %d)",
                  t->name, what, tune_config_str(ctx, &sp, cfg), (long long)body,
                  TOPI_UNROLL_MAX);
    if (body > worst) worst = body;
  }
  ck_assert_int_gt(worst, 0); /* something was counted */
  tec_ctx_free(ctx);
}

START_TEST(every_space_within_the_cap) {
  const cap_case *c = &cases[_i];
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(c->tmpl);
  ck_assert_ptr_nonnull(t);
  topi_problem p;
  OK(ctx, topi_problem_parse(ctx, t, c->shape, &p));
  check_space(t, &p, c->shape);
  tec_ctx_free(ctx);
}
END_TEST

/* qnn_depthwise (no text form yet: its quantization parameters), 7x7 on NCHW16c */
START_TEST(qnn_depthwise_within_the_cap) {
  const topi_layout l16 = {.kind = TOPI_NCHWC, .block = 16};
  topi_qconv2d q = {.conv = {.n = 1, .c_in = 16, .h = 28, .w = 28, .c_out = 16, .kh = 7, .kw = 7,
                             .stride_h = 1, .stride_w = 1, .pad_h = 3, .pad_w = 3,
                             .dilation_h = 1, .dilation_w = 1, .groups = 16, .in_layout = l16,
                             .out_layout = l16},
                    .in = {0.05f, 0}, .out = {0.1f, 0}};
  check_space(topi_template_find("qnn_depthwise"), &q, "16x28x28 7x7 NCHW16c");
}
END_TEST

/* The rule is what keeps them in: depthwise_nchwc 7x7 at a 2 x 14 tile (registers allow it)
 * lowers to a body over the cap, and its space refuses it; the 1 x 14 default is in. */
START_TEST(rule_refuses_what_the_count_exceeds) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("depthwise_nchwc");
  topi_problem p;
  tune_space sp;
  OK(ctx, topi_problem_parse(ctx, t, "c=16,h=28,w=28,k=7,pad=3,in=NCHW16c,out=NCHW16c", &p));
  OK(ctx, t->space(ctx, &p, NULL, &sp));
  topi_depthwise_nchwc_config big = {14, 2, 1}, dflt = {14, 1, 1};
  const char *err = NULL;
  int64_t b = body_of(t, &p, &big, &err);
  ck_assert_msg(b > TOPI_UNROLL_MAX, "2 x 14 unrolls %lld", (long long)b);
  ck_assert(!tune_space_allows_config(&sp, &big));
  ck_assert(tune_space_allows_config(&sp, &dflt));
  ck_assert_int_eq(((topi_depthwise_nchwc_config *)sp.default_config)->ow_tile, 14);
  tu_assert_contains(sp.rule_doc, "unrolled body: 2*oh_tile*ow_tile*51 <= 1536 statements");
  /* a 1 x 1 tile stays in even where its taps alone pass the cap (a 31x31 window) */
  OK(ctx, topi_problem_parse(ctx, t, "c=16,h=32,w=32,k=31,pad=15,in=NCHW16c,out=NCHW16c", &p));
  OK(ctx, t->space(ctx, &p, NULL, &sp));
  ck_assert_int_eq(tune_space_size(&sp), 2); /* parallel 0 or 1 */
  ck_assert_int_eq(((topi_depthwise_nchwc_config *)sp.default_config)->ow_tile, 1);
  /* pooling: a window past the cap is not unrolled (the knob has one value) */
  const topi_template *pt = topi_template_find("pool2d");
  OK(ctx, topi_problem_parse(ctx, pt, "c=16,h=32,w=32,k=31,pad=0,in=NCHW,out=NCHW", &p));
  OK(ctx, pt->space(ctx, &p, NULL, &sp));
  ck_assert_int_eq(sp.knobs[tune_space_find(&sp, "unroll")].nvalues, 1);
  OK(ctx, topi_problem_parse(ctx, pt, "c=16,h=32,w=32,k=7,pad=0,in=NCHW,out=NCHW", &p));
  OK(ctx, pt->space(ctx, &p, NULL, &sp));
  ck_assert_int_eq(sp.knobs[tune_space_find(&sp, "unroll")].nvalues, 2);
  tec_ctx_free(ctx);
}
END_TEST

/* The counter itself, on a program whose body is known: C[i, j] = A[i, j] + 1 over 4 x 8,
 * j unrolled: 8 stores in i's body; split i by 2 with the inner part unrolled too: 16 (stores
 * are counted in the program's text, not executed). */
static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
}
START_TEST(counter_counts_unrolled_copies) {
  for (int split = 0; split < 2; split++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                      .body = plus1, .user = A});
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sc = sch_stage_of(s, C);
    OK(ctx, sch_unroll(sc, sch_axis(sc, 1)));
    if (split) {
      sch_iter *o, *in;
      OK(ctx, sch_split(sc, sch_axis(sc, 0), 2, &o, &in));
      OK(ctx, sch_unroll(sc, in));
    }
    lower_func *f = TEC_LOWER(s, "f", A, C);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    tec_program_size z = tec_lower_program_size(f);
    ck_assert_int_eq(z.unrolled_body, split ? 16 : 8);
    ck_assert_int_eq(z.stores, split ? 16 : 8);
    ck_assert_int_gt(z.nodes, z.stores * 4); /* each store, its index, value and load */
    tec_ctx_free(ctx);
  }
  tec_program_size none = tec_lower_program_size(NULL);
  ck_assert_int_eq(none.nodes + none.stores + none.unrolled_body, 0);
}
END_TEST

Suite *unroll_cap_suite(void) {
  Suite *s = suite_create("unroll_cap");
  TCase *t = tcase_create("cap");
  tcase_set_timeout(t, 120);
  tcase_add_loop_test(t, every_space_within_the_cap, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(t, qnn_depthwise_within_the_cap);
  tcase_add_test(t, rule_refuses_what_the_count_exceeds);
  tcase_add_test(t, counter_counts_unrolled_copies);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(unroll_cap_suite()); }
