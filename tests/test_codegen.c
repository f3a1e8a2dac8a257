/* test_codegen.c — the LLVM backend on lowered functions built by hand with the ir.h
 * constructors: numbers from the JIT against C, every entry check's message as text, the
 * host assembly (AVX, FMA), target strings, and ahead-of-time files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

/* ---- building lowered functions by hand ---- */

static const ir_expr *buf(tec_ctx *ctx, const char *name) {
  return ir_var(ctx, name, TEC_HANDLET, IR_VAR_BUFFER);
}

static const ir_expr *ivar(tec_ctx *ctx, const char *name) {
  return ir_var(ctx, name, TEC_INDEX, IR_VAR_INDEX);
}

static lower_func *mkfunc(tec_ctx *ctx, const char *name, int nargs, te_tensor *const *args,
                          const ir_expr *const *bufs, int nsize, const ir_expr *const *sizes,
                          const ir_stmt *body) {
  ck_assert_msg(body != NULL, "body: %s", tec_ctx_error(ctx));
  lower_func *f = tec_ctx_alloc(ctx, sizeof *f);
  f->ctx = ctx;
  f->name = name;
  f->nargs = nargs;
  f->args = tec_ctx_alloc(ctx, sizeof(te_tensor *) * (size_t)(nargs + 1));
  f->arg_bufs = tec_ctx_alloc(ctx, sizeof(ir_expr *) * (size_t)(nargs + 1));
  for (int i = 0; i < nargs; i++) {
    f->args[i] = args[i];
    f->arg_bufs[i] = bufs[i];
  }
  f->nsize = nsize;
  f->size_vars = tec_ctx_alloc(ctx, sizeof(ir_expr *) * (size_t)(nsize + 1));
  for (int i = 0; i < nsize; i++) f->size_vars[i] = sizes[i];
  f->body = body;
  return f;
}

static tec_module *build1(tec_ctx *ctx, lower_func *f) {
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "build: %s", tec_ctx_error(ctx));
  return m;
}

/* vadd(A, B, C: float32[n]): for (i, 0, n) C[i] = A[i] + B[i] */
typedef struct vadd_fx {
  tec_ctx *ctx;
  const ir_expr *n, *a, *b, *c;
  te_tensor *A, *B, *C;
  lower_func *f;
} vadd_fx;

static vadd_fx make_vadd(void) {
  vadd_fx x;
  x.ctx = tec_ctx_new();
  x.n = te_size_var(x.ctx, "n");
  x.A = te_placeholder(x.ctx, "A", TEC_F32, 1, &x.n);
  x.B = te_placeholder(x.ctx, "B", TEC_F32, 1, &x.n);
  x.C = te_placeholder(x.ctx, "C", TEC_F32, 1, &x.n);
  x.a = buf(x.ctx, "A"), x.b = buf(x.ctx, "B"), x.c = buf(x.ctx, "C");
  const ir_expr *i = ivar(x.ctx, "i");
  const ir_stmt *body = ir_for(
      i, ir_int(x.ctx, 0), x.n, IR_FOR_SERIAL,
      ir_store(x.c, i, ir_add(ir_load(TEC_F32, x.a, i, NULL), ir_load(TEC_F32, x.b, i, NULL)), NULL));
  x.f = mkfunc(x.ctx, "vadd", 3, (te_tensor *[]){x.A, x.B, x.C},
               (const ir_expr *[]){x.a, x.b, x.c}, 1, &x.n, body);
  return x;
}

START_TEST(test_vadd) {
  vadd_fx x = make_vadd();
  tec_module *m = build1(x.ctx, x.f);
  tec_packed_fn fn = tec_module_get(m, "vadd");
  ck_assert_ptr_nonnull(fn);
  int64_t lens[] = {0, 1, 7, 1000};
  for (int k = 0; k < 4; k++) {
    int64_t n = lens[k];
    DLTensor a = tu_rand_f32(1, &n, 1), b = tu_rand_f32(1, &n, 2), c = tu_zeros(TEC_F32, 1, &n);
    ck_assert_msg(tec_call(fn, 3, (DLTensor *[]){&a, &b, &c}) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < n; i++)
      ck_assert_float_eq(tu_f32(&c)[i], tu_f32(&a)[i] + tu_f32(&b)[i]);
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  }
  /* the raw form: buffers then sizes */
  int32_t (*raw)(float *, float *, float *, int64_t) =
      (int32_t (*)(float *, float *, float *, int64_t))tec_module_get_raw(m, "vadd");
  ck_assert_ptr_nonnull(raw);
  ck_assert_ptr_eq((void *)raw, tec_module_get_raw(m, "vadd_raw"));
  int64_t n = 100;
  DLTensor a = tu_rand_f32(1, &n, 3), b = tu_rand_f32(1, &n, 4), c = tu_zeros(TEC_F32, 1, &n);
  ck_assert_int_eq(raw(tu_f32(&a), tu_f32(&b), tu_f32(&c), n), 0);
  ck_assert_float_eq(tu_f32(&c)[99], tu_f32(&a)[99] + tu_f32(&b)[99]);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tu_assert_contains(tu_ir_head(tec_module_llvm_ir(m), "vadd_raw"), "define i32 @vadd_raw(");
  tu_assert_contains(tec_module_llvm_ir(m), "noalias");
  tec_ctx_free(x.ctx);
}
END_TEST

START_TEST(test_fma_loop_asm) {
  /* C[i] = A[i] * B[i] + C[i] over a constant 1024: vectorized, fused */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *shape = ir_int(ctx, 1024);
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &shape);
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &shape);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &shape);
  const ir_expr *a = buf(ctx, "A"), *b = buf(ctx, "B"), *c = buf(ctx, "C"), *i = ivar(ctx, "i");
  const ir_stmt *body = ir_for(
      i, ir_int(ctx, 0), shape, IR_FOR_SERIAL,
      ir_store(c, i, ir_add(ir_mul(ir_load(TEC_F32, a, i, NULL), ir_load(TEC_F32, b, i, NULL)),
                            ir_load(TEC_F32, c, i, NULL)), NULL));
  lower_func *f = mkfunc(ctx, "fmaloop", 3, (te_tensor *[]){A, B, C}, (const ir_expr *[]){a, b, c},
                         0, NULL, body);
  tec_module *m = build1(ctx, f);
  int64_t n = 1024;
  DLTensor ta = tu_rand_f32(1, &n, 5), tb = tu_rand_f32(1, &n, 6), tc = tu_rand_f32(1, &n, 7);
  float ref[1024];
  for (int k = 0; k < 1024; k++) ref[k] = fmaf(tu_f32(&ta)[k], tu_f32(&tb)[k], tu_f32(&tc)[k]);
  ck_assert_int_eq(tec_module_get(m, "fmaloop")((DLTensor *[]){&ta, &tb, &tc}, 3), 0);
  ck_assert_double_lt(tu_max_err(tu_f32(&tc), ref, 1024), 1e-6);
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tc);
  tu_assert_contains(tec_module_llvm_ir(m), "fmuladd");
  const char *as = tec_module_asm(m);
  ck_assert_msg(as != NULL, "%s", tec_ctx_error(ctx));
