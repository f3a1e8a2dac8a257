/* expr.c — validating constructors for expressions.
 *
 * Every constructor checks its operands and allocates in the operands' ctx. NULL operands
 * propagate (the first error is already recorded); type errors are reported with the
 * constructor's name and what would be legal. An integer immediate meeting a float (or a
 * different integer type) is converted to the other side's type, so `ir_mul(x, ir_int(c, 2))`
 * works for any x. */
#include <math.h>
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"

static ir_expr *new_expr(tec_ctx *ctx, ir_expr_kind kind, tec_dtype t) {
  ir_expr *e = tec_ctx_alloc(ctx, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->type = t;
  e->ctx = ctx;
  return e;
}

static const char *tstr(tec_dtype t, char *buf) { return tec_dtype_str(t, buf, 32); }

const ir_expr *ir_int_t(tec_ctx *ctx, tec_dtype t, int64_t v) {
  if (!ctx) return NULL;
  if (t.code == TEC_FLOAT) return ir_float_t(ctx, t, (double)v);
  ir_expr *e = new_expr(ctx, IR_INT_IMM, t);
  if (e) e->v.i = t.code == TEC_BOOL ? (v != 0) : v;
  return e;
}
const ir_expr *ir_int(tec_ctx *ctx, int64_t v) { return ir_int_t(ctx, TEC_INDEX, v); }
const ir_expr *ir_bool(tec_ctx *ctx, int v) { return ir_int_t(ctx, TEC_BOOLT, v); }

const ir_expr *ir_float_t(tec_ctx *ctx, tec_dtype t, double v) {
  if (!ctx) return NULL;
  if (t.code != TEC_FLOAT) return ir_int_t(ctx, t, (int64_t)v);
  ir_expr *e = new_expr(ctx, IR_FLOAT_IMM, t);
  if (e) e->v.f = t.bits == 32 ? (double)(float)v : v;
  return e;
}
const ir_expr *ir_float(tec_ctx *ctx, double v) { return ir_float_t(ctx, TEC_F32, v); }

const ir_expr *ir_var(tec_ctx *ctx, const char *name, tec_dtype t, ir_var_kind kind) {
  if (!ctx) return NULL;
  if (!name || !*name) {
    tec_ctx_set_error(ctx, "ir_var: a variable needs a non-empty name");
    return NULL;
  }
  ir_expr *e = new_expr(ctx, IR_VAR, t);
  if (!e) return NULL;
  e->name = tec_ctx_strdup(ctx, name);
  e->v.i = kind;
  e->id = tec_ctx_next_id(ctx);
  return e->name ? e : NULL;
}

/* Converts an immediate to type t (for mixing constants with typed expressions). */
static const ir_expr *coerce_imm(const ir_expr *imm, tec_dtype t) {
  tec_dtype s = tec_dtype_scalar(t);
  const ir_expr *c = imm->kind == IR_INT_IMM ? ir_int_t(imm->ctx, s, imm->v.i)
                                             : ir_float_t(imm->ctx, s, imm->v.f);
  if (c && t.lanes > 1) c = ir_broadcast(c, t.lanes);
  return c;
}

static int is_imm(const ir_expr *e) { return e->kind == IR_INT_IMM || e->kind == IR_FLOAT_IMM; }

/* Makes a and b agree in type where an immediate allows it. 0 on success. */
static int unify(const char *who, const ir_expr **a, const ir_expr **b) {
  if (tec_dtype_eq((*a)->type, (*b)->type)) return 0;
  /* a bool constant is a truth value, not a number: it never converts */
  int a_imm = is_imm(*a) && (*a)->type.code != TEC_BOOL;
  int b_imm = is_imm(*b) && (*b)->type.code != TEC_BOOL;
  /* a float immediate may not silently become an integer */
  if (b_imm && !(( *b)->kind == IR_FLOAT_IMM && !tec_dtype_is_float((*a)->type)) &&
      (*a)->type.code != TEC_BOOL && (*a)->type.code != TEC_HANDLE) {
    *b = coerce_imm(*b, (*a)->type);
    return *b ? 0 : -1;
  }
  if (a_imm && !((*a)->kind == IR_FLOAT_IMM && !tec_dtype_is_float((*b)->type)) &&
      (*b)->type.code != TEC_BOOL && (*b)->type.code != TEC_HANDLE) {
    *a = coerce_imm(*a, (*b)->type);
    return *a ? 0 : -1;
  }
  /* a scalar meeting a vector is broadcast */
  if ((*a)->type.lanes == 1 && (*b)->type.lanes > 1 &&
      tec_dtype_eq((*a)->type, tec_dtype_scalar((*b)->type))) {
    *a = ir_broadcast(*a, (*b)->type.lanes);
    return *a ? 0 : -1;
  }
  if ((*b)->type.lanes == 1 && (*a)->type.lanes > 1 &&
      tec_dtype_eq((*b)->type, tec_dtype_scalar((*a)->type))) {
    *b = ir_broadcast(*b, (*a)->type.lanes);
    return *b ? 0 : -1;
  }
  char x[32], y[32];
  return tec_ctx_set_error((*a)->ctx,
                           "%s: operand types differ (%s and %s); convert one side with ir_cast",
                           who, tstr((*a)->type, x), tstr((*b)->type, y));
}

static const ir_expr *binary(ir_expr_kind kind, const char *who, const ir_expr *a,
                             const ir_expr *b, int want) {
  /* want: 0 numeric, 1 int only, 2 bool only, 3 any comparable (result bool) */
  if (!a || !b) return NULL;
  if (unify(who, &a, &b)) return NULL;
  tec_dtype t = a->type;
  char x[32];
  if (t.code == TEC_HANDLE) {
    tec_ctx_set_error(a->ctx, "%s: operands are buffer handles; only numbers can be combined", who);
    return NULL;
  }
  if (want == 0 && t.code == TEC_BOOL) {
    tec_ctx_set_error(a->ctx, "%s: operands are bool; use ir_and/ir_or or cast to a number", who);
    return NULL;
  }
  if (want == 1 && !tec_dtype_is_int(t)) {
    tec_ctx_set_error(a->ctx, "%s: operands are %s; it needs integers", who, tstr(t, x));
    return NULL;
  }
  if (want == 2 && t.code != TEC_BOOL) {
    tec_ctx_set_error(a->ctx, "%s: operands are %s; it needs bool (a comparison)", who,
                      tstr(t, x));
    return NULL;
  }
  tec_dtype rt = want == 3 ? TEC_DTYPE(TEC_BOOL, 1, t.lanes) : t;
  ir_expr *e = new_expr(a->ctx, kind, rt);
  if (!e) return NULL;
  e->a = a;
  e->b = b;
  return e;
}

const ir_expr *ir_add(const ir_expr *a, const ir_expr *b) { return binary(IR_ADD, "ir_add", a, b, 0); }
const ir_expr *ir_sub(const ir_expr *a, const ir_expr *b) { return binary(IR_SUB, "ir_sub", a, b, 0); }
const ir_expr *ir_mul(const ir_expr *a, const ir_expr *b) { return binary(IR_MUL, "ir_mul", a, b, 0); }
const ir_expr *ir_min(const ir_expr *a, const ir_expr *b) { return binary(IR_MIN, "ir_min", a, b, 0); }
const ir_expr *ir_max(const ir_expr *a, const ir_expr *b) { return binary(IR_MAX, "ir_max", a, b, 0); }
const ir_expr *ir_floordiv(const ir_expr *a, const ir_expr *b) {
  return binary(IR_FLOORDIV, "ir_floordiv", a, b, 1);
}
const ir_expr *ir_floormod(const ir_expr *a, const ir_expr *b) {
  return binary(IR_FLOORMOD, "ir_floormod", a, b, 1);
}
const ir_expr *ir_truncdiv(const ir_expr *a, const ir_expr *b) {
  return binary(IR_DIV, "ir_truncdiv", a, b, 1);
}
const ir_expr *ir_truncmod(const ir_expr *a, const ir_expr *b) {
  return binary(IR_MOD, "ir_truncmod", a, b, 1);
}
const ir_expr *ir_div(const ir_expr *a, const ir_expr *b) {
  if (!a || !b) return NULL;
  if (tec_dtype_is_float(a->type) || tec_dtype_is_float(b->type))
    return binary(IR_DIV, "ir_div", a, b, 0);
  return binary(IR_FLOORDIV, "ir_div", a, b, 1);
}
const ir_expr *ir_mod(const ir_expr *a, const ir_expr *b) {
  return binary(IR_FLOORMOD, "ir_mod", a, b, 1);
}
const ir_expr *ir_eq(const ir_expr *a, const ir_expr *b) { return binary(IR_EQ, "ir_eq", a, b, 3); }
const ir_expr *ir_ne(const ir_expr *a, const ir_expr *b) { return binary(IR_NE, "ir_ne", a, b, 3); }
const ir_expr *ir_lt(const ir_expr *a, const ir_expr *b) { return binary(IR_LT, "ir_lt", a, b, 3); }
const ir_expr *ir_le(const ir_expr *a, const ir_expr *b) { return binary(IR_LE, "ir_le", a, b, 3); }
const ir_expr *ir_gt(const ir_expr *a, const ir_expr *b) { return binary(IR_GT, "ir_gt", a, b, 3); }
const ir_expr *ir_ge(const ir_expr *a, const ir_expr *b) { return binary(IR_GE, "ir_ge", a, b, 3); }
const ir_expr *ir_and(const ir_expr *a, const ir_expr *b) { return binary(IR_AND, "ir_and", a, b, 2); }
const ir_expr *ir_or(const ir_expr *a, const ir_expr *b) { return binary(IR_OR, "ir_or", a, b, 2); }

const ir_expr *ir_not(const ir_expr *a) {
  if (!a) return NULL;
  if (a->type.code != TEC_BOOL) {
    char x[32];
    tec_ctx_set_error(a->ctx, "ir_not: operand is %s; it needs bool", tstr(a->type, x));
    return NULL;
  }
  ir_expr *e = new_expr(a->ctx, IR_NOT, a->type);
  if (e) e->a = a;
  return e;
}

const ir_expr *ir_select(const ir_expr *cond, const ir_expr *t, const ir_expr *f) {
  if (!cond || !t || !f) return NULL;
  if (cond->type.code != TEC_BOOL) {
    char x[32];
    tec_ctx_set_error(cond->ctx, "ir_select: condition is %s; it needs bool (a comparison)",
                      tstr(cond->type, x));
    return NULL;
  }
  if (unify("ir_select", &t, &f)) return NULL;
  if (cond->type.lanes != 1 && cond->type.lanes != t->type.lanes) {
    tec_ctx_set_error(cond->ctx, "ir_select: condition has %d lanes, values have %d",
                      cond->type.lanes, t->type.lanes);
    return NULL;
  }
  ir_expr *e = new_expr(t->ctx, IR_SELECT, t->type);
  if (!e) return NULL;
  e->a = cond;
  e->b = t;
  e->c = f;
  return e;
}

const ir_expr *ir_cast(tec_dtype t, const ir_expr *a) {
  if (!a) return NULL;
  if (a->type.lanes > 1 && t.lanes == 1) t.lanes = a->type.lanes;
  if (tec_dtype_eq(t, a->type)) return a;
  if (t.code == TEC_HANDLE || a->type.code == TEC_HANDLE || t.lanes != a->type.lanes) {
    char x[32], y[32];
    tec_ctx_set_error(a->ctx, "ir_cast: cannot convert %s to %s", tstr(a->type, x), tstr(t, y));
    return NULL;
  }
  ir_expr *e = new_expr(a->ctx, IR_CAST, t);
  if (e) e->a = a;
  return e;
}

static const char *const intrin_names[IR_INTRIN_COUNT] = {
    "exp", "log", "sqrt", "tanh", "fabs", "pow", "floor", "ceil", "fma", "prefetch", "likely",
    "dl_arg", "extern_call", "round_even", "dot4", "mmla", "zip_lo", "zip_hi"};
static const int intrin_arity[IR_INTRIN_COUNT] = {1, 1, 1, 1, 1, 2, 1, 1, 3, 1, 1, 3, -1, 1, 3, 3, 2, 2};

const char *ir_intrinsic_name(ir_intrinsic i) {
  return (unsigned)i < IR_INTRIN_COUNT ? intrin_names[i] : "unknown";
}

/* The CALL node of intrinsic fn over a[0..nargs) (checked by the caller). */
static const ir_expr *make_call(tec_ctx *ctx, ir_intrinsic fn, tec_dtype type, int nargs,
                                const ir_expr **a) {
  ir_expr *e = new_expr(ctx, IR_CALL, type);
  if (!e) return NULL;
  e->v.i = fn;
  e->name = intrin_names[fn];
  e->nargs = nargs;
  e->args = a;
  return e;
}

const ir_expr *ir_call(tec_ctx *ctx, ir_intrinsic fn, int nargs, const ir_expr *const *args) {
  if (!ctx) return NULL;
  if ((unsigned)fn >= IR_INTRIN_COUNT) {
    tec_ctx_set_error(ctx, "ir_call: unknown intrinsic %d", (int)fn);
    return NULL;
  }
  if (fn == IR_INTRIN_PREFETCH) {
    tec_ctx_set_error(ctx, "ir_call: prefetch takes a memory access, not a value; use "
                           "ir_prefetch(read)");
    return NULL;
  }
  if (fn == IR_INTRIN_DL_ARG) {
    tec_ctx_set_error(ctx, "ir_call: dl_arg reads the checked entry's arguments; use "
                           "ir_dl_arg(ctx, field, arg, dim)");
    return NULL;
  }
  if (fn == IR_INTRIN_EXTERN) {
    tec_ctx_set_error(ctx, "ir_call: extern_call is an extern stage's call; declare the stage "
                           "with te_extern");
    return NULL;
  }
  if (fn == IR_INTRIN_DOT4 || fn == IR_INTRIN_MMLA) {
    int64_t lay = 0;
    if (fn == IR_INTRIN_DOT4 && nargs == 4 && args && args[3] && ir_is_const_int(args[3], &lay))
      return ir_dot4_t(args[0], args[1], args[2], (int)lay);
    if (nargs == 3 && args)
      return fn == IR_INTRIN_DOT4 ? ir_dot4(args[0], args[1], args[2])
                                  : ir_mmla(args[0], args[1], args[2]);
    tec_ctx_set_error(ctx, "ir_call: %s takes 3 arguments (acc, a, b)%s, got %d",
                      intrin_names[fn], fn == IR_INTRIN_DOT4 ? " or 4 (and a constant layout)" : "",
                      nargs);
    return NULL;
  }
  if (fn == IR_INTRIN_ZIP_LO || fn == IR_INTRIN_ZIP_HI) {
    if (nargs == 2 && args) return ir_zip(args[0], args[1], fn == IR_INTRIN_ZIP_HI);
    tec_ctx_set_error(ctx, "ir_call: %s takes 2 arguments (a, b), got %d", intrin_names[fn], nargs);
    return NULL;
  }
  if (nargs != intrin_arity[fn]) {
    tec_ctx_set_error(ctx, "ir_call: %s takes %d argument(s), got %d", intrin_names[fn],
                      intrin_arity[fn], nargs);
    return NULL;
  }
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * (size_t)nargs);
  if (!a) return NULL;
  for (int i = 0; i < nargs; i++) {
    if (!args[i]) return NULL;
    a[i] = args[i];
    if (i > 0 && unify(intrin_names[fn], &a[0], &a[i])) return NULL;
  }
  for (int i = 1; i < nargs; i++)
    if (!tec_dtype_eq(a[0]->type, a[i]->type) && unify(intrin_names[fn], &a[0], &a[i])) return NULL;
  if (fn == IR_INTRIN_LIKELY) {
    if (a[0]->type.code != TEC_BOOL) {
      char x[32];
      tec_ctx_set_error(ctx, "ir_likely: condition is %s; it needs bool (a comparison)",
                        tstr(a[0]->type, x));
      return NULL;
    }
    return make_call(ctx, fn, a[0]->type, 1, a);
  }
  if (fn != IR_INTRIN_FABS && !tec_dtype_is_float(a[0]->type)) {
    char x[32];
    tec_ctx_set_error(ctx, "ir_call: %s needs float arguments, got %s; cast first",
                      intrin_names[fn], tstr(a[0]->type, x));
    return NULL;
  }
  return make_call(ctx, fn, a[0]->type, nargs, a);
}

