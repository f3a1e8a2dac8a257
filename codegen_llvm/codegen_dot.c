/* codegen_dot.c — dot4(acc, a, b) (IR_INTRIN_DOT4, made by lower/tensorize.c) on the target's
 * dot-product instruction. Lane l: acc[l] + sum_{q<4} int32(a[4l+q]) * int32(b[4l+q]), exact.
 * The target's feature bits decide, first match, in chunks of the instruction's width:
 *
 *   target                          operands         instruction
 *   x86 avx512vnni                  uint8 x int8     vpdpbusd zmm (16 lanes; 8/4 with avx512vl)
 *   x86 avxvnni                     uint8 x int8     {vex} vpdpbusd ymm/xmm (8, 4 lanes)
 *   x86 (any other)                 any 8-bit pair   vpmovsx/zxbw + vpmaddwd (avx512bw zmm,
 *                                                    avx2 ymm, sse2 xmm) + even/odd add
 *   AArch64 +dotprod                int8 x int8      sdot v.4s, v.16b, v.16b
 *   AArch64 +dotprod                uint8 x uint8    udot
 *   AArch64 +i8mm                   uint8 x int8     usdot
 *   AArch64 (without those), ARMv7  any              smull/umull (vmull.s8/u8) to int16,
 *   NEON                                             saddlp/uaddlp (vpaddl) to int32, addp
 *                                                    (vpadd): 5 instructions per 4 lanes
 *   other                           any              generic LLVM: widen, multiply, add pairs
 *
 * The vpmaddwd path is exact (8-bit values widened to int16, products summed in int32), not
 * oneDNN's vpmaddubsw, which saturates pairs at int16 unless weights keep to 7 bits. An
 * operand of 4 lanes (one group shared by every lane) is splat as one int32 (vpbroadcastd).
 * vpdpbusd takes the uint8 operand first: operands are swapped as needed. An operand in the
 * transposed layout (dot4's 4th argument: [4][L], lane l's bytes L apart, as 4 pixels of a
 * channel block) is permuted to [L][4] first: one vpermb (avx512vbmi) per operand. A grouped
 * operand (ir_dot4_lane: 2 or 4 groups of 4 bytes, one of them shared) is one int32 lane of it
 * splat, passed as the instruction's second multiplicand: AArch64 selects `sdot v.4s, v.16b,
 * v.4b[g]` (the lane read from the loaded register, no ld1r), x86 a vpbroadcastd/vpshufd.
 *
 * mmla (IR_INTRIN_MMLA, a 2x2 block of 8-byte dot products): smmla/ummla/usmmla with +i8mm,
 * elsewhere its bytes rearranged into dot4's form on 8 lanes and adjacent lanes added.
 */
#include <string.h>
#include "codegen_llvm/codegen.h"

LLVMValueRef cg_intrinsic_cast(cg_func *f, const char *name, LLVMTypeRef *over, unsigned nover,
                               LLVMValueRef *args, unsigned n, LLVMTypeRef result) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) return cg_internal(f, "LLVM has no intrinsic %s", name);
  LLVMValueRef decl = LLVMGetIntrinsicDeclaration(f->mod, id, over, nover);
  LLVMTypeRef fty = LLVMIntrinsicGetType(f->llctx, id, over, nover);
  if (LLVMCountParamTypes(fty) != n) return cg_internal(f, "%s takes %u arguments", name, n);
  LLVMTypeRef params[4];
  LLVMGetParamTypes(fty, params);
  LLVMValueRef cast[4];
  for (unsigned i = 0; i < n; i++)
    cast[i] = LLVMTypeOf(args[i]) == params[i] ? args[i]
                                               : LLVMBuildBitCast(f->b, args[i], params[i], "");
  LLVMValueRef r = LLVMBuildCall2(f->b, fty, decl, cast, n, "");
  return LLVMTypeOf(r) == result ? r : LLVMBuildBitCast(f->b, r, result, "");
}

static LLVMTypeRef vec(LLVMTypeRef t, int n) { return LLVMVectorType(t, (unsigned)n); }

/* Lanes [off, off + n) of v (n <= 64). */
static LLVMValueRef part(cg_func *f, LLVMValueRef v, int off, int n) {
  LLVMValueRef idx[64];
  for (int i = 0; i < n; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)(off + i), 0);
  return LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(idx, (unsigned)n), "");
}

/* Lanes start, start + step, ... (n of them, n <= 64) of v. */
static LLVMValueRef strided(cg_func *f, LLVMValueRef v, int start, int step, int n) {
  LLVMValueRef idx[64];
  for (int i = 0; i < n; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)(start + i * step), 0);
  return LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(idx, (unsigned)n), "");
}

