/* arith_interval.c — the one interval analysis of integer expressions: constant ranges
 * (arith_bound) and symbolic intervals (arith_interval), by the same rules.
 *
 * Each side of an interval is unknown, a constant, or (symbolic analysis) an expression.
 * arith_bound bounds every variable by the env's facts:
 *   env: i.outer in [0, 12], i.inner in [0, 7]
 *   arith_bound(i.outer*8 + i.inner)          -> [0, 103]
 *   arith_bound(floormod(i.outer*8 + 3, 8))   -> [0, 7]
 * arith_interval lets the relaxed variables range over [lo, hi] (expressions, typically a
 * loop's [min, min + extent - 1]) and keeps every subexpression without them as itself:
 *   i.inner in [0, 7]:   i.outer*8 + i.inner - 1   ->  [i.outer*8 - 1, i.outer*8 + 6]
 *   i in [0, n - 1]:     (i*4 + j) - i*4           ->  [j, j]
 * (sums go through the linear form, where i cancels before it is relaxed). Where every
 * operand of a rule has constant sides, the constant rule applies (a constant range is the
 * special case of a symbolic interval); where no symbolic rule does, the answer is the
 * constant analysis of the subexpression (relaxed variables by their constant sides, the
 * others by env).
 *
 * Symbolic rules: products by a factor that does not vary and whose sign is known; division
 * and modulo by a divisor m that does not vary and is positive (arith_divisor_positive: > 0
 * under env, counting a size variable as >= 1 — a divisor that is a size of 0 belongs to a
 * loop that runs no iteration): x / m is monotone; x % m is [lo % m, hi % m] while lo and hi
 * stay in one period of m, and a chunk of constant width by a constant m takes its rows and
 * columns from its start's residue (arith_chunk.c).
 *
 * Every side is exact-or-looser or unknown; overflow makes a side unknown.
 */
#include "arith/arith.h"

/* ---- range arithmetic ---- */

arith_range arith_range_add(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_lo && b.has_lo && !__builtin_add_overflow(a.lo, b.lo, &r.lo)) r.has_lo = 1;
  if (a.has_hi && b.has_hi && !__builtin_add_overflow(a.hi, b.hi, &r.hi)) r.has_hi = 1;
  return r;
}

arith_range arith_range_scale(arith_range a, int64_t k) {
  arith_range r = arith_range_unknown();
  if (k == 0) return arith_range_of(0, 0);
  int64_t x;
  if (k > 0) {
    if (a.has_lo && !__builtin_mul_overflow(a.lo, k, &x)) r.lo = x, r.has_lo = 1;
    if (a.has_hi && !__builtin_mul_overflow(a.hi, k, &x)) r.hi = x, r.has_hi = 1;
  } else {
    if (a.has_hi && !__builtin_mul_overflow(a.hi, k, &x)) r.lo = x, r.has_lo = 1;
    if (a.has_lo && !__builtin_mul_overflow(a.lo, k, &x)) r.hi = x, r.has_hi = 1;
  }
  return r;
}

arith_range arith_range_union(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_lo && b.has_lo) r.lo = a.lo < b.lo ? a.lo : b.lo, r.has_lo = 1;
  if (a.has_hi && b.has_hi) r.hi = a.hi > b.hi ? a.hi : b.hi, r.has_hi = 1;
  return r;
}

arith_range arith_range_intersect(arith_range a, arith_range b) {
  arith_range r = a;
  if (b.has_lo && (!r.has_lo || b.lo > r.lo)) r.lo = b.lo, r.has_lo = 1;
  if (b.has_hi && (!r.has_hi || b.hi < r.hi)) r.hi = b.hi, r.has_hi = 1;
  return r;
}

