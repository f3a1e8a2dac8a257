/* codegen_vmath.c — exp, tanh and log of float vectors inline, without libm: a vectorized loop
 * that calls exp would otherwise make one `expf` call per lane (LLVM scalarizes `llvm.exp` on
 * vectors: softmax over 4096 x 4096 spent most of its time there). Scalar calls stay libm's
 * (`llvm.exp` -> expf/exp, `tanhf`, `logf`), and so do float64 vectors; float16 vectors go
 * through float32. Target independent IR: AVX2/AVX-512 and NEON get the same sequence.
 *
 * exp(x), float32 lanes (Cody-Waite range reduction, Cephes's expf polynomial):
 *   xc = min(max(x, -104), 89)               NaN -> -104 (put back at the end); past the
 *                                            range the result is 0 or inf anyway
 *   n  = round(xc * log2(e))                 adding 1.5 * 2^23: the sum's low bits are n
 *   r  = xc - n * ln2_hi - n * ln2_lo        |r| <= ln2 / 2; n * ln2_hi is exact
 *   p  = 1 + r + r^2 * P5(r)
 *   exp(x) = (p * 2^(n - n/2)) * 2^(n/2)     two normal scales, so results that are denormal
 *                                            or overflow round once, as libm's do
 *   NaN stays NaN, +inf -> inf, -inf -> 0.
 * Accuracy (tests/test_vmath.c; docs/architecture.md "Vector math"): within 1 ulp of glibc's
 * expf over every float in [-104, 89] (0 or 1 denormal step below 2^-126).
 *
 * tanh(x) = sign(x) * (1 - 2 / (exp(2|x|) + 1)) for |x| >= 0.625, and Cephes's odd
 * polynomial x + x^3 * Q(x^2) below (where the subtraction would cancel): within 2 ulp.
 *
 * log(x) (Cephes's logf): x = m * 2^e with m in [sqrt(1/2), sqrt(2)) (denormals scaled by 2^23
 * first), t = m - 1, log = t - t^2/2 + t^3 P8(t) + e ln2: within 1 ulp; log(0) = -inf,
 * log(x < 0) = NaN, log(inf) = inf.
 */
#include <math.h>
#include "codegen_llvm/codegen.h"

/* a constant of v's element type in every lane of v's type */
static LLVMValueRef kf(LLVMTypeRef vt, double c) {
  LLVMTypeRef et = LLVMGetElementType(vt);
  LLVMValueRef e = LLVMConstReal(et, c), lanes[64];
  unsigned n = LLVMGetVectorSize(vt);
  for (unsigned i = 0; i < n && i < 64; i++) lanes[i] = e;
  return LLVMConstVector(lanes, n);
}
static LLVMValueRef ki(LLVMTypeRef vt, long long c) {
  LLVMValueRef e = LLVMConstInt(LLVMGetElementType(vt), (unsigned long long)c, 1), lanes[64];
  unsigned n = LLVMGetVectorSize(vt);
  for (unsigned i = 0; i < n && i < 64; i++) lanes[i] = e;
  return LLVMConstVector(lanes, n);
}

/* a*b + c, fused where the target's vectors fuse (ARMv7 NEON only when asked: llvm.fma, as
 * codegen_expr.c's multiply-adds); unfused elsewhere without FMA (x86-64 baseline) */
static LLVMValueRef fma3(cg_func *f, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return cg_intrinsic(f, f->vector_fma ? "llvm.fma" : "llvm.fmuladd", LLVMTypeOf(a), args, 3);
}
static LLVMValueRef call2(cg_func *f, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic(f, name, LLVMTypeOf(a), args, 2);
}

/* 2^k of integer lanes k in [-126, 127] as floats */
static LLVMValueRef pow2(cg_func *f, LLVMValueRef k, LLVMTypeRef ft) {
  LLVMTypeRef it = LLVMTypeOf(k);
  LLVMValueRef bits = LLVMBuildShl(f->b, LLVMBuildAdd(f->b, k, ki(it, 127), ""), ki(it, 23), "");
  return LLVMBuildBitCast(f->b, bits, ft, "");
}

