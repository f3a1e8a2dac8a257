/* half_arith.c — the build-time check that a program computing in float16 has a target that
 * can: float16 arithmetic (an add, subtract, multiply, divide, min, max, comparison or float
 * intrinsic whose operands are float16) needs the target's half-precision instructions
 * (AArch64 and ARMv7 +fullfp16: fmla v.8h; x86 avx512fp16: vfmadd231ph). Without them LLVM
 * would widen every operation to float and round back after each one: a silent emulation,
 * slower than float32 and not what the schedule says (Halide's issue 7306). The program is
 * refused, naming the first such operation, the feature and what is legal there: float16
 * storage with float32 arithmetic (loads cast to float32, the store cast back; the templates'
 * TOPI_FP16_ACC32). Casts, loads, stores and selects of float16 are storage and always legal.
 *
 *   for (i, 0, 8) out[i] = h[i] * h2[i]               float16 multiply: refused on rasp4b
 *   for (i, 0, 8) out[i] = float16(float32(h[i]) * float32(h2[i]))           legal anywhere
 *
 * A check, not a rewrite: the program comes back as it went in. */
#include <string.h>
#include "lower/passes.h"
#include "ir/internal.h"

typedef struct half_find {
  const ir_expr *first; /* the first float16 operation met */
} half_find;

static int is_half(tec_dtype t) { return t.code == TEC_FLOAT && t.bits == 16; }

static void visit_expr(ir_visitor *v, const ir_expr *e) {
  half_find *h = v->user;
  if (h->first) return;
  switch (e->kind) {
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_FLOORDIV:
  case IR_FLOORMOD: case IR_MIN: case IR_MAX: case IR_EQ: case IR_NE: case IR_LT: case IR_LE:
  case IR_GT: case IR_GE:
    if (e->a && is_half(e->a->type)) h->first = e;
    break;
  case IR_CALL:
    /* the float intrinsics (fma, exp, sqrt, ...); not dot4/mmla/extern/likely/prefetch */
    if (is_half(e->type) && (e->v.i <= IR_INTRIN_FMA || e->v.i == IR_INTRIN_ROUND_EVEN))
      h->first = e;
    break;
  default: break;
  }
  if (!h->first) ir_visit_expr_default(v, e);
}

int lower_check_half_arith(tec_ctx *ctx, const lower_func *f, const ir_stmt *body,
                           const lower_target *t, const char *who) {
  if (!body || t->half_arith) return 0;
  half_find h = {0};
  ir_visitor v;
  ir_visitor_init(&v, &h);
  v.expr[IR_ADD] = v.expr[IR_SUB] = v.expr[IR_MUL] = v.expr[IR_DIV] = v.expr[IR_MOD] =
      v.expr[IR_FLOORDIV] = v.expr[IR_FLOORMOD] = v.expr[IR_MIN] = v.expr[IR_MAX] =
          v.expr[IR_EQ] = v.expr[IR_NE] = v.expr[IR_LT] = v.expr[IR_LE] = v.expr[IR_GT] =
              v.expr[IR_GE] = v.expr[IR_CALL] = visit_expr;
  ir_visit_stmt(&v, body);
  if (!h.first) return 0;
  char ty[32];
  const char *op = h.first->kind == IR_CALL ? ir_intrinsic_name((ir_intrinsic)h.first->v.i)
                                            : ir_expr_kind_name(h.first->kind);
  tec_dtype_str(h.first->kind == IR_CALL ? h.first->type : h.first->a->type, ty, sizeof ty);
  return tec_ctx_set_error(
      ctx, "%s: function '%s' computes in float16 (a %s of %s values), but target '%s' has no "
           "half-precision arithmetic (AArch64/ARMv7: -mattr=+fullfp16; x86: +avx512fp16), and "
           "tec does not emulate it; legal on this target: float16 storage with float32 "
           "arithmetic (cast the loads to float32 and the result back; the templates' "
           "TOPI_FP16_ACC32)",
      who, f->name, op, ty, t->name ? t->name : "?");
}