static arith_range range_mul(arith_range a, arith_range b) {
  if (a.has_lo && a.has_hi && a.lo == a.hi) return arith_range_scale(b, a.lo);
  if (b.has_lo && b.has_hi && b.lo == b.hi) return arith_range_scale(a, b.lo);
  arith_range r = arith_range_unknown();
  if (a.has_lo && a.has_hi && b.has_lo && b.has_hi) {
    int64_t p[4];
    if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
        __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
      return r;
    r = arith_range_of(p[0], p[0]);
    for (int i = 1; i < 4; i++) {
      if (p[i] < r.lo) r.lo = p[i];
      if (p[i] > r.hi) r.hi = p[i];
    }
  } else if (a.has_lo && b.has_lo && a.lo >= 0 && b.lo >= 0) {
    if (!__builtin_mul_overflow(a.lo, b.lo, &r.lo)) r.has_lo = 1;
  }
  return r;
}

static arith_range range_floordiv(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.lo > 0)) return r; /* only positive divisors */
  int64_t q;
  if (d.has_hi && d.lo == d.hi) {
    if (a.has_lo && arith_floordiv64(a.lo, d.lo, &q)) r.lo = q, r.has_lo = 1;
    if (a.has_hi && arith_floordiv64(a.hi, d.lo, &q)) r.hi = q, r.has_hi = 1;
    return r;
  }
  /* floor(x / d) for d > 0 is extreme at the corners of the box. */
  if (a.has_lo) {
    if (a.lo >= 0) r.lo = 0, r.has_lo = 1; /* x >= 0, d large: 0 */
    else if (arith_floordiv64(a.lo, d.lo, &q)) r.lo = q, r.has_lo = 1;
  }
  if (a.has_hi) {
    if (a.hi >= 0 && arith_floordiv64(a.hi, d.lo, &q)) r.hi = q, r.has_hi = 1;
    else if (a.hi < 0) r.hi = -1, r.has_hi = 1; /* a negative x stays <= -1 */
  }
  return r;
}

static arith_range range_floormod(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.lo > 0)) return r;
  r.lo = 0, r.has_lo = 1;
  if (d.has_hi) r.hi = d.hi - 1, r.has_hi = 1;
  if (d.has_hi && d.lo == d.hi && a.has_lo && a.has_hi) {
    int64_t qa, qb, ma, mb;
    if (arith_floordiv64(a.lo, d.lo, &qa) && arith_floordiv64(a.hi, d.lo, &qb) && qa == qb &&
        arith_floormod64(a.lo, d.lo, &ma) && arith_floormod64(a.hi, d.lo, &mb))
      return arith_range_of(ma, mb);
  }
  if (a.has_lo && a.lo >= 0 && a.has_hi && a.hi < d.lo) return a;
  return r;
}

/* Truncating division and modulo with a constant positive divisor. */
static arith_range range_truncdiv(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.has_hi && d.lo == d.hi && d.lo > 0)) {
    if (a.has_lo && a.lo >= 0) return range_floordiv(a, d);
    return r;
  }
  if (a.has_lo) r.lo = a.lo / d.lo, r.has_lo = 1;
  if (a.has_hi) r.hi = a.hi / d.lo, r.has_hi = 1;
  return r;
}

static arith_range range_truncmod(arith_range a, arith_range d) {
  if (a.has_lo && a.lo >= 0) return range_floormod(a, d);
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.has_hi && d.lo == d.hi && d.lo > 0)) return r;
  int64_t c = d.lo;
  r.lo = a.has_lo ? (a.lo > -(c - 1) ? a.lo : -(c - 1)) : -(c - 1);
  r.hi = a.has_hi ? (a.hi <= 0 ? 0 : (a.hi < c - 1 ? a.hi : c - 1)) : c - 1;
  r.has_lo = r.has_hi = 1;
  return r;
}

/* ---- sides and intervals ---- */

typedef struct side {
  const ir_expr *e; /* symbolic, or NULL: the constant c */
  int64_t c;
  int has;          /* 0: unknown */
} side;
typedef struct ivl {
  side lo, hi;
} ivl;

static const side unknown_side = {NULL, 0, 0};