const ir_expr *ir_extern_call(tec_ctx *ctx, const te_tensor *t_out, tec_dtype t, int nargs,
                              const ir_expr *const *args) {
  if (!ctx || !t_out || nargs < 0) return NULL;
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * (size_t)(nargs ? nargs : 1));
  if (!a) return NULL;
  for (int i = 0; i < nargs; i++)
    if (!(a[i] = args[i])) return NULL;
  ir_expr *e = (ir_expr *)make_call(ctx, IR_INTRIN_EXTERN, t, nargs, a);
  if (e) e->tensor = t_out;
  return e;
}

const ir_expr *ir_prefetch(const ir_expr *access) {
  if (!access) return NULL;
  tec_ctx *ctx = access->ctx;
  if ((access->kind != IR_READ && access->kind != IR_LOAD) || access->type.lanes != 1) {
    tec_ctx_set_error(ctx, "ir_prefetch: the argument must be a scalar tensor read or buffer "
                           "load (the element whose cache line to prefetch), got a %s",
                      ir_expr_kind_name(access->kind));
    return NULL;
  }
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a);
  if (!a) return NULL;
  a[0] = access;
  return make_call(ctx, IR_INTRIN_PREFETCH, access->type, 1, a);
}

const ir_expr *ir_dl_arg(tec_ctx *ctx, ir_dl_field field, int arg, int dim) {
  if (!ctx) return NULL;
  if ((unsigned)field >= IR_DL_FIELD_COUNT || arg < 0 || dim < 0) {
    tec_ctx_set_error(ctx, "ir_dl_arg: field %d of argument %d, dimension %d does not exist",
                      (int)field, arg, dim);
    return NULL;
  }
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * 3);
  if (!a) return NULL;
  a[0] = ir_int(ctx, field), a[1] = ir_int(ctx, arg), a[2] = ir_int(ctx, dim);
  if (!a[0] || !a[1] || !a[2]) return NULL;
  return make_call(ctx, IR_INTRIN_DL_ARG, TEC_I64, 3, a);
}

