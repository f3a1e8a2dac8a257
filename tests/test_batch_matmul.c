/* test_batch_matmul.c — the batch_matmul template (topi/batch_matmul.c): out[b] = a[b] · b[b]
 * with a and / or b given transposed, against a plain C triple loop written here, on odd sizes
 * (tails of the register tile along m, n and k), every pack mode and a sample of the space, the
 * attention shapes (12 heads, 128 tokens, 64 dims: Q·Kᵀ and P·V) with the default config; then
 * bad problems and configs with their messages. */
#include <math.h>
#include <stdlib.h>
#include "testutil.h"

static void ref_bmm(const topi_batch_matmul *p, const float *a, const float *b, float *out) {
  for (int64_t bb = 0; bb < p->batch; bb++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        double s = 0;
        for (int64_t k = 0; k < p->k; k++) {
          double x = p->transpose_a ? a[(bb * p->k + k) * p->m + i] : a[(bb * p->m + i) * p->k + k];
          double y = p->transpose_b ? b[(bb * p->n + j) * p->k + k] : b[(bb * p->k + k) * p->n + j];
          s += x * y;
        }
        out[(bb * p->m + i) * p->n + j] = (float)s;
      }
}

/* The max error of the template's result under cfg (NULL: the default) vs the reference. */
static double run(const topi_batch_matmul *p, const topi_batch_matmul_config *cfg) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_msg(topi_declare(ctx, "batch_matmul", p, &d) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(topi_space_of(ctx, "batch_matmul", p, NULL, &sp) == 0, "%s", tec_ctx_error(ctx));
  const topi_batch_matmul_config *c = cfg ? cfg : sp.default_config;
  ck_assert_msg(topi_schedule(&d, c, NULL, &op) == 0, "%s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "bmm", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sa[3] = {p->batch, p->transpose_a ? p->k : p->m, p->transpose_a ? p->m : p->k};
  int64_t sb[3] = {p->batch, p->transpose_b ? p->n : p->k, p->transpose_b ? p->k : p->n};
  int64_t so[3] = {p->batch, p->m, p->n}, no = p->batch * p->m * p->n;
  DLTensor a = tu_rand_f32(3, sa, 3), b = tu_rand_f32(3, sb, 4), o = tu_zeros(TEC_F32, 3, so);
  float *ref = malloc(sizeof(float) * (size_t)no);
  ref_bmm(p, a.data, b.data, ref);
  DLTensor *args[3] = {&a, &b, &o};
  ck_assert_msg(tec_module_run(m, "bmm", 3, args) == 0, "%s", tec_rt_last_error());
  double err = tu_max_err(o.data, ref, no);
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&o);
  tec_ctx_free(ctx);
  return err;
}

START_TEST(odd_sizes_both_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      topi_batch_matmul p = {.batch = 3, .m = 13, .n = 37, .k = 11, .transpose_a = ta, .transpose_b = tb};
      double e;
      /* under qemu (a default build there costs 10-15 s of CPU: 87 % of the suite) the 7x19x37
       * problem below is the one with tails along m, n and k; the host checks this one too */
      if (!tu_emulated()) {
        e = run(&p, NULL);
        ck_assert_msg(e < 1e-4, "ta %d tb %d: max error %g", ta, tb, e);
      }
      p = (topi_batch_matmul){.batch = 1, .m = 1, .n = 1, .k = 1, .transpose_a = ta, .transpose_b = tb};
      ck_assert_double_lt(run(&p, NULL), 1e-6);
      /* k past one vector and not a multiple of it: b transposed's pack splits k with a tail */
      p = (topi_batch_matmul){.batch = 2, .m = 7, .n = 19, .k = 37, .transpose_a = ta, .transpose_b = tb};
      e = run(&p, NULL);
      ck_assert_msg(e < 1e-4, "k 37, ta %d tb %d: max error %g", ta, tb, e);
    }
}
END_TEST

START_TEST(configs) {
  /* every pack mode, tile shapes with tails, serial and dynamic parallel */
  topi_batch_matmul p = {.batch = 2, .m = 9, .n = 21, .k = 7};
  const topi_batch_matmul_config cfgs[] = {
      {1, 16, 1, 1, 0, 0}, {3, 16, 2, 1, 1, 1}, {5, 32, 4, 2, 2, 2}, {2, 16, 1, 2, 1, 0},
  };
  tec_ctx *ctx = tec_ctx_new();
  int lanes = tec_target_parse(ctx, NULL)->vector_lanes; /* nr: multiples of lanes */
  tec_ctx_free(ctx);
  for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
    topi_batch_matmul_config c = cfgs[i];
    c.nr = c.nr / 16 * lanes;
    for (int tb = 0; tb < 2; tb++) {
      if (tb && c.pack == 2) continue; /* pack none: b not transposed only */
      p.transpose_b = tb, p.transpose_a = (int)(i & 1);
      double e = run(&p, &c);
      ck_assert_msg(e < 1e-4, "config %zu tb %d: max error %g", i, tb, e);
    }
  }
}
END_TEST