#if defined(__x86_64__)
  ck_assert_msg(strstr(as, "zmm") || strstr(as, "ymm"), "no AVX registers in\n%.2000s", as);
  if (__builtin_cpu_supports("avx512f")) /* the full width, not LLVM's 256-bit preference */
    ck_assert_msg(strstr(as, "zmm") != NULL, "no zmm registers on an AVX-512 host in\n%.2000s", as);
  tu_assert_contains(as, "vfmadd");
#elif defined(__aarch64__) /* the JIT under qemu-aarch64 (scripts/dev arm) */
  ck_assert_msg(strstr(as, "fmla\tv") && strstr(as, ".4s"), "no NEON fmla in\n%.2000s", as);
#endif
  ck_assert_ptr_eq(tec_module_asm(m), as); /* made once */
  tec_ctx_free(ctx);
}
END_TEST

/* T = allocate(count) { for i: T[i] = A[i] * 2 }; for i: C[i] = T[i] + 1 */
static lower_func *make_alloc_func(tec_ctx *ctx, const ir_expr *n, const ir_expr *count) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &n);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &n);
  const ir_expr *a = buf(ctx, "A"), *c = buf(ctx, "C"), *t = buf(ctx, "T");
  const ir_expr *i = ivar(ctx, "i"), *j = ivar(ctx, "j");
  const ir_stmt *fill = ir_for(i, ir_int(ctx, 0), n, IR_FOR_SERIAL,
                               ir_store(t, i, ir_mul(ir_load(TEC_F32, a, i, NULL), ir_float(ctx, 2)), NULL));
  const ir_stmt *use = ir_for(j, ir_int(ctx, 0), n, IR_FOR_SERIAL,
                              ir_store(c, j, ir_add(ir_load(TEC_F32, t, j, NULL), ir_float(ctx, 1)), NULL));
  const ir_stmt *body = ir_allocate(t, TEC_F32, count, ir_seq2(fill, use));
  int nsize = n->kind == IR_VAR ? 1 : 0;
  return mkfunc(ctx, "twice", 2, (te_tensor *[]){A, C}, (const ir_expr *[]){a, c}, nsize, &n, body);
}

static void check_twice(tec_packed_fn fn, int64_t n) {
  DLTensor a = tu_rand_f32(1, &n, 9), c = tu_zeros(TEC_F32, 1, &n);
  ck_assert_msg(fn((DLTensor *[]){&a, &c}, 2) == 0, "%s", tec_rt_last_error());
  for (int64_t k = 0; k < n; k++) ck_assert_float_eq(tu_f32(&c)[k], tu_f32(&a)[k] * 2 + 1);
  tec_dl_free(&a), tec_dl_free(&c);
}

/* A 48-lane (and a 20- and a 17-lane) accumulator carried through a loop, like a GEMM tile:
 * C[0:L] = select(A[k] > 0, C[0:L] + x(A[k]) * B[k*L : k*L+L], C[0:L]) over k. Codegen cuts
 * such stores into native-width ones (slice_vectors.c); the numbers stay C's, no vector
 * wider than the target's registers reaches LLVM and no error is left in the ctx. After the
 * loop, D[0:L] = 2 * B[0] as a store in the dense form (a scalar index, L lanes of value). */
START_TEST(test_wide_vectors_sliced) {
  int lens[3] = {48, 20, 17}; /* 17: a single-lane remainder, a scalar store */
  for (int t = 0; t < 3; t++) {
    int L = lens[t], K = 64;
    tec_ctx *ctx = tec_ctx_new();
    const ir_expr *sk = ir_int(ctx, K), *skl = ir_int(ctx, (int64_t)K * L), *sl = ir_int(ctx, L);
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &sk);
    te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &skl);
    te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &sl);
    const ir_expr *a = buf(ctx, "A"), *b = buf(ctx, "B"), *c = buf(ctx, "C"), *k = ivar(ctx, "k");
    const ir_expr *one = ir_int(ctx, 1), *zero = ir_int(ctx, 0);
    const ir_expr *cidx = ir_ramp(zero, one, L);
    const ir_expr *ak = ir_load(TEC_F32, a, k, NULL);
    const ir_expr *cv = ir_load(tec_dtype_with_lanes(TEC_F32, L), c, cidx, NULL);
    const ir_expr *bv = ir_load(tec_dtype_with_lanes(TEC_F32, L), b,
                                ir_ramp(ir_mul(k, sl), one, L), NULL);
    const ir_expr *upd = ir_add(cv, ir_mul(ir_broadcast(ak, L), bv));
    const ir_expr *cond = ir_broadcast(ir_gt(ak, ir_float(ctx, 0.0)), L);
    const ir_stmt *loop = ir_for(k, zero, sk, IR_FOR_SERIAL,
                                 ir_store(c, cidx, ir_select(cond, upd, cv), NULL));
    te_tensor *D = te_placeholder(ctx, "D", TEC_F32, 1, &sl);
    const ir_expr *d = buf(ctx, "D");
    const ir_expr *b0 = ir_load(tec_dtype_with_lanes(TEC_F32, L), b, zero, NULL);
    const ir_stmt *copy =
        ir_store(d, zero, ir_mul(b0, ir_broadcast(ir_float(ctx, 2.0), L)), NULL);
    lower_func *f = mkfunc(ctx, "wide", 4, (te_tensor *[]){A, B, C, D},
                           (const ir_expr *[]){a, b, c, d}, 0, NULL, ir_seq2(loop, copy));
    tec_module *m = build1(ctx, f);
    ck_assert_msg(tec_ctx_error(ctx) == NULL, "stray error: %s", tec_ctx_error(ctx));
    int64_t nk = K, nkl = (int64_t)K * L, nl = L;
    DLTensor ta = tu_rand_f32(1, &nk, 11), tb = tu_rand_f32(1, &nkl, 12), tc = tu_rand_f32(1, &nl, 13);
    DLTensor td = tu_zeros(TEC_F32, 1, &nl);
    float ref[48];
    for (int j = 0; j < L; j++) {
      float acc = tu_f32(&tc)[j];
      for (int q = 0; q < K; q++)
        if (tu_f32(&ta)[q] > 0) acc = fmaf(tu_f32(&ta)[q], tu_f32(&tb)[q * L + j], acc);
      ref[j] = acc;
    }
    ck_assert_int_eq(tec_module_get(m, "wide")((DLTensor *[]){&ta, &tb, &tc, &td}, 4), 0);
    ck_assert_double_lt(tu_max_err(tu_f32(&tc), ref, L), 1e-5);
    for (int j = 0; j < L; j++) ck_assert_float_eq(tu_f32(&td)[j], 2.0f * tu_f32(&tb)[0]);
    tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tc), tec_dl_free(&td);
    /* slice_vectors.c leaves power-of-two widths to LLVM; no other width over the target's
     * lanes may remain */
    int native = tec_target_vector_bits(ctx, NULL) / 32;
    ck_assert_int_gt(native, 1);
    for (const char *p = tec_module_llvm_ir(m); (p = strchr(p, '<')) != NULL; p++) {
      int n;
      char ty[8];
      if (sscanf(p, "<%d x %7[a-z]>", &n, ty) == 2 && strcmp(ty, "float") == 0)
        ck_assert_msg(n <= native || (n & (n - 1)) == 0, "<%d x float> reached LLVM (native %d "
                      "lanes)", n, native);
    }
    tec_ctx_free(ctx);
  }
}
END_TEST