/* a ++ b (equal types, n lanes each, 2n <= 64). */
static LLVMValueRef concat(cg_func *f, LLVMValueRef a, LLVMValueRef b, int n) {
  LLVMValueRef idx[64];
  for (int i = 0; i < 2 * n; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)i, 0);
  return LLVMBuildShuffleVector(f->b, a, b, LLVMConstVector(idx, (unsigned)(2 * n)), "");
}

/* The 4L bytes of operand v: a 4-byte group shared by every lane is splat as one int32. */
static LLVMValueRef widen(cg_func *f, LLVMValueRef v, int lanes_in, int L) {
  if (lanes_in == 4 * L) return v;
  LLVMValueRef word = LLVMBuildBitCast(f->b, v, f->i32, "");
  return LLVMBuildBitCast(f->b, cg_splat(f, word, L), vec(f->i8, 4 * L), "");
}

/* Concatenates n results of `w` lanes each (n a power of two). */
static LLVMValueRef join(cg_func *f, LLVMValueRef *r, int n, int w) {
  for (; n > 1; n /= 2, w *= 2)
    for (int i = 0; i < n / 2; i++) r[i] = concat(f, r[2 * i], r[2 * i + 1], w);
  return r[0];
}

/* Chunks of `w` int32 lanes through an instruction intrin(acc, x, y) over <w x i32> and
 * <4w x i8> (over: the overload types, or none); L % w == 0, L / w a power of two. */
static LLVMValueRef chunked(cg_func *f, const char *name, int w, int overloaded, LLVMValueRef acc,
                            LLVMValueRef x, LLVMValueRef y, int L) {
  LLVMValueRef r[16];
  int n = L / w;
  for (int c = 0; c < n; c++) {
    LLVMValueRef args[3] = {n > 1 ? part(f, acc, c * w, w) : acc,
                            n > 1 ? part(f, x, c * 4 * w, 4 * w) : x,
                            n > 1 ? part(f, y, c * 4 * w, 4 * w) : y};
    LLVMTypeRef over[2] = {vec(f->i32, w), vec(f->i8, 4 * w)};
    r[c] = cg_intrinsic_cast(f, name, overloaded ? over : NULL, overloaded ? 2 : 0, args, 3,
                             vec(f->i32, w));
    if (!r[c]) return NULL;
  }
  return join(f, r, n, w);
}

/* Sum of adjacent lane pairs of v (2n lanes of `t`) widened to n lanes of `to`. */
static LLVMValueRef pair_sum(cg_func *f, LLVMValueRef v, int n, int sign, LLVMTypeRef to) {
  LLVMValueRef ev = strided(f, v, 0, 2, n), od = strided(f, v, 1, 2, n);
  LLVMTypeRef tt = vec(to, n);
  ev = sign ? LLVMBuildSExt(f->b, ev, tt, "") : LLVMBuildZExt(f->b, ev, tt, "");
  od = sign ? LLVMBuildSExt(f->b, od, tt, "") : LLVMBuildZExt(f->b, od, tt, "");
  return LLVMBuildAdd(f->b, ev, od, "");
}

/* x86 without VNNI: both widened to int16, vpmaddwd in chunks of w16 int16 lanes, then the
 * adjacent int32 pairs added. NULL (no error) when 4L is not a multiple of w16. */
static LLVMValueRef maddwd(cg_func *f, LLVMValueRef x, int sx, LLVMValueRef y, int sy, int L) {
  const tec_target *t = f->target;
  int w16 = tec_target_has(t, TEC_FEATURE_AVX512BW) ? 32 : tec_target_has(t, TEC_FEATURE_AVX2) ? 16 : 8;
  const char *name = w16 == 32 ? "llvm.x86.avx512.pmaddw.d.512"
                     : w16 == 16 ? "llvm.x86.avx2.pmadd.wd" : "llvm.x86.sse2.pmadd.wd";
  while (w16 > 8 && 4 * L < w16) w16 /= 2, name = w16 == 16 ? "llvm.x86.avx2.pmadd.wd" : "llvm.x86.sse2.pmadd.wd";
  int n = 4 * L / w16;
  if (4 * L % w16 || n > 16 || (n & (n - 1))) return NULL;
  LLVMTypeRef t16 = vec(f->i16, 4 * L);
  x = sx ? LLVMBuildSExt(f->b, x, t16, "") : LLVMBuildZExt(f->b, x, t16, "");
  y = sy ? LLVMBuildSExt(f->b, y, t16, "") : LLVMBuildZExt(f->b, y, t16, "");
  LLVMValueRef r[16];
  for (int c = 0; c < n; c++) {
    LLVMValueRef args[2] = {n > 1 ? part(f, x, c * w16, w16) : x, n > 1 ? part(f, y, c * w16, w16) : y};
    if (!(r[c] = cg_intrinsic_cast(f, name, NULL, 0, args, 2, vec(f->i32, w16 / 2)))) return NULL;
  }
  LLVMValueRef pairs = join(f, r, n, w16 / 2); /* 2L int32: sums of 2 products */
  return LLVMBuildAdd(f->b, strided(f, pairs, 0, 2, L), strided(f, pairs, 1, 2, L), "");
}