/* An 8-bit integer type (int8 or uint8) of any lanes. */
static int is_byte(tec_dtype t) {
  return (t.code == TEC_INT || t.code == TEC_UINT) && t.bits == 8;
}

const ir_expr *ir_dot4(const ir_expr *acc, const ir_expr *a, const ir_expr *b) {
  return ir_dot4_t(acc, a, b, 0);
}

const ir_expr *ir_dot4_t(const ir_expr *acc, const ir_expr *a, const ir_expr *b, int layout) {
  if (!acc || !a || !b) return NULL;
  tec_ctx *ctx = acc->ctx;
  char x[32];
  if (acc->type.code != TEC_INT || acc->type.bits != 32) {
    tec_ctx_set_error(ctx, "ir_dot4: the accumulator is %s; it must be int32 (any lanes)",
                      tstr(acc->type, x));
    return NULL;
  }
  int L = acc->type.lanes, grouped = layout >= 4 && (layout & 7) == 4;
  const ir_expr *op[2] = {a, b};
  if (grouped && (!is_byte(a->type) || (a->type.lanes != 8 && a->type.lanes != 16) ||
                  (layout >> 3) >= a->type.lanes / 4 || L < 2)) {
    tec_ctx_set_error(ctx, "ir_dot4_lane: operand a is %s, the group %d, %d accumulator lanes; "
                           "it needs 8 or 16 int8/uint8 lanes (2 or 4 groups of 4), a group "
                           "below their count and a vector accumulator",
                      tstr(a->type, x), layout >> 3, L);
    return NULL;
  }
  for (int i = grouped; i < 2; i++) {
    if (!is_byte(op[i]->type)) {
      tec_ctx_set_error(ctx, "ir_dot4: operand %c is %s; it must be int8 or uint8", "ab"[i],
                        tstr(op[i]->type, x));
      return NULL;
    }
    if (op[i]->type.lanes != 4 * L && op[i]->type.lanes != 4) {
      tec_ctx_set_error(ctx, "ir_dot4: operand %c has %d lanes; with %d accumulator lanes it "
                             "needs %d (4 per lane) or 4 (shared by every lane)", "ab"[i],
                        op[i]->type.lanes, L, 4 * L);
      return NULL;
    }
  }
  if (layout < 0 || (layout > 3 && !grouped)) {
    tec_ctx_set_error(ctx, "ir_dot4: layout %d; legal: 0..3 (bit 0: a as [4][lanes], bit 1: b) "
                           "or 4 | group << 3 (ir_dot4_lane)", layout);
    return NULL;
  }
  for (int i = 0; i < 2; i++)
    if (!grouped && (layout >> i & 1) && op[i]->type.lanes != 4 * L) {
      tec_ctx_set_error(ctx, "ir_dot4: operand %c is [4][lanes] (layout %d) but has %d lanes; it "
                             "needs %d", "ab"[i], layout, op[i]->type.lanes, 4 * L);
      return NULL;
    }
  const ir_expr **args = tec_ctx_alloc(ctx, sizeof *args * 4);
  if (!args) return NULL;
  args[0] = acc, args[1] = a, args[2] = b, args[3] = layout ? ir_int(ctx, layout) : NULL;
  return make_call(ctx, IR_INTRIN_DOT4, acc->type, layout ? 4 : 3, args);
}

