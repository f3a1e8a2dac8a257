/* vectorize.c — lower_vectorize: a VECTORIZED loop of constant extent L becomes vector code.
 *
 *   for (j.inner, 0, 8) vectorized {              for (k, 0, 64) {
 *     for (k, 0, 64) {                      ->      C[ramp((i*64) + (j.outer*8), 1, 8)] =
 *       C[((i*64) + (j.outer*8)) + j.inner] =         (C[ramp(..., 1, 8)] +
 *         (C[...] + (A[(i*64) + k]*B[...]))              (x8(A[((i*64) + k)])*B[ramp(...)]))
 *
 * The loop variable becomes ramp(min, 1, L); expressions that depend on it become vectors of
 * L lanes and everything else stays scalar, broadcast only where it meets a vector. Index
 * arithmetic is kept in ramp form as it is built (ramp + x -> ramp(base + x, stride),
 * ramp * c -> ramp(base*c, stride*c), ramp +/- ramp), so codegen sees ramp(base, 1) indices
 * and emits one vector load/store. Serial loops inside whose bounds do not depend on the
 * variable stay loops with vector bodies (the GEMM micro-kernel). LET values that become
 * vectors get a fresh vector variable.
 *
 * Falls back to a SERIAL loop (never miscompiles) when the body has: a store whose index does
 * not depend on the variable (a reduction into a scalar), an IF / loop bound / allocation
 * size that depends on it, values that are already vectors and depend on it, a buffer both
 * loaded and stored unless every access uses the same index and that index is a ramp with a
 * nonzero constant stride (lanes independent), or a non-constant extent. A loop none of whose
 * copies became vector code is reported in the lowered function's notes, with the reason.
 */
#include <stdlib.h>
#include <string.h>
#include "arith/arith.h"
#include "ir/internal.h"
#include "lower/passes.h"

#define VEC_MAX_LANES 1024
#define VEC_MAX_LETS 64
#define VEC_MAX_ACCESS 256
/* fails the state for a reason (the first one is kept) */
#define VEC_FAIL(st, reason) ((st)->why = (st)->why ? (st)->why : (reason), (st)->fail = 1)

typedef struct vec_access {
  const ir_expr *buf, *index;
  int store;
} vec_access;

typedef struct vec_state {
  tec_ctx *ctx;
  const ir_expr *var, *ramp;
  int lanes;
  int fail;
  const char *why;   /* the first reason the loop stays serial (the lowered function's note) */
  int nlet;
  const ir_expr *let_from[VEC_MAX_LETS], *let_to[VEC_MAX_LETS];
  int nacc;
  vec_access acc[VEC_MAX_ACCESS];
  int ninner;        /* variables the body binds (inner loops, lets): -1 when too many */
  const ir_expr *inner[16];
} vec_state;

/* ---- the read/write check ---- */

static void collect_expr(vec_state *st, const ir_expr *e) {
  if (!e) return;
  if (e->kind == IR_LOAD) {
    if (st->nacc >= VEC_MAX_ACCESS) VEC_FAIL(st, "it makes more than 256 memory accesses");
    else st->acc[st->nacc++] = (vec_access){e->a, e->b, 0};
  }
  collect_expr(st, e->a);
  collect_expr(st, e->b);
  collect_expr(st, e->c);
  for (int i = 0; i < e->nargs; i++) collect_expr(st, e->args[i]);
}

static void collect_stmt(vec_state *st, const ir_stmt *s) {
  if (!s) return;
  if ((s->kind == IR_S_FOR || s->kind == IR_S_LET_STMT) && st->ninner >= 0)
    st->ninner = st->ninner < 16 ? (st->inner[st->ninner] = s->var, st->ninner + 1) : -1;
  if (s->kind == IR_S_STORE) {
    if (st->nacc >= VEC_MAX_ACCESS) VEC_FAIL(st, "it makes more than 256 memory accesses");
    else st->acc[st->nacc++] = (vec_access){s->var, s->a, 1};
  }
  collect_expr(st, s->a);
  collect_expr(st, s->b);
  collect_expr(st, s->c);
  collect_stmt(st, s->body);
  collect_stmt(st, s->else_body);
  for (int i = 0; s->kind == IR_S_SEQ && i < s->n; i++) collect_stmt(st, s->seq[i]);
}

