/* codegen_expr.c — expressions to LLVM values.
 *
 * Integers: INT adds/multiplies carry nsw (signed overflow is undefined in tec IR); DIV/MOD
 * are truncating (sdiv/srem: lowering proved the operands >= 0); FLOORDIV/FLOORMOD round
 * toward -inf:
 *   q = a sdiv b, r = a srem b, fix = r != 0 && sign(r) != sign(b)
 *   floordiv = q - fix,  floormod = r + (fix ? b : 0)
 * Floats: x*y + z (either order) and x*y - z, z - x*y become llvm.fmuladd (float16 products
 * into float32 on AArch64 +fp16fml: fmlal, codegen_half.c); comparisons are
 * ordered except != (une). Bool is i1. Vectors are LLVM vectors; RAMP(b, s) is
 * splat(b) + splat(s) * <0, 1, ..., n-1>.
 */
#include <string.h>
#include "codegen_llvm/codegen.h"

LLVMValueRef cg_splat(cg_func *f, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
  LLVMValueRef one = LLVMBuildInsertElement(f->b, LLVMGetUndef(vt), v,
                                            LLVMConstInt(f->i32, 0, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(f->i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(f->b, one, LLVMGetUndef(vt), mask, "splat");
}

LLVMValueRef cg_intrinsic(cg_func *f, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                                 unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) return cg_internal(f, "LLVM has no intrinsic %s", name);
  LLVMValueRef decl = LLVMGetIntrinsicDeclaration(f->mod, id, &ty, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(f->llctx, id, &ty, 1);
  return LLVMBuildCall2(f->b, fty, decl, args, n, "");
}

static LLVMValueRef cg_fmuladd(cg_func *f, LLVMValueRef x, LLVMValueRef y, LLVMValueRef z) {
  LLVMValueRef args[3] = {x, y, z};
  int vec = LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind;
  /* the target decides: ARMv7 NEON fuses a vector multiply-add only when asked (target.c) */
  return cg_intrinsic(f, vec && f->vector_fma ? "llvm.fma" : "llvm.fmuladd", LLVMTypeOf(x),
                      args, 3);
}

/* op (an instruction of a fixed width) applied to x's n lanes w at a time (w divides n,
 * n <= 64), the results joined in lane order */
LLVMValueRef cg_by_parts(cg_func *f, LLVMValueRef x, int n, int w,
                         LLVMValueRef (*op)(cg_func *, LLVMValueRef)) {
  if (n == w) return op(f, x);
  LLVMValueRef idx[64], out = NULL;
  for (int c = 0; c < n; c += w) {
    for (int i = 0; i < w; i++) idx[i] = LLVMConstInt(f->i32, (unsigned long long)(c + i), 0);
    LLVMValueRef part = LLVMBuildShuffleVector(f->b, x, LLVMGetUndef(LLVMTypeOf(x)),
                                               LLVMConstVector(idx, (unsigned)w), "");
    LLVMValueRef r = op(f, part);
    if (!r) return NULL;
    for (int i = 0; i < n; i++) /* r's w lanes widened to n (the rest undefined) */
      idx[i] = i < w ? LLVMConstInt(f->i32, (unsigned long long)i, 0) : LLVMGetUndef(f->i32);
    LLVMValueRef wide = LLVMBuildShuffleVector(f->b, r, LLVMGetUndef(LLVMTypeOf(r)),
                                               LLVMConstVector(idx, (unsigned)n), "");
    if (!out) {
      out = wide;
      continue;
    }
    for (int i = 0; i < n; i++) /* out's lanes, with lanes c..c+w-1 from wide */
      idx[i] = LLVMConstInt(f->i32, (unsigned long long)(i >= c && i < c + w ? n + i - c : i), 0);
    out = LLVMBuildShuffleVector(f->b, out, wide, LLVMConstVector(idx, (unsigned)n), "");
  }
  return out;
}

/* fcvtns (AArch64) of x's f32 lanes (1, 2 or 4) to int32 */
static LLVMValueRef fcvtns_op(cg_func *f, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  int w = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(t) : 1;
  LLVMTypeRef over[2] = {w > 1 ? LLVMVectorType(f->i32, (unsigned)w) : f->i32, t};
  return cg_intrinsic_cast(f, "llvm.aarch64.neon.fcvtns", over, 2, &x, 1, over[0]);
}

LLVMValueRef cg_cast(cg_func *f, LLVMValueRef v, tec_dtype from, tec_dtype to) {
  LLVMBuilderRef b = f->b;
  if (from.lanes == 1 && to.lanes > 1)
    return cg_splat(f, cg_cast(f, v, from, tec_dtype_scalar(to)), to.lanes);
  if (from.lanes != to.lanes)
    return cg_internal(f, "cast between %d and %d lanes", from.lanes, to.lanes);
  LLVMTypeRef tt = cg_type(f, to);
  if (!tt) return cg_internal(f, "cast to unknown type code %d", to.code);
  if (tec_dtype_eq(from, to)) return v;
  if (to.code == TEC_BOOL) {
    if (from.code == TEC_FLOAT)
      return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    if (from.code == TEC_HANDLE) return LLVMBuildIsNotNull(b, v, "");
    return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  }
  if (from.code == TEC_BOOL) {
    if (to.code == TEC_FLOAT) return LLVMBuildUIToFP(b, v, tt, "");
    if (to.code == TEC_HANDLE) return cg_internal(f, "cast from bool to handle");
    return LLVMBuildZExt(b, v, tt, "");
  }
  if (from.code == TEC_HANDLE || to.code == TEC_HANDLE) {
    if (from.code == TEC_HANDLE && tec_dtype_is_int(to)) return LLVMBuildPtrToInt(b, v, tt, "");
    if (to.code == TEC_HANDLE && tec_dtype_is_int(from)) return LLVMBuildIntToPtr(b, v, tt, "");
    return LLVMBuildPointerCast(b, v, tt, "");
  }
  if (tec_dtype_is_int(from) && tec_dtype_is_int(to)) {
    if (to.bits < from.bits) return LLVMBuildTrunc(b, v, tt, "");
    if (to.bits == from.bits) return v;
    return from.code == TEC_INT ? LLVMBuildSExt(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
  }
  if (tec_dtype_is_int(from) && to.code == TEC_FLOAT)
    return from.code == TEC_INT ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
  if (from.code == TEC_FLOAT && tec_dtype_is_int(to))
    return to.code == TEC_INT ? LLVMBuildFPToSI(b, v, tt, "") : LLVMBuildFPToUI(b, v, tt, "");
  if (from.code == TEC_FLOAT && to.code == TEC_FLOAT)
    return to.bits > from.bits ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
  return cg_internal(f, "cast from type code %d to %d", from.code, to.code);
}

static LLVMValueRef cg_floordiv_mod(cg_func *f, const ir_expr *e, LLVMValueRef a,
                                    LLVMValueRef b) {
  LLVMBuilderRef bd = f->b;
  tec_dtype t = e->a->type;
  int is_div = e->kind == IR_FLOORDIV;
  if (t.code == TEC_FLOAT) {
    LLVMValueRef q = LLVMBuildFDiv(bd, a, b, "");
    LLVMValueRef fl = cg_intrinsic(f, "llvm.floor", LLVMTypeOf(q), &q, 1);
    if (!fl || is_div) return fl;
    return LLVMBuildFSub(bd, a, LLVMBuildFMul(bd, b, fl, ""), "");
  }
  if (t.code != TEC_INT) return is_div ? LLVMBuildUDiv(bd, a, b, "") : LLVMBuildURem(bd, a, b, "");
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
  LLVMValueRef q = LLVMBuildSDiv(bd, a, b, "");
  LLVMValueRef r = LLVMBuildSRem(bd, a, b, "");
  LLVMValueRef nz = LLVMBuildICmp(bd, LLVMIntNE, r, zero, "");
  LLVMValueRef sdiff = LLVMBuildICmp(bd, LLVMIntSLT, LLVMBuildXor(bd, r, b, ""), zero, "");
  LLVMValueRef fix = LLVMBuildAnd(bd, nz, sdiff, "fix");
  if (is_div) return LLVMBuildSub(bd, q, LLVMBuildZExt(bd, fix, LLVMTypeOf(q), ""), "floordiv");
  return LLVMBuildAdd(bd, r, LLVMBuildSelect(bd, fix, b, zero, ""), "floormod");
}

static LLVMValueRef cg_compare(cg_func *f, const ir_expr *e, LLVMValueRef a, LLVMValueRef b) {
  tec_dtype t = e->a->type;
  if (t.code == TEC_FLOAT) {
    static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                           LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(f->b, fp[e->kind - IR_EQ], a, b, "");
  }
  static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT,
                                        LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT,
                                        LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(f->b, (t.code == TEC_INT ? sp : up)[e->kind - IR_EQ], a, b, "");
}

static LLVMValueRef cg_minmax(cg_func *f, const ir_expr *e, LLVMValueRef a, LLVMValueRef b) {
  tec_dtype t = e->a->type;
  int is_min = e->kind == IR_MIN;
  LLVMValueRef lt;
  if (t.code == TEC_FLOAT)
    lt = LLVMBuildFCmp(f->b, is_min ? LLVMRealOLT : LLVMRealOGT, a, b, "");
  else if (t.code == TEC_INT)
    lt = LLVMBuildICmp(f->b, is_min ? LLVMIntSLT : LLVMIntSGT, a, b, "");
  else
    lt = LLVMBuildICmp(f->b, is_min ? LLVMIntULT : LLVMIntUGT, a, b, "");
  return LLVMBuildSelect(f->b, lt, a, b, is_min ? "min" : "max");
}

/* Float x*y+z patterns of ADD/SUB; NULL when e is not one. */
static LLVMValueRef cg_try_fmuladd(cg_func *f, const ir_expr *e) {
  const ir_expr *mul = NULL, *other = NULL;
  int neg_other = 0, neg_mul = 0;
  if (e->type.code != TEC_FLOAT) return NULL;
  if (e->a->kind == IR_MUL) {
    mul = e->a, other = e->b, neg_other = e->kind == IR_SUB;
  } else if (e->b->kind == IR_MUL) {
    mul = e->b, other = e->a, neg_mul = e->kind == IR_SUB;
  } else {
    return NULL;
  }
  if (!neg_other && !neg_mul) { /* float16 products into float32 (codegen_half.c) */
    LLVMValueRef r = cg_try_fmlal(f, mul->a, mul->b, other);
    if (r || f->failed) return r;
  }
  LLVMValueRef x = cg_expr(f, mul->a), y = cg_expr(f, mul->b), z = cg_expr(f, other);
  if (!x || !y || !z) return NULL;
  if (neg_other) z = LLVMBuildFNeg(f->b, z, "");
  if (neg_mul) x = LLVMBuildFNeg(f->b, x, "");
  return cg_fmuladd(f, x, y, z);
}

static LLVMValueRef cg_arith(cg_func *f, const ir_expr *e) {
  if (e->kind == IR_ADD || e->kind == IR_SUB) {
    if (e->type.code == TEC_FLOAT && (e->a->kind == IR_MUL || e->b->kind == IR_MUL))
      return cg_try_fmuladd(f, e);
  }
  LLVMValueRef a = cg_expr(f, e->a), b = cg_expr(f, e->b);
  if (!a || !b) return NULL;
  LLVMBuilderRef bd = f->b;
  tec_dtype t = e->a->type;
  int fl = t.code == TEC_FLOAT, sg = t.code == TEC_INT;
  switch (e->kind) {
  case IR_ADD: return fl ? LLVMBuildFAdd(bd, a, b, "") : sg ? LLVMBuildNSWAdd(bd, a, b, "")
                                                              : LLVMBuildAdd(bd, a, b, "");
  case IR_SUB: return fl ? LLVMBuildFSub(bd, a, b, "") : sg ? LLVMBuildNSWSub(bd, a, b, "")
                                                              : LLVMBuildSub(bd, a, b, "");
  case IR_MUL: return fl ? LLVMBuildFMul(bd, a, b, "") : sg ? LLVMBuildNSWMul(bd, a, b, "")
                                                              : LLVMBuildMul(bd, a, b, "");
  case IR_DIV: return fl ? LLVMBuildFDiv(bd, a, b, "") : sg ? LLVMBuildSDiv(bd, a, b, "")
                                                              : LLVMBuildUDiv(bd, a, b, "");
  case IR_MOD: return fl ? LLVMBuildFRem(bd, a, b, "") : sg ? LLVMBuildSRem(bd, a, b, "")
                                                              : LLVMBuildURem(bd, a, b, "");
  case IR_FLOORDIV:
  case IR_FLOORMOD: return cg_floordiv_mod(f, e, a, b);
  case IR_MIN:
  case IR_MAX: return cg_minmax(f, e, a, b);
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    return cg_compare(f, e, a, b);
  case IR_AND: return LLVMBuildAnd(bd, a, b, "");
  case IR_OR: return LLVMBuildOr(bd, a, b, "");
  default: return cg_internal(f, "'%s' is not a binary operator", ir_expr_kind_name(e->kind));
  }
}

/* tanh has no LLVM intrinsic: call libm per lane (tanhf / tanh; f16 through float). Float32
 * and float16 vectors of exp, tanh and log are inline instead (codegen_vmath.c). */
static LLVMValueRef cg_tanh(cg_func *f, LLVMValueRef x, tec_dtype t) {
  tec_dtype st = tec_dtype_scalar(t);
  tec_dtype ct = st.bits == 64 ? TEC_F64 : TEC_F32;
  LLVMTypeRef cty = cg_type(f, ct), fty;
  LLVMValueRef fn = cg_declare(f, ct.bits == 64 ? "tanh" : "tanhf", cty, &cty, 1, &fty);
  LLVMValueRef out = t.lanes > 1 ? LLVMGetUndef(cg_type(f, t)) : NULL;
  for (int l = 0; l < t.lanes; l++) {
    LLVMValueRef idx = LLVMConstInt(f->i32, (unsigned)l, 0);
    LLVMValueRef v = t.lanes > 1 ? LLVMBuildExtractElement(f->b, x, idx, "") : x;
    v = cg_cast(f, v, st, ct);
    v = LLVMBuildCall2(f->b, fty, fn, &v, 1, "tanh");
    v = cg_cast(f, v, ct, st);
    if (t.lanes == 1) return v;
    out = LLVMBuildInsertElement(f->b, out, v, idx, "");
  }
  return out;
}

/* zip_lo / zip_hi (lower/transpose_block.c): one shufflevector, lane 2m + q of the result
 * lane m (+ L/2 for zip_hi) of a (q = 0) or b (q = 1). The backends pick the instruction
 * (zip1/zip2 on AArch64; unpcklps or vpermt2ps on x86). */
static LLVMValueRef cg_zip(cg_func *f, const ir_expr *e) {
  int L = e->type.lanes, hi = e->v.i == IR_INTRIN_ZIP_HI;
  LLVMValueRef a = cg_expr(f, e->args[0]), b = a ? cg_expr(f, e->args[1]) : NULL;
  if (!b) return NULL;
  if (L < 2 || L % 2 || L > 1024) return cg_internal(f, "zip of %d lanes", L);
  LLVMValueRef mask[1024];
  for (int l = 0; l < L; l++)
    mask[l] = LLVMConstInt(f->i32, (unsigned)(l / 2 + (hi ? L / 2 : 0) + (l % 2 ? L : 0)), 0);
  return LLVMBuildShuffleVector(f->b, a, b, LLVMConstVector(mask, (unsigned)L), "zip");
}

static LLVMValueRef cg_call(cg_func *f, const ir_expr *e) {
  static const struct {
    const char *llvm; /* intrinsic name, NULL: special */
    int nargs;
  } intrin[IR_INTRIN_COUNT] = {
      [IR_INTRIN_EXP] = {"llvm.exp", 1},     [IR_INTRIN_LOG] = {"llvm.log", 1},
      [IR_INTRIN_SQRT] = {"llvm.sqrt", 1},   [IR_INTRIN_TANH] = {NULL, 1},
      [IR_INTRIN_FABS] = {"llvm.fabs", 1},   [IR_INTRIN_POW] = {"llvm.pow", 2},
      [IR_INTRIN_FLOOR] = {"llvm.floor", 1}, [IR_INTRIN_CEIL] = {"llvm.ceil", 1},
      [IR_INTRIN_FMA] = {"llvm.fmuladd", 3}, [IR_INTRIN_PREFETCH] = {NULL, 1},
      [IR_INTRIN_LIKELY] = {NULL, 1},        [IR_INTRIN_DL_ARG] = {NULL, 3},
      [IR_INTRIN_EXTERN] = {NULL, -1},
      [IR_INTRIN_ROUND_EVEN] = {"llvm.roundeven", 1},
      [IR_INTRIN_DOT4] = {NULL, -1},         [IR_INTRIN_MMLA] = {NULL, 3},
      [IR_INTRIN_ZIP_LO] = {NULL, 2},        [IR_INTRIN_ZIP_HI] = {NULL, 2},
  };
  int64_t fn = e->v.i;
  if (fn < 0 || fn >= IR_INTRIN_COUNT) return cg_internal(f, "unknown intrinsic %lld", (long long)fn);
  if (fn == IR_INTRIN_EXTERN) return cg_extern_call(f, e); /* codegen_extern.c */
  if (fn == IR_INTRIN_DOT4) return cg_dot4(f, e); /* 3 or 4 arguments, per target (codegen_dot.c) */
  if (e->nargs != intrin[fn].nargs)
    return cg_internal(f, "%s takes %d arguments, got %d", ir_intrinsic_name((ir_intrinsic)fn),
                       intrin[fn].nargs, e->nargs);
  if (fn == IR_INTRIN_PREFETCH) return cg_prefetch(f, e->args[0]); /* an address, no value */
  if (fn == IR_INTRIN_DL_ARG) return cg_dl_arg(f, e); /* the entry's arguments (entry.c) */
  if (fn == IR_INTRIN_MMLA) return cg_mmla(f, e);
  if (fn == IR_INTRIN_ZIP_LO || fn == IR_INTRIN_ZIP_HI) return cg_zip(f, e);
  /* likely(c) is c: it told loop partitioning where to split. Not llvm.expect: what is left
   * of it runs in the border parts, where it is not likely at all, and it mostly guards
   * selects and lane masks, which branch weights do not describe. */
  if (fn == IR_INTRIN_LIKELY) return cg_expr(f, e->args[0]);
  if (fn == IR_INTRIN_FABS && tec_dtype_is_int(e->type)) { /* |x| of an integer */
    LLVMValueRef x = cg_expr(f, e->args[0]);
    if (!x || e->type.code == TEC_UINT) return x;
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
    return LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, x, zero, ""),
                           LLVMBuildNeg(f->b, x, ""), x, "abs");
  }
  if (e->type.code != TEC_FLOAT)
    return cg_internal(f, "%s of a non-float type", ir_intrinsic_name((ir_intrinsic)fn));
  LLVMValueRef args[3];
  for (int i = 0; i < e->nargs; i++) {
    args[i] = cg_expr(f, e->args[i]);
    if (!args[i]) return NULL;
    if (e->args[i]->type.lanes != e->type.lanes)
      args[i] = cg_cast(f, args[i], e->args[i]->type, e->type);
  }
  if (cg_vmath_has((ir_intrinsic)fn, e->type)) /* vectors: inline (codegen_vmath.c) */
    return cg_vmath(f, (ir_intrinsic)fn, args[0], e->type);
  if (fn == IR_INTRIN_TANH) return cg_tanh(f, args[0], e->type);
  return cg_intrinsic(f, intrin[fn].llvm, cg_type(f, e->type), args, (unsigned)e->nargs);
}

static LLVMValueRef cg_imm(cg_func *f, const ir_expr *e) {
  LLVMTypeRef st = cg_type(f, tec_dtype_scalar(e->type));
  if (!st) return cg_internal(f, "immediate of unknown type code %d", e->type.code);
  LLVMValueRef c;
  if (e->kind == IR_FLOAT_IMM)
    c = e->type.code == TEC_FLOAT ? LLVMConstReal(st, e->v.f)
                                  : LLVMConstInt(st, (unsigned long long)(int64_t)e->v.f, 1);
  else if (e->type.code == TEC_FLOAT)
    c = LLVMConstReal(st, (double)e->v.i);
  else
    c = LLVMConstInt(st, (unsigned long long)e->v.i, e->type.code == TEC_INT);
  return cg_splat(f, c, e->type.lanes);
}

static LLVMValueRef cg_ramp(cg_func *f, const ir_expr *e) {
  LLVMValueRef base = cg_expr(f, e->a), stride = cg_expr(f, e->b);
  if (!base || !stride) return NULL;
  int n = e->type.lanes;
  LLVMTypeRef st = LLVMTypeOf(base);
  LLVMValueRef steps[64];
  LLVMValueRef *sv = n <= 64 ? steps : tec_ctx_alloc(f->ctx, sizeof(LLVMValueRef) * (size_t)n);
  if (!sv) return cg_oom(f);
  for (int l = 0; l < n; l++) sv[l] = LLVMConstInt(st, (unsigned)l, 0);
  LLVMValueRef iota = LLVMConstVector(sv, (unsigned)n);
  LLVMValueRef off = LLVMBuildMul(f->b, cg_splat(f, stride, n), iota, "");
  return LLVMBuildAdd(f->b, cg_splat(f, base, n), off, "ramp");
}

LLVMValueRef cg_expr(cg_func *f, const ir_expr *e) {
  if (f->failed) return NULL;
  if (!e) return cg_internal(f, "missing expression");
  switch (e->kind) {
  case IR_INT_IMM:
  case IR_FLOAT_IMM: return cg_imm(f, e);
  case IR_VAR: {
    const cg_binding *bd = cg_lookup(f, e);
    if (!bd)
      return cg_internal(f, "variable '%s' is used outside the loop, let or size list that "
                         "binds it", e->name ? e->name : "?");
    return bd->value;
  }
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_FLOORDIV:
  case IR_FLOORMOD: case IR_MIN: case IR_MAX: case IR_EQ: case IR_NE: case IR_LT: case IR_LE:
  case IR_GT: case IR_GE: case IR_AND: case IR_OR:
    if (!e->a || !e->b) return cg_internal(f, "'%s' is missing an operand", ir_expr_kind_name(e->kind));
    return cg_arith(f, e);
  case IR_NOT: {
    LLVMValueRef a = cg_expr(f, e->a);
    return a ? LLVMBuildNot(f->b, a, "") : NULL;
  }
  case IR_SELECT: {
    LLVMValueRef c = cg_expr(f, e->a), t = cg_expr(f, e->b), el = cg_expr(f, e->c);
    if (!c || !t || !el) return NULL;
    return LLVMBuildSelect(f->b, c, t, el, "");
  }
  case IR_CAST: {
    const ir_expr *r = e->a;
    /* AArch64: int32(round_even(x)) for f32 x is fcvtns (round to nearest, ties to even,
     * whatever the rounding mode) per 4 lanes, not frintn + fcvtzs: the requantization of the
     * int8 templates. Equal wherever the conversion is defined. */
    int n = r->type.lanes;
    if (f->target && f->target->arch == TEC_ARCH_AARCH64 && cg_is_round_even_f32(r) &&
        e->type.code == TEC_INT && e->type.bits == 32 &&
        (n == 1 || n == 2 || (n % 4 == 0 && n <= 64))) {
      LLVMValueRef x = cg_expr(f, r->args[0]);
      return x ? cg_by_parts(f, x, n, n < 4 ? n : 4, fcvtns_op) : NULL;
    }
    LLVMValueRef q = cg_try_requant_x86(f, e); /* x86 AVX-512: codegen_requant.c */
    if (q || f->failed) return q;
    LLVMValueRef a = cg_expr(f, r);
    return a ? cg_cast(f, a, r->type, e->type) : NULL;
  }
  case IR_CALL: return cg_call(f, e);
  case IR_LOAD: return cg_load(f, e);
  case IR_RAMP: return cg_ramp(f, e);
  case IR_BROADCAST: return cg_broadcast(f, e);
  case IR_LET: {
    LLVMValueRef v = cg_expr(f, e->a);
    if (!v) return NULL;
    int mark = f->nbind;
    if (cg_bind(f, e->var, v, NULL) != 0) return NULL;
    LLVMValueRef r = cg_expr(f, e->b);
    cg_unbind_to(f, mark);
    return r;
  }
  case IR_READ:
    return cg_internal(f, "a READ of tensor '%s' reached codegen (storage flattening should "
                       "have made it a LOAD)", e->tensor && e->tensor->name ? e->tensor->name : "?");
  case IR_REDUCE:
    return cg_internal(f, "a REDUCE reached codegen (lowering should have made it a loop)");
  default: break;
  }
  return cg_internal(f, "unknown expression kind %d", (int)e->kind);
}