START_TEST(test_allocate_stack_and_heap) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n16 = ir_int(ctx, 16);
  tec_module *m = build1(ctx, make_alloc_func(ctx, n16, n16));
  check_twice(tec_module_get(m, "twice"), 16);
  tu_assert_contains(tec_module_llvm_ir(m), "alloca"); /* 64 bytes: on the stack */
  ck_assert_ptr_null(strstr(tec_module_llvm_ir(m), "tec_rt_alloc"));
  tec_ctx_free(ctx);

  ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  m = build1(ctx, make_alloc_func(ctx, n, n));
  tu_assert_contains(tec_module_llvm_ir(m), "tec_rt_alloc"); /* symbolic: on the heap */
  /* malloc-like, so LLVM knows a temporary is none of the (noalias) arguments */
  const char *decl = strstr(tec_module_llvm_ir(m), "declare noalias");
  ck_assert_msg(decl && strstr(decl, "@tec_rt_alloc(") &&
                    strstr(decl, "@tec_rt_alloc(") < strchr(decl, '\n'),
                "tec_rt_alloc is not declared noalias in\n%.3000s", tec_module_llvm_ir(m));
  check_twice(tec_module_get(m, "twice"), 1000);
  check_twice(tec_module_get(m, "twice"), 1);
  tec_ctx_free(ctx);
}
END_TEST

static void *failing_alloc(size_t bytes, void *user) {
  (void)bytes, (void)user;
  return NULL;
}
static void plain_free(void *p, void *user) {
  (void)user;
  free(p);
}

START_TEST(test_allocate_out_of_memory) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  tec_module *m = build1(ctx, make_alloc_func(ctx, n, n));
  tec_packed_fn fn = tec_module_get(m, "twice");
  int64_t len = 100;
  DLTensor a = tu_rand_f32(1, &len, 1), c = tu_zeros(TEC_F32, 1, &len);
  tec_rt_set_allocator(failing_alloc, plain_free, NULL);
  int rc = fn((DLTensor *[]){&a, &c}, 2);
  tec_rt_set_allocator(NULL, NULL, NULL);
  ck_assert_int_eq(rc, -1);
  ck_assert_str_eq(tec_rt_last_error(), "twice: out of memory allocating 400 bytes for 'T'");
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_vector_ramp_and_gather) {
  /* C[ramp(io*8, 1, 8)] = A[ramp(io*8, 1, 8)] + B[ramp(io, 8, 8)]   (B read with stride 8) */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *s64 = ir_int(ctx, 64);
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &s64);
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &s64);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &s64);
  const ir_expr *a = buf(ctx, "A"), *b = buf(ctx, "B"), *c = buf(ctx, "C"), *io = ivar(ctx, "io");
  const ir_expr *dense = ir_ramp(ir_mul(io, ir_int(ctx, 8)), ir_int(ctx, 1), 8);
  const ir_expr *strided = ir_ramp(io, ir_int(ctx, 8), 8);
  te_tensor *D = te_placeholder(ctx, "D", TEC_F32, 1, &s64);
  const ir_expr *d = buf(ctx, "D");
  const ir_stmt *items[2] = {
      ir_store(c, dense, ir_add(ir_load(TEC_F32, a, dense, NULL), ir_load(TEC_F32, b, strided, NULL)),
               NULL),
      ir_store(d, strided, ir_load(TEC_F32, a, dense, NULL), NULL)};
  const ir_stmt *body = ir_for(io, ir_int(ctx, 0), ir_int(ctx, 8), IR_FOR_SERIAL, ir_seq(ctx, 2, items));
  lower_func *f = mkfunc(ctx, "vec", 4, (te_tensor *[]){A, B, C, D},
                         (const ir_expr *[]){a, b, c, d}, 0, NULL, body);
  tec_module *m = build1(ctx, f);
  int64_t n = 64;
  DLTensor ta = tu_rand_f32(1, &n, 1), tb = tu_rand_f32(1, &n, 2), tc = tu_zeros(TEC_F32, 1, &n);
  DLTensor td = tu_zeros(TEC_F32, 1, &n);
  ck_assert_int_eq(tec_module_get(m, "vec")((DLTensor *[]){&ta, &tb, &tc, &td}, 4), 0);
  for (int o = 0; o < 8; o++)
    for (int l = 0; l < 8; l++) {
      ck_assert_float_eq(tu_f32(&tc)[o * 8 + l], tu_f32(&ta)[o * 8 + l] + tu_f32(&tb)[o + 8 * l]);
      ck_assert_float_eq(tu_f32(&td)[o + 8 * l], tu_f32(&ta)[o * 8 + l]);
    }
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tc), tec_dl_free(&td);
  tu_assert_contains(tec_module_llvm_ir(m), "<8 x float>"); /* a power of two: never sliced */
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_vector_predicated_store_and_broadcast) {
  /* C[ramp(0,1,8)] = broadcast(A[0], 8) where ramp(0,1,8) < 5 */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *s8 = ir_int(ctx, 8);
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &s8);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &s8);
  const ir_expr *a = buf(ctx, "A"), *c = buf(ctx, "C");
  const ir_expr *r = ir_ramp(ir_int(ctx, 0), ir_int(ctx, 1), 8);
  const ir_expr *pred = ir_lt(r, ir_broadcast(ir_int(ctx, 5), 8));
  const ir_expr *v = ir_add(ir_load(TEC_F32, a, r, pred),
                            ir_broadcast(ir_load(TEC_F32, a, ir_int(ctx, 0), NULL), 8));
  const ir_stmt *body = ir_store(c, r, v, pred);
  lower_func *f = mkfunc(ctx, "pst", 2, (te_tensor *[]){A, C}, (const ir_expr *[]){a, c}, 0, NULL, body);
  tec_module *m = build1(ctx, f);
  int64_t n = 8;
  DLTensor ta = tu_rand_f32(1, &n, 1), tc = tu_zeros(TEC_F32, 1, &n);
  ck_assert_int_eq(tec_module_get(m, "pst")((DLTensor *[]){&ta, &tc}, 2), 0);
  for (int l = 0; l < 8; l++)
    ck_assert_float_eq(tu_f32(&tc)[l], l < 5 ? tu_f32(&ta)[l] + tu_f32(&ta)[0] : 0.0f);
  tec_dl_free(&ta), tec_dl_free(&tc);
  tec_ctx_free(ctx);
}
END_TEST

static int64_t ref_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t ref_floormod(int64_t a, int64_t b) { return a - b * ref_floordiv(a, b); }

