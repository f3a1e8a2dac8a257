/* main.c — a program outside the tec tree: y = 2 * x + 1 over n floats, split by 8 and
 * vectorized, JIT-compiled by the installed tec and checked against a plain loop. Built by
 * CMakeLists.txt (find_package(tec)) and by Makefile (pkg-config tec). */
#include <stdio.h>
#include <tec/tec.h>

static const ir_expr *axpb(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor *x = user;
  return ir_add(ir_mul(TE_AT(x, i[0]), ir_float(ctx, 2.0)), ir_float(ctx, 1.0));
}

int main(void) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, &n);
  te_tensor *Y = te_compute(ctx, &(te_compute_decl){.name = "Y", .ndim = 1, .shape = &n,
                                                     .body = axpb, .user = X});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  sch_stage *st = sch_stage_of(s, Y);
  sch_iter *outer, *inner;
  sch_split(st, sch_axis(st, 0), 8, &outer, &inner);
  sch_vectorize(st, inner);
  lower_func *f = tec_lower(s, "axpb", 2, (te_tensor *[]){X, Y});
  tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  if (!m) {
    fprintf(stderr, "external: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  int64_t len = 1000;
  DLTensor x, y;
  tec_dl_alloc(&x, TEC_F32, 1, &len);
  tec_dl_alloc(&y, TEC_F32, 1, &len);
  for (int64_t i = 0; i < len; i++) ((float *)x.data)[i] = (float)i * 0.5f;
  int status = tec_call(tec_module_get(m, "axpb"), 2, (DLTensor *[]){&x, &y}) != 0;
  for (int64_t i = 0; i < len && !status; i++)
    if (((float *)y.data)[i] != 2.0f * ((float *)x.data)[i] + 1.0f) status = 1;
  printf("external: y[999] = %g (expected %g): %s\n", ((float *)y.data)[999], 2 * 499.5 + 1,
         status ? "FAIL" : "ok");
  tec_dl_free(&x), tec_dl_free(&y);
  tec_ctx_free(ctx);
  return status;
}
