/* hello.c — the smallest tec program: C = A + B over a symbolic length n, split by 4,
 * lowered, printed, JIT-compiled and run for a few lengths. */
#include <stdio.h>
#include "example_args.h"
#include "tec/tec.h"

typedef struct inputs { te_tensor *a, *b; } inputs;

static const ir_expr *add(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  inputs *in = user;
  return ir_add(TE_AT(in->a, i[0]), TE_AT(in->b, i[0]));
}

int main(int argc, char **argv) {
  int64_t max_len = 1000; /* run for n = 1, 10, ... up to max_len */
  ex_opt opts[] = {{"max", EX_INT, &max_len, 1, 1e8, "the largest n; runs n = 1, 10, 100, ... up to it"}};
  int rc = ex_args_parse("C = A + B over a symbolic n, split by 4: lowered, printed, compiled and run.", argc, argv,
                         opts, 1);
  if (rc) return rc == 1 ? 0 : 2;
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &n);
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &n);
  inputs in = {A, B};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &n,
                                                     .body = add, .user = &in});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *outer, *inner;
  sch_split(sc, sch_axis(sc, 0), 4, &outer, &inner);
  lower_func *f = tec_lower(s, "vadd", 3, (te_tensor *[]){A, B, C});
  tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  if (!m) {
    fprintf(stderr, "hello: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  tec_lower_print(stdout, f);
  tec_packed_fn vadd = tec_module_get(m, "vadd");
  int status = 0;
  for (int64_t len = 1; len <= max_len; len *= 10) {
    DLTensor a, b, c;
    tec_dl_alloc(&a, TEC_F32, 1, &len);
    tec_dl_alloc(&b, TEC_F32, 1, &len);
    tec_dl_alloc(&c, TEC_F32, 1, &len);
    for (int64_t i = 0; i < len; i++) ((float *)a.data)[i] = (float)i, ((float *)b.data)[i] = 1;
    if (vadd((DLTensor *[]){&a, &b, &c}, 3) != 0) {
      fprintf(stderr, "hello: %s\n", tec_rt_last_error());
      status = 1;
    }
    float last = ((float *)c.data)[len - 1];
    printf("n = %4lld: C[n-1] = %g (expected %g)\n", (long long)len, last, (double)len);
    if (last != (float)len) status = 1;
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  }
  tec_ctx_free(ctx);
  return status;
}