/* One overloaded intrinsic call on the given overload types. */
static LLVMValueRef call(cg_func *f, const char *name, LLVMTypeRef o0, LLVMTypeRef o1,
                         LLVMValueRef a, LLVMValueRef b, LLVMTypeRef result) {
  LLVMTypeRef over[2] = {o0, o1};
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic_cast(f, name, over, o1 ? 2 : 1, args, b ? 2 : 1, result);
}

/* NEON without dot product (AArch64, ARMv7), per 4 lanes (16 bytes): two widening multiplies
 * (smull/umull; an unsigned x signed pair: both widened, then mul .8h, exact in int16), two
 * pairwise widening adds (saddlp/uaddlp, vpaddl) and a pairwise add (addp; ARMv7: two vpadd
 * on d registers). */
static LLVMValueRef neon_widening(cg_func *f, LLVMValueRef x, int sx, LLVMValueRef y, int sy,
                                  int L, int a64) {
  LLVMTypeRef v8i16 = vec(f->i16, 8), v4i32 = vec(f->i32, 4);
  LLVMTypeRef v2i32 = vec(f->i32, 2);
  int sgn = sx || sy;
  const char *mull = a64 ? (sx ? "llvm.aarch64.neon.smull" : "llvm.aarch64.neon.umull")
                         : (sx ? "llvm.arm.neon.vmulls" : "llvm.arm.neon.vmullu");
  const char *addlp = a64 ? (sgn ? "llvm.aarch64.neon.saddlp" : "llvm.aarch64.neon.uaddlp")
                          : (sgn ? "llvm.arm.neon.vpaddls" : "llvm.arm.neon.vpaddlu");
  LLVMValueRef r[4];
  for (int c = 0; c < L / 4; c++) {
    LLVMValueRef q[2];
    for (int h = 0; h < 2; h++) {
      LLVMValueRef xs = part(f, x, 16 * c + 8 * h, 8), ys = part(f, y, 16 * c + 8 * h, 8), p;
      if (sx == sy) {
        p = call(f, mull, v8i16, NULL, xs, ys, v8i16);
      } else {
        xs = sx ? LLVMBuildSExt(f->b, xs, v8i16, "") : LLVMBuildZExt(f->b, xs, v8i16, "");
        ys = sy ? LLVMBuildSExt(f->b, ys, v8i16, "") : LLVMBuildZExt(f->b, ys, v8i16, "");
        p = LLVMBuildMul(f->b, xs, ys, "");
      }
      if (!p || !(q[h] = call(f, addlp, v4i32, v8i16, p, NULL, v4i32))) return NULL;
    }
    if (a64) {
      r[c] = call(f, "llvm.aarch64.neon.addp", v4i32, NULL, q[0], q[1], v4i32);
    } else {
      LLVMValueRef lo = call(f, "llvm.arm.neon.vpadd", v2i32, NULL, part(f, q[0], 0, 2),
                             part(f, q[0], 2, 2), v2i32);
      LLVMValueRef hi = call(f, "llvm.arm.neon.vpadd", v2i32, NULL, part(f, q[1], 0, 2),
                             part(f, q[1], 2, 2), v2i32);
      r[c] = lo && hi ? concat(f, lo, hi, 2) : NULL;
    }
    if (!r[c]) return NULL;
  }
  return join(f, r, L / 4, 4);
}

/* Any target: products in int16 (exact for every 8-bit pair: u8*u8 < 2^16 read unsigned,
 * the others within int16), then two pairwise widening sums. */
