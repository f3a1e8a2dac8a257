/* codegen_requant.c — the int8 requantization's rounding and narrowing on x86 AVX-512
 * (docs/quantized.md, "Requantization on x86"). Two patterns of the IR that qnn_requant_f
 * builds, each exact where the IR is defined:
 *
 *   int32(round_even(x)), x f32 x 16, 32 or 64 lanes
 *     -> vcvtps2dq {rn-sae} per 16 lanes (ties to even by the instruction's own rounding,
 *        whatever MXCSR says), not vrndscaleps + vcvttps2dq: LLVM 14 to 19 do not fold them.
 *
 *   int8(int32(round_even(min(max(x, A), B))) + Z), the same lanes, with the constants
 *   A + Z = -128 and B + Z = 127 (the clamp spans the whole int8 range: ReLU or ReLU6 with the
 *   output zero point -128 and 6 at 255 steps, or no activation)
 *     -> m = max(x, A); r = vcvtps2dq {rn-sae}(m) - A; vpmovusdb (unsigned saturation to
 *        [0, 255]); xor 0x80 (the bytes minus 128): 4 instructions when A = 0, not 6.
 *        Exact: m >= A, so round_even(m) >= A (A is an integer) and r >= 0; m >= 2^31 (or
 *        +inf) converts to 0x80000000, which as unsigned (also after - A, |A| <= 255) is
 *        above 255, as round_even(min(m, B)) - A = 255 there; below, min(round_even(m) - A,
 *        255) = round_even(min(m, B)) - A since round_even is monotone and B - A = 255 is an
 *        integer. The byte then is r + A + Z = r - 128 (mod 256). A NaN gives A on both
 *        paths: max(NaN, A) is A (cg_minmax's select), which this sequence shares.
 *
 * Elsewhere (other targets, lanes, constants) NULL: the generic path. */
#include "codegen_llvm/codegen.h"

static int x86_avx512(const cg_func *f) {
  return f->target && f->target->arch == TEC_ARCH_X86_64 &&
         tec_target_has(f->target, TEC_FEATURE_AVX512F);
}

/* e's value when it is a constant (or a broadcast of one); 0 otherwise */
static int const_of(const ir_expr *e, double *v) {
  while (e && e->kind == IR_BROADCAST) e = e->a;
  if (!e) return 0;
  if (e->kind == IR_FLOAT_IMM) return *v = e->v.f, 1;
  if (e->kind == IR_INT_IMM) return *v = (double)e->v.i, 1;
  return 0;
}

int cg_is_round_even_f32(const ir_expr *r) {
  return r->kind == IR_CALL && r->v.i == IR_INTRIN_ROUND_EVEN && r->nargs == 1 &&
         r->type.code == TEC_FLOAT && r->type.bits == 32;
}

/* vcvtps2dq {rn-sae} of 16 f32 lanes */
static LLVMValueRef cvt_rn16(cg_func *f, LLVMValueRef x) {
  LLVMTypeRef v16i = LLVMVectorType(f->i32, 16);
  LLVMValueRef args[4] = {x, LLVMGetUndef(v16i), LLVMConstInt(LLVMInt16TypeInContext(f->llctx), 0xffff, 0),
                          LLVMConstInt(f->i32, 8, 0) /* {rn-sae}: nearest even, no exceptions */};
  return cg_intrinsic_cast(f, "llvm.x86.avx512.mask.cvtps2dq.512", NULL, 0, args, 4, v16i);
}

/* vcvtps2dq {rn-sae} of x (f32 x n lanes, n 16, 32 or 64), per 16 lanes */
static LLVMValueRef cvt_rn(cg_func *f, LLVMValueRef x, int n) {
  return cg_by_parts(f, x, n, 16, cvt_rn16);
}

LLVMValueRef cg_try_requant_x86(cg_func *f, const ir_expr *e) {
  if (!x86_avx512(f) || e->kind != IR_CAST || e->type.code != TEC_INT) return NULL;
  int n = e->type.lanes;
  if (n != 16 && n != 32 && n != 64) return NULL;
  const ir_expr *r = e->a;
  if (e->type.bits == 32 && cg_is_round_even_f32(r)) { /* int32(round_even(x)) */
    LLVMValueRef x = cg_expr(f, r->args[0]);
    return x ? cvt_rn(f, x, n) : NULL;
  }
  /* int8(int32(round_even(min(max(x, A), B))) +- Z), or without the add (Z = 0) */
  const ir_expr *add = r, *cv = r, *mn, *mx;
  double A, B, Z = 0.0;
  if (e->type.bits != 8 || add->type.code != TEC_INT || add->type.bits != 32) return NULL;
  if (add->kind == IR_ADD || add->kind == IR_SUB) {
    if (!const_of(add->b, &Z)) return NULL;
    if (add->kind == IR_SUB) Z = -Z;
    cv = add->a;
  }
  if (cv->kind != IR_CAST || !cg_is_round_even_f32(cv->a)) return NULL;
  mn = cv->a->args[0];
  if (mn->kind != IR_MIN || !const_of(mn->b, &B)) return NULL;
  mx = mn->a;
  if (mx->kind != IR_MAX || !const_of(mx->b, &A)) return NULL;
  /* A an integer (so round_even(max(x, A)) >= A) small enough that 0x80000000 - A stays
   * above 255 as unsigned (qnn_requant_f's A is within [-255, 255]) */
  if (!(A >= -1073741824.0 && A <= 1073741824.0) || A != (double)(int64_t)A ||
      A + Z != -128.0 || B + Z != 127.0)
    return NULL;
  LLVMValueRef m = cg_expr(f, mx); /* max(x, A) as the generic path computes it */
  LLVMValueRef q = m ? cvt_rn(f, m, n) : NULL;
  if (!q) return NULL;
  if (A != 0.0) q = LLVMBuildSub(f->b, q, cg_splat(f, LLVMConstInt(f->i32, (unsigned long long)(int64_t)A, 1), n), "");
  LLVMValueRef top = cg_splat(f, LLVMConstInt(f->i32, 255, 0), n);
  LLVMValueRef lt = LLVMBuildICmp(f->b, LLVMIntULT, q, top, "");
  LLVMValueRef u = LLVMBuildSelect(f->b, lt, q, top, "usat");
  LLVMTypeRef i8 = LLVMInt8TypeInContext(f->llctx);
  LLVMValueRef b = LLVMBuildTrunc(f->b, u, LLVMVectorType(i8, (unsigned)n), "");
  return LLVMBuildXor(f->b, b, cg_splat(f, LLVMConstInt(i8, 0x80, 0), n), "");
}
