/* bound_checkers.c — lower_bound_checkers: the debug option tec_lower_options.check_bounds
 * (TVM's instrument_bound_checkers): every load and store checked against its buffer at run
 * time. A build-time pass (tec_build and tec_emit alike), after slice_vectors so that it sees
 * the accesses codegen translates:
 *
 *   B[i] = A[(i + 5)]            ->  assert(((i + 5) >= 0) && ((i + 5) < 8),
 *                                         "f: 'A' is loaded at flat index %lld, outside its
 *                                          %lld elements ...", (i + 5), 8)
 *                                    B[i] = A[(i + 5)]
 * Each statement gets the asserts of the accesses in its own expressions just before it (a
 * FOR's bounds, an IF's condition, a store's index, value and predicate); a failing assert
 * returns -1 with the message (from a parallel chunk too), before the access happens. A
 * predicated access is checked only where its predicate holds; a vector access lane by lane
 * (a ramp without a predicate by its two ends); a check uses the LETs around its access
 * that it needs. Buffers are the arguments (their whole buffer, margins included: the
 * product of te_buffer_shape) and the allocations (their element count, in the access's units
 * when a shared buffer is read at another width). Not checked: prefetches (hints, they may
 * point past the end), buffers of neither kind, a vector index built from a vector variable
 * (it cannot be split into lanes). */
#include <stdlib.h>
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"

typedef struct bc_buf {
  const ir_expr *var;
  const ir_expr *extent;       /* elements */
  int64_t bytes;               /* bytes of one element */
} bc_buf;

typedef struct bc_state {
  const lower_func *f;
  tec_ctx *ctx;
  int nbuf, capbuf;
  bc_buf *bufs;                /* a stack: arguments, then the allocations around */
  int nlet, caplet;
  struct bc_let { const ir_expr *var, *val; } *lets; /* expression LETs around, outermost first */
  int n, cap;
  const ir_stmt **checks;      /* of the statement being visited */
  int oom;
} bc_state;

static int64_t type_bytes(tec_dtype t) {
  return (int64_t)tec_dtype_bytes(tec_dtype_scalar(t)) * (t.lanes ? t.lanes : 1);
}

static const bc_buf *find_buf(const bc_state *st, const ir_expr *var) {
  for (int k = st->nbuf - 1; k >= 0; k--)
    if (st->bufs[k].var == var) return &st->bufs[k];
  return NULL;
}

static void push_buf(bc_state *st, const ir_expr *var, const ir_expr *extent, int64_t bytes) {
  if (tec_grow(st->ctx, (void **)&st->bufs, &st->capbuf, st->nbuf + 1, sizeof *st->bufs)) {
    st->oom = 1;
    return;
  }
  st->bufs[st->nbuf++] = (bc_buf){var, extent, bytes};
}

/* Lane l (an int64 expression) of the vector e as a scalar expression, or NULL. */
static const ir_expr *lane_of(const ir_expr *e, const ir_expr *l) {
  if (!e || e->type.lanes <= 1) return e;
  const ir_expr *a = NULL, *b = NULL, *c = NULL;
  if (e->kind != IR_RAMP && e->kind != IR_BROADCAST && e->kind != IR_LOAD) {
    if (e->a && !(a = lane_of(e->a, l))) return NULL;
    if (e->b && !(b = lane_of(e->b, l))) return NULL;
    if (e->c && !(c = lane_of(e->c, l))) return NULL;
  }
  switch (e->kind) {
  case IR_RAMP: return ir_add(e->a, ir_mul(e->b, l));
  case IR_BROADCAST: return e->a;
  case IR_LOAD:
    return ir_load(tec_dtype_scalar(e->type), e->a, lane_of(e->b, l), e->c ? lane_of(e->c, l) : NULL);
  case IR_NOT: return ir_not(a);
  case IR_SELECT: return ir_select(a, b, c);
  case IR_CAST: return ir_cast(tec_dtype_scalar(e->type), a);
  case IR_CALL:
    if (e->v.i == IR_INTRIN_LIKELY && e->nargs == 1) return lane_of(e->args[0], l);
    return NULL;
  default: return ir_binary(e->kind, a, b);
  }
}

