/* codegen_half.c — float16 products accumulated in float32 on AArch64 +fp16fml: the float
 * multiply-add z + float32(x) * float32(y) of float16 x and y (the IR of a template's
 * TOPI_FP16_ACC32 reduction after vectorizing) becomes fmlal/fmlal2, which widen exactly
 * (a float16 product is exact in float32) and accumulate into float32 lanes:
 *
 *   z<8 x float> + float32(x<8 x half>) * float32(y<8 x half>)
 *     ->  fmlal  z.lo(v.4s), x.8h's lanes 0-3, y's lanes 0-3     (llvm.aarch64.neon.fmlal)
 *         fmlal2 z.hi(v.4s), x.8h's lanes 4-7, y's lanes 4-7     (llvm.aarch64.neon.fmlal2)
 *
 * in chunks of 8 lanes; 4 lanes take fmlal on the low half. An operand is float16 when it is
 * a cast from float16 or a broadcast of one (splat as float16, so one register feeds 8
 * products; a broadcast load as a lane of its group, `fmlal v.4s, v.4h, v.h[i]`). Elsewhere (no fp16fml, x86, other lane counts) NULL: the caller emits the widen
 * and the float32 multiply-add (fcvtl + fmla .4s; vcvtph2ps + vfmadd on x86), exact the same.
 */
#include <string.h>
#include "codegen_llvm/codegen.h"

/* The float16 expression e widens from: e is a cast from float16 of `lanes` lanes, or a
 * broadcast of a scalar one (*splat set); NULL when e is neither. */
static const ir_expr *half_of(const ir_expr *e, int lanes, int *splat) {
  *splat = e->kind == IR_BROADCAST;
  const ir_expr *in = *splat ? e->a : e;
  if (!in || in->kind != IR_CAST || !in->a || in->a->type.code != TEC_FLOAT ||
      in->a->type.bits != 16 || in->a->type.lanes != (*splat ? 1 : lanes))
    return NULL;
  return in->a;
}

/* Lanes [off, off + n) of v, n of them; lanes past v's (when v has fewer) undefined. */
static LLVMValueRef lanes_of(cg_func *f, LLVMValueRef v, int have, int off, int n) {
  LLVMValueRef idx[8];
  for (int i = 0; i < n; i++)
    idx[i] = off + i < have ? LLVMConstInt(f->i32, (unsigned long long)(off + i), 0)
                            : LLVMGetUndef(f->i32);
  return LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(LLVMTypeOf(v)),
                                LLVMConstVector(idx, (unsigned)n), "");
}

LLVMValueRef cg_try_fmlal(cg_func *f, const ir_expr *x, const ir_expr *y, const ir_expr *z) {
  const tec_target *t = f->target;
  int L = z->type.lanes;
  if (!t || t->arch != TEC_ARCH_AARCH64 || !tec_target_has(t, TEC_FEATURE_FP16FML) ||
      z->type.code != TEC_FLOAT || z->type.bits != 32 || L < 4 || L > 64 || (L & (L - 1)))
    return NULL;
  int sx, sy;
  const ir_expr *hx_e = half_of(x, L, &sx), *hy_e = half_of(y, L, &sy);
  if (!hx_e || !hy_e) return NULL;
  /* a splat operand as a float16 broadcast: a load's goes through cg_broadcast, which on
   * lane targets loads its group once and splats a lane, selected as fmlal by element */
  LLVMValueRef hx = sx ? cg_expr(f, ir_broadcast(hx_e, L)) : cg_expr(f, hx_e);
  LLVMValueRef hy = sy ? cg_expr(f, ir_broadcast(hy_e, L)) : cg_expr(f, hy_e);
  LLVMValueRef acc = cg_expr(f, z);
  if (!hx || !hy || !acc) return NULL;
#if TEC_LLVM_VERSION_MAJOR >= 18
  /* the by-element form takes its lane from the second operand, which must be one of v0-v15
   * (4 bits of register number). LLVM before 17 allocated v16-v31 there too and encoded the
   * wrong register (llvm-project issue 64104; LLVM 14's llvm-mc accepts "fmlal v25.4s,
   * v11.4h, v27.h[0]" and encodes v11): there the splat stays a dup and fmlal takes vectors */
  if (sx && !sy) {
    LLVMValueRef t = hx;
    hx = hy, hy = t;
  }
#endif
  LLVMTypeRef h8 = LLVMVectorType(LLVMHalfTypeInContext(f->llctx), 8);
  LLVMTypeRef f4 = LLVMVectorType(LLVMFloatTypeInContext(f->llctx), 4);
  LLVMTypeRef over[2] = {f4, h8};
  LLVMValueRef part[16];
  int np = 0;
  for (int c = 0; c < L; c += 8) {
    LLVMValueRef a = L == 8 ? hx : lanes_of(f, hx, L, c, 8);
    LLVMValueRef b = L == 8 ? hy : lanes_of(f, hy, L, c, 8);
    for (int h = 0; h < 2 && c + 4 * h < L; h++) {
      LLVMValueRef args[3] = {lanes_of(f, acc, L, c + 4 * h, 4), a, b};
      part[np] = cg_intrinsic_cast(f, h ? "llvm.aarch64.neon.fmlal2" : "llvm.aarch64.neon.fmlal",
                                   over, 2, args, 3, f4);
      if (!part[np++]) return NULL;
    }
  }
  if (np == 1) return part[0];
  /* the 4-lane parts joined back into L lanes */
  for (int w = 4; np > 1; w *= 2) {
    for (int i = 0; i < np / 2; i++) {
      LLVMValueRef idx[64];
      for (int k = 0; k < 2 * w; k++) idx[k] = LLVMConstInt(f->i32, (unsigned long long)k, 0);
      part[i] = LLVMBuildShuffleVector(f->b, part[2 * i], part[2 * i + 1],
                                       LLVMConstVector(idx, (unsigned)(2 * w)), "");
    }
    np /= 2;
  }
  return part[0];
}