START_TEST(test_floordiv_floormod_negative) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_I64, 1, &n);
  te_tensor *B = te_placeholder(ctx, "B", TEC_I64, 1, &n);
  te_tensor *Q = te_placeholder(ctx, "Q", TEC_I64, 1, &n);
  te_tensor *R = te_placeholder(ctx, "R", TEC_I64, 1, &n);
  te_tensor *Q3 = te_placeholder(ctx, "Q3", TEC_I64, 1, &n);
  const ir_expr *a = buf(ctx, "A"), *b = buf(ctx, "B"), *q = buf(ctx, "Q"), *r = buf(ctx, "R"),
                *q3 = buf(ctx, "Q3"), *i = ivar(ctx, "i");
  const ir_expr *la = ir_load(TEC_I64, a, i, NULL), *lb = ir_load(TEC_I64, b, i, NULL);
  const ir_stmt *items[3] = {
      ir_store(q, i, ir_floordiv(la, lb), NULL), ir_store(r, i, ir_floormod(la, lb), NULL),
      /* a constant divisor, and floormod by a constant, added: floordiv(a,3) + floormod(a,3) */
      ir_store(q3, i, ir_add(ir_floordiv(la, ir_int(ctx, 3)), ir_floormod(la, ir_int(ctx, 3))), NULL)};
  const ir_stmt *body = ir_for(i, ir_int(ctx, 0), n, IR_FOR_SERIAL, ir_seq(ctx, 3, items));
  lower_func *f = mkfunc(ctx, "fdiv", 5, (te_tensor *[]){A, B, Q, R, Q3},
                         (const ir_expr *[]){a, b, q, r, q3}, 1, &n, body);
  tec_module *m = build1(ctx, f);
  int64_t av[] = {7, -7, 7, -7, 0, 6, -6, -1, 1, -9, 9, 100, -100};
  int64_t bv[] = {2, 2, -2, -2, 3, 3, 3, 4, -4, 3, -3, 7, 7};
  int64_t len = 13;
  DLTensor ta = tu_zeros(TEC_I64, 1, &len), tb = tu_zeros(TEC_I64, 1, &len),
           tq = tu_zeros(TEC_I64, 1, &len), tr = tu_zeros(TEC_I64, 1, &len),
           t3 = tu_zeros(TEC_I64, 1, &len);
  memcpy(ta.data, av, sizeof av);
  memcpy(tb.data, bv, sizeof bv);
  ck_assert_int_eq(tec_module_get(m, "fdiv")((DLTensor *[]){&ta, &tb, &tq, &tr, &t3}, 5), 0);
  for (int k = 0; k < len; k++) {
    int64_t *qq = tq.data, *rr = tr.data, *q33 = t3.data;
    ck_assert_int_eq(qq[k], ref_floordiv(av[k], bv[k]));
    ck_assert_int_eq(rr[k], ref_floormod(av[k], bv[k]));
    ck_assert_int_eq(q33[k], ref_floordiv(av[k], 3) + ref_floormod(av[k], 3));
  }
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tq), tec_dl_free(&tr), tec_dl_free(&t3);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_truncdiv_and_int_ops) {
  /* Q[i] = truncdiv(i, 3) * 10 + truncmod(i, 3), M[i] = min(i, 5) - max(i, 2) */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *s = ir_int(ctx, 20);
  te_tensor *Q = te_placeholder(ctx, "Q", TEC_I32, 1, &s);
  te_tensor *M = te_placeholder(ctx, "M", TEC_I64, 1, &s);
  const ir_expr *q = buf(ctx, "Q"), *mm = buf(ctx, "M"), *i = ivar(ctx, "i");
  const ir_expr *v = ir_add(ir_mul(ir_truncdiv(i, ir_int(ctx, 3)), ir_int(ctx, 10)),
                            ir_truncmod(i, ir_int(ctx, 3)));
  const ir_stmt *items[2] = {
      ir_store(q, i, ir_cast(TEC_I32, v), NULL),
      ir_store(mm, i, ir_sub(ir_min(i, ir_int(ctx, 5)), ir_max(i, ir_int(ctx, 2))), NULL)};
  const ir_stmt *body = ir_for(i, ir_int(ctx, 0), s, IR_FOR_SERIAL, ir_seq(ctx, 2, items));
  tec_module *m = build1(ctx, mkfunc(ctx, "iops", 2, (te_tensor *[]){Q, M},
                                     (const ir_expr *[]){q, mm}, 0, NULL, body));
  int64_t len = 20;
  DLTensor tq = tu_zeros(TEC_I32, 1, &len), tm = tu_zeros(TEC_I64, 1, &len);
  ck_assert_int_eq(tec_module_get(m, "iops")((DLTensor *[]){&tq, &tm}, 2), 0);
  for (int k = 0; k < 20; k++) {
    ck_assert_int_eq(((int32_t *)tq.data)[k], k / 3 * 10 + k % 3);
    ck_assert_int_eq(((int64_t *)tm.data)[k], (k < 5 ? k : 5) - (k > 2 ? k : 2));
  }
  tec_dl_free(&tq), tec_dl_free(&tm);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_select_cast_math) {
  /* C[i] = A[i] > 0 ? exp(A[i]) : float(int(A[i] * 10));  D[i] = tanh(A[i]) + sqrt(|A[i]|)
   * + pow(|A[i]|, 1.5) + floor(A[i]*3) + ceil(A[i]*3) + fma(A[i], 2, 1) + log(|A[i]| + 1) */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &n);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &n);
  te_tensor *D = te_placeholder(ctx, "D", TEC_F32, 1, &n);
  const ir_expr *a = buf(ctx, "A"), *c = buf(ctx, "C"), *d = buf(ctx, "D"), *i = ivar(ctx, "i");
  const ir_expr *x = ir_load(TEC_F32, a, i, NULL);
  const ir_expr *cv = ir_select(ir_gt(x, ir_float(ctx, 0)), ir_exp(x),
                                ir_cast(TEC_F32, ir_cast(TEC_I32, ir_mul(x, ir_float(ctx, 10)))));
  const ir_expr *ax = ir_fabs(x);
  const ir_expr *x3 = ir_mul(x, ir_float(ctx, 3));
  const ir_expr *dv = ir_add(ir_tanh(x), ir_sqrt(ax));
  dv = ir_add(dv, ir_call(ctx, IR_INTRIN_POW, 2, (const ir_expr *[]){ax, ir_float(ctx, 1.5)}));
  dv = ir_add(dv, ir_call(ctx, IR_INTRIN_FLOOR, 1, &x3));
  dv = ir_add(dv, ir_call(ctx, IR_INTRIN_CEIL, 1, &x3));
  dv = ir_add(dv, ir_call(ctx, IR_INTRIN_FMA, 3, (const ir_expr *[]){x, ir_float(ctx, 2), ir_float(ctx, 1)}));
  dv = ir_add(dv, ir_log(ir_add(ax, ir_float(ctx, 1))));
  const ir_stmt *items[2] = {ir_store(c, i, cv, NULL), ir_store(d, i, dv, NULL)};
  const ir_stmt *body = ir_for(i, ir_int(ctx, 0), n, IR_FOR_SERIAL, ir_seq(ctx, 2, items));
  tec_module *m = build1(ctx, mkfunc(ctx, "mathy", 3, (te_tensor *[]){A, C, D},
                                     (const ir_expr *[]){a, c, d}, 1, &n, body));
  int64_t len = 257;
  DLTensor ta = tu_rand_f32(1, &len, 11), tc = tu_zeros(TEC_F32, 1, &len), td = tu_zeros(TEC_F32, 1, &len);
  ck_assert_int_eq(tec_module_get(m, "mathy")((DLTensor *[]){&ta, &tc, &td}, 3), 0);
  float rc[257], rd[257];
  for (int k = 0; k < len; k++) {
    float v = tu_f32(&ta)[k], av = fabsf(v);
    rc[k] = v > 0 ? expf(v) : (float)(int32_t)(v * 10);
    rd[k] = tanhf(v) + sqrtf(av) + powf(av, 1.5f) + floorf(v * 3) + ceilf(v * 3) + (v * 2 + 1) +
            logf(av + 1);
  }
  ck_assert_double_lt(tu_max_err(tu_f32(&tc), rc, len), 1e-5);
  ck_assert_double_lt(tu_max_err(tu_f32(&td), rd, len), 1e-5);
  tec_dl_free(&ta), tec_dl_free(&tc), tec_dl_free(&td);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_bool_buffers_let_if) {
  /* P[i] = A[i] > B[i] (bool, one byte each); let t = i*2 in if (P[i]) C[i] = t else C[i] = -1 */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &n);
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &n);
  te_tensor *P = te_placeholder(ctx, "P", TEC_BOOLT, 1, &n);
  te_tensor *C = te_placeholder(ctx, "C", TEC_I64, 1, &n);
  const ir_expr *a = buf(ctx, "A"), *b = buf(ctx, "B"), *p = buf(ctx, "P"), *c = buf(ctx, "C");
  const ir_expr *i = ivar(ctx, "i"), *t = ir_var(ctx, "t", TEC_I64, IR_VAR_LET);
  const ir_stmt *items[2] = {
      ir_store(p, i, ir_gt(ir_load(TEC_F32, a, i, NULL), ir_load(TEC_F32, b, i, NULL)), NULL),
      ir_let_stmt(t, ir_mul(i, ir_int(ctx, 2)),
                  ir_if(ir_load(TEC_BOOLT, p, i, NULL), ir_store(c, i, t, NULL),
                        ir_store(c, i, ir_int(ctx, -1), NULL)))};
  const ir_stmt *body = ir_attr("pragma_test", ir_int(ctx, 1),
                                ir_for(i, ir_int(ctx, 0), n, IR_FOR_PARALLEL, ir_seq(ctx, 2, items)));
  tec_module *m = build1(ctx, mkfunc(ctx, "cmp", 4, (te_tensor *[]){A, B, P, C},
                                     (const ir_expr *[]){a, b, p, c}, 1, &n, body));
  int64_t len = 50;
  DLTensor ta = tu_rand_f32(1, &len, 1), tb = tu_rand_f32(1, &len, 2);
  DLTensor tp = tu_zeros(TEC_BOOLT, 1, &len), tc = tu_zeros(TEC_I64, 1, &len);
  ck_assert_int_eq(tec_module_get(m, "cmp")((DLTensor *[]){&ta, &tb, &tp, &tc}, 4), 0);
  for (int k = 0; k < len; k++) {
    int gt = tu_f32(&ta)[k] > tu_f32(&tb)[k];
    ck_assert_int_eq(((uint8_t *)tp.data)[k], gt);
    ck_assert_int_eq(((int64_t *)tc.data)[k], gt ? 2 * k : -1);
  }
  tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tp), tec_dl_free(&tc);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_unrolled_loop) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *s = ir_int(ctx, 4);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F64, 1, &s);
  const ir_expr *c = buf(ctx, "C"), *i = ivar(ctx, "i");
  const ir_stmt *body = ir_for(i, ir_int(ctx, 0), s, IR_FOR_UNROLLED,
                               ir_store(c, i, ir_cast(TEC_F64, ir_mul(i, i)), NULL));
  tec_module *m = build1(ctx, mkfunc(ctx, "sq", 1, &C, &c, 0, NULL, body));
  int64_t len = 4;
  DLTensor tc = tu_zeros(TEC_F64, 1, &len);
  ck_assert_int_eq(tec_module_get(m, "sq")((DLTensor *[]){&tc}, 1), 0);
  for (int k = 0; k < 4; k++) ck_assert_double_eq(((double *)tc.data)[k], k * k);
  tec_dl_free(&tc);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_f16_storage) {
  /* H: float16[n] in, C[i] = float32(H[i]) * 2, and H2[i] = float16(C[i]) */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *H = te_placeholder(ctx, "H", TEC_F16, 1, &n);
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 1, &n);
  te_tensor *H2 = te_placeholder(ctx, "H2", TEC_F16, 1, &n);
  const ir_expr *h = buf(ctx, "H"), *c = buf(ctx, "C"), *h2 = buf(ctx, "H2"), *i = ivar(ctx, "i");
  const ir_expr *cv = ir_mul(ir_cast(TEC_F32, ir_load(TEC_F16, h, i, NULL)), ir_float(ctx, 2));
  const ir_stmt *items[2] = {ir_store(c, i, cv, NULL),
                             ir_store(h2, i, ir_cast(TEC_F16, ir_load(TEC_F32, c, i, NULL)), NULL)};
  const ir_stmt *body = ir_for(i, ir_int(ctx, 0), n, IR_FOR_SERIAL, ir_seq(ctx, 2, items));
  tec_module *m = build1(ctx, mkfunc(ctx, "half", 3, (te_tensor *[]){H, C, H2},
                                     (const ir_expr *[]){h, c, h2}, 1, &n, body));
  int64_t len = 3;
  DLTensor th = tu_zeros(TEC_F16, 1, &len), tc = tu_zeros(TEC_F32, 1, &len), th2 = tu_zeros(TEC_F16, 1, &len);
  uint16_t in[3] = {0x3c00, 0xc000, 0x3800}; /* 1.0, -2.0, 0.5 */
  memcpy(th.data, in, sizeof in);
  ck_assert_int_eq(tec_module_get(m, "half")((DLTensor *[]){&th, &tc, &th2}, 3), 0);
  ck_assert_float_eq(tu_f32(&tc)[0], 2.0f);
  ck_assert_float_eq(tu_f32(&tc)[1], -4.0f);
  ck_assert_float_eq(tu_f32(&tc)[2], 1.0f);
  uint16_t *out = th2.data;
  ck_assert_uint_eq(out[0], 0x4000); /* 2.0 */
  ck_assert_uint_eq(out[1], 0xc400); /* -4.0 */
  ck_assert_uint_eq(out[2], 0x3c00); /* 1.0 */
  tec_dl_free(&th), tec_dl_free(&tc), tec_dl_free(&th2);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_two_functions_one_module) {
  vadd_fx x = make_vadd();
  lower_func *tw = make_alloc_func(x.ctx, te_size_var(x.ctx, "len"), ir_int(x.ctx, 16));
  lower_func *fs[2] = {x.f, tw};
  tec_module *m = tec_build(x.ctx, 2, fs, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(x.ctx));
  ck_assert_ptr_nonnull(tec_module_get(m, "vadd"));
  check_twice(tec_module_get(m, "twice"), 16);
  tec_ctx_free(x.ctx);
}
END_TEST