const ir_expr *ir_dot4_lane(const ir_expr *acc, const ir_expr *a, const ir_expr *b, int group) {
  if (group < 0 || group > 3) {
    if (acc) tec_ctx_set_error(acc->ctx, "ir_dot4_lane: group %d; legal: 0..3", group);
    return NULL;
  }
  return ir_dot4_t(acc, a, b, 4 | group << 3);
}

const ir_expr *ir_mmla(const ir_expr *acc, const ir_expr *a, const ir_expr *b) {
  if (!acc || !a || !b) return NULL;
  tec_ctx *ctx = acc->ctx;
  char x[32];
  if (acc->type.code != TEC_INT || acc->type.bits != 32 || acc->type.lanes != 4) {
    tec_ctx_set_error(ctx, "ir_mmla: the accumulator is %s; it must be int32x4 (a 2x2 block)",
                      tstr(acc->type, x));
    return NULL;
  }
  const ir_expr *op[2] = {a, b};
  for (int i = 0; i < 2; i++)
    if (!is_byte(op[i]->type) || op[i]->type.lanes != 16) {
      tec_ctx_set_error(ctx, "ir_mmla: operand %c is %s; it must be int8x16 or uint8x16 (2 rows "
                             "of 8)", "ab"[i], tstr(op[i]->type, x));
      return NULL;
    }
  const ir_expr **args = tec_ctx_alloc(ctx, sizeof *args * 3);
  if (!args) return NULL;
  args[0] = acc, args[1] = a, args[2] = b;
  return make_call(ctx, IR_INTRIN_MMLA, acc->type, 3, args);
}