/* How variables are bounded: relaxed ones by rx; with sym, any subexpression without them is
 * its own bound, else the env's facts (sizes >= 1 with sizes_pos: the divisor rule). */
typedef struct walk {
  const arith_env *env;
  const arith_relax *rx;
  int sym, sizes_pos;
} walk;

static ivl of_range(arith_range r) {
  return (ivl){{NULL, r.lo, r.has_lo}, {NULL, r.hi, r.has_hi}};
}
static int is_num(ivl x) { return !x.lo.e && !x.hi.e; }
static arith_range to_range(ivl x) {
  return (arith_range){x.lo.c, x.hi.c, x.lo.has, x.hi.has};
}
static side sym_side(const ir_expr *e) {
  int64_t c;
  if (!e) return unknown_side;
  if (arith_is_imm(e, &c)) return (side){NULL, c, 1};
  return (side){e, 0, 1};
}
/* The side as an expression of like's type (NULL: unknown). */
static const ir_expr *side_expr(side s, const ir_expr *like) {
  if (!s.has) return NULL;
  return s.e ? s.e : ir_int_t(like->ctx, like->type, s.c);
}

static int uses_relaxed(const ir_expr *e, const arith_relax *rx) {
  for (int i = 0; rx && i < rx->n; i++)
    if (ir_uses_var(e, rx->vars[i])) return 1;
  return 0;
}

static side side_add(side a, side b, const ir_expr *like) {
  if (!a.has || !b.has) return unknown_side;
  if (!a.e && !b.e) {
    int64_t c;
    return __builtin_add_overflow(a.c, b.c, &c) ? unknown_side : (side){NULL, c, 1};
  }
  if (!a.e && a.c == 0) return b;
  if (!b.e && b.c == 0) return a;
  if (!a.e) { /* the constant last */
    side t = a;
    a = b, b = t;
  }
  return sym_side(ir_add(a.e, side_expr(b, like)));
}

/* s * p for an expression p (p's constant case is scale). */
static side side_mul(side s, const ir_expr *p) {
  int64_t k, c;
  if (!s.has) return unknown_side;
  if (!s.e && s.c == 0) return s;
  if (!s.e && s.c == 1) return sym_side(p);
  if (!s.e && arith_is_imm(p, &k))
    return __builtin_mul_overflow(s.c, k, &c) ? unknown_side : (side){NULL, c, 1};
  return sym_side(ir_mul(side_expr(s, p), p));
}

static ivl scale(ivl x, int64_t k, const ir_expr *like) {
  if (is_num(x)) return of_range(arith_range_scale(to_range(x), k));
  if (k == 0) return of_range(arith_range_of(0, 0));
  const ir_expr *K = ir_int_t(like->ctx, like->type, k);
  ivl r = {k == 1 ? x.lo : side_mul(x.lo, K), k == 1 ? x.hi : side_mul(x.hi, K)};
  if (k < 0) {
    side t = r.lo;
    r.lo = r.hi, r.hi = t;
  }
  return r;
}

static ivl add(ivl a, ivl b, const ir_expr *like) {
  if (is_num(a) && is_num(b)) return of_range(arith_range_add(to_range(a), to_range(b)));
  return (ivl){side_add(a.lo, b.lo, like), side_add(a.hi, b.hi, like)};
}

/* min (max) of two known sides. */
static side pick(side a, side b, int max, const ir_expr *like) {
  if (!a.e && !b.e) return max ? (a.c > b.c ? a : b) : (a.c < b.c ? a : b);
  const ir_expr *x = side_expr(a, like), *y = side_expr(b, like);
  return sym_side(max ? ir_max(x, y) : ir_min(x, y));
}