/* ---- entry checks ---- */

static void expect_fail(tec_packed_fn fn, DLTensor **args, int nargs, const char *msg) {
  ck_assert_int_eq(fn(args, nargs), -1);
  ck_assert_str_eq(tec_rt_last_error(), msg);
}

START_TEST(test_entry_checks) {
  vadd_fx x = make_vadd();
  tec_module *m = build1(x.ctx, x.f);
  tec_packed_fn fn = tec_module_get(m, "vadd");
  int64_t n7 = 7, n5 = 5;
  DLTensor a = tu_rand_f32(1, &n7, 1), b = tu_rand_f32(1, &n7, 2), c = tu_zeros(TEC_F32, 1, &n7);
  DLTensor c5 = tu_zeros(TEC_F32, 1, &n5);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b, &c}, 3), 0);

  expect_fail(fn, (DLTensor *[]){&a, &b}, 2, "vadd: expected 3 arguments, got 2");
  expect_fail(fn, NULL, 3, "vadd: the argument array is NULL");
  expect_fail(fn, (DLTensor *[]){&a, NULL, &c}, 3, "vadd: argument 1 ('B') is NULL");
  expect_fail(fn, (DLTensor *[]){&a, &b, &c5}, 3,
              "vadd: argument 2 ('C') shape[0] is 5, expected 7 (n, bound by argument 0 'A')");

  int64_t shape2[2] = {7, 1};
  DLTensor b2 = tu_zeros(TEC_F32, 2, shape2);
  expect_fail(fn, (DLTensor *[]){&a, &b2, &c}, 3, "vadd: argument 1 ('B') has ndim 2, expected 1");
  DLTensor bd = tu_zeros(TEC_F64, 1, &n7);
  expect_fail(fn, (DLTensor *[]){&a, &bd, &c}, 3,
              "vadd: argument 1 ('B') has dtype float64, expected float32");
  DLTensor bi = tu_zeros(TEC_I32, 1, &n7);
  expect_fail(fn, (DLTensor *[]){&bi, &b, &c}, 3,
              "vadd: argument 0 ('A') has dtype int32, expected float32");
  DLTensor odd = b;
  odd.dtype.code = 9, odd.dtype.bits = 12;
  expect_fail(fn, (DLTensor *[]){&a, &odd, &c}, 3,
              "vadd: argument 1 ('B') has dtype (code 9, bits 12), expected float32");
  DLTensor lanes = b;
  lanes.dtype.lanes = 4;
  expect_fail(fn, (DLTensor *[]){&a, &lanes, &c}, 3,
              "vadd: argument 1 ('B') has 4 lanes per element, expected 1");
  DLTensor gpu = c;
  gpu.device.device_type = kDLCUDA;
  expect_fail(fn, (DLTensor *[]){&a, &b, &gpu}, 3,
              "vadd: argument 2 ('C') is on device type 2, expected kDLCPU (1)");
  DLTensor nodata = b;
  nodata.data = NULL;
  expect_fail(fn, (DLTensor *[]){&a, &nodata, &c}, 3, "vadd: argument 1 ('B') has NULL data");
  DLTensor noshape = b;
  noshape.shape = NULL;
  expect_fail(fn, (DLTensor *[]){&a, &noshape, &c}, 3, "vadd: argument 1 ('B') has a NULL shape");
  int64_t neg = -3;
  DLTensor aneg = a;
  aneg.shape = &neg;
  expect_fail(fn, (DLTensor *[]){&aneg, &b, &c}, 3,
              "vadd: argument 0 ('A') shape[0] is -3, expected a size >= 0 (n)");

  /* misaligned data, through the pointer or through byte_offset, and strides: the strided
   * path (compact aligned copies) computes what the compact arguments give */
  int64_t n8 = 8, n14 = 14;
  DLTensor big = tu_rand_f32(1, &n8, 3);
  float want[7];
  for (int k = 0; k < 7; k++) want[k] = tu_f32(&big)[k + 1] + tu_f32(&b)[k];
  DLTensor mis = tec_dl_view((char *)big.data + 4, TEC_F32, 1, &n7);
  ck_assert_msg(fn((DLTensor *[]){&mis, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  for (int k = 0; k < 7; k++) ck_assert_float_eq(tu_f32(&c)[k], want[k]);
  DLTensor off = tec_dl_view(big.data, TEC_F32, 1, &n7);
  off.byte_offset = 4;
  memset(c.data, 0, 7 * sizeof(float));
  ck_assert_msg(fn((DLTensor *[]){&off, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  for (int k = 0; k < 7; k++) ck_assert_float_eq(tu_f32(&c)[k], want[k]);
  off.byte_offset = 0;
  ck_assert_int_eq(fn((DLTensor *[]){&off, &b, &c}, 3), 0);
  int64_t one = 1, two = 2;
  DLTensor sa = a, wide = tu_rand_f32(1, &n14, 4);
  sa.strides = &one;
  ck_assert_int_eq(fn((DLTensor *[]){&sa, &b, &c}, 3), 0);
  sa = tec_dl_view(wide.data, TEC_F32, 1, &n7);
  sa.strides = &two; /* every other element of 14 */
  ck_assert_msg(fn((DLTensor *[]){&sa, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  for (int k = 0; k < 7; k++) ck_assert_float_eq(tu_f32(&c)[k], tu_f32(&wide)[2 * k] + tu_f32(&b)[k]);
  tec_dl_free(&wide);

  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c), tec_dl_free(&c5), tec_dl_free(&b2);
  tec_dl_free(&bd), tec_dl_free(&bi), tec_dl_free(&big);
  tec_ctx_free(x.ctx);
}
END_TEST

START_TEST(test_entry_checks_2d) {
  /* mm(A: float32[n, 4], B: float32[4, m], C: float32[n, m], D: float32[n * 2]) — no body work */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n"), *mv = te_size_var(ctx, "m"), *four = ir_int(ctx, 4);
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, four});
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, (const ir_expr *[]){four, mv});
  te_tensor *C = te_placeholder(ctx, "C", TEC_F32, 2, (const ir_expr *[]){n, mv});
  const ir_expr *n2 = ir_mul(n, ir_int(ctx, 2));
  te_tensor *D = te_placeholder(ctx, "D", TEC_F32, 1, &n2);
  const ir_expr *bufs[4] = {buf(ctx, "A"), buf(ctx, "B"), buf(ctx, "C"), buf(ctx, "D")};
  const ir_stmt *body = ir_store(bufs[2], ir_int(ctx, 0), ir_float(ctx, 1), NULL);
  tec_module *m = build1(ctx, mkfunc(ctx, "mm", 4, (te_tensor *[]){A, B, C, D}, bufs, 2,
                                     (const ir_expr *[]){n, mv}, body));
  tec_packed_fn fn = tec_module_get(m, "mm");
  int64_t sa[2] = {3, 4}, sb[2] = {4, 5}, sc[2] = {3, 5}, sd = 6, sb_bad[2] = {5, 5};
  DLTensor a = tu_zeros(TEC_F32, 2, sa), b = tu_zeros(TEC_F32, 2, sb), c = tu_zeros(TEC_F32, 2, sc);
  DLTensor d = tu_zeros(TEC_F32, 1, &sd);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c, &d}, 4) == 0, "%s", tec_rt_last_error());
  DLTensor bb = tu_zeros(TEC_F32, 2, sb_bad);
  expect_fail(fn, (DLTensor *[]){&a, &bb, &c, &d}, 4, "mm: argument 1 ('B') shape[0] is 5, expected 4");
  int64_t sd_bad = 7;
  DLTensor dd = tu_zeros(TEC_F32, 1, &sd_bad);
  DLTensor *args_d[4] = {&a, &b, &c, &dd};
  ck_assert_int_eq(fn(args_d, 4), -1);
  tu_assert_contains(tec_rt_last_error(), "mm: argument 3 ('D') shape[0] is 7, expected 6 (");
  /* 2-d strides: compact ones, and a column-major view (the strided path) */
  int64_t good[2] = {4, 1}, colmajor[2] = {1, 3};
  DLTensor as = a;
  as.strides = good;
  ck_assert_int_eq(fn((DLTensor *[]){&as, &b, &c, &d}, 4), 0);
  as.strides = colmajor;
  ck_assert_msg(fn((DLTensor *[]){&as, &b, &c, &d}, 4) == 0, "%s", tec_rt_last_error());
  ck_assert_float_eq(tu_f32(&c)[0], 1.0f);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c), tec_dl_free(&d), tec_dl_free(&bb), tec_dl_free(&dd);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_bool_argument_dtype) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *s = ir_int(ctx, 3);
  te_tensor *P = te_placeholder(ctx, "P", TEC_BOOLT, 1, &s);
  const ir_expr *p = buf(ctx, "P");
  tec_module *m = build1(ctx, mkfunc(ctx, "setp", 1, &P, &p, 0, NULL,
                                     ir_store(p, ir_int(ctx, 1), ir_bool(ctx, 1), NULL)));
  tec_packed_fn fn = tec_module_get(m, "setp");
  int64_t len = 3;
  DLTensor tp = tu_zeros(TEC_BOOLT, 1, &len);
  ck_assert_int_eq(fn((DLTensor *[]){&tp}, 1), 0);
  ck_assert_int_eq(((uint8_t *)tp.data)[1], 1);
  DLTensor tf = tu_zeros(TEC_F32, 1, &len);
  expect_fail(fn, (DLTensor *[]){&tf}, 1, "setp: argument 0 ('P') has dtype float32, expected bool (uint8)");
  tec_dl_free(&tp), tec_dl_free(&tf);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- build-time errors ---- */

