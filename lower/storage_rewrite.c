/* storage_rewrite.c — lower_storage_rewrite: allocate temporaries once, at the outermost legal
 * point, and let buffers whose lifetimes do not overlap share memory.
 *
 *   for (i.outer, 0, 16) {                    allocate T[float32 * 64] {
 *     allocate T[float32 * 64] {               for (i.outer, 0, 16) {
 *       for (j, 0, 64) { T[j] = ... }    ->      for (j, 0, 64) { T[j] = ... }
 *       for (j, 0, 64) { B[...] = T[j] }          for (j, 0, 64) { B[...] = T[j] }
 *     }                                         }
 *   }                                         }
 *
 *   allocate T[float32 * 64] { ...T... }      allocate T[float32 * 128] {
 *   allocate U[float32 * 128] { ...U... } ->    ...T...
 *                                               // T now holds U
 *                                               ...U renamed T...
 *
 * Hoisting: an ALLOCATE moves up through serial loops and LET statements whose variable its
 * size does not use, through PRODUCE/ATTR/ALLOCATE, through IFs when its size is a constant,
 * and never out of a PARALLEL loop (each iteration may run on another thread and needs its own
 * buffer). The contents of a fresh allocation are undefined, so one allocation serving every
 * iteration is the same program. A size that might be negative where the loop never ran is
 * clamped with max(size, 0).
 *
 * Reuse: in a sequence, allocations that come out of different items are never live at once;
 * two of the same element type share one buffer (the later one is renamed, the size is the
 * max; the item that starts using it is wrapped in `attr buffer_reuse`, printed
 * `// T now holds U`, so a reader sees which tensor the buffer holds from there on). Two
 * ALLOCATEs of the same buffer variable (copies made by loop partition or unroll) always
 * merge.
 */
#include <stdlib.h>
#include <string.h>
#include "arith/arith.h"
#include "lower/passes.h"

typedef struct sr_alloc {
  const ir_expr *var;
  tec_dtype type;
  const ir_expr *size;
  int item; /* the last sequence item that used it (during merging) */
} sr_alloc;

typedef struct sr_list {
  int n, cap;
  sr_alloc *a;
  int oom;
} sr_list;

static void list_push(sr_list *l, sr_alloc a) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    sr_alloc *p = realloc(l->a, sizeof *p * (size_t)cap);
    if (!p) {
      l->oom = 1;
      return;
    }
    l->a = p;
    l->cap = cap;
  }
  l->a[l->n++] = a;
}

static const ir_expr *max_size(const ir_expr *a, const ir_expr *b) {
  if (ir_expr_equal(a, b)) return a;
  return arith_simplify(ir_max(a, b), NULL);
}

/* Adds a to l, merged with an allocation of the same buffer variable already there (copies of
 * one ALLOCATE, e.g. in the branches loop partition makes of a parallel loop's body). */
static void list_add(sr_list *l, sr_alloc a) {
  for (int i = 0; i < l->n; i++)
    if (l->a[i].var == a.var) {
      l->a[i].size = max_size(l->a[i].size, a.size);
      return;
    }
  list_push(l, a);
}

/* Wraps s in the allocations of l (from index `from`). */
static const ir_stmt *materialize(const ir_stmt *s, const sr_list *l, int from) {
  for (int i = l->n - 1; i >= from && s; i--) s = ir_allocate(l->a[i].var, l->a[i].type, l->a[i].size, s);
  return s;
}

/* Moves the allocations of sub that may leave a region binding `var` (NULL: none) into out;
 * wraps s in the others. const_only: only constant sizes leave (IF branches). */
static const ir_stmt *lift(const ir_stmt *s, sr_list *sub, sr_list *out, const ir_expr *var,
                           int blocked, int const_only) {
  sr_list keep = {0, 0, NULL, 0};
  for (int i = 0; i < sub->n; i++) {
    sr_alloc a = sub->a[i];
    int64_t c;
    int is_const = ir_is_const_int(a.size, &c);
    int go = !blocked && !(var && ir_uses_var(a.size, var)) && (!const_only || is_const);
    if (go && !is_const && !arith_prove(ir_ge(a.size, ir_int_t(a.size->ctx, a.size->type, 0)), NULL))
      a.size = ir_max(a.size, ir_int_t(a.size->ctx, a.size->type, 0));
    list_add(go ? out : &keep, a);
  }
  s = materialize(s, &keep, 0);
  out->oom |= keep.oom;
  free(keep.a);
  return s;
}

/* A renaming of one buffer variable (STORE/ALLOCATE var slots and expressions). */
typedef struct sr_rename {
  const ir_expr *from, *to;
} sr_rename;

static const ir_expr *rn_var(ir_mutator *m, const ir_expr *e) {
  sr_rename *r = m->user;
  return e == r->from ? r->to : e;
}
static const ir_stmt *rn_store(ir_mutator *m, const ir_stmt *s) {
  sr_rename *r = m->user;
  const ir_stmt *n = ir_mutate_stmt_default(m, s);
  if (!n || n->var != r->from) return n;
  return ir_store(r->to, n->a, n->b, n->c);
}

static const ir_stmt *rename_buffer(const ir_stmt *s, const ir_expr *from, const ir_expr *to) {
  sr_rename r = {from, to};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &r);
  m.expr[IR_VAR] = rn_var;
  m.stmt[IR_S_STORE] = rn_store;
  return ir_mutate_stmt(&m, s);
}

