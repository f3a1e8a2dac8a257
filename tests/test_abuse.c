/* test_abuse.c — every registered topi template's entry point called with bad DLTensors.
 *
 * For each template (topi_template_at) a small problem it applies to is instantiated with its
 * default config, lowered, built for the host and called once well (the reference output).
 * Then, for every argument in turn, the call is made with: a NULL tensor, NULL data, one
 * dimension too few and too many, each extent one larger (the buffer keeps its real size, so a
 * missing check reads out of bounds — ASan's job), another dtype (f64, i32, 2 lanes), an
 * output with a zero stride, and a non-CPU device; and with one argument too few. Constant arguments (weights) are read by
 * prepare, so they are abused through tec_module_bind_constants; the others through
 * tec_module_run. Every bad call must return -1 with a message naming the function and the
 * argument, must leave the output as it was (a sentinel), and a good call afterwards must give
 * the reference output bit for bit. Legal variants — explicit compact strides, a data pointer
 * offset by an aligned byte_offset, and every argument at once strided (each element two
 * apart) and misaligned (byte_offset 4: the strided entry path's copies) — must compute the
 * reference output. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

#define MAXA 8

typedef struct call {
  tec_ctx *ctx;
  const topi_template *t;
  tec_module *m;
  lower_func *f;
  int nargs;
  int out;                /* index of the output */
  int in_prepare[MAXA];   /* read by <name>_prepare: abused through tec_module_bind_constants */
  int in_run[MAXA];       /* read by <name>_run (or the unsplit function): tec_module_run */
  const char *names[MAXA];
  DLTensor good[MAXA];
  DLTensor *args[MAXA];
  int64_t shape[MAXA][8];
  float *ref;             /* the output of the good call */
  int64_t nout;
} call;

static const topi_layout L16 = {.kind = TOPI_NCHWC, .block = 16}, LNCHW = {.kind = TOPI_NCHW},
                         LNHWC = {.kind = TOPI_NHWC};

