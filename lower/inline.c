/* inline.c — compute_inline: substitute producers' bodies into their readers.
 *
 *   B[i] = A[i] * 2  (inlined);  C[i] = B[i] + 1   ->   C[i] = A[i] * 2 + 1
 * Works in stage order, so a chain of inlined stages collapses fully. Only the lowering's
 * copy of each body changes.
 *
 * A producer read more than once at the same element is computed once: the reads become a
 * LET variable bound to its body at the top of the reader's expression,
 *   C[i] = B[i] * B[i] + B[i]   ->   C[i] = let B = A[i] * 2 in B * B + B
 * A reader's expression inlines its producers recursively with one table of the (producer,
 * element) pairs met anywhere in it, so an element read by several copies of a producer's
 * body (two layers both reading P[i*i % n]) is bound once too, and an index grown past
 * INL_INDEX_MAX nodes (a chain that squares its index) is bound to a LET of its own: a chain
 * of N stages lowers to O(N) nodes per distinct element read instead of a tree of 2^N copies
 * (Halide's CSE of inlined Funcs). Bindings are found through hash tables, so a chain of
 * thousands of them lowers in time linear in their number. A read inside a select's arm is
 * not hoisted out of it (the arm's condition may be what keeps its loads in bounds), nor one
 * inside another read's indices (bound inference reads indices, not LET values): those are
 * substituted as copies. */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

/* One binding of the expression being rewritten: a distinct read P[args] of an inlined
 * producer (t set), or an index expression bound once (t NULL, below). */
typedef struct inl_read {
  const te_tensor *t;
  const ir_expr *const *args;
  const ir_expr *value; /* P's body at args, its own reads inlined; or the index */
  const ir_expr *var;   /* the LET variable that stands for it */
  int uses;
  int pinned;           /* read inside a select arm or an index: substituted, never hoisted */
  int keep;             /* an index too large to copy: always a LET */
  int owner;            /* the binding whose value alone uses it (its LET goes there), or
                         * -1: the expression itself or several (its LET goes around e) */
  uint64_t key;         /* hash of (t, args) or of the index: its slot in inl.by_key */
} inl_read;

/* An open-addressing table of binding indices (slot: index + 1, 0 empty; linear probing). */
typedef struct inl_table {
  int *slot;
  int cap; /* a power of two, at least twice the bindings */
} inl_table;

typedef struct inl {
  lower_state *ls;
  int n, cap;
  inl_read *r;
  int pin_depth; /* > 0 inside a select arm or a read's indices */
  int cur;       /* the binding whose value is being made, or -1 */
  int ndone, capdone;
  int *done;     /* bindings in the order their values were made (a value uses only earlier
                  * ones): a binding is added before its value is made, so its index is not
                  * that order */
  inl_table by_key; /* the bindings by what they stand for: a read (P, args), an index */
  inl_table by_var; /* the bindings by their LET variable (hoistable asks) */
} inl;

/* ---- the tables: a lookup costs one hash and the equal keys, not a scan of every binding
 * (a 100-layer chain makes about 5000 bindings) ---- */

static uint64_t mix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

/* A hash of e's first *budget nodes (preorder) that equal expressions (ir_expr_equal:
 * variables by pointer) share. */
static uint64_t expr_hash(const ir_expr *e, uint64_t h, int *budget) {
  if (!e) return mix(h, 1);
  if (--*budget < 0) return h;
  h = mix(h, (uint64_t)e->kind << 32 | (uint64_t)e->type.code << 24 |
                 (uint64_t)e->type.bits << 16 | e->type.lanes);
  switch (e->kind) {
  case IR_INT_IMM: return mix(h, (uint64_t)e->v.i);
  case IR_FLOAT_IMM: {
    double f = e->v.f == 0 ? 0 : e->v.f; /* -0.0 == 0.0 */
    uint64_t bits;
    memcpy(&bits, &f, sizeof bits);
    return mix(h, bits);
  }
  case IR_VAR: return mix(h, (uint64_t)(uintptr_t)e);
  default: break;
  }
  h = mix(mix(mix(h, (uint64_t)(uintptr_t)e->tensor), (uint64_t)(uintptr_t)e->var),
          (uint64_t)e->nargs);
  const ir_expr *kids[3] = {e->a, e->b, e->c};
  for (int k = 0; k < 3; k++) h = expr_hash(kids[k], h, budget);
  for (int k = 0; k < e->nargs; k++) h = expr_hash(e->args[k], h, budget);
  return h;
}