/* min: both lows needed, either high bounds it (max: the mirror); select: both of each. */
static ivl min_max(ivl a, ivl b, ir_expr_kind k, const ir_expr *like) {
  int max = k == IR_MAX;
  side lo = a.lo.has && b.lo.has ? pick(a.lo, b.lo, 0, like) : unknown_side;
  side hi = a.hi.has && b.hi.has ? pick(a.hi, b.hi, 1, like) : unknown_side;
  if (k == IR_MIN) hi = a.hi.has && b.hi.has ? pick(a.hi, b.hi, 0, like) : a.hi.has ? a.hi : b.hi;
  if (max) lo = a.lo.has && b.lo.has ? pick(a.lo, b.lo, 1, like) : a.lo.has ? a.lo : b.lo;
  return (ivl){lo, hi};
}

static ivl rec(const ir_expr *e, const walk *w);

/* The constant analysis of e (relaxed variables by their constant sides). */
static ivl numeric(const ir_expr *e, const walk *w) {
  walk n = *w;
  n.sym = 0;
  return rec(e, &n);
}

static ivl linear(const arith_linear *l, const walk *w, const ir_expr *like) {
  if (l->oom) return of_range(arith_range_unknown());
  ivl r = of_range(arith_range_of(l->c, l->c));
  for (int i = 0; i < l->n && (r.lo.has || r.hi.has); i++)
    r = add(r, scale(rec(l->t[i].e, w), l->t[i].coef, like), like);
  return r;
}

static ivl var_ivl(const ir_expr *e, const walk *w) {
  for (int i = 0; w->rx && i < w->rx->n; i++)
    if (w->rx->vars[i] == e) {
      ivl x = {sym_side(w->rx->lo[i]), sym_side(w->rx->hi[i])};
      if (!w->sym) { /* constant sides only */
        if (x.lo.e) x.lo = unknown_side;
        if (x.hi.e) x.hi = unknown_side;
      }
      return x;
    }
  const struct arith_fact *f = arith_env_find(w->env, e);
  arith_range r = f ? f->r : arith_range_unknown();
  if (e->v.i == IR_VAR_SIZE) { /* sizes are >= 0 (>= 1 for the divisor rule) */
    int64_t min = w->sizes_pos ? 1 : 0;
    if (!f) r = (arith_range){min, 0, 1, 0};
    else if (w->sizes_pos && (!r.has_lo || r.lo < 1)) r.lo = 1, r.has_lo = 1;
  }
  return of_range(r);
}

/* x / m and x % m (floor or truncating) for x in a, m positive and not varying. */
static int divmod_sym(const ir_expr *e, ivl a, const walk *w, ivl *out) {
  const ir_expr *m = e->b;
  if (uses_relaxed(m, w->rx) || !arith_divisor_positive(m, w->env)) return 0;
  int64_t c = 0;
  int isc = arith_is_imm(m, &c), mod = e->kind == IR_FLOORMOD || e->kind == IR_MOD;
  int trunc = e->kind == IR_DIV || e->kind == IR_MOD;
  /* truncation is floor for x >= 0 */
  int as_floor = !trunc || (a.lo.has && !a.lo.e && a.lo.c >= 0);
  if (!as_floor) {
    ivl n = numeric(e->a, w);
    as_floor = n.lo.has && n.lo.c >= 0;
  }
  const ir_expr *lo = side_expr(a.lo, e), *hi = side_expr(a.hi, e), *qlo, *qhi;
  if (isc && as_floor && arith_chunk_divmod(lo, hi, c, mod, &qlo, &qhi)) {
    *out = (ivl){sym_side(qlo), sym_side(qhi)}; /* a chunk's rows or columns */
    return 1;
  }
  const ir_expr *zero = ir_int_t(e->ctx, e->type, 0);
  if (!mod) { /* monotone for m > 0 */
    const ir_expr *(*f)(const ir_expr *, const ir_expr *) = trunc ? ir_truncdiv : ir_floordiv;
    *out = (ivl){lo ? sym_side(f(lo, m)) : unknown_side, hi ? sym_side(f(hi, m)) : unknown_side};
    return 1;
  }
  if (!as_floor) { /* a truncating remainder of a possibly negative x */
    if (!isc) return 0;
    *out = of_range(arith_range_of(-(c - 1), c - 1));
    return 1;
  }
  if (isc) {
    *out = of_range(arith_range_of(0, c - 1));
    return 1;
  }
  const ir_expr *last = ir_sub(m, ir_int_t(e->ctx, e->type, 1));
  if (!lo || !hi) { /* the whole period */
    *out = (ivl){sym_side(zero), sym_side(last)};
    return 1;
  }
  /* [lo % m, hi % m] when lo and hi fall in one period, else the whole period */
  const ir_expr *one = ir_eq(ir_floordiv(lo, m), ir_floordiv(hi, m));
  *out = (ivl){sym_side(ir_select(one, ir_floormod(lo, m), zero)),
               sym_side(ir_select(one, ir_floormod(hi, m), last))};
  return 1;
}