/* 1 if a load at index li and the store at si (one store index for the buffer) never touch
 * the same element from two different lanes, whatever their order in the body: si - li is a
 * constant d, the loop variable's step moves si by c, |d| >= lanes * |c|, and neither uses a
 * variable the body binds. A recurrence's
 * y[t, x] = f(y[t - 1, x]) vectorized over x is the case (d is a row). (A load just ahead of
 * the store, C[i] = C[i + 1], is safe only when it comes first in the body: not taken.) */
static int load_before_stores(const vec_state *st, const ir_expr *si, const ir_expr *li) {
  const ir_expr *next = ir_add(st->var, ir_int_t(st->ctx, st->var->type, 1));
  const ir_expr *si1 = next ? ir_substitute(si, 1, &st->var, &next) : NULL;
  const ir_expr *d = si1 ? arith_simplify(ir_sub(si, li), NULL) : NULL;
  const ir_expr *c = d ? arith_simplify(ir_sub(si1, si), NULL) : NULL;
  int64_t dv, cv;
  if (!c || !ir_is_const_int(d, &dv) || !ir_is_const_int(c, &cv) || cv == 0 || st->ninner < 0)
    return 0;
  /* an inner loop's variable in the index: lanes meet across its iterations (C[x + k] and
   * C[x + k - 8]: lane 1's store at k = 0 is lane 0's load at k = 9) */
  for (int k = 0; k < st->ninner; k++)
    if (ir_uses_var(si, st->inner[k]) || ir_uses_var(li, st->inner[k])) return 0;
  int64_t ad = dv < 0 ? -dv : dv, ac = cv < 0 ? -cv : cv;
  return ad / st->lanes >= ac;
}

/* 1 if buf is stored in the loop and also loaded: its store index must then be a dense,
 * lane-injective ramp (checked where the store is vectorized). Fails the state when the
 * accesses of such a buffer do not all use one index, except loads that no lower lane's store
 * can reach (load_before_stores). */
static int is_read_write(vec_state *st, const ir_expr *buf) {
  int loads = 0, stores = 0, same = 1;
  const ir_expr *si = NULL;
  for (int i = 0; i < st->nacc; i++)
    if (st->acc[i].buf == buf && st->acc[i].store && !si) si = st->acc[i].index;
  for (int i = 0; i < st->nacc; i++) {
    if (st->acc[i].buf != buf) continue;
    if (st->acc[i].store) stores++;
    else loads++;
    if (si && !ir_expr_equal(si, st->acc[i].index) &&
        (st->acc[i].store || !load_before_stores(st, si, st->acc[i].index)))
      same = 0;
  }
  if (!stores || !loads) return 0;
  if (!same) VEC_FAIL(st, "a buffer is loaded and stored at different indices");
  return 1;
}

/* ---- expressions ---- */

static const ir_expr *simp(const ir_expr *e) { return e ? arith_simplify(e, NULL) : NULL; }

/* a op b where at least one side is a vector of `lanes`; keeps index arithmetic in ramp form. */
static const ir_expr *vec_binary(ir_expr_kind k, const ir_expr *a, const ir_expr *b,
                                 int lanes) {
  int ra = a->kind == IR_RAMP, rb = b->kind == IR_RAMP;
  int sa = a->type.lanes == 1, sb = b->type.lanes == 1;
  if (k == IR_ADD) {
    if (ra && sb) return ir_ramp(simp(ir_add(a->a, b)), a->b, lanes);
    if (sa && rb) return ir_ramp(simp(ir_add(a, b->a)), b->b, lanes);
    if (ra && rb) return ir_ramp(simp(ir_add(a->a, b->a)), simp(ir_add(a->b, b->b)), lanes);
  } else if (k == IR_SUB) {
    if (ra && sb) return ir_ramp(simp(ir_sub(a->a, b)), a->b, lanes);
    if (sa && rb)
      return ir_ramp(simp(ir_sub(a, b->a)), simp(ir_sub(ir_int_t(b->ctx, b->b->type, 0), b->b)),
                     lanes);
    if (ra && rb) return ir_ramp(simp(ir_sub(a->a, b->a)), simp(ir_sub(a->b, b->b)), lanes);
  } else if (k == IR_MUL) {
    if (ra && sb) return ir_ramp(simp(ir_mul(a->a, b)), simp(ir_mul(a->b, b)), lanes);
    if (sa && rb) return ir_ramp(simp(ir_mul(a, b->a)), simp(ir_mul(a, b->b)), lanes);
  }
  return ir_binary(k, a, b); /* the constructors broadcast a scalar side */
}