/* The key of a read of t at args (t NULL: of the index args[0]). */
static uint64_t read_key(const te_tensor *t, int n, const ir_expr *const *args) {
  uint64_t h = mix(0, (uint64_t)(uintptr_t)t);
  for (int d = 0; d < n; d++) {
    int budget = 64;
    h = expr_hash(args[d], h, &budget);
  }
  return h;
}

static uint64_t var_key(const ir_expr *v) { return mix(0, (uint64_t)(uintptr_t)v); }

static void table_put(inl_table *tb, uint64_t key, int i) {
  size_t mask = (size_t)tb->cap - 1, k = (size_t)key & mask;
  while (tb->slot[k]) k = (k + 1) & mask;
  tb->slot[k] = i + 1;
}

/* Room for one more binding in both tables (rebuilt twice as large when half full). */
static int tables_room(inl *in) {
  if (2 * (in->n + 1) <= in->by_key.cap) return 0;
  int cap = in->by_key.cap ? 2 * in->by_key.cap : 64;
  int *a = tec_ctx_alloc(in->ls->ctx, 2 * sizeof *a * (size_t)cap);
  if (!a) return -1;
  memset(a, 0, 2 * sizeof *a * (size_t)cap);
  in->by_key = (inl_table){a, cap}, in->by_var = (inl_table){a + cap, cap};
  for (int i = 0; i < in->n; i++) {
    table_put(&in->by_key, in->r[i].key, i);
    if (in->r[i].var) table_put(&in->by_var, var_key(in->r[i].var), i);
  }
  return 0;
}

/* The binding of LET variable v, or -1. */
static int binding_of_var(const inl *in, const ir_expr *v) {
  if (!in->by_var.cap) return -1;
  size_t mask = (size_t)in->by_var.cap - 1;
  for (size_t k = (size_t)var_key(v) & mask; in->by_var.slot[k]; k = (k + 1) & mask)
    if (in->r[in->by_var.slot[k] - 1].var == v) return in->by_var.slot[k] - 1;
  return -1;
}

/* Binding i's value is made. */
static int made(inl *in, int i) {
  if (tec_grow(in->ls->ctx, (void **)&in->done, &in->capdone, in->ndone + 1, sizeof *in->done))
    return -1;
  in->done[in->ndone++] = i;
  return 0;
}

/* An index larger than this (in tree nodes) is bound to a LET rather than copied into each
 * read: a chain that squares its index doubles the tree per layer. */
enum { INL_INDEX_MAX = 256 };

static int stage_index(const sch_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) return i;
  return -1;
}

static int same_args(int n, const ir_expr *const *a, const ir_expr *const *b) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i] && !ir_expr_equal(a[i], b[i])) return 0;
  return 1;
}

/* The tree size of e, counted up to limit (then limit + 1). */
static int tree_size(const ir_expr *e, int limit) {
  if (!e) return 0;
  int n = 1;
  const ir_expr *kids[3] = {e->a, e->b, e->c};
  for (int k = 0; k < 3 && n <= limit; k++) n += tree_size(kids[k], limit - n);
  for (int k = 0; k < e->nargs && n <= limit; k++) n += tree_size(e->args[k], limit - n);
  return n;
}

/* 1 when an index can be computed ahead of its read: integer arithmetic of loop, size and
 * reduce variables and of index bindings, division only by nonzero constants (no load, no
 * inlined value, nothing that can trap). */
static int hoistable(const inl *in, const ir_expr *e) {
  if (!e) return 1;
  switch (e->kind) {
  case IR_INT_IMM: return 1;
  case IR_VAR: {
    if (e->v.i != IR_VAR_LET) return e->v.i != IR_VAR_BUFFER;
    int i = binding_of_var(in, e);
    return i >= 0 && !in->r[i].t;
  }
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX: case IR_CAST:
    return tec_dtype_is_int(e->type) && hoistable(in, e->a) && hoistable(in, e->b);
  case IR_DIV: case IR_MOD: case IR_FLOORDIV: case IR_FLOORMOD: {
    int64_t d;
    return tec_dtype_is_int(e->type) && ir_is_const_int(e->b, &d) && d != 0 &&
           hoistable(in, e->a);
  }
  default: return 0;
  }
}

/* A new binding of a read of t at args, or (t NULL) of the index args[0], in the key table
 * (its value and variable set by the caller, then set_var): its index, or -1. */
static int add_binding(inl *in, const te_tensor *t, const ir_expr *const *args) {
  if (tec_grow(in->ls->ctx, (void **)&in->r, &in->cap, in->n + 1, sizeof *in->r) ||
      tables_room(in))
    return -1;
  uint64_t key = read_key(t, t ? t->ndim : 1, args);
  in->r[in->n] = (inl_read){t, t ? args : NULL, NULL, NULL, 1, in->pin_depth > 0, 0, in->cur,
                            key};
  table_put(&in->by_key, key, in->n);
  return in->n++;
}