START_TEST(attention_shapes) {
  /* 12 heads, 128 tokens, 64 dims: Q·Kᵀ (b transposed) and P·V */
  topi_batch_matmul qk = {.batch = 12, .m = 128, .n = 128, .k = 64, .transpose_b = 1};
  topi_batch_matmul pv = {.batch = 12, .m = 128, .n = 64, .k = 128};
  ck_assert_double_lt(run(&qk, NULL), 1e-4);
  ck_assert_double_lt(run(&pv, NULL), 1e-4);
  /* the default vectorizes and register-tiles: the space's default is dense's micro-kernel */
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  ck_assert_int_eq(topi_space_of(ctx, "batch_matmul", &qk, NULL, &sp), 0);
  const topi_batch_matmul_config *c = sp.default_config;
  ck_assert_int_gt(c->mr, 1);
  ck_assert_int_ge(c->nr, tec_target_parse(ctx, NULL)->vector_lanes);
  ck_assert_int_ne(c->pack, 2); /* b transposed: packed */
  ck_assert_int_eq(tune_space_check(ctx, &sp, c), 0);
  /* P·V: b's rows (64) fit one panel: read in place by default, and still in the space */
  tune_space sv;
  ck_assert_int_eq(topi_space_of(ctx, "batch_matmul", &pv, NULL, &sv), 0);
  const topi_batch_matmul_config *cv = sv.default_config;
  if (cv->nr >= 64) ck_assert_int_eq(cv->pack, 2);
  ck_assert_int_eq(tune_space_check(ctx, &sv, cv), 0);
  topi_batch_matmul_config back;
  ck_assert_int_eq(tune_space_config(&sv, tune_space_default_index(&sv), &back), 0);
  ck_assert_int_eq(back.pack, cv->pack); /* the knob's default and the struct agree */
  topi_decl d;
  topi_op op;
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", &qk, &d), 0);
  ck_assert_int_eq(topi_schedule(&d, c, NULL, &op), 0);
  lower_func *f = tec_lower(op.sched, "qk", op.nargs, op.args);
  ck_assert_ptr_nonnull(f);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_batch_matmul p = {.batch = 0, .m = 4, .n = 4, .k = 4};
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", &p, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "batch_matmul: sizes must be >= 1 (got batch=0 m=4 n=4 k=4)");
  tec_ctx_clear_error(ctx);
  p.batch = 2, p.transpose_b = 2;
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", &p, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "transpose_a = 0 and transpose_b = 2 must be 0 or 1");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", (const topi_batch_matmul *)NULL, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "batch_matmul: the problem is NULL");
  /* a dense problem to the batched template: named */
  tec_ctx_clear_error(ctx);
  topi_dense dp = {.m = 4, .n = 4, .k = 4};
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", &dp, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "template 'batch_matmul' takes a topi_batch_matmul problem, not a topi_dense");
  /* a config outside the space: pack none with b transposed; mr 0 */
  tec_ctx_clear_error(ctx);
  p.transpose_b = 1;
  ck_assert_int_eq(topi_declare(ctx, "batch_matmul", &p, &d), 0);
  tune_space sp;
  ck_assert_int_eq(topi_space_of(ctx, "batch_matmul", &p, NULL, &sp), 0);
  topi_batch_matmul_config c = *(const topi_batch_matmul_config *)sp.default_config;
  c.pack = 2;
  topi_op op;
  ck_assert_int_eq(topi_schedule(&d, &c, NULL, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "batch_matmul: knob 'pack' = 2 is not legal");
  tec_ctx_clear_error(ctx);
  c.pack = 0, c.mr = 0;
  ck_assert_int_eq(topi_schedule(&d, &c, NULL, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "knob 'mr' = 0");
  /* dense's config type to the batched template: named */
  tec_ctx_clear_error(ctx);
  topi_dense_config dc = {0};
  ck_assert_int_eq(topi_schedule(&d, &dc, NULL, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "reads a topi_batch_matmul_config, not a topi_dense_config");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("batch_matmul");
  TCase *tc = tcase_create("batch_matmul");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, odd_sizes_both_transposes);
  tcase_add_test(tc, configs);
  tcase_add_test(tc, attention_shapes);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