/* Candidate problems of each kind: the first one the template applies to is used. */
static int pick_problem(const topi_template *t, tec_ctx *ctx, void *buf) {
  const topi_layout lays[][2] = {{L16, L16}, {LNCHW, LNCHW}, {LNHWC, LNHWC}, {LNCHW, L16},
                                 {LNCHW, LNHWC}, {LNHWC, LNCHW}};
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D:
    for (int dw = 0; dw < 2; dw++)
      for (int k = 3; k >= 1; k -= 2)
        for (size_t l = 0; l < sizeof lays / sizeof lays[0]; l++) {
          topi_conv2d p = {.n = 1, .c_in = 16, .h = 8, .w = 8, .c_out = dw ? 16 : 32,
                           .kh = k, .kw = k, .stride_h = 1, .stride_w = 1, .pad_h = k / 2,
                           .pad_w = k / 2, .groups = dw ? 16 : 1, .in_layout = lays[l][0],
                           .out_layout = lays[l][1],
                           .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
          if (t->applies(ctx, &p, NULL)) {
            *(topi_conv2d *)buf = p;
            return 1;
          }
        }
    return 0;
  case TOPI_PROBLEM_LAYOUT: {
    topi_layout_problem p = {.n = 1, .c = 20, .h = 5, .w = 6, .from = LNCHW, .to = L16};
    *(topi_layout_problem *)buf = p;
    break;
  }
  case TOPI_PROBLEM_DENSE: {
    topi_dense p = {.m = 8, .n = 32, .k = 24, .b_transposed = 1, .const_b = 1,
                    .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
    *(topi_dense *)buf = p;
    break;
  }
  case TOPI_PROBLEM_POOL: {
    topi_pool p = {.n = 1, .c = 16, .h = 8, .w = 8, .kh = 3, .kw = 3, .stride_h = 2,
                   .stride_w = 2, .pad_h = 1, .pad_w = 1, .mode = TOPI_POOL_MAX,
                   .in_layout = L16, .out_layout = L16};
    if (!t->applies(ctx, &p, NULL)) { /* global pooling */
      p.kh = p.kw = p.stride_h = p.stride_w = p.pad_h = p.pad_w = 0;
      p.mode = TOPI_POOL_AVG;
      p.out_layout = LNCHW;
    }
    *(topi_pool *)buf = p;
    break;
  }
  case TOPI_PROBLEM_QCONV2D: case TOPI_PROBLEM_QDENSE: case TOPI_PROBLEM_QPOOL:
  case TOPI_PROBLEM_QADD:
    return 0; /* not reached: every_template leaves the int8 ones to test_qnn.c */
  case TOPI_PROBLEM_BATCH_MATMUL: {
    topi_batch_matmul p = {.batch = 3, .m = 7, .n = 20, .k = 9, .transpose_b = 1};
    *(topi_batch_matmul *)buf = p;
    break;
  }
  case TOPI_PROBLEM_SOFTMAX: {
    topi_softmax p = {.m = 2, .n = 10};
    *(topi_softmax *)buf = p;
    break;
  }
  case TOPI_PROBLEM_DW_PW: { /* MobileNet's block: depthwise 3x3, then pointwise 1x1 */
    topi_dw_pw p = {
        .dw = {.n = 1, .c_in = 16, .h = 8, .w = 8, .c_out = 16, .kh = 3, .kw = 3, .stride_h = 1,
               .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 16, .in_layout = L16,
               .out_layout = L16, .epi = {.bias = 1, .act = TOPI_ACT_RELU6}},
        .pw = {.n = 1, .c_in = 16, .h = 8, .w = 8, .c_out = 32, .kh = 1, .kw = 1, .stride_h = 1,
               .stride_w = 1, .groups = 1, .in_layout = L16, .out_layout = L16,
               .epi = {.bias = 1, .act = TOPI_ACT_RELU6}}};
    *(topi_dw_pw *)buf = p;
    break;
  }
  case TOPI_PROBLEM_ELTWISE: {
    topi_eltwise p = {.n = 1, .c = 20, .h = 4, .w = 4, .layout = L16, .act = TOPI_ACT_RELU};
    *(topi_eltwise *)buf = p;
    break;
  }
  }
  return t->applies(ctx, buf, NULL);
}

static void setup_call(call *c, const topi_template *t) {
  memset(c, 0, sizeof *c);
  c->ctx = tec_ctx_new();
  c->t = t;
  _Alignas(16) unsigned char problem[512];
  memset(problem, 0, sizeof problem);
  ck_assert_msg(pick_problem(t, c->ctx, problem), "%s: no test problem applies", t->name);
  topi_op op;
  ck_assert_msg(topi_instantiate(c->ctx, t, problem, NULL, &op) == 0, "%s: %s", t->name,
                tec_ctx_error(c->ctx));
  c->f = tec_lower(op.sched, "abused", op.nargs, op.args);
  ck_assert_msg(c->f != NULL, "%s: %s", t->name, tec_ctx_error(c->ctx));
  c->m = tec_build(c->ctx, 1, &c->f, NULL);
  ck_assert_msg(c->m != NULL, "%s: %s", t->name, tec_ctx_error(c->ctx));
  ck_assert_int_le(op.nargs, MAXA);
  c->nargs = op.nargs;
  c->out = -1;
  for (int a = 0; a < op.nargs; a++) {
    const te_tensor *x = op.args[a];
    const lower_func *run = c->f, *prep = c->f->prepare;
    for (int k = 0; k < run->nargs; k++) c->in_run[a] |= run->args[k] == x;
    for (int k = 0; prep && k < prep->nargs; k++) c->in_prepare[a] |= prep->args[k] == x;
    c->names[a] = x->name;
    if (x == op.out) c->out = a;
    for (int d = 0; d < x->ndim; d++)
      ck_assert_msg(ir_is_const_int(x->shape[d], &c->shape[a][d]), "%s: symbolic shape", t->name);
    c->good[a] = tu_rand_f32(x->ndim, c->shape[a], 17u + (unsigned)a);
    c->args[a] = &c->good[a];
  }
  ck_assert_int_ge(c->out, 0);
  c->nout = tec_dl_numel(&c->good[c->out]);
  ck_assert_msg(tec_module_run(c->m, "abused", c->nargs, c->args) == 0, "%s: %s", t->name,
                tec_rt_last_error());
  c->ref = malloc(sizeof(float) * (size_t)c->nout);
  memcpy(c->ref, c->good[c->out].data, sizeof(float) * (size_t)c->nout);
  for (int64_t i = 0; i < c->nout; i++) ck_assert(isfinite(c->ref[i]));
}

static void free_call(call *c) {
  for (int a = 0; a < c->nargs; a++) tec_dl_free(&c->good[a]);
  free(c->ref);
  tec_ctx_free(c->ctx);
}

static void fill_sentinel(call *c) {
  float *o = c->good[c->out].data;
  for (int64_t i = 0; i < c->nout; i++) o[i] = -12345.0f;
}

/* A bad call: -1, a message that names the function and contains `want`, output untouched. */
static void expect_refused_by(call *c, int a, int prepare, DLTensor *bad, const char *what,
                              const char *want) {
  DLTensor *args[MAXA];
  memcpy(args, c->args, sizeof args);
  args[a] = bad;
  fill_sentinel(c);
  int32_t rc = prepare ? tec_module_bind_constants(c->m, "abused", c->nargs, args)
                       : tec_module_run(c->m, "abused", c->nargs, args);
  const char *e = tec_rt_last_error();
  ck_assert_msg(rc == -1, "%s, argument %d ('%s'), %s: returned %d", c->t->name, a, c->names[a],
                what, rc);
  ck_assert_msg(e && strstr(e, "abused") && strstr(e, want),
                "%s, argument %d ('%s'), %s: expected a message with 'abused' and '%s', got '%s'",
                c->t->name, a, c->names[a], what, want, e ? e : "(null)");
  float *o = c->good[c->out].data;
  for (int64_t i = 0; i < c->nout; i++)
    ck_assert_msg(o[i] == -12345.0f, "%s, argument %d, %s: a refused call wrote output %ld",
                  c->t->name, a, what, (long)i);
}

static void expect_refused(call *c, int a, DLTensor *bad, const char *what, const char *want) {
  if (c->in_prepare[a]) expect_refused_by(c, a, 1, bad, what, want);
  if (c->in_run[a]) expect_refused_by(c, a, 0, bad, what, want);
}

/* A good call: 0 and the reference output exactly (rebinding the constants first). */
static void expect_reference(call *c, DLTensor *const *args, const char *what) {
  fill_sentinel(c);
  ck_assert_msg(tec_module_bind_constants(c->m, "abused", c->nargs, args) == 0, "%s, %s: %s",
                c->t->name, what, tec_rt_last_error());
  ck_assert_msg(tec_module_run(c->m, "abused", c->nargs, args) == 0, "%s, %s: %s", c->t->name,
                what, tec_rt_last_error());
  const DLTensor *t = args[c->out];
  const float *o = (const float *)((const char *)t->data + t->byte_offset);
  for (int64_t i = 0; i < c->nout; i++) {
    int64_t off = i; /* element i in row-major order, through the strides if any */
    if (t->strides) {
      off = 0;
      for (int64_t d = t->ndim - 1, r = i; d >= 0; d--) off += (r % t->shape[d]) * t->strides[d], r /= t->shape[d];
    }
    ck_assert_msg(o[off] == c->ref[i], "%s, %s: output %ld is %g, expected %g", c->t->name, what,
                  (long)i, o[off], c->ref[i]);
  }
}

static void abuse_arg(call *c, int a) {
  DLTensor g = c->good[a], bad;
  int64_t shape[9], strides[8];
  int nd = g.ndim;
  /* NULL tensor, NULL data */
  expect_refused(c, a, NULL, "NULL tensor", "is NULL");
  bad = g, bad.data = NULL;
  expect_refused(c, a, &bad, "NULL data", "NULL");
  /* ndim */
  bad = g, bad.ndim = nd - 1;
  expect_refused(c, a, &bad, "ndim - 1", "has ndim");
  memcpy(shape, g.shape, sizeof(int64_t) * (size_t)nd);
  shape[nd] = 1;
  bad = g, bad.ndim = nd + 1, bad.shape = shape;
  expect_refused(c, a, &bad, "ndim + 1", "has ndim");
  /* each extent one larger (the buffer is not: an unchecked extent reads past it) */
  for (int d = 0; d < nd; d++) {
    memcpy(shape, g.shape, sizeof(int64_t) * (size_t)nd);
    shape[d]++;
    bad = g, bad.shape = shape;
    char what[64];
    snprintf(what, sizeof what, "extent %d + 1", d);
    expect_refused(c, a, &bad, what, "shape");
  }
  /* dtypes */
  bad = g, bad.dtype = (DLDataType){kDLFloat, 64, 1};
  expect_refused(c, a, &bad, "float64", "dtype");
  bad = g, bad.dtype = (DLDataType){kDLInt, 32, 1};
  expect_refused(c, a, &bad, "int32", "dtype");
  bad = g, bad.dtype = (DLDataType){kDLFloat, 32, 2};
  expect_refused(c, a, &bad, "2 lanes", "lanes per element");
  /* the output with a zero stride in its first dimension of extent > 1 (strides, byte
   * offsets and alignment are legal otherwise: the legal variants below) */
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) strides[d] = s, s *= g.shape[d];
  for (int d = 0; d < nd && a == c->out; d++)
    if (g.shape[d] > 1) {
      strides[d] = 0;
      bad = g, bad.strides = strides;
      expect_refused(c, a, &bad, "stride 0", "has stride 0");
      break;
    }
  /* a GPU tensor */
  bad = g, bad.device = (DLDevice){kDLCUDA, 0};
  expect_refused(c, a, &bad, "CUDA device", "device");
}

