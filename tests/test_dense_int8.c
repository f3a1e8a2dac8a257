/* test_dense_int8.c — topi_dense_int8 (uint8 activations x int8 weights packed once in
 * prepare into the VNNI layout, int32 out, through sch_tensorize(dot4)): bit-exact against a
 * plain-C int32 reference on the host JIT for default and given tiles and for int8
 * activations (shift + compensation), prepare run once, the
 * instruction in the assembly for AVX-512 VNNI, and the refusals of bad shapes and tiles. */
#include <stdint.h>
#include <stdlib.h>
#include "support/testutil.h"

static void check_as(int64_t m, int64_t n, int64_t k, topi_dense_int8_config *cfg, int sa_) {
  tec_ctx *ctx = tec_ctx_new();
  topi_op op;
  topi_dense_int8_problem p = {m, n, k, sa_};
  ck_assert_msg(topi_dense_int8(ctx, &p, cfg, NULL, &op) == 0, "%s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "d8", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *mod = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(ctx));
  int64_t sa[2] = {m, k}, sw[2] = {n, k}, so[2] = {m, n};
  DLTensor a = tu_zeros(sa_ ? TEC_I8 : TEC_U8, 2, sa), w = tu_zeros(TEC_I8, 2, sw), o = tu_zeros(TEC_I32, 2, so);
  uint32_t r = 12345;
  for (int64_t i = 0; i < m * k; i++) ((uint8_t *)a.data)[i] = (uint8_t)((r = r * 1103515245u + 12345u) >> 16);
  for (int64_t i = 0; i < n * k; i++) ((int8_t *)w.data)[i] = (int8_t)((r = r * 1103515245u + 12345u) >> 16);
  ((uint8_t *)a.data)[0] = sa_ ? 0x80 : 0xff, ((int8_t *)w.data)[0] = -128; /* the extremes */
  for (int rep = 0; rep < 2; rep++) {
    ck_assert_msg(tec_module_run(mod, "d8", 3, (DLTensor *[]){&a, &w, &o}) == 0, "%s",
                  tec_rt_last_error());
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int32_t want = 0;
        for (int64_t q = 0; q < k; q++)
          want += (sa_ ? (int32_t)((int8_t *)a.data)[i * k + q]
                       : (int32_t)((uint8_t *)a.data)[i * k + q]) * ((int8_t *)w.data)[j * k + q];
        ck_assert_msg(((int32_t *)o.data)[i * n + j] == want, "out[%lld, %lld] = %d, want %d",
                      (long long)i, (long long)j, ((int32_t *)o.data)[i * n + j], want);
      }
  }
  ck_assert_int_eq(tec_module_prepare_count(mod, "d8"), 1);
  tec_dl_free(&a), tec_dl_free(&w), tec_dl_free(&o);
  tec_ctx_free(ctx);
}

static void check(int64_t m, int64_t n, int64_t k, topi_dense_int8_config *cfg) {
  check_as(m, n, k, cfg, 0);
}

/* int8 activations: shifted to uint8, the compensation 128 * sum w from prepare */
START_TEST(signed_activations_exact) {
  if (!tu_emulated()) check_as(12, 64, 64, NULL, 1);
  check_as(4, 32, 8, &(topi_dense_int8_config){2, 1}, 1);
}
END_TEST

START_TEST(default_tile_exact) { check(12, 64, 64, NULL); }
END_TEST

START_TEST(given_tiles_exact) {
  topi_dense_int8_config c1 = {1, 1}, c2 = {3, 2};
  if (tu_emulated()) return; /* default_tile_exact runs there */
  check(6, 32, 16, &c1);
  check(6, 32, 16, &c2);
}
END_TEST

START_TEST(vnni_in_assembly) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *t = tec_target_parse(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4 "
                                              "-mattr=+avx512bw,+avx512vl,+avx512vnni");
  ck_assert_msg(t != NULL, "%s", tec_ctx_error(ctx));
  topi_op op;
  ck_assert_int_eq(topi_dense_int8(ctx, &(topi_dense_int8_problem){8, 64, 64, 0}, NULL, t, &op), 0);
  char *s = tu_emit_text(ctx, tec_lower(op.sched, "d8", op.nargs, op.args), t->str, TEC_EMIT_ASM);
  tu_assert_contains(s, "vpdpbusd\t");
  tu_assert_contains(s, "vpbroadcastd\t");
  free(s);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_op op;
  const tec_target *t = tec_target_parse(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4");
  ck_assert_int_eq(topi_dense_int8(ctx, &(topi_dense_int8_problem){8, 64, 6, 0}, NULL, t, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "k a multiple of 4 (dot4's groups) and n of 16");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_dense_int8(ctx, &(topi_dense_int8_problem){8, 64, 8, 0},
                                   &(topi_dense_int8_config){3, 1}, t, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "mr 3 must divide m 8");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_dense_int8(ctx, NULL, NULL, t, &op), -1);
  ck_assert_int_eq(topi_dense_int8(NULL, NULL, NULL, t, &op), -1);
  tec_ctx_free(ctx);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dense_int8");
  TCase *tc = tcase_create("dense_int8");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, default_tile_exact);
  tcase_add_test(tc, given_tiles_exact);
  tcase_add_test(tc, signed_activations_exact);
  tcase_add_test(tc, vnni_in_assembly);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