static LLVMValueRef generic(cg_func *f, LLVMValueRef x, int sx, LLVMValueRef y, int sy, int L) {
  LLVMTypeRef t16 = vec(f->i16, 4 * L);
  x = sx ? LLVMBuildSExt(f->b, x, t16, "") : LLVMBuildZExt(f->b, x, t16, "");
  y = sy ? LLVMBuildSExt(f->b, y, t16, "") : LLVMBuildZExt(f->b, y, t16, "");
  LLVMValueRef p = LLVMBuildMul(f->b, x, y, "");
  LLVMValueRef s2 = pair_sum(f, p, 2 * L, sx || sy, f->i32);
  return LLVMBuildAdd(f->b, strided(f, s2, 0, 2, L), strided(f, s2, 1, 2, L), "");
}

/* acc + dot4(x, y) on L lanes (x, y: 4L bytes, signedness sx, sy) for f's target. */
static LLVMValueRef dot4_core(cg_func *f, LLVMValueRef acc, LLVMValueRef x, int sx,
                              LLVMValueRef y, int sy, int L) {
  const tec_target *t = f->target;
  LLVMValueRef r = NULL;
  int pow2 = (L & (L - 1)) == 0;
  if (t && t->arch == TEC_ARCH_X86_64) {
    int v512 = tec_target_has(t, TEC_FEATURE_AVX512VNNI);
    int narrow = (v512 && tec_target_has(t, TEC_FEATURE_AVX512VL)) || tec_target_has(t, TEC_FEATURE_AVXVNNI);
    int w = v512 && L >= 16 ? 16 : narrow ? (L >= 8 ? 8 : 4) : 0;
    if (sx != sy && w && pow2 && L >= w) {
      LLVMValueRef u = sx ? y : x, s = sx ? x : y; /* vpdpbusd: uint8 first */
      const char *name = w == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                         : w == 8 ? "llvm.x86.avx512.vpdpbusd.256" : "llvm.x86.avx512.vpdpbusd.128";
      return chunked(f, name, w, 0, acc, u, s, L);
    }
    r = maddwd(f, x, sx, y, sy, L);
  } else if (t && t->arch == TEC_ARCH_AARCH64 && L % 4 == 0 && pow2) {
    if (sx == sy && tec_target_has(t, TEC_FEATURE_DOTPROD))
      return chunked(f, sx ? "llvm.aarch64.neon.sdot" : "llvm.aarch64.neon.udot", 4, 1, acc, x, y, L);
    if (sx != sy && tec_target_has(t, TEC_FEATURE_I8MM))
      return chunked(f, "llvm.aarch64.neon.usdot", 4, 1, acc, sx ? y : x, sx ? x : y, L);
    r = neon_widening(f, x, sx, y, sy, L, 1);
  } else if (t && t->arch == TEC_ARCH_ARMV7 && tec_target_has(t, TEC_FEATURE_NEON) && L % 4 == 0 &&
             pow2) {
    r = neon_widening(f, x, sx, y, sy, L, 0);
  }
  if (!r && !f->failed) r = generic(f, x, sx, y, sy, L);
  return r ? LLVMBuildAdd(f->b, acc, r, "") : NULL;
}

/* v's 4L bytes from [4][L] (lane l's group q at q*L + l) to dot4's [L][4]: one byte
 * permutation (vpermb with avx512vbmi; tbl on AArch64). */
static LLVMValueRef untranspose(cg_func *f, LLVMValueRef v, int L) {
  LLVMValueRef idx[64];
  for (int l = 0; l < L; l++)
    for (int q = 0; q < 4; q++) idx[4 * l + q] = LLVMConstInt(f->i32, (unsigned long long)(q * L + l), 0);
  return LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(idx, (unsigned)(4 * L)), "");
}

