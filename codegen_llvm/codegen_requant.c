/* codegen_requant.c — the int8 requantization's rounding and narrowing on x86 AVX-512
 * (docs/quantized.md, "The scheme": the clamp on AVX-512). Patterns of the IR that
 * qnn_requant_f builds, each exact where the IR is defined:
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
 *   The same at 64 lanes with AVX512BW (4 output vectors of 16 int32, e.g. 4 pixels x 16
 *   channels, 64 consecutive bytes), A <= 0 (always, for qnn_requant_f's int8 clamp:
 *   A = -128 - Z, Z an int8 zero point)
 *     -> m = x > B ? B : x (vminps: NaN passes as x); c = vcvtps2dq {rn-sae}(m) per 16 lanes;
 *        c - A where A != -128 (vpsubd; none when A = 0); vpackssdw x 2 (int32 -> int16,
 *        signed saturation), vpackuswb (int16 -> uint8, unsigned saturation; vpacksswb,
 *        signed, when A = -128), one vpermd undoing the packs' 128-bit lane interleave, one
 *        xor 0x80 (none when A = -128), one 64-byte store: per 4 output vectors, 4 vminps + 4
 *        vcvtps2dq + 4 instructions, not 4 x (vmaxps, vcvtps2dq, vpmovusdb, vpxor, store).
 *        Exact: c = round_even(m) where m >= -2^31, else (m below, -inf or NaN) 0x80000000 =
 *        INT_MIN, which is below A as round_even(m) is; c <= B. So clamp(c, A, B) =
 *        clamp(round_even(m), A, B) for every non-NaN x, = round_even(min(max(x, A), B))
 *        (round_even monotone, A and B integers, min(x, B) first or last alike); NaN gives A,
 *        as max(NaN, A) does on the generic path. c - A cannot wrap: A <= 0 and c <= B, so
 *        INT_MIN <= c - A <= B - A = 255. The packs clamp c - A to [-32768, 32767], then to
 *        [0, 255]: nested intervals, so clamp(c - A, 0, 255) = clamp(c, A, B) - A exactly;
 *        the xor makes the byte that minus 128 = clamp(c, A, B) + Z. A = -128 (Z = 0): the
 *        signed packs clamp c to [-128, 127] = [A, B] directly. The lanes: vpackssdw(a, b)
 *        puts, in each 128-bit lane i, a's dwords 4i..4i+3 then b's as words, and vpackuswb of
 *        two such their bytes, so dword 4i + k of the result holds the 4 bytes 4i..4i+3 of
 *        part k; vpermd by (4 (j % 4) + j / 4) puts part j / 4's bytes 4 (j % 4).. at dword j.
 *
 * Elsewhere (other targets, lanes, constants) NULL: the generic path. */
#include "codegen_llvm/codegen.h"

static int x86_avx512(const cg_func *f) {
  return f->target && f->target->arch == TEC_ARCH_X86_64 &&
         tec_target_has(f->target, TEC_FEATURE_AVX512F);
}

/* e's value when it is a constant (or a broadcast of one), int or float; 0 otherwise */
static int const_of(const ir_expr *e, double *v) {
  int64_t i;
  if (ir_is_const_float(e, v)) return 1;
  return ir_is_const_int(e, &i) ? (*v = (double)i, 1) : 0;
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

/* the 64-lane narrowing by packs (the head comment): x's f32 lanes to int8, A <= 0 and
 * B = A + 255 integers */
static LLVMValueRef packs64(cg_func *f, const ir_expr *xe, double A, double B) {
  LLVMValueRef x = cg_expr(f, xe);
  if (!x) return NULL;
  LLVMTypeRef ft = LLVMTypeOf(x), i8 = LLVMInt8TypeInContext(f->llctx);
  LLVMTypeRef i16 = LLVMInt16TypeInContext(f->llctx), v16i = LLVMVectorType(f->i32, 16);
  LLVMValueRef b = cg_splat(f, LLVMConstReal(LLVMGetElementType(ft), B), 64);
  LLVMValueRef gt = LLVMBuildFCmp(f->b, LLVMRealOGT, x, b, "");
  LLVMValueRef m = LLVMBuildSelect(f->b, gt, b, x, "minb"); /* NaN stays NaN */
  LLVMValueRef idx[16], part[4], w[2];
  LLVMValueRef a = cg_splat(f, LLVMConstInt(f->i32, (unsigned long long)(int64_t)A, 1), 16);
  int sgn = A == -128.0; /* the signed packs clamp to [A, B] themselves */
  for (int p = 0; p < 4; p++) { /* the 4 output vectors, 16 lanes each */
    for (int i = 0; i < 16; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)(16 * p + i), 0);
    LLVMValueRef mp = LLVMBuildShuffleVector(f->b, m, LLVMGetUndef(ft), LLVMConstVector(idx, 16), "");
    part[p] = cvt_rn16(f, mp);
    if (!part[p]) return NULL;
    if (!sgn && A != 0.0) part[p] = LLVMBuildSub(f->b, part[p], a, "");
  }
  LLVMTypeRef v32s = LLVMVectorType(i16, 32), v64b = LLVMVectorType(i8, 64);
  for (int h = 0; h < 2; h++) {
    w[h] = cg_intrinsic_cast(f, "llvm.x86.avx512.packssdw.512", NULL, 0, part + 2 * h, 2, v32s);
    if (!w[h]) return NULL;
  }
  const char *pb = sgn ? "llvm.x86.avx512.packsswb.512" : "llvm.x86.avx512.packuswb.512";
  LLVMValueRef q = cg_intrinsic_cast(f, pb, NULL, 0, w, 2, v64b);
  if (!q) return NULL;
  for (int j = 0; j < 16; j++) /* dword j: part j / 4's bytes 4 (j % 4).. (the head comment) */
    idx[j] = LLVMConstInt(f->i32, (unsigned long long)(4 * (j % 4) + j / 4), 0);
  LLVMValueRef d = LLVMBuildBitCast(f->b, q, v16i, "");
  d = LLVMBuildShuffleVector(f->b, d, LLVMGetUndef(v16i), LLVMConstVector(idx, 16), "");
  q = LLVMBuildBitCast(f->b, d, v64b, "");
  return sgn ? q : LLVMBuildXor(f->b, q, cg_splat(f, LLVMConstInt(i8, 0x80, 0), 64), "");
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
  if (n == 64 && A <= 0.0 && tec_target_has(f->target, TEC_FEATURE_AVX512BW))
    return packs64(f, mx->a, A, B);
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