static void abuse_template(const topi_template *t) {
  call c;
  setup_call(&c, t);
  for (int a = 0; a < c.nargs; a++) abuse_arg(&c, a);
  /* one argument too few, NULL argument list */
  ck_assert_int_eq(tec_module_run(c.m, "abused", c.nargs - 1, c.args), -1);
  tu_assert_contains(tec_rt_last_error(), "arguments");
  ck_assert_int_eq(tec_module_run(c.m, "abused", c.nargs, NULL), -1);
  tu_assert_contains(tec_rt_last_error(), "arguments");
  ck_assert_int_eq(tec_module_run(c.m, "nothere", c.nargs, c.args), -1);
  tu_assert_contains(tec_rt_last_error(), "no function 'nothere'");
  /* the good call still computes the reference */
  expect_reference(&c, c.args, "after the abuse");
  /* legal variants: explicit compact strides; an aligned byte_offset into a larger block */
  DLTensor var[MAXA], *vargs[MAXA];
  int64_t strides[MAXA][8];
  void *blocks[MAXA];
  for (int a = 0; a < c.nargs; a++) {
    var[a] = c.good[a];
    int64_t s = 1;
    for (int d = var[a].ndim - 1; d >= 0; d--) strides[a][d] = s, s *= var[a].shape[d];
    var[a].strides = strides[a];
    size_t bytes = sizeof(float) * (size_t)tec_dl_numel(&c.good[a]);
    blocks[a] = aligned_alloc(64, 128 + ((bytes + 63) / 64) * 64);
    ck_assert_ptr_nonnull(blocks[a]);
    memcpy((char *)blocks[a] + 128, c.good[a].data, bytes);
    var[a].data = blocks[a];
    var[a].byte_offset = 128;
    vargs[a] = &var[a];
  }
  expect_reference(&c, vargs, "compact strides and byte_offset 128");
  for (int a = 0; a < c.nargs; a++) free(blocks[a]);
  /* every argument strided (elements two apart) and misaligned (byte_offset 4) */
  for (int a = 0; a < c.nargs; a++) {
    var[a] = c.good[a];
    int64_t s = 2, n = tec_dl_numel(&c.good[a]);
    for (int d = var[a].ndim - 1; d >= 0; d--) strides[a][d] = s, s *= var[a].shape[d];
    var[a].strides = strides[a];
    blocks[a] = aligned_alloc(64, 64 + ((8 * (size_t)n + 63) / 64) * 64);
    ck_assert_ptr_nonnull(blocks[a]);
    for (int64_t i = 0; i < n; i++) /* the output: a sentinel the call must overwrite */
      ((float *)((char *)blocks[a] + 4))[2 * i] = a == c.out ? -12345.0f : ((float *)c.good[a].data)[i];
    var[a].data = blocks[a];
    var[a].byte_offset = 4;
    vargs[a] = &var[a];
  }
  expect_reference(&c, vargs, "every argument strided and misaligned");
  for (int a = 0; a < c.nargs; a++) free(blocks[a]);
  free_call(&c);
}

START_TEST(every_template) {
  const topi_template *t = topi_template_at(_i);
  ck_assert_ptr_nonnull(t);
  /* this file's calls are fp32 (its reference, sentinels and strided copies); the int8
   * templates' bad problems and arguments: test_qnn.c (bad_problems_refused,
   * bad_arguments_refused) */
  if (t->problem_kind >= TOPI_PROBLEM_QCONV2D) return;
  abuse_template(t);
}
END_TEST

/* The registry's own bad input. */
START_TEST(registry_bounds) {
  ck_assert_ptr_null(topi_template_at(-1));
  ck_assert_ptr_null(topi_template_at(topi_template_count()));
  ck_assert_ptr_null(topi_template_find("no_such_template"));
  ck_assert_ptr_null(topi_template_find(NULL));
}
END_TEST

Suite *abuse_suite(void) {
  Suite *s = suite_create("abuse");
  TCase *t = tcase_create("templates");
  tcase_set_timeout(t, 120);
  tcase_add_loop_test(t, every_template, 0, topi_template_count());
  tcase_add_test(t, registry_bounds);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(abuse_suite()); }