LLVMValueRef cg_dot4(cg_func *f, const ir_expr *e) {
  int L = e->type.lanes;
  int64_t lay = 0;
  if (L < 1 || L > 16)
    return cg_internal(f, "dot4 of %d lanes (tensorize makes 4, 8 or 16)", L);
  if ((e->nargs != 3 && e->nargs != 4) || (e->nargs == 4 && !ir_is_const_int(e->args[3], &lay)))
    return cg_internal(f, "dot4 takes acc, a, b and an optional constant layout");
  LLVMValueRef acc = cg_expr(f, e->args[0]), x = cg_expr(f, e->args[1]), y = cg_expr(f, e->args[2]);
  if (!acc || !x || !y) return NULL;
  int sx = e->args[1]->type.code == TEC_INT, sy = e->args[2]->type.code == TEC_INT;
  if ((lay & 7) == 4) { /* (ir_dot4_t: a group of L >= 2 lanes, b not transposed) */
    /* a's group lay >> 3 shared by every lane: lane `group` of a as int32, splat, and the
     * splat in the instruction's last operand, where AArch64 matches sdot by element */
    int G = e->args[1]->type.lanes / 4;
    LLVMValueRef words = LLVMBuildBitCast(f->b, x, vec(f->i32, G), "");
    LLVMValueRef idx[16];
    for (int l = 0; l < L; l++) idx[l] = LLVMConstInt(f->i32, (unsigned long long)(lay >> 3), 0);
    LLVMValueRef sp = LLVMBuildShuffleVector(f->b, words, LLVMGetUndef(vec(f->i32, G)),
                                             LLVMConstVector(idx, (unsigned)L), "");
    sp = LLVMBuildBitCast(f->b, sp, vec(f->i8, 4 * L), "");
    y = widen(f, y, e->args[2]->type.lanes, L);
    return dot4_core(f, acc, y, sy, sp, sx, L);
  }
  if (lay & 1) x = untranspose(f, x, L);
  if (lay & 2) y = untranspose(f, y, L);
  if (L == 1) /* a scalar accumulator: one lane, vectors of 1 for the shuffles */
    acc = LLVMBuildInsertElement(f->b, LLVMGetUndef(vec(f->i32, 1)), acc, LLVMConstInt(f->i32, 0, 0), "");
  x = widen(f, x, e->args[1]->type.lanes, L);
  y = widen(f, y, e->args[2]->type.lanes, L);
  LLVMValueRef r = dot4_core(f, acc, x, sx, y, sy, L);
  if (!r || L > 1) return r;
  return LLVMBuildExtractElement(f->b, r, LLVMConstInt(f->i32, 0, 0), "");
}

/* Lanes mask[0..n) of a ++ b. */
static LLVMValueRef pick(cg_func *f, LLVMValueRef a, LLVMValueRef b, const int *mask, int n) {
  LLVMValueRef idx[32];
  for (int i = 0; i < n; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)mask[i], 0);
  return LLVMBuildShuffleVector(f->b, a, b, LLVMConstVector(idx, (unsigned)n), "");
}

/* mmla(acc, a, b): acc[2i+j] + sum_{k<8} a[8i+k] * b[8j+k]. AArch64 +i8mm: smmla / ummla /
 * usmmla (uint8 operand first; with the uint8 operand in b the block is computed transposed
 * and its two middle lanes swapped back). Elsewhere the same bytes as dot4 on 8 lanes (lane
 * 2o+h: output o's half h), whose adjacent pairs are then added. */
LLVMValueRef cg_mmla(cg_func *f, const ir_expr *e) {
  LLVMValueRef acc = cg_expr(f, e->args[0]), a = cg_expr(f, e->args[1]), b = cg_expr(f, e->args[2]);
  if (!acc || !a || !b) return NULL;
  int sa = e->args[1]->type.code == TEC_INT, sb = e->args[2]->type.code == TEC_INT;
  const tec_target *t = f->target;
  LLVMTypeRef v4 = vec(f->i32, 4), over[2] = {v4, vec(f->i8, 16)};
  if (t && t->arch == TEC_ARCH_AARCH64 && tec_target_has(t, TEC_FEATURE_I8MM)) {
    static const int tr[4] = {0, 2, 1, 3};
    int flip = sa && !sb; /* usmmla wants the uint8 operand first: compute the transpose */
    const char *name = sa == sb ? (sa ? "llvm.aarch64.neon.smmla" : "llvm.aarch64.neon.ummla")
                                : "llvm.aarch64.neon.usmmla";
    LLVMValueRef args[3] = {flip ? pick(f, acc, acc, tr, 4) : acc, flip ? b : a, flip ? a : b};
    LLVMValueRef r = cg_intrinsic_cast(f, name, over, 2, args, 3, v4);
    return r && flip ? pick(f, r, r, tr, 4) : r;
  }
  int ma[32], mb[32];
  for (int o = 0; o < 4; o++)
    for (int h = 0; h < 2; h++)
      for (int q = 0; q < 4; q++) {
        ma[4 * (2 * o + h) + q] = 8 * (o / 2) + 4 * h + q; /* row o/2 of a */
        mb[4 * (2 * o + h) + q] = 8 * (o % 2) + 4 * h + q; /* column o%2 of b */
      }
  LLVMValueRef x = pick(f, a, a, ma, 32), y = pick(f, b, b, mb, 32);
  LLVMValueRef s8 = dot4_core(f, LLVMConstNull(vec(f->i32, 8)), x, sa, y, sb, 8);
  if (!s8) return NULL;
  return LLVMBuildAdd(f->b, acc, LLVMBuildAdd(f->b, strided(f, s8, 0, 2, 4), strided(f, s8, 1, 2, 4), ""), "");
}