START_TEST(test_build_errors) {
  vadd_fx x = make_vadd();
  tec_ctx *ctx = x.ctx;
  ck_assert_ptr_null(tec_build(ctx, 0, &x.f, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "expected at least one lowered function");
  tec_ctx_clear_error(ctx);
  lower_func *two[2] = {x.f, x.f};
  ck_assert_ptr_null(tec_build(ctx, 2, two, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "two functions are named 'vadd'");
  tec_ctx_clear_error(ctx);
  lower_func bad = *x.f;
  bad.name = "3d-conv";
  lower_func *pb = &bad;
  ck_assert_ptr_null(tec_build(ctx, 1, &pb, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "function name '3d-conv' is not a C identifier");
  tec_ctx_clear_error(ctx);

  bad.name = "fma";
  ck_assert_ptr_null(tec_build(ctx, 1, &pb, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "function name 'fma' is reserved");
  tec_ctx_clear_error(ctx);

  /* a READ that lowering should have removed is an internal error, not a crash */
  lower_func rd = *x.f;
  rd.name = "rd";
  const ir_expr *i = ivar(ctx, "i");
  rd.body = ir_for(i, ir_int(ctx, 0), x.n, IR_FOR_SERIAL, ir_store(x.c, i, TE_AT(x.A, i), NULL));
  lower_func *pr = &rd;
  ck_assert_ptr_null(tec_build(ctx, 1, &pr, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "internal error generating 'rd': a READ of tensor 'A'");
  tec_ctx_clear_error(ctx);

  /* an unbound variable */
  lower_func ub = *x.f;
  ub.name = "ub";
  const ir_expr *ghost = ivar(ctx, "ghost");
  ub.body = ir_store(x.c, ghost, ir_float(ctx, 0), NULL);
  lower_func *pu = &ub;
  ck_assert_ptr_null(tec_build(ctx, 1, &pu, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "variable 'ghost'");
  tec_ctx_clear_error(ctx);

  /* a size variable no argument's extent can bind */
  lower_func sv = *x.f;
  sv.name = "sv";
  const ir_expr *k = te_size_var(ctx, "k");
  sv.nsize = 2;
  sv.size_vars = (const ir_expr **)tec_ctx_alloc(ctx, 2 * sizeof(ir_expr *));
  sv.size_vars[0] = x.n;
  sv.size_vars[1] = k;
  lower_func *ps = &sv;
  ck_assert_ptr_null(tec_build(ctx, 1, &ps, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "size variable 'k' of 'sv' is not the extent of any");
  tec_ctx_clear_error(ctx);

  /* the first error from an earlier failure is kept */
  lower_func *nul = NULL;
  ck_assert_ptr_null(tec_build(ctx, 1, &nul, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "function 0 is NULL");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_bad_targets) {
  vadd_fx x = make_vadd();
  tec_ctx *ctx = x.ctx;
  struct {
    const char *target, *msg;
  } cases[] = {
      {"cuda", "unknown target kind 'cuda'"},
      {"", "empty target string"},
      {"llvm -mfoo=bar", "unknown option '-mfoo=bar'"},
      {"llvm -mcpu", "option '-mcpu' needs a value"},
      {"llvm -mtriple=bogus-none-none", "unknown triple 'bogus-none-none'"},
      {"llvm -mattr=neon -mtriple=aarch64-linux-gnu", "feature 'neon' must start with '+' or '-'"},
      {"llvm -mcpu=a -mcpu=b", "option -mcpu is given twice"},
#if defined(__aarch64__)
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "cannot run on this host"},
#else
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", "cannot run on this host"},
#endif
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tec_ctx_clear_error(ctx);
    ck_assert_ptr_null(tec_build(ctx, 1, &x.f, cases[c].target));
    tu_assert_contains(tec_ctx_error(ctx), cases[c].msg);
  }
  tec_ctx_clear_error(ctx);
  /* the host spelled out works */
  ck_assert_ptr_nonnull(tec_build(ctx, 1, &x.f, "llvm"));
#if defined(__aarch64__)
  ck_assert_ptr_nonnull(tec_build(ctx, 1, &x.f, "  llvm   -mattr=+neon "));
#else
  ck_assert_ptr_nonnull(tec_build(ctx, 1, &x.f, "  llvm   -mattr=+avx2 "));
#endif
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_module_lifecycle) {
  vadd_fx x = make_vadd();
  tec_module *m = build1(x.ctx, x.f);
  ck_assert_ptr_null(tec_module_get(m, "nope"));
  tu_assert_contains(tec_ctx_error(x.ctx), "the module has no function 'nope' (it has: vadd)");
  ck_assert_ptr_null(tec_module_get_raw(m, "nope_raw"));
  tec_ctx_clear_error(x.ctx);
  tec_module *m2 = build1(x.ctx, x.f); /* several modules per ctx */
  tec_module_free(m);
  tec_module_free(m); /* twice is harmless; the ctx will not free it again */
  tec_module_free(NULL);
  ck_assert_ptr_null(tec_module_get(m, "vadd"));
  tu_assert_contains(tec_ctx_error(x.ctx), "the module was freed");
  ck_assert_ptr_nonnull(tec_module_get(m2, "vadd"));
  ck_assert_int_eq(tec_call(NULL, 0, NULL), -1);
  tu_assert_contains(tec_rt_last_error(), "tec_call: the function is NULL");
  tec_ctx_free(x.ctx); /* disposes m2 */
}
END_TEST

/* ---- ahead of time ---- */

START_TEST(test_emit) {
  vadd_fx x = make_vadd();
  char dir[] = "/tmp/tec_emit_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char obj[256], hdr[256], arm[256], ll[256], armo[256];
  snprintf(obj, sizeof obj, "%s/vadd.o", dir);
  snprintf(hdr, sizeof hdr, "%s/vadd.h", dir);
  snprintf(arm, sizeof arm, "%s/vadd_a64.s", dir);
  snprintf(armo, sizeof armo, "%s/vadd_arm.o", dir);
  snprintf(ll, sizeof ll, "%s/vadd.ll", dir);
  ck_assert_msg(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_OBJECT, obj) == 0, "%s", tec_ctx_error(x.ctx));
  long size = 0;
  char *o = tu_read_file(obj, &size);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_gt(size, 64);
  ck_assert(memcmp(o, "\177ELF", 4) == 0);
  free(o);

  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_HEADER, hdr), 0);
  char *h = tu_read_file(hdr, NULL);
  tu_assert_contains(h, "#ifndef TEC_GENERATED_VADD_H");
  tu_assert_contains(h, "#include <dlpack/dlpack.h>");
  tu_assert_contains(h, "#include <stdint.h>");
  tu_assert_contains(h, "int32_t vadd(DLTensor *const *args, int32_t nargs);");
  tu_assert_contains(h, "int32_t vadd_raw(float *A, float *B, float *C, int64_t n);");
  free(h);

  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_LLVM_IR, ll), 0);
  char *l = tu_read_file(ll, NULL);
  tu_assert_contains(tu_ir_head(l, "vadd"), "define i32 @vadd(");
  free(l);

  const char *a64 = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon";
  ck_assert_msg(tec_emit(x.ctx, 1, &x.f, a64, TEC_EMIT_ASM, arm) == 0, "%s", tec_ctx_error(x.ctx));
  char *s = tu_read_file(arm, NULL);
  tu_assert_contains(s, "vadd_raw:");
  tu_assert_contains(s, ".4s"); /* NEON float32x4 */
  free(s);
  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, "llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4",
                            TEC_EMIT_OBJECT, armo), 0);

  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_OBJECT, "/nonexistent/dir/x.o"), -1);
  tu_assert_contains(tec_ctx_error(x.ctx), "tec_emit: cannot write '/nonexistent/dir/x.o'");
  tec_ctx_clear_error(x.ctx);
  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_HEADER, "/nonexistent/dir/x.h"), -1);
  tu_assert_contains(tec_ctx_error(x.ctx), "cannot write");
  tec_ctx_clear_error(x.ctx);
  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, "llvm -bad", TEC_EMIT_HEADER, hdr), -1);
  tu_assert_contains(tec_ctx_error(x.ctx), "unknown option '-bad'");

  unlink(obj), unlink(hdr), unlink(arm), unlink(ll), unlink(armo);
  rmdir(dir);
  tec_ctx_free(x.ctx);
}
END_TEST