/* e inside the LETs around it that it needs (transitively), innermost last: a check reads
 * the same values as the access, without copying them into the check. */
static const ir_expr *in_lets(const bc_state *st, const ir_expr *e) {
  const ir_expr *r = e;
  for (int k = st->nlet - 1; k >= 0 && r; k--)
    if (ir_uses_var(r, st->lets[k].var)) r = ir_let(st->lets[k].var, st->lets[k].val, r);
  return r;
}

static void add_check(bc_state *st, const ir_stmt *s) {
  if (!s || tec_grow(st->ctx, (void **)&st->checks, &st->cap, st->n + 1, sizeof *st->checks)) {
    st->oom = 1;
    return;
  }
  st->checks[st->n++] = s;
}

/* The assert that index idx (scalar) of buffer b is inside it where pred (NULL: always). */
static const ir_stmt *in_bounds(bc_state *st, const ir_expr *idx, const ir_expr *pred,
                                const ir_expr *n, const char *msg) {
  if (!idx || !n || !tec_dtype_is_int(idx->type) || idx->type.lanes > 1) return NULL;
  const ir_expr *i = idx->type.bits != 64 ? ir_cast(TEC_I64, idx) : idx;
  const ir_expr *ok = ir_and(ir_ge(i, ir_int(st->ctx, 0)), ir_lt(i, n));
  if (pred) ok = ir_or(ir_not(pred), ok);
  return ir_assert(in_lets(st, arith_simplify(ok, NULL)), msg, in_lets(st, arith_simplify(i, NULL)),
                   arith_simplify(n, NULL));
}

/* The checks of one access: buffer var, index, predicate (NULL), value type, store or load. */
static void check_access(bc_state *st, const ir_expr *var, const ir_expr *index,
                         const ir_expr *pred, tec_dtype type, int store) {
  const bc_buf *b = find_buf(st, var);
  if (!b || !index) return;
  tec_ctx *ctx = st->ctx;
  int lanes = index->type.lanes > 1 ? index->type.lanes : 1;
  /* the index counts elements of type / lanes (a vector load of a scalar buffer counts its
   * scalars); a buffer shared at another width (storage_rewrite) holds fewer or more */
  int64_t unit = type_bytes(type) / lanes, n_scale = b->bytes;
  const ir_expr *n = b->extent;
  if (unit > 0 && unit != n_scale) n = ir_floordiv(ir_mul(n, ir_int(ctx, n_scale)), ir_int(ctx, unit));
  const char *bn = tec_ctx_fmt_escape(ctx, var->name ? var->name : "?");
  const char *msg = tec_ctx_printf(ctx, "%s: '%s' is %s at flat index %%lld, outside its %%lld "
                                        "elements (tec_lower_options.check_bounds)",
                                   tec_ctx_fmt_escape(ctx, st->f->name), bn,
                                   store ? "stored" : "loaded");
  if (!msg) {
    st->oom = 1;
    return;
  }
  if (lanes == 1) {
    add_check(st, in_bounds(st, index, pred, n, msg));
    return;
  }
  if (index->kind == IR_RAMP && !pred) { /* an arithmetic sequence: its two ends */
    add_check(st, in_bounds(st, index->a, NULL, n, msg));
    add_check(st, in_bounds(st, lane_of(index, ir_int(ctx, lanes - 1)), NULL, n, msg));
    return;
  }
  const ir_expr *l = ir_var(ctx, "lane", TEC_I64, IR_VAR_INDEX);
  const ir_expr *il = lane_of(index, l), *pl = pred ? lane_of(pred, l) : NULL;
  if (!il || (pred && !pl)) return; /* not splittable into lanes: left unchecked */
  const ir_stmt *a = in_bounds(st, il, pl, n, msg);
  if (a) add_check(st, ir_for(l, ir_int(ctx, 0), ir_int(ctx, lanes), IR_FOR_SERIAL, a));
}