static const ir_stmt *sr_stmt(const ir_stmt *s, sr_list *out);

static const ir_stmt *sr_seq(const ir_stmt *s, sr_list *out) {
  const ir_stmt **items = tec_ctx_alloc(s->ctx, sizeof *items * (size_t)s->n);
  if (!items) return s;
  sr_list slots = {0, 0, NULL, 0};
  for (int i = 0; i < s->n; i++) {
    sr_list sub = {0, 0, NULL, 0};
    items[i] = sr_stmt(s->seq[i], &sub);
    for (int k = 0; k < sub.n; k++) {
      sr_alloc a = sub.a[k];
      int found = -1;
      for (int j = 0; j < slots.n && found < 0; j++)
        if (slots.a[j].var == a.var) found = j;
      for (int j = 0; j < slots.n && found < 0; j++)
        if (slots.a[j].item < i && tec_dtype_eq(slots.a[j].type, a.type)) {
          int taken = 0; /* another allocation of this item already took slot j */
          for (int q = 0; q < k; q++) taken |= sub.a[q].var == slots.a[j].var;
          if (taken || !items[i]) continue;
          items[i] = rename_buffer(items[i], a.var, slots.a[j].var);
          if (items[i]) /* printed `// T now holds U` (ir.h) */
            items[i] = ir_attr_buffer_reuse(slots.a[j].var, a.var, items[i]);
          found = j;
        }
      if (found < 0) {
        a.item = i;
        list_push(&slots, a);
      } else {
        slots.a[found].size = max_size(slots.a[found].size, a.size);
        slots.a[found].item = i;
        sub.a[k].var = slots.a[found].var; /* for the `taken` test of later ones */
      }
    }
    out->oom |= sub.oom;
    free(sub.a);
  }
  for (int j = 0; j < slots.n; j++) list_add(out, slots.a[j]);
  out->oom |= slots.oom;
  free(slots.a);
  return ir_seq(s->ctx, s->n, items);
}

static const ir_stmt *sr_stmt(const ir_stmt *s, sr_list *out) {
  if (!s) return NULL;
  switch (s->kind) {
  case IR_S_ALLOCATE: {
    const ir_stmt *body = sr_stmt(s->body, out);
    list_add(out, (sr_alloc){s->var, s->type, s->a, 0});
    return body ? body : ir_evaluate(ir_int(s->ctx, 0));
  }
  case IR_S_FOR: case IR_S_LET_STMT: {
    sr_list sub = {0, 0, NULL, 0};
    const ir_stmt *body = sr_stmt(s->body, &sub);
    body = lift(body, &sub, out, s->var, s->kind == IR_S_FOR && s->for_kind == IR_FOR_PARALLEL, 0);
    out->oom |= sub.oom;
    free(sub.a);
    return ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL);
  }
  case IR_S_IF: {
    sr_list st = {0, 0, NULL, 0}, se = {0, 0, NULL, 0};
    const ir_stmt *t = sr_stmt(s->body, &st), *e = sr_stmt(s->else_body, &se);
    t = lift(t, &st, out, NULL, 0, 1);
    e = lift(e, &se, out, NULL, 0, 1);
    out->oom |= st.oom | se.oom;
    free(st.a);
    free(se.a);
    return ir_stmt_with(s, s->a, s->b, s->c, t, e, NULL, NULL);
  }
  case IR_S_ATTR: case IR_S_PRODUCE: {
    const ir_stmt *body = sr_stmt(s->body, out);
    return ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL);
  }
  case IR_S_SEQ: return sr_seq(s, out);
  default: return s;
  }
}

/* ALLOCATE found: statements only, no expression is walked */
static void no_expr(ir_visitor *v, const ir_expr *e) { (void)v, (void)e; }
static void found_alloc(ir_visitor *v, const ir_stmt *s) { (void)s, *(int *)v->user = 1; }
static int has_allocate(const ir_stmt *s) {
  int found = 0;
  ir_visitor v;
  ir_visitor_init(&v, &found);
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) v.expr[k] = no_expr;
  v.stmt[IR_S_ALLOCATE] = found_alloc;
  ir_visit_stmt(&v, s);
  return found;
}

const ir_stmt *lower_storage_rewrite(const ir_stmt *s) {
  if (!s) return NULL;
  /* nothing to move (a deep inline chain: one store whose text is long to print twice) */
  if (!has_allocate(s)) return s;
  unsigned long errors_before = tec_ctx_error_count(s->ctx);
  sr_list top = {0, 0, NULL, 0};
  const ir_stmt *r = sr_stmt(s, &top);
  if (!top.oom && r) r = materialize(r, &top, 0);
  free(top.a);
  /* out of memory half way (malloc or the arena): the input is still a correct program */
  if (top.oom) /* the program is still right without the reuse, but the call fails (te.h) */
    tec_ctx_set_error_kind(s->ctx, TEC_ERR_OOM, "out of memory (planning storage reuse)");
  if (top.oom || !r || tec_ctx_error_count(s->ctx) != errors_before) return s;
  /* allocations are taken out and put back: compare the text to return s when nothing moved */
  const char *a = ir_stmt_str(r), *b = ir_stmt_str(s);
  if (!a || !b || strcmp(a, b) == 0) return s;
  return r;
}