/* exp of a <N x float> */
static LLVMValueRef vexp_f32(cg_func *f, LLVMValueRef x) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMTypeRef it = LLVMVectorType(f->i32, LLVMGetVectorSize(ft));
  /* compare and select (not maxnum: its NaN rule costs a blend); NaN > -104 is false */
  LLVMValueRef lo = kf(ft, -104.0), hi = kf(ft, 89.0);
  LLVMValueRef xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, lo, ""), x, lo, "");
  xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, xc, hi, ""), xc, hi, "");
  LLVMValueRef magic = kf(ft, 12582912.0); /* 1.5 * 2^23 */
  LLVMValueRef t = fma3(f, xc, kf(ft, 1.44269504088896341), magic);
  LLVMValueRef nf = LLVMBuildFSub(b, t, magic, "");
  LLVMValueRef n = LLVMBuildSub(b, LLVMBuildBitCast(b, t, it, ""),
                                LLVMBuildBitCast(b, magic, it, ""), "n");
  LLVMValueRef r = fma3(f, nf, kf(ft, -0.693359375), xc);
  r = fma3(f, nf, kf(ft, 2.12194440e-4), r);
  static const double P[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                             4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1};
  LLVMValueRef p = kf(ft, P[0]);
  for (int i = 1; i < 6; i++) p = fma3(f, p, r, kf(ft, P[i]));
  LLVMValueRef y = fma3(f, p, LLVMBuildFMul(b, r, r, ""), r);
  y = LLVMBuildFAdd(b, y, kf(ft, 1.0), "");
  LLVMValueRef n1 = LLVMBuildAShr(b, n, ki(it, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(b, n, n1, "");
  y = LLVMBuildFMul(b, LLVMBuildFMul(b, y, pow2(f, n2, ft), ""), pow2(f, n1, ft), "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  return LLVMBuildSelect(b, nan, x, y, "exp");
}

/* tanh of a <N x float> */
static LLVMValueRef vtanh_f32(cg_func *f, LLVMValueRef x) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMValueRef a = cg_intrinsic(f, "llvm.fabs", ft, &x, 1);
  if (!a) return NULL;
  /* |x| >= 0.625: 1 - 2 / (exp(2|x|) + 1), exp's inf giving 1 */
  LLVMValueRef e = vexp_f32(f, LLVMBuildFAdd(b, a, a, ""));
  LLVMValueRef big = LLVMBuildFSub(
      b, kf(ft, 1.0), LLVMBuildFDiv(b, kf(ft, 2.0), LLVMBuildFAdd(b, e, kf(ft, 1.0), ""), ""), "");
  /* below: x + x^3 * Q(x^2) */
  static const double Q[] = {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2,
                             1.33314422036e-1, -3.33332819422e-1};
  LLVMValueRef z = LLVMBuildFMul(b, x, x, ""), q = kf(ft, Q[0]);
  for (int i = 1; i < 5; i++) q = fma3(f, q, z, kf(ft, Q[i]));
  LLVMValueRef small = fma3(f, LLVMBuildFMul(b, q, z, ""), x, x);
  LLVMValueRef lt = LLVMBuildFCmp(b, LLVMRealOLT, a, kf(ft, 0.625), "");
  /* the sign of x on both (tanh(-0) = -0; the polynomial's fma gives +0 there) */
  return call2(f, "llvm.copysign", LLVMBuildSelect(b, lt, small, big, ""), x);
}

/* log of a <N x float> */
static LLVMValueRef vlog_f32(cg_func *f, LLVMValueRef x) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMTypeRef it = LLVMVectorType(f->i32, LLVMGetVectorSize(ft));
  /* denormals scaled into the normal range first: x * 2^23, the exponent 23 less */
  LLVMValueRef den = LLVMBuildFCmp(b, LLVMRealOLT, x, kf(ft, 1.17549435e-38), "");
  LLVMValueRef xs = LLVMBuildSelect(b, den, LLVMBuildFMul(b, x, kf(ft, 8388608.0), ""), x, "");
  LLVMValueRef bits = LLVMBuildBitCast(b, xs, it, "");
  /* x = m * 2^e, m in [0.5, 1) */
  LLVMValueRef e = LLVMBuildSub(b, LLVMBuildLShr(b, bits, ki(it, 23), ""), ki(it, 126), "");
  e = LLVMBuildSub(b, e, LLVMBuildSelect(b, den, ki(it, 23), ki(it, 0), ""), "");
  LLVMValueRef mb = LLVMBuildAnd(b, bits, ki(it, 0x007fffff), "");
  LLVMValueRef m = LLVMBuildBitCast(b, LLVMBuildOr(b, mb, ki(it, 0x3f000000), ""), ft, "");
  /* m < sqrt(1/2): 2m - 1 and e - 1, else m - 1: |t| <= 0.29 */
  LLVMValueRef lo = LLVMBuildFCmp(b, LLVMRealOLT, m, kf(ft, 0.707106781186547524), "");
  LLVMValueRef t = LLVMBuildFSub(b, LLVMBuildSelect(b, lo, LLVMBuildFAdd(b, m, m, ""), m, ""),
                                 kf(ft, 1.0), "");
  e = LLVMBuildSub(b, e, LLVMBuildZExt(b, lo, it, ""), "");
  LLVMValueRef ef = LLVMBuildSIToFP(b, e, ft, "");
  static const double P[] = {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                             -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                             2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1};
  LLVMValueRef z = LLVMBuildFMul(b, t, t, ""), p = kf(ft, P[0]);
  for (int i = 1; i < 9; i++) p = fma3(f, p, t, kf(ft, P[i]));
  /* log = t - z/2 + t z P(t) + e ln2, ln2 = ln2_hi + ln2_lo as in exp */
  LLVMValueRef y = LLVMBuildFMul(b, LLVMBuildFMul(b, p, t, ""), z, "");
  y = fma3(f, ef, kf(ft, -2.12194440e-4), y);
  y = fma3(f, z, kf(ft, -0.5), y);
  y = LLVMBuildFAdd(b, t, y, "");
  y = fma3(f, ef, kf(ft, 0.693359375), y);
  /* log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays */
  LLVMValueRef zero = LLVMBuildFCmp(b, LLVMRealOEQ, x, kf(ft, 0.0), "");
  y = LLVMBuildSelect(b, zero, kf(ft, -INFINITY), y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, kf(ft, INFINITY), ""), x, y, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealULT, x, kf(ft, 0.0), ""), kf(ft, NAN), y,
                         "log");
}

int cg_vmath_has(ir_intrinsic fn, tec_dtype t) {
  return t.code == TEC_FLOAT && t.lanes >= 2 && t.lanes <= 64 && (t.bits == 32 || t.bits == 16) &&
         (fn == IR_INTRIN_EXP || fn == IR_INTRIN_TANH || fn == IR_INTRIN_LOG);
}

LLVMValueRef cg_vmath(cg_func *f, ir_intrinsic fn, LLVMValueRef x, tec_dtype t) {
  if (!cg_vmath_has(fn, t))
    return cg_internal(f, "no inline vector %s for this type", ir_intrinsic_name(fn));
  tec_dtype w = TEC_DTYPE(TEC_FLOAT, 32, t.lanes);
  if (t.bits == 16) x = cg_cast(f, x, t, w);
  LLVMValueRef y = !x                    ? NULL
                   : fn == IR_INTRIN_EXP  ? vexp_f32(f, x)
                   : fn == IR_INTRIN_LOG  ? vlog_f32(f, x)
                                          : vtanh_f32(f, x);
  if (y && t.bits == 16) y = cg_cast(f, y, w, t);
  return y;
}