/* a * b, neither a constant: constant corners, or a factor p that does not vary and whose
 * sign is known scales the other's sides. */
static ivl product(const ir_expr *e, const walk *w) {
  ivl a = rec(e->a, w), b = rec(e->b, w);
  if (is_num(a) && is_num(b)) return of_range(range_mul(to_range(a), to_range(b)));
  for (int k = 0; k < 2; k++) {
    const ir_expr *p = k ? e->a : e->b;
    ivl x = k ? b : a;
    if (uses_relaxed(p, w->rx)) continue;
    arith_range s = arith_bound(p, w->env);
    if (s.has_lo && s.lo >= 0) return (ivl){side_mul(x.lo, p), side_mul(x.hi, p)};
    if (s.has_hi && s.hi <= 0) return (ivl){side_mul(x.hi, p), side_mul(x.lo, p)};
  }
  return numeric(e, w);
}

static ivl rec(const ir_expr *e, const walk *w) {
  ivl a, b;
  int64_t v;
  if (w->sym && !uses_relaxed(e, w->rx)) return (ivl){sym_side(e), sym_side(e)};
  switch (e->kind) {
  case IR_INT_IMM:
    if (e->type.code == TEC_UINT && e->v.i < 0) return of_range(arith_range_unknown());
    return of_range(arith_range_of(e->v.i, e->v.i));
  case IR_VAR:
    return var_ivl(e, w);
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
    if (e->kind == IR_MUL && !arith_is_imm(e->a, NULL) && !arith_is_imm(e->b, NULL)) {
      if (!e->a || !e->b) return of_range(arith_range_unknown());
      return product(e, w);
    } else {
      arith_linear l;
      arith_linear_init(&l, e->ctx, e->type);
      arith_linear_add_expr(&l, e, 1);
      ivl r = linear(&l, w, e);
      arith_linear_free(&l);
      return r;
    }
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_DIV:
  case IR_MOD: {
    if (!e->a || !e->b) return of_range(arith_range_unknown());
    a = rec(e->a, w), b = rec(e->b, w);
    if (is_num(a) && is_num(b)) {
      arith_range x = to_range(a), d = to_range(b);
      if (e->kind == IR_FLOORDIV) return of_range(range_floordiv(x, d));
      if (e->kind == IR_FLOORMOD) return of_range(range_floormod(x, d));
      if (e->kind == IR_DIV) return of_range(range_truncdiv(x, d));
      return of_range(range_truncmod(x, d));
    }
    ivl r;
    return divmod_sym(e, a, w, &r) ? r : numeric(e, w);
  }
  case IR_MIN:
  case IR_MAX:
    if (!e->a || !e->b) return of_range(arith_range_unknown());
    return min_max(rec(e->a, w), rec(e->b, w), e->kind, e);
  case IR_SELECT:
    if (!e->a || !e->b || !e->c) return of_range(arith_range_unknown());
    if (ir_is_const_int(e->a, &v)) return rec(v ? e->b : e->c, w);
    return min_max(rec(e->b, w), rec(e->c, w), IR_SELECT, e);
  case IR_CAST: {
    if (!e->a) return of_range(arith_range_unknown());
    if (w->sym) return numeric(e, w);
    arith_range t = arith_type_range(e->type);
    if (e->a->type.code == TEC_BOOL) return of_range(arith_range_of(0, 1));
    if (e->a->type.code != TEC_INT && e->a->type.code != TEC_UINT) return of_range(t);
    arith_range x = to_range(rec(e->a, w));
    /* An int that fits the target type is unchanged by the cast. */
    if (x.has_lo && x.has_hi && (!t.has_lo || x.lo >= t.lo) && (!t.has_hi || x.hi <= t.hi))
      return of_range(x);
    if (e->type.code == TEC_INT && e->type.bits == 64 && e->a->type.code == TEC_INT)
      return of_range(x);
    return of_range(t);
  }
  case IR_BROADCAST:
    if (w->sym) return numeric(e, w);
    return e->a ? rec(e->a, w) : of_range(arith_range_unknown());
  case IR_RAMP: {
    if (!e->a || !e->b) return of_range(arith_range_unknown());
    if (w->sym) return numeric(e, w);
    arith_range lanes = arith_range_of(0, e->type.lanes - 1);
    return of_range(arith_range_add(to_range(rec(e->a, w)),
                                    range_mul(to_range(rec(e->b, w)), lanes)));
  }
  case IR_LET: {
    if (!e->a || !e->b || !e->var || !w->env) return of_range(arith_range_unknown());
    if (w->sym) return numeric(e, w);
    arith_env *env = (arith_env *)w->env; /* restored below */
    int d = env->n;
    arith_env_push(env, e->var, to_range(rec(e->a, w)));
    ivl r = rec(e->b, w);
    arith_env_pop(env, env->n - d);
    return r;
  }
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
  case IR_AND: case IR_OR: case IR_NOT:
    return of_range(arith_range_of(0, 1));
  default:
    return of_range(arith_range_unknown());
  }
}