/* The emitted object and header, compiled into a C program with the system compiler. */
static const char *aot_main =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"vadd.h\"\n"
    "static char msg[256];\n"
    "int32_t tec_rt_check_fail(const char *fmt, int64_t a, int64_t b) {\n"
    "  snprintf(msg, sizeof msg, fmt, (long long)a, (long long)b); return -1; }\n"
    "int main(void) {\n"
    "  float *a = aligned_alloc(64, 64 * 4), *b = aligned_alloc(64, 64 * 4), *c = aligned_alloc(64, 64 * 4);\n"
    "  for (int i = 0; i < 64; i++) a[i] = i, b[i] = 2 * i;\n"
    "  int64_t n = 64, m = 3;\n"
    "  DLTensor ta = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &n, NULL, 0};\n"
    "  DLTensor tb = ta, tc = ta; tb.data = b; tc.data = c;\n"
    "  if (vadd((DLTensor *[]){&ta, &tb, &tc}, 3) != 0 || c[63] != 189) return 1;\n"
    "  if (vadd_raw(a, b, c, 10) != 0 || c[9] != 27) return 2;\n"
    "  tc.shape = &m;\n"
    "  if (vadd((DLTensor *[]){&ta, &tb, &tc}, 3) != -1) return 3;\n"
    "  puts(msg);\n"
    "  return 0;\n"
    "}\n";