static const ir_expr *bcast(const ir_expr *e, int lanes) {
  return e && e->type.lanes == 1 ? ir_broadcast(e, lanes) : e;
}

static const ir_expr *vec_expr(vec_state *st, const ir_expr *e);

static const ir_expr *vec_let(vec_state *st, const ir_expr *var, const ir_expr *value,
                              const ir_expr **newvar) {
  const ir_expr *v = vec_expr(st, value);
  *newvar = var;
  if (!v || v == value || v->type.lanes == 1) return v;
  if (st->nlet >= VEC_MAX_LETS) {
    VEC_FAIL(st, "it binds more than 64 vector lets");
    return NULL;
  }
  *newvar = ir_var(st->ctx, var->name, v->type, IR_VAR_LET);
  st->let_from[st->nlet] = var;
  st->let_to[st->nlet] = *newvar;
  st->nlet++;
  return v;
}

static const ir_expr *vec_expr(vec_state *st, const ir_expr *e) {
  if (!e || st->fail) return NULL;
  int L = st->lanes;
  switch (e->kind) {
  case IR_INT_IMM: case IR_FLOAT_IMM: return e;
  case IR_VAR:
    if (e == st->var) return st->ramp;
    for (int i = st->nlet - 1; i >= 0; i--)
      if (st->let_from[i] == e) return st->let_to[i];
    return e;
  case IR_READ: case IR_REDUCE:
    st->fail = 1;
    return NULL;
  case IR_LET: { /* the body may depend on a vectorized value */
    const ir_expr *nv;
    int mark = st->nlet;
    const ir_expr *val = vec_let(st, e->var, e->a, &nv);
    if (!val) return NULL;
    const ir_expr *body = vec_expr(st, e->b);
    st->nlet = mark;
    if (!body) return NULL;
    if (nv == e->var && val == e->a && body == e->b) return e;
    const ir_expr *r = ir_let(nv, val, body);
    if (!r) st->fail = 1;
    return r;
  }
  default: break;
  }
  const ir_expr *a = vec_expr(st, e->a), *b = vec_expr(st, e->b), *c = vec_expr(st, e->c);
  if (st->fail) return NULL;
  const ir_expr **args = NULL;
  int changed = a != e->a || b != e->b || c != e->c;
  if (e->nargs) {
    args = tec_ctx_alloc(st->ctx, sizeof *args * (size_t)e->nargs);
    if (!args) return st->fail = 1, NULL;
    for (int i = 0; i < e->nargs; i++) {
      args[i] = vec_expr(st, e->args[i]);
      if (!args[i]) return st->fail = 1, NULL;
      changed |= args[i] != e->args[i];
    }
  }
  if (!changed) return e;
  if (e->type.lanes > 1) { /* already a vector and depends on the variable */
    VEC_FAIL(st, "a value that is already a vector depends on the loop variable (a "
                 "vectorized loop inside it)");
    return NULL;
  }
  const ir_expr *r = NULL;
  switch (e->kind) {
  case IR_NOT: r = ir_not(a); break;
  case IR_CAST: r = ir_cast(tec_dtype_with_lanes(e->type, L), a); break;
  case IR_SELECT:
    if (a->type.lanes > 1 && b->type.lanes == 1 && c->type.lanes == 1) b = bcast(b, L);
    r = ir_select(a, b, c);
    break;
  case IR_CALL: {
    if (e->v.i == IR_INTRIN_PREFETCH) { /* a hint per address: the loop stays serial */
      VEC_FAIL(st, "it prefetches at an address that depends on the loop variable");
      return NULL;
    }
    if (e->v.i == IR_INTRIN_DOT4 || e->v.i == IR_INTRIN_MMLA || e->v.i == IR_INTRIN_ZIP_LO ||
        e->v.i == IR_INTRIN_ZIP_HI) { /* vector code (tensorize.c, transpose_block.c) */
      VEC_FAIL(st, "it holds a vector intrinsic (dot4, mmla, zip) whose operands depend on the "
                   "loop variable");
      return NULL;
    }
    for (int i = 0; i < e->nargs; i++) args[i] = bcast(args[i], L);
    r = ir_call(st->ctx, (ir_intrinsic)e->v.i, e->nargs, args);
    break;
  }
  case IR_LOAD: {
    const ir_expr *idx = b;
    if (idx->type.lanes == 1) idx = bcast(idx, L); /* only the predicate varies */
    r = ir_load(tec_dtype_scalar(e->type), e->a, idx, c);
    break;
  }
  case IR_RAMP: case IR_BROADCAST: break;
  default: r = vec_binary(e->kind, a, b, L); break;
  }
  if (!r) st->fail = 1;
  return r;
}