const ir_expr *ir_zip(const ir_expr *a, const ir_expr *b, int hi) {
  if (!a || !b) return NULL;
  tec_ctx *ctx = a->ctx;
  const char *name = hi ? "ir_zip (zip_hi)" : "ir_zip (zip_lo)";
  char x[32], y[32];
  if (!tec_dtype_eq(a->type, b->type) || a->type.lanes < 2 || a->type.lanes % 2) {
    tec_ctx_set_error(ctx, "%s: operands are %s and %s; they must be vectors of one type with an "
                           "even number of lanes", name, tstr(a->type, x), tstr(b->type, y));
    return NULL;
  }
  const ir_expr **args = tec_ctx_alloc(ctx, sizeof *args * 2);
  if (!args) return NULL;
  args[0] = a, args[1] = b;
  return make_call(ctx, hi ? IR_INTRIN_ZIP_HI : IR_INTRIN_ZIP_LO, a->type, 2, args);
}

static const ir_expr *call1(ir_intrinsic fn, const ir_expr *a) {
  return a ? ir_call(a->ctx, fn, 1, (const ir_expr *const[]){a}) : NULL;
}
const ir_expr *ir_exp(const ir_expr *a) { return call1(IR_INTRIN_EXP, a); }
const ir_expr *ir_log(const ir_expr *a) { return call1(IR_INTRIN_LOG, a); }
const ir_expr *ir_sqrt(const ir_expr *a) { return call1(IR_INTRIN_SQRT, a); }
const ir_expr *ir_tanh(const ir_expr *a) { return call1(IR_INTRIN_TANH, a); }
const ir_expr *ir_fabs(const ir_expr *a) { return call1(IR_INTRIN_FABS, a); }
const ir_expr *ir_round_even(const ir_expr *a) { return call1(IR_INTRIN_ROUND_EVEN, a); }
const ir_expr *ir_likely(const ir_expr *cond) { return call1(IR_INTRIN_LIKELY, cond); }
const ir_expr *ir_likely_arg(const ir_expr *e) {
  return e && e->kind == IR_CALL && e->v.i == IR_INTRIN_LIKELY && e->nargs == 1 ? e->args[0]
                                                                               : NULL;
}