/* Binding b's variable, in the variable table. */
static void set_var(inl *in, int b, const ir_expr *var) {
  in->r[b].var = var;
  table_put(&in->by_var, var_key(var), b);
}

/* The binding made for a read of t at args (t NULL: for the index args[0]), or -1. */
static int find_binding(const inl *in, const te_tensor *t, const ir_expr *const *args) {
  if (!in->by_key.cap) return -1;
  uint64_t key = read_key(t, t ? t->ndim : 1, args);
  size_t mask = (size_t)in->by_key.cap - 1;
  for (size_t k = (size_t)key & mask; in->by_key.slot[k]; k = (k + 1) & mask) {
    const inl_read *b = &in->r[in->by_key.slot[k] - 1];
    if (b->key != key || b->t != t || !b->var) continue;
    if (t ? same_args(t->ndim, b->args, args) : ir_expr_equal(b->value, args[0]))
      return in->by_key.slot[k] - 1;
  }
  return -1;
}

/* One more use of binding i, from the value being made now. */
static const ir_expr *use(inl *in, int i) {
  in->r[i].uses++;
  in->r[i].pinned |= in->pin_depth > 0;
  if (in->r[i].owner != in->cur) in->r[i].owner = -1;
  return in->r[i].var;
}

/* A read's index: itself, or (too large, hoistable and not under a select arm) the variable
 * of a LET binding it, one per distinct index. */
static const ir_expr *bind_index(inl *in, const ir_expr *x, const te_tensor *p, int d) {
  if (in->pin_depth > 0 || tree_size(x, INL_INDEX_MAX) <= INL_INDEX_MAX || !hoistable(in, x))
    return x;
  int i = find_binding(in, NULL, &x);
  if (i >= 0) return use(in, i);
  int b = add_binding(in, NULL, &x);
  const char *name = b < 0 ? NULL : tec_ctx_printf(in->ls->ctx, "%s.i%d", p->name, d);
  const ir_expr *var = name ? ir_var(in->ls->ctx, name, x->type, IR_VAR_LET) : NULL;
  if (!var) return NULL;
  in->r[b].value = x, in->r[b].keep = 1;
  set_var(in, b, var);
  return made(in, b) ? NULL : var;
}

static const ir_expr *inline_read(ir_mutator *m, const ir_expr *e) {
  inl *in = m->user;
  lower_state *ls = in->ls;
  in->pin_depth++; /* the indices */
  e = ir_mutate_expr_default(m, e);
  in->pin_depth--;
  if (!e || e->kind != IR_READ) return e;
  const te_tensor *p = e->tensor;
  const ir_expr **args = tec_ctx_alloc(ls->ctx, sizeof *args * (size_t)(e->nargs + 1));
  if (!args) return NULL;
  int changed = 0;
  for (int d = 0; d < e->nargs; d++) {
    args[d] = bind_index(in, e->args[d], p, d);
    if (!args[d]) return NULL;
    changed |= args[d] != e->args[d];
  }
  if (changed && !(e = ir_read(ls->ctx, p, e->nargs, args))) return NULL;
  int k = stage_index(ls->s, p);
  if (k < 0 || ls->attach[k] != SCH_ATTACH_INLINE) return e;
  int i = find_binding(in, p, e->args);
  if (i >= 0) return use(in, i);
  /* P's own body at these indices, its reads inlined into this same expression: a value read
   * by several copies is bound once for all of them */
  int b = add_binding(in, p, e->args), saved = in->cur;
  if (b < 0) return NULL;
  in->cur = b;
  const ir_expr *value = ir_substitute(ls->s->stages[k]->body, p->ndim, p->axis, e->args);
  value = ir_mutate_expr(m, value);
  in->cur = saved;
  const ir_expr *var = value ? ir_var(ls->ctx, p->name, value->type, IR_VAR_LET) : NULL;
  if (!var) return NULL;
  in->r[b].value = value;
  set_var(in, b, var);
  return made(in, b) ? NULL : var;
}

/* a select's arms are evaluated only under its condition */
static const ir_expr *inline_select(ir_mutator *m, const ir_expr *e) {
  inl *in = m->user;
  const ir_expr *c = ir_mutate_expr(m, e->a);
  in->pin_depth++;
  const ir_expr *t = ir_mutate_expr(m, e->b), *f = ir_mutate_expr(m, e->c);
  in->pin_depth--;
  if (!c || !t || !f) return NULL;
  return ir_expr_with(e, c, t, f, e->args);
}