START_TEST(test_emit_link_and_run) {
  /* The C compiler and how to run its output: cross-built tests (cmake/cross-common.cmake)
   * set TEC_TEST_CC="aarch64-linux-gnu-gcc ..." and TEC_TEST_RUN="qemu-aarch64 -L ...". */
  const char *cc = getenv("TEC_TEST_CC") ? getenv("TEC_TEST_CC") : "cc";
  const char *run = getenv("TEC_TEST_RUN") ? getenv("TEC_TEST_RUN") : "";
  char probe[512];
  snprintf(probe, sizeof probe, "%s --version > /dev/null 2>&1", cc);
  if (system(probe) != 0) return; /* no C compiler: nothing to link */
  vadd_fx x = make_vadd();
  char dir[] = "/tmp/tec_aot_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256], cmd[1024];
  snprintf(path, sizeof path, "%s/vadd.o", dir);
  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_OBJECT, path), 0);
  snprintf(path, sizeof path, "%s/vadd.h", dir);
  ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_HEADER, path), 0);
  snprintf(path, sizeof path, "%s/main.c", dir);
  FILE *f = fopen(path, "w");
  fputs(aot_main, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd %s && %s -std=c11 -Wall -Werror -o prog main.c vadd.o && %s ./prog > out.txt", dir,
           cc, run);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/out.txt", dir);
  char *out = tu_read_file(path, NULL);
  tu_assert_contains(out, "vadd: argument 2 ('C') shape[0] is 3, expected 64 (n, bound by argument 0 'A')");
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  tec_ctx_free(x.ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("codegen");
  TCase *run = tcase_create("run");
  tcase_add_test(run, test_vadd);
  tcase_add_test(run, test_fma_loop_asm);
  tcase_add_test(run, test_wide_vectors_sliced);
  tcase_add_test(run, test_allocate_stack_and_heap);
  tcase_add_test(run, test_allocate_out_of_memory);
  tcase_add_test(run, test_vector_ramp_and_gather);
  tcase_add_test(run, test_vector_predicated_store_and_broadcast);
  tcase_add_test(run, test_floordiv_floormod_negative);
  tcase_add_test(run, test_truncdiv_and_int_ops);
  tcase_add_test(run, test_select_cast_math);
  tcase_add_test(run, test_bool_buffers_let_if);
  tcase_add_test(run, test_unrolled_loop);
  tcase_add_test(run, test_f16_storage);
  tcase_add_test(run, test_two_functions_one_module);
  suite_add_tcase(s, run);
  TCase *entry = tcase_create("entry");
  tcase_add_test(entry, test_entry_checks);
  tcase_add_test(entry, test_entry_checks_2d);
  tcase_add_test(entry, test_bool_argument_dtype);
  suite_add_tcase(s, entry);
  TCase *errs = tcase_create("errors");
  tcase_add_test(errs, test_build_errors);
  tcase_add_test(errs, test_bad_targets);
  tcase_add_test(errs, test_module_lifecycle);
  tcase_add_test(errs, test_emit);
  tcase_add_test(errs, test_emit_link_and_run);
  suite_add_tcase(s, errs);
  return tu_run(s);
}