const ir_expr *ir_read(tec_ctx *ctx, const te_tensor *t, int nargs, const ir_expr *const *idx) {
  if (!ctx || !t) return NULL;
  if (nargs != t->ndim) {
    tec_ctx_set_error(ctx, "read of '%s': %d indices given, the tensor has %d dimensions",
                      t->name, nargs, t->ndim);
    return NULL;
  }
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * (size_t)(nargs ? nargs : 1));
  if (!a) return NULL;
  for (int i = 0; i < nargs; i++) {
    if (!idx[i]) return NULL;
    if (!tec_dtype_is_int(idx[i]->type) || idx[i]->type.lanes != 1) {
      char x[32];
      tec_ctx_set_error(ctx, "read of '%s': index %d is %s; indices must be scalar integers",
                        t->name, i, tstr(idx[i]->type, x));
      return NULL;
    }
    a[i] = idx[i]->type.bits == 64 ? idx[i] : ir_cast(TEC_INDEX, idx[i]);
  }
  ir_expr *e = new_expr(ctx, IR_READ, t->type);
  if (!e) return NULL;
  e->tensor = t;
  e->nargs = nargs;
  e->args = a;
  return e;
}

const ir_expr *ir_reduce(ir_combiner comb, const ir_expr *src, int naxes,
                         const ir_expr *const *axes, const ir_expr *cond) {
  if (!src) return NULL;
  tec_ctx *ctx = src->ctx;
  if (naxes < 1 || !axes) {
    tec_ctx_set_error(ctx, "reduce: needs at least one reduce axis (te_reduce_axis)");
    return NULL;
  }
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * (size_t)naxes);
  if (!a) return NULL;
  for (int i = 0; i < naxes; i++) {
    if (!axes[i]) return NULL;
    if (axes[i]->kind != IR_VAR || axes[i]->v.i != IR_VAR_REDUCE) {
      tec_ctx_set_error(ctx, "reduce: axis %d is not a reduce axis; make it with te_reduce_axis", i);
      return NULL;
    }
    for (int j = 0; j < i; j++)
      if (a[j] == axes[i]) {
        tec_ctx_set_error(ctx, "reduce: axis '%s' is listed twice", axes[i]->name);
        return NULL;
      }
    a[i] = axes[i];
  }
  if (cond && cond->type.code != TEC_BOOL) {
    tec_ctx_set_error(ctx, "reduce: the condition must be bool (a comparison)");
    return NULL;
  }
  if (src->type.code == TEC_BOOL || src->type.code == TEC_HANDLE) {
    tec_ctx_set_error(ctx, "reduce: can only reduce numbers");
    return NULL;
  }
  ir_expr *e = new_expr(ctx, IR_REDUCE, src->type);
  if (!e) return NULL;
  e->v.i = comb;
  e->a = src;
  e->b = cond;
  e->nargs = naxes;
  e->args = a;
  return e;
}