/* ---- entry points ---- */

static arith_range bound_top(const ir_expr *e, const walk *w) {
  if (!e) return arith_range_unknown();
  tec_dtype t = e->type;
  if (t.code != TEC_INT && t.code != TEC_UINT && t.code != TEC_BOOL) return arith_range_unknown();
  arith_range tr = arith_type_range(t);
  /* Unsigned arithmetic wraps; only constants and the type's range are trusted. */
  if (t.code == TEC_UINT && e->kind != IR_INT_IMM && e->kind != IR_BROADCAST) return tr;
  arith_range r = arith_range_intersect(to_range(rec(e, w)), tr);
  if (r.has_lo && r.has_hi && r.lo > r.hi) return tr; /* contradictory facts: trust nothing */
  return r;
}

arith_range arith_bound(const ir_expr *e, const arith_env *env) {
  walk w = {env, NULL, 0, 0};
  return bound_top(e, &w);
}

arith_range arith_linear_bound(const arith_linear *l, const arith_env *env) {
  walk w = {env, NULL, 0, 0};
  return l->oom ? arith_range_unknown() : to_range(linear(l, &w, NULL));
}

int arith_divisor_positive(const ir_expr *m, const arith_env *env) {
  walk w = {env, NULL, 0, 0}, pos = {env, NULL, 0, 1};
  arith_range r = bound_top(m, &w), p = bound_top(m, &pos);
  return r.has_lo && r.lo >= 0 && p.has_lo && p.lo > 0;
}

int arith_interval(const ir_expr *e, const arith_relax *rx, const arith_env *env,
                   const ir_expr **lo, const ir_expr **hi) {
  *lo = *hi = NULL;
  if (!e || !arith_is_index_type(e->type)) return 0;
  walk w = {env, rx, 1, 0};
  ivl x = rec(e, &w);
  *lo = side_expr(x.lo, e), *hi = side_expr(x.hi, e);
  return *lo && *hi && !uses_relaxed(*lo, rx) && !uses_relaxed(*hi, rx);
}
