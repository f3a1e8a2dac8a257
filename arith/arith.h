/* arith.h — integer facts for the lowering passes: ranges of index expressions, proofs of
 * conditions, and the arithmetic simplifier.
 *
 *   arith_env *env = arith_env_new(ctx);
 *   arith_env_push(env, i_inner, (arith_range){0, 7, 1, 1});      // i.inner in [0, 8)
 *   arith_simplify(floordiv(i.outer*8 + i.inner, 8), env)          // -> i.outer
 *   arith_prove(i.inner < 8, env)                                  // -> 1
 *
 * An env is a stack of facts "var in [lo, hi]" (the latest binding of a var wins). Functions
 * taking a const env may push and pop internally (LET bodies) but leave it as they found it.
 * Everything here is conservative: "don't know" is an unknown bound, a 0 from arith_prove,
 * or the input returned unchanged.
 *
 * The simplifier lives in arith/simplify*.c (the pass and the expression dispatch, canonical
 * linear forms, division rules); the env and constants in arith/arith_env.c; the one interval
 * analysis — constant ranges (arith_bound) and symbolic intervals over relaxed variables
 * (arith_interval, which bound inference and prefetch use) — in arith/arith_interval.c, with
 * the rows and columns of a fused loop's chunk in arith/arith_chunk.c.
 */
#ifndef TEC_ARITH_ARITH_H
#define TEC_ARITH_ARITH_H

#include "tec/ir.h"
#include "tec/te.h"

/* An inclusive interval; a side is meaningful only when its has_ flag is set. */
typedef struct arith_range {
  int64_t lo, hi;
  int has_lo, has_hi;
} arith_range;

typedef struct arith_env arith_env; /* known facts: var -> range (a stack) */

arith_env *arith_env_new(tec_ctx *ctx);
/* Binds var to r until the matching pop. */
void arith_env_push(arith_env *env, const ir_expr *var, arith_range r);
/* Binds a loop var: var in [min, min + extent - 1], numerically where the bounds of min and
 * extent are known (a symbolic extent still gives the lower bound), and symbolically so that
 * `i < n` is provable inside `for i in [0, n)`. */
void arith_env_push_loop(arith_env *env, const ir_expr *var, const ir_expr *min,
                         const ir_expr *extent);
/* Pops the n latest bindings. */
void arith_env_pop(arith_env *env, int n);
int arith_env_depth(const arith_env *env);

/* The interval of an integer expression (unknown sides for anything else). env may be NULL. */
arith_range arith_bound(const ir_expr *e, const arith_env *env);
/* Symbolic intervals: vars[i] free to range over [lo[i], hi[i]] (expressions; NULL: unbounded),
 * every other variable fixed. */
typedef struct arith_relax {
  int n;
  const ir_expr **vars, **lo, **hi;
} arith_relax;
/* [*lo, *hi] of the integer e with r's variables free (r may be NULL), by the rules of
 * arith_bound: sums (as linear forms, so terms cancel), products, division and modulo by a
 * positive divisor, min, max, select; env (may be NULL) bounds the other variables where a
 * rule needs a sign or falls back to constants. 0 when a side is unknown or uses r's vars. */
int arith_interval(const ir_expr *e, const arith_relax *r, const arith_env *env,
                   const ir_expr **lo, const ir_expr **hi);
/* 1 if the divisor m is > 0 wherever a loop it divides runs: m >= 0 under env, and m > 0 when
 * every size variable is >= 1 (a size of 0 empties the loop whose extent it is). */
int arith_divisor_positive(const ir_expr *m, const arith_env *env);
/* [*olo, *ohi] of x / m (mod: x % m) for x in [lo, hi], hi - lo a constant, m a positive
 * constant: a chunk of a fused-then-split loop, one row when lo's residues keep it in one
 * (arith_chunk.c). 0 when hi - lo is not a constant. */
int arith_chunk_divmod(const ir_expr *lo, const ir_expr *hi, int64_t m, int mod,
                       const ir_expr **olo, const ir_expr **ohi);
/* 1 if cond is provably true under env, else 0. */
int arith_prove(const ir_expr *cond, const arith_env *env);
/* The simplified expression; e itself when nothing changed. env may be NULL. */
const ir_expr *arith_simplify(const ir_expr *e, const arith_env *env);
/* The pass: simplifies every expression of the program, tracking loop ranges; folds provable
 * IFs, inlines loops of extent 1 and removes loops of extent <= 0. s itself if unchanged. */
const ir_stmt *lower_simplify(const ir_stmt *s);

/* A positive number known to divide the integer e, from its constants (i*48 + j*16: 16);
 * 1 when nothing is known, a divisor of 2^20 for 0 (known_multiple.c). */
int64_t arith_known_multiple(const ir_expr *e);
/* The greatest common divisor of |a| and |b| (0 when both are 0). */
int64_t arith_gcd(int64_t a, int64_t b);