static int is_let(const inl_read *b) { return b->keep || (b->uses > 1 && !b->pinned); }

/* x inside the LETs of the bindings owned by `owner` (-1: e's), the first made outermost.
 * last[owner + 1] is the position in the made order of its last binding, prev[k] that of
 * the one before position k's with the same owner (-1 ends both): a binding's own bindings
 * are all made before it. */
static const ir_expr *wrap_owned(const inl *in, const int *last, const int *prev, int owner,
                                 const ir_expr *x) {
  for (int k = last[owner + 1]; k >= 0 && x; k = prev[k]) {
    const inl_read *b = &in->r[in->done[k]];
    if (is_let(b)) x = ir_let(b->var, b->value, x);
  }
  return x;
}

/* e with the inlined reads in it: values read once or pinned substituted, the others (and
 * large indices) bound by LETs, each around the one value that uses it (B2 = let B1 = (let
 * B0 = .. in ..) in ..) or, used from several places, around e. A value uses only bindings
 * made before it. NULL when out of memory. */
static const ir_expr *inline_expr(lower_state *ls, const ir_expr *e) {
  if (!e) return NULL;
  inl in = {.ls = ls, .cur = -1};
  ir_mutator m;
  ir_mutator_init(&m, ls->ctx, &in);
  m.expr[IR_READ] = inline_read;
  m.expr[IR_SELECT] = inline_select;
  const ir_expr *r = ir_mutate_expr(&m, e);
  if (!r) return NULL;
  if (!in.n) return r;
  /* in creation order: each value gets the copies made before it, then its own LETs (made
   * before it too); the copies then go into e, and the shared LETs around it */
  const ir_expr **cv = tec_ctx_alloc(ls->ctx, sizeof *cv * (size_t)(2 * in.n));
  int *last = tec_ctx_alloc(ls->ctx, sizeof *last * (size_t)(in.n + 1 + in.ndone));
  if (!cv || !last) return NULL;
  const ir_expr **cx = cv + in.n;
  int *prev = last + in.n + 1, nc = 0;
  for (int i = 0; i <= in.n; i++) last[i] = -1;
  for (int k = 0; k < in.ndone; k++) {
    int o = in.r[in.done[k]].owner + 1;
    prev[k] = last[o], last[o] = k;
  }
  for (int k = 0; k < in.ndone; k++) {
    int i = in.done[k];
    inl_read *b = &in.r[i];
    if (nc && !(b->value = ir_substitute(b->value, nc, cv, cx))) return NULL;
    if (!(b->value = wrap_owned(&in, last, prev, i, b->value))) return NULL;
    if (!is_let(b)) cv[nc] = b->var, cx[nc++] = b->value;
  }
  if (nc && !(r = ir_substitute(r, nc, cv, cx))) return NULL;
  return wrap_owned(&in, last, prev, -1, r);
}

/* passes.h. A body with its inlined reads: a reduction keeps its place at the top, its source
 * and condition rewritten each on its own. */
const ir_expr *lower_inline_body(lower_state *ls, const ir_expr *b) {
  if (b->kind != IR_REDUCE) return inline_expr(ls, b);
  const ir_expr *src = inline_expr(ls, b->a);
  const ir_expr *cond = b->b ? inline_expr(ls, b->b) : NULL;
  const ir_expr *init = b->c ? inline_expr(ls, b->c) : NULL;
  if (!src || (b->b && !cond) || (b->c && !init)) return NULL;
  if (src == b->a && cond == b->b && init == b->c) return b;
  return ir_reduce_set_init(ir_reduce_like(b, src, b->nargs, b->args, cond), init);
}

int lower_inline(lower_state *ls) {
  const sch_schedule *s = ls->s;
  ls->body = tec_ctx_alloc(ls->ctx, sizeof *ls->body * (size_t)s->nstage);
  if (!ls->body) return -1;
  for (int i = 0; i < s->nstage; i++) {
    sch_stage *st = s->stages[i];
    if (!st->body) continue;
    /* an inlined stage's own body is read only for what it reads (precompute.c): its readers
     * inline it from the schedule's body, each read once per distinct element */
    if (ls->attach[i] == SCH_ATTACH_INLINE) {
      ls->body[i] = st->body;
      continue;
    }
    ls->body[i] = lower_inline_body(ls, st->body);
    if (!ls->body[i]) return -1;
    /* (an inlined stage passed as an argument is refused by legality.c) */
  }
  return 0;
}