/* ---- statements ---- */

static const ir_stmt *vec_stmt(vec_state *st, const ir_stmt *s) {
  if (!s || st->fail) return s;
  int L = st->lanes;
  switch (s->kind) {
  case IR_S_STORE: {
    const ir_expr *idx = vec_expr(st, s->a), *val = vec_expr(st, s->b), *pred = vec_expr(st, s->c);
    if (st->fail) return NULL;
    int64_t stride;
    if (idx->type.lanes == 1) { /* the same element every lane: a scalar reduction */
      VEC_FAIL(st, "every lane would store to the same element (a reduction over the loop)");
      return NULL;
    }
    if (is_read_write(st, s->var) &&
        !(idx->kind == IR_RAMP && ir_is_const_int(idx->b, &stride) && stride != 0)) {
      VEC_FAIL(st, "a buffer is loaded and stored at an index that is not a ramp of constant "
                   "nonzero stride (lanes could overlap)");
      return NULL;
    }
    if (st->fail) return NULL;
    return ir_store(s->var, idx, bcast(val, L), pred);
  }
  case IR_S_FOR: {
    const ir_expr *min = vec_expr(st, s->a), *ext = vec_expr(st, s->b);
    if (!st->fail && (min != s->a || ext != s->b))
      VEC_FAIL(st, "the bounds of an inner loop depend on the loop variable");
    if (st->fail) return NULL;
    const ir_stmt *body = vec_stmt(st, s->body);
    if (st->fail) return NULL;
    return ir_stmt_with(s, min, ext, s->c, body, NULL, NULL, NULL);
  }
  case IR_S_IF: {
    const ir_expr *cond = vec_expr(st, s->a);
    if (!st->fail && cond != s->a)
      VEC_FAIL(st, "a condition (if) depends on the loop variable");
    if (st->fail) return NULL;
    const ir_stmt *t = vec_stmt(st, s->body), *e = vec_stmt(st, s->else_body);
    if (st->fail) return NULL;
    return ir_stmt_with(s, cond, s->b, s->c, t, e, NULL, NULL);
  }
  case IR_S_ALLOCATE: case IR_S_ATTR: {
    const ir_expr *a = vec_expr(st, s->a);
    if (!st->fail && a != s->a)
      VEC_FAIL(st, "an allocation size or attribute depends on the loop variable");
    if (st->fail) return NULL;
    const ir_stmt *body = vec_stmt(st, s->body);
    if (st->fail) return NULL;
    return ir_stmt_with(s, a, s->b, s->c, body, NULL, NULL, NULL);
  }
  case IR_S_PRODUCE: {
    const ir_stmt *body = vec_stmt(st, s->body);
    return st->fail ? NULL : ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL);
  }
  case IR_S_LET_STMT: {
    const ir_expr *nv;
    int mark = st->nlet;
    const ir_expr *val = vec_let(st, s->var, s->a, &nv);
    if (st->fail) return NULL;
    const ir_stmt *body = vec_stmt(st, s->body);
    st->nlet = mark;
    if (st->fail) return NULL;
    if (nv == s->var) return ir_stmt_with(s, val, s->b, s->c, body, NULL, NULL, NULL);
    return ir_let_stmt(nv, val, body);
  }
  case IR_S_EVALUATE: {
    const ir_expr *v = vec_expr(st, s->a);
    return st->fail ? NULL : ir_stmt_with(s, v, s->b, s->c, NULL, NULL, NULL, NULL);
  }
  case IR_S_SEQ: {
    const ir_stmt **items = tec_ctx_alloc(st->ctx, sizeof *items * (size_t)s->n);
    if (!items) return st->fail = 1, NULL;
    for (int i = 0; i < s->n; i++) {
      items[i] = vec_stmt(st, s->seq[i]);
      if (st->fail) return NULL;
    }
    return ir_seq(st->ctx, s->n, items);
  }
  default: /* PROVIDE, REALIZE: not lowered yet */
    st->fail = 1;
    return NULL;
  }
}