/* The least power of two >= w (1 for w <= 1; at most 2^61): the rows a folded buffer keeps
 * (lower/store_at.c), which the auto-scheduler's tile costs predict (autosched/rule_attach.c). */
static inline int64_t arith_pow2_at_least(int64_t w) {
  int64_t f = 1;
  while (f < w && f < ((int64_t)1 << 61)) f *= 2;
  return f;
}

/* Range helpers. */
static inline arith_range arith_range_unknown(void) { return (arith_range){0, 0, 0, 0}; }
static inline arith_range arith_range_of(int64_t lo, int64_t hi) {
  return (arith_range){lo, hi, 1, 1};
}

/* ======== internals shared by arith/simplify*.c and arith/arith*.c ======== */

struct arith_env {
  tec_ctx *ctx;
  int n, cap;
  struct arith_fact {
    const ir_expr *var;
    arith_range r;
    const ir_expr *smin, *smax; /* symbolic bounds (inclusive) or NULL */
  } *facts;
};
/* Pushes a whole fact (range and symbolic bounds). */
void arith_env_push_fact(arith_env *env, const struct arith_fact *f);
/* Pushes what cond being true says about variables: `x < e`, `x >= e`, `e > x`, `x == e`
 * and conjunctions of them tighten x's range. Callers pop back to their saved depth. */
void arith_env_assume(arith_env *env, const ir_expr *cond);
/* The latest fact on var, or NULL. */
const struct arith_fact *arith_env_find(const arith_env *env, const ir_expr *var);

/* 1 for the types the linear canonical form and the range rules apply to: scalar signed ints. */
static inline int arith_is_index_type(tec_dtype t) {
  return t.code == TEC_INT && t.lanes == 1 && t.bits >= 8 && t.bits <= 64;
}
/* 1 if e is a scalar INT_IMM (not a broadcast); its value in *v. */
static inline int arith_is_imm(const ir_expr *e, int64_t *v) {
  if (!e || e->kind != IR_INT_IMM || e->type.lanes != 1) return 0;
  if (v) *v = e->v.i;
  return 1;
}
/* v truncated to the width of int type t (sign- or zero-extended back to 64 bits). */
int64_t arith_wrap(tec_dtype t, int64_t v);
/* The range every value of type t lies in. */
arith_range arith_type_range(tec_dtype t);
/* A constant of type t (broadcast when t has lanes > 1; bool for bool types). */
const ir_expr *arith_const(tec_ctx *ctx, tec_dtype t, int64_t v);
/* Floor division and modulo of constants; 0 when undefined (b == 0, overflow). */
int arith_floordiv64(int64_t a, int64_t b, int64_t *q);
int arith_floormod64(int64_t a, int64_t b, int64_t *r);

/* A linear form: sum of coef * term, plus c. Terms are compared with ir_expr_equal and kept in
 * order of first appearance. Coefficients wrap at the type's width (a ring, so exact). */
typedef struct arith_term {
  const ir_expr *e;
  int64_t coef;
} arith_term;
typedef struct arith_linear {
  tec_ctx *ctx;
  tec_dtype type;
  int n, cap;
  arith_term *t; /* malloc'd; arith_linear_free */
  int64_t c;
  int oom;       /* an allocation failed: the form is unusable */
} arith_linear;
void arith_linear_init(arith_linear *l, tec_ctx *ctx, tec_dtype t);
void arith_linear_free(arith_linear *l);
/* Adds scale * e, flattening + - and multiplication by constants. */
void arith_linear_add_expr(arith_linear *l, const ir_expr *e, int64_t scale);
void arith_linear_add_term(arith_linear *l, const ir_expr *term, int64_t coef);
/* Merges floordiv(x, c)*c*k + floormod(x, c)*k into x*k; drops zero terms. */
void arith_linear_normalize(arith_linear *l);
/* Rebuilds an expression: positive terms, then negative terms subtracted, constant last. */
const ir_expr *arith_linear_build(const arith_linear *l);
/* The numeric range of a linear form under env. */
arith_range arith_linear_bound(const arith_linear *l, const arith_env *env);
/* The canonical form of a scalar int expression; NULL for other types. */
const ir_expr *arith_canonical(const ir_expr *e);

/* One level of rewriting: e's children are already simplified. Returns e when no rule fires. */
const ir_expr *arith_rewrite(const ir_expr *e, const arith_env *env);
/* The division rules (FLOORDIV, FLOORMOD, DIV, MOD), arith/simplify_div.c. */
const ir_expr *arith_rewrite_div(const ir_expr *e, const arith_env *env);
/* Sets every expression slot of m to the simplifier; m->user must be an arith_env. */
void arith_simplify_mutator(ir_mutator *m);

/* Range arithmetic (unknown sides propagate; overflow gives unknown). */
arith_range arith_range_add(arith_range a, arith_range b);
arith_range arith_range_scale(arith_range a, int64_t k);
arith_range arith_range_union(arith_range a, arith_range b);
arith_range arith_range_intersect(arith_range a, arith_range b);

#endif