const ir_expr *ir_reduce_like(const ir_expr *like, const ir_expr *src, int naxes,
                              const ir_expr *const *axes, const ir_expr *cond) {
  const ir_expr *e = ir_reduce((ir_combiner)like->v.i, src, naxes, axes, cond);
  if (!e) return NULL;
  ir_expr *u = (ir_expr *)e; /* fresh from ir_reduce: not shared yet */
  u->c = like->c;
  if (like->v.i != IR_COMB_USER) return u;
  u->reducer = like->reducer;
  u->value_index = like->value_index;
  return u;
}

const ir_expr *ir_reduce_set_init(const ir_expr *red, const ir_expr *init) {
  if (!red || red->kind != IR_REDUCE) return NULL;
  return ir_expr_with(red, red->a, red->b, init, red->args);
}

const ir_expr *ir_load(tec_dtype t, const ir_expr *buf, const ir_expr *index,
                       const ir_expr *pred) {
  if (!buf || !index) return NULL;
  if (buf->kind != IR_VAR || buf->type.code != TEC_HANDLE) {
    tec_ctx_set_error(buf->ctx, "ir_load: the buffer must be a handle variable");
    return NULL;
  }
  ir_expr *e = new_expr(buf->ctx, IR_LOAD, tec_dtype_with_lanes(t, index->type.lanes));
  if (!e) return NULL;
  e->a = buf;
  e->b = index;
  e->c = pred;
  return e;
}

const ir_expr *ir_ramp(const ir_expr *base, const ir_expr *stride, int lanes) {
  if (!base || !stride) return NULL;
  if (lanes < 2 || base->type.lanes != 1 || !tec_dtype_is_int(base->type)) {
    tec_ctx_set_error(base->ctx, "ir_ramp: needs a scalar integer base and lanes >= 2");
    return NULL;
  }
  if (unify("ir_ramp", &base, &stride)) return NULL;
  ir_expr *e = new_expr(base->ctx, IR_RAMP, tec_dtype_with_lanes(base->type, lanes));
  if (!e) return NULL;
  e->a = base;
  e->b = stride;
  return e;
}

const ir_expr *ir_broadcast(const ir_expr *a, int lanes) {
  if (!a) return NULL;
  if (lanes < 2 || a->type.lanes != 1) {
    tec_ctx_set_error(a->ctx, "ir_broadcast: needs a scalar and lanes >= 2");
    return NULL;
  }
  ir_expr *e = new_expr(a->ctx, IR_BROADCAST, tec_dtype_with_lanes(a->type, lanes));
  if (e) e->a = a;
  return e;
}

const ir_expr *ir_let(const ir_expr *var, const ir_expr *value, const ir_expr *body) {
  if (!var || !value || !body) return NULL;
  ir_expr *e = new_expr(body->ctx, IR_LET, body->type);
  if (!e) return NULL;
  e->var = var;
  e->a = value;
  e->b = body;
  return e;
}