/* The vector form of loop s (its body already processed), or NULL if it cannot be, with the
 * reason in *why. */
static const ir_stmt *vectorize_loop(const ir_stmt *s, const ir_stmt *body, const char **why) {
  int64_t L;
  *why = "it is not a loop of constant extent 2 to 1024";
  if (!ir_is_const_int(s->b, &L) || L < 2 || L > VEC_MAX_LANES || s->b->type.lanes != 1 ||
      !tec_dtype_is_int(s->var->type) || ir_uses_var(s->a, s->var))
    return NULL;
  *why = "out of memory";
  vec_state *st = calloc(1, sizeof *st);
  if (!st) {
    tec_ctx_set_error_kind(s->ctx, TEC_ERR_OOM, "out of memory (vectorizing a loop)");
    return NULL;
  }
  st->ctx = s->ctx;
  st->var = s->var;
  st->lanes = (int)L;
  st->ramp = ir_ramp(s->a, ir_int_t(s->ctx, s->a->type, 1), (int)L);
  collect_stmt(st, body);
  const ir_stmt *r = st->ramp && !st->fail ? vec_stmt(st, body) : NULL;
  if (st->fail) r = NULL; /* (a NULL from a constructor means out of memory: caught above) */
  *why = st->why ? st->why : "an expression could not be made a vector";
  free(st);
  return r;
}

/* Per vectorized loop name: whether some copy of it (loop partitioning copies loops) became
 * vector code, and why one did not. A loop none of whose copies did is a note. */
typedef struct vec_outcome {
  int n, cap;
  struct vec_loop { const char *name; int vectorized; const char *why; } *l;
} vec_outcome;

static void outcome(tec_ctx *ctx, vec_outcome *o, const char *name, int ok, const char *why) {
  int i = 0;
  while (i < o->n && strcmp(o->l[i].name, name) != 0) i++;
  if (i == o->n) {
    if (tec_grow(ctx, (void **)&o->l, &o->cap, o->n + 1, sizeof *o->l)) return;
    o->l[o->n++] = (struct vec_loop){name, 0, NULL};
  }
  o->l[i].vectorized |= ok;
  if (!ok && !o->l[i].why) o->l[i].why = why;
}

static const ir_stmt *vec_for(ir_mutator *m, const ir_stmt *s) {
  const ir_stmt *body = ir_mutate_stmt(m, s->body); /* innermost loops first */
  if (!body) return NULL;
  if (s->for_kind == IR_FOR_VECTORIZED) {
    const char *why = NULL;
    const ir_stmt *v = vectorize_loop(s, body, &why);
    outcome(s->ctx, m->user, s->var->name ? s->var->name : "?", v != NULL, why);
    if (v) return v;
    return ir_for(s->var, s->a, s->b, IR_FOR_SERIAL, body); /* scalarized */
  }
  return ir_stmt_with(s, s->a, s->b, s->c, body, s->else_body, s->seq, s->args);
}

const ir_stmt *lower_vectorize(const ir_stmt *s) {
  if (!s) return NULL;
  vec_outcome o = {0};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &o);
  m.stmt[IR_S_FOR] = vec_for;
  unsigned long errors_before = tec_ctx_error_count(s->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  if (tec_ctx_error_count(s->ctx) != errors_before) return NULL; /* out of memory half way */
  for (int i = 0; i < o.n; i++)
    if (!o.l[i].vectorized &&
        tec_ctx_note(s->ctx, "vectorize: loop '%s' stays a serial loop: %s", o.l[i].name,
                     o.l[i].why))
      return NULL;
  return r ? r : s;
}