/* Collects the checks of every access in e (post-order: an index's own loads first). */
static void collect(bc_state *st, const ir_expr *e) {
  if (!e || st->oom) return;
  if (e->kind == IR_CALL && e->v.i == IR_INTRIN_PREFETCH) return;
  if (e->kind == IR_CALL && e->v.i == IR_INTRIN_EXTERN) return; /* addresses: checked by asserts */
  if (e->kind == IR_LET) {
    collect(st, e->a);
    if (tec_grow(st->ctx, (void **)&st->lets, &st->caplet, st->nlet + 1, sizeof *st->lets)) {
      st->oom = 1;
      return;
    }
    st->lets[st->nlet++] = (struct bc_let){e->var, e->a};
    collect(st, e->b);
    st->nlet--;
    return;
  }
  collect(st, e->a);
  collect(st, e->b);
  collect(st, e->c);
  for (int k = 0; k < e->nargs; k++) collect(st, e->args[k]);
  if (e->kind == IR_LOAD) check_access(st, e->a, e->b, e->c, e->type, 0);
}

/* s with the checks of its own expressions in front */
static const ir_stmt *with_checks(bc_state *st, const ir_stmt *s, int n0) {
  if (st->n == n0 || !s) return s;
  const ir_stmt *pre = ir_seq(st->ctx, st->n - n0, st->checks + n0);
  st->n = n0;
  return ir_seq2(pre, s);
}

static const ir_stmt *bc_stmt(ir_mutator *m, const ir_stmt *s) {
  bc_state *st = m->user;
  int n0 = st->n;
  switch (s->kind) {
  case IR_S_ATTR:
  case IR_S_ASSERT:
  case IR_S_SEQ:
    return ir_mutate_stmt_default(m, s);
  case IR_S_ALLOCATE: {
    collect(st, s->a);
    const ir_stmt *pre = st->n > n0 ? ir_seq(st->ctx, st->n - n0, st->checks + n0) : NULL;
    st->n = n0;
    push_buf(st, s->var, s->a->type.bits != 64 ? ir_cast(TEC_I64, s->a) : s->a, type_bytes(s->type));
    const ir_stmt *body = ir_mutate_stmt(m, s->body);
    st->nbuf--;
    const ir_stmt *r = body == s->body ? s : ir_allocate(s->var, s->type, s->a, body);
    return pre ? ir_seq2(pre, r) : r;
  }
  case IR_S_STORE:
    collect(st, s->a);
    collect(st, s->b);
    collect(st, s->c);
    check_access(st, s->var, s->a, s->c, s->b->type, 1);
    return with_checks(st, s, n0);
  default: {
    collect(st, s->a);
    collect(st, s->b);
    collect(st, s->c);
    const ir_stmt **pre = NULL;
    int npre = st->n - n0;
    if (npre) { /* the children's checks go inside them: keep these apart */
      pre = tec_ctx_alloc(st->ctx, sizeof *pre * (size_t)npre);
      if (!pre) {
        st->oom = 1;
        return s;
      }
      memcpy(pre, st->checks + n0, sizeof *pre * (size_t)npre);
      st->n = n0;
    }
    const ir_stmt *r = ir_mutate_stmt_default(m, s);
    return npre ? ir_seq2(ir_seq(st->ctx, npre, pre), r) : r;
  }
  }
}

static int wanted(const lower_func *f) {
  const char *e = getenv("TEC_CHECK_BOUNDS");
  return (f->options && f->options->check_bounds) || (e && strcmp(e, "1") == 0);
}

const ir_stmt *lower_bound_checkers(const lower_func *f, const ir_stmt *s) {
  if (!s || !wanted(f)) return s;
  tec_ctx *ctx = f->ctx;
  bc_state st = {.f = f, .ctx = ctx};
  for (int i = 0; i < f->nargs; i++) {
    const te_tensor *t = f->args[i];
    const ir_expr *n = ir_int(ctx, 1);
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *e = te_buffer_shape(t)[d];
      n = ir_mul(n, e->type.bits != 64 ? ir_cast(TEC_I64, e) : e);
    }
    push_buf(&st, f->arg_bufs[i], n, type_bytes(t->type));
  }
  ir_mutator m;
  ir_mutator_init(&m, ctx, &st);
  for (int k = 0; k < IR_STMT_KIND_COUNT; k++) m.stmt[k] = bc_stmt;
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  if (st.oom) {
    tec_ctx_set_error(ctx, "tec_build '%s': out of memory adding the bound checks", f->name);
    return NULL;
  }
  return r;
}