const ir_expr *ir_expr_with(const ir_expr *e, const ir_expr *a, const ir_expr *b,
                            const ir_expr *c, const ir_expr *const *args) {
  if (!e) return NULL;
  if (e->a == a && e->b == b && e->c == c && e->args == args) return e;
  ir_expr *n = tec_ctx_alloc(e->ctx, sizeof *n);
  if (!n) return NULL;
  *n = *e;
  n->a = a;
  n->b = b;
  n->c = c;
  n->args = args;
  /* keep types consistent where children change lanes (vectorization) */
  switch (e->kind) {
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_FLOORDIV:
  case IR_FLOORMOD: case IR_MIN: case IR_MAX: case IR_CAST: case IR_NOT:
  case IR_AND: case IR_OR:
    if (a) n->type.lanes = a->type.lanes;
    break;
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    if (a) n->type.lanes = a->type.lanes;
    break;
  case IR_SELECT:
    if (b) n->type.lanes = b->type.lanes;
    break;
  case IR_LOAD:
    if (b) n->type.lanes = b->type.lanes;
    break;
  case IR_LET:
    if (b) n->type = b->type;
    break;
  case IR_CALL: /* likely(cond) has its condition's lanes */
    if (e->v.i == IR_INTRIN_LIKELY && args && e->nargs == 1 && args[0])
      n->type.lanes = args[0]->type.lanes;
    break;
  default:
    break;
  }
  return n;
}

int ir_is_const_int(const ir_expr *e, int64_t *out) {
  if (!e) return 0;
  if (e->kind == IR_BROADCAST) e = e->a;
  if (e->kind != IR_INT_IMM) return 0;
  if (out) *out = e->v.i;
  return 1;
}
int ir_is_const_float(const ir_expr *e, double *out) {
  if (!e) return 0;
  if (e->kind == IR_BROADCAST) e = e->a;
  if (e->kind != IR_FLOAT_IMM) return 0;
  if (out) *out = e->v.f;
  return 1;
}
int ir_is_zero(const ir_expr *e) {
  int64_t i; double f;
  return (ir_is_const_int(e, &i) && i == 0) || (ir_is_const_float(e, &f) && f == 0.0);
}
int ir_is_one(const ir_expr *e) {
  int64_t i; double f;
  return (ir_is_const_int(e, &i) && i == 1) || (ir_is_const_float(e, &f) && f == 1.0);
}

const ir_expr *ir_combiner_identity(tec_ctx *ctx, ir_combiner comb, tec_dtype t) {
  t = tec_dtype_scalar(t);
  switch (comb) {
  case IR_COMB_SUM: return ir_int_t(ctx, t, 0);
  case IR_COMB_PROD: return ir_int_t(ctx, t, 1);
  case IR_COMB_MAX:
  case IR_COMB_MIN: {
    int lo = comb == IR_COMB_MAX;
    if (t.code == TEC_FLOAT) return ir_float_t(ctx, t, lo ? -INFINITY : INFINITY);
    if (t.code == TEC_UINT)
      return ir_int_t(ctx, t, lo ? 0 : (t.bits >= 64 ? -1 : (int64_t)((1ull << t.bits) - 1)));
    int64_t hi = t.bits >= 64 ? INT64_MAX : (int64_t)((1ull << (t.bits - 1)) - 1);
    return ir_int_t(ctx, t, lo ? -hi - 1 : hi);
  }
  case IR_COMB_USER: break; /* the reducer's identity[value_index] */
  }
  return NULL;
}

const ir_expr *ir_combine(ir_combiner comb, const ir_expr *x, const ir_expr *y) {
  switch (comb) {
  case IR_COMB_SUM: return ir_add(x, y);
  case IR_COMB_PROD: return ir_mul(x, y);
  case IR_COMB_MAX: return ir_max(x, y);
  case IR_COMB_MIN: return ir_min(x, y);
  case IR_COMB_USER: break; /* the values combine together: lower/schedule_ops.c */
  }
  return NULL;
}

const ir_expr *ir_binary(ir_expr_kind k, const ir_expr *a, const ir_expr *b) {
  if (!a || !b) return NULL;
  switch (k) {
  case IR_ADD: return ir_add(a, b);
  case IR_SUB: return ir_sub(a, b);
  case IR_MUL: return ir_mul(a, b);
  case IR_DIV: return tec_dtype_is_float(a->type) ? ir_div(a, b) : ir_truncdiv(a, b);
  case IR_MOD: return ir_truncmod(a, b);
  case IR_FLOORDIV: return ir_floordiv(a, b);
  case IR_FLOORMOD: return ir_floormod(a, b);
  case IR_MIN: return ir_min(a, b);
  case IR_MAX: return ir_max(a, b);
  case IR_EQ: return ir_eq(a, b);
  case IR_NE: return ir_ne(a, b);
  case IR_LT: return ir_lt(a, b);
  case IR_LE: return ir_le(a, b);
  case IR_GT: return ir_gt(a, b);
  case IR_GE: return ir_ge(a, b);
  case IR_AND: return ir_and(a, b);
  case IR_OR: return ir_or(a, b);
  default: return NULL;
  }
}
