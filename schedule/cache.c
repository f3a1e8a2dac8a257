/* cache.c — cache_read and cache_write: new stages that copy a tensor.
 *
 *   cache_read(B, "global", {C}):  B.global[k, j] = B[k, j];  C reads B.global instead of B
 *     (then split/reorder B.global's loops to pack it: the weights' layout change lives here)
 *   cache_write(C, "local"):       C.local = <C's body>;  C[i, j] = C.local[i, j]
 *     (the reduction accumulates in C.local, which compute_at places inside C's tile)
 * The te tensors are never changed: the schedule keeps its own view of every stage's body. */
#include <string.h>
#include "tec/schedule.h"
#include "arith/arith.h"
#include "ir/internal.h"
#include "schedule/internal.h"
#include "schedule/relation.h"

static int check_scope(tec_ctx *ctx, const char *who, const char *scope) {
  if (scope && (strcmp(scope, "global") == 0 || strcmp(scope, "local") == 0)) return 0;
  return tec_ctx_set_error(ctx, "%s: scope '%s' is unknown; use \"global\" or \"local\"", who,
                           scope ? scope : "(null)");
}

const char *sch_cache_name(sch_schedule *s, const char *base, const char *scope) {
  const char *name = tec_ctx_printf(s->ctx, "%s.%s", base, scope);
  for (int k = 1;; k++) {
    if (!name) return NULL; /* out of memory (recorded) */
    int clash = 0;
    for (int i = 0; i < s->nstage; i++) clash |= strcmp(s->stages[i]->tensor->name, name) == 0;
    if (!clash) return name;
    name = tec_ctx_printf(s->ctx, "%s.%s%d", base, scope, k);
  }
}

/* Inserts st at position pos of the stage list. */
static int insert_stage(sch_schedule *s, sch_stage *st, int pos) {
  if (tec_grow(s->ctx, (void **)&s->stages, &s->cap_stage, s->nstage + 1, sizeof *s->stages))
    return -1;
  memmove(s->stages + pos + 1, s->stages + pos, sizeof *s->stages * (size_t)(s->nstage - pos));
  s->stages[pos] = st;
  s->nstage++;
  return 0;
}

static int stage_index(sch_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) return i;
  return -1;
}

/* ---- replacing reads ---- */
typedef struct swap {
  const te_tensor *from, *to;
} swap;

static const ir_expr *swap_read(ir_mutator *m, const ir_expr *e) {
  swap *sw = m->user;
  e = ir_mutate_expr_default(m, e);
  if (e && e->kind == IR_READ && e->tensor == sw->from)
    return ir_read(e->ctx, sw->to, e->nargs, e->args);
  return e;
}

static int reread(sch_stage *st, const te_tensor *from, const te_tensor *to) {
  tec_ctx *ctx = st->sched->ctx;
  swap sw = {from, to};
  ir_mutator m;
  ir_mutator_init(&m, ctx, &sw);
  m.expr[IR_READ] = swap_read;
  const ir_expr *b = ir_mutate_expr(&m, st->body);
  if (!b) return -1;
  st->body = b;
  const te_tensor **in = tec_ctx_alloc(ctx, sizeof *in * (size_t)(st->ninputs ? st->ninputs : 1));
  if (!in) return -1;
  int n = 0;
  for (int i = 0; i < st->ninputs; i++) {
    const te_tensor *x = st->inputs[i] == from ? to : st->inputs[i];
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= in[j] == x;
    if (!dup) in[n++] = x;
  }
  st->inputs = in;
  st->ninputs = n;
  return 0;
}

static const ir_expr *copy_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const te_tensor *src = user;
  return ir_read(ctx, src, src->ndim, i);
}

te_tensor *sch_cache_read(sch_schedule *s, te_tensor *t, const char *scope, int nreaders,
                          te_tensor *const *readers) {
  if (!s) return NULL;
  tec_ctx *ctx = s->ctx;
  if (!t) {
    if (!tec_ctx_error(ctx)) tec_ctx_set_error(ctx, "cache_read: the tensor is NULL");
    return NULL;
  }
  if (check_scope(ctx, "cache_read", scope)) return NULL;
  if (t->nout > 1) {
    tec_ctx_set_error(ctx, "cache_read: '%s' is an output of a multi-output op (%d outputs); "
                           "cache_read of such an op is not supported", t->name, t->nout);
    return NULL;
  }
  if (sch_check_extern_reader(s, "cache_read", t, readers ? nreaders : -1, readers)) return NULL;
  if ((!t->scan && sch_scan_refuse("cache_read", s, t)) ||
      sch_scan_check_init_reader("cache_read", s, t, readers ? nreaders : -1, readers))
    return NULL;
  for (int i = 0; i < s->nstage; i++) {
    const te_tensor *r = s->stages[i]->tensor;
    for (int k = 0; r->nout > 1 && k < s->stages[i]->ninputs; k++)
      if (s->stages[i]->inputs[k] == t) {
        tec_ctx_set_error(ctx, "cache_read: '%s' is read by '%s', the stage of a multi-output "
                               "op; cache_read for such a reader is not supported",
                          t->name, r->name);
        return NULL;
      }
  }
  int ti = stage_index(s, t);
  if (ti < 0) {
    tec_ctx_set_error(ctx, "cache_read: tensor '%s' is not part of this schedule", t->name);
    return NULL;
  }
  if (nreaders < 1 || !readers) {
    tec_ctx_set_error(ctx, "cache_read: '%s': name at least one reader (a stage that reads it)",
                      t->name);
    return NULL;
  }
  int first = s->nstage;
  sch_stage *rs[64];
  if (nreaders > 64) {
    tec_ctx_set_error(ctx, "cache_read: at most 64 readers");
    return NULL;
  }
  for (int r = 0; r < nreaders; r++) {
    int ri = readers[r] ? stage_index(s, readers[r]) : -1;
    if (ri < 0) {
      tec_ctx_set_error(ctx, "cache_read: reader %d of '%s' is not a stage of this schedule", r,
                        t->name);
      return NULL;
    }
    sch_stage *st = s->stages[ri];
    int reads = 0;
    for (int k = 0; k < st->ninputs; k++) reads |= st->inputs[k] == t;
    if (!reads) {
      tec_ctx_set_error(ctx, "cache_read: stage '%s' does not read '%s'; list only its readers",
                        st->tensor->name, t->name);
      return NULL;
    }
    rs[r] = st;
    if (ri < first) first = ri;
  }
  te_compute_decl d = {0};
  d.name = sch_cache_name(s, t->name, scope);
  if (!d.name) return NULL;
  d.ndim = t->ndim;
  d.shape = t->shape;
  d.body = copy_body;
  d.user = t;
  te_tensor *c = te_compute(ctx, &d);
  if (!c) return NULL;
  sch_stage *cs = sch_stage_new(s, c);
  if (!cs) return NULL;
  cs->scope = tec_ctx_strdup(ctx, scope);
  if (insert_stage(s, cs, first)) return NULL;
  for (int r = 0; r < nreaders; r++)
    if (reread(rs[r], t, c)) return NULL;
  if (sch_trace_add(s, SCH_PRIM_CACHE_READ,
                    (sch_arg[]){{.tensor = t}, {.str = scope},
                                {.n = nreaders, .tensors = readers}, {.tensor = c}}))
    return NULL;
  return c;
}

/* ---- cache_write ---- */

static const ir_expr *write_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const sch_stage *st = user;
  int n = st->tensor->ndim;
  const ir_expr *b = sch_reduce_rebind(ctx, st->body, n, st->tensor->axis, i);
  return ir_substitute(b, n, st->tensor->axis, i);
}

/* The cache stage made from d (name filled in here) goes in front of st (stage ti), and st
 * becomes a copy of it: st's body reads the cache at idx, over st's plain data axes. */
static te_tensor *add_cache_stage(sch_schedule *s, sch_stage *st, int ti, const char *scope,
                                  te_compute_decl *d, int nidx, const ir_expr *const *idx) {
  tec_ctx *ctx = s->ctx;
  te_tensor *t = st->tensor;
  d->name = sch_cache_name(s, t->name, scope);
  te_tensor *c = d->name ? te_compute(ctx, d) : NULL;
  sch_stage *cs = c ? sch_stage_new(s, c) : NULL;
  const te_tensor **in = tec_ctx_alloc(ctx, sizeof *in);
  if (!cs || !in) return NULL;
  cs->scope = tec_ctx_strdup(ctx, scope);
  if (insert_stage(s, cs, ti)) return NULL;
  st->body = ir_read(ctx, c, nidx, idx);
  in[0] = c;
  st->inputs = in;
  st->ninputs = 1;
  st->nroot = t->ndim;
  st->nleaf = t->ndim;
  return st->body ? c : NULL;
}

/* The cache of a split/reordered element-wise stage is laid out in leaf order: element
 * (leaf values...) holds the stage's value at the roots those leaves map to (0 in the padding
 * a non-dividing split adds). */
static const ir_expr *relayout_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const sch_stage *st = user;
  const ir_expr **leaves = tec_ctx_alloc(ctx, sizeof *leaves * (size_t)st->nleaf);
  const ir_expr **roots = tec_ctx_alloc(ctx, sizeof *roots * (size_t)st->nroot);
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)st->nroot);
  const ir_expr *guard;
  if (!leaves || !roots || !vars) return NULL;
  /* data leaves are the cache's axes; reduce leaves (unsplit roots) stay themselves */
  for (int l = 0, k = 0; l < st->nleaf; l++)
    leaves[l] = st->leaf[l]->kind == SCH_ITER_DATA ? i[k++] : st->leaf[l]->var;
  if (sch_leaf_to_root(st, leaves, roots, &guard)) return NULL;
  for (int k = 0; k < st->nroot; k++) vars[k] = st->root[k]->var;
  const ir_expr *b = sch_reduce_rebind(ctx, st->body, st->nroot, vars, roots);
  if (!b) return NULL;
  if (b->kind != IR_REDUCE) {
    const ir_expr *v = ir_substitute(b, st->nroot, vars, roots);
    return guard ? ir_select(guard, v, ir_int_t(ctx, v->type, 0)) : v;
  }
  /* a reduction keeps its axes; the padding of a non-dividing split reduces nothing */
  const ir_expr *src = ir_substitute(b->a, st->nroot, vars, roots);
  const ir_expr *cond = b->b ? ir_substitute(b->b, st->nroot, vars, roots) : NULL;
  const ir_expr *init = b->c ? ir_substitute(b->c, st->nroot, vars, roots) : NULL;
  if (guard && init) { /* a split that divides: the guard holds on the cache's whole domain */
    arith_env *env = arith_env_new(ctx);
    if (!env) return NULL;
    for (int k = 0, l = 0; l < st->nleaf; l++)
      if (st->leaf[l]->kind == SCH_ITER_DATA) {
        arith_env_push_loop(env, i[k], ir_int(ctx, 0), i[k]->dom_extent);
        k++;
      }
    if (arith_prove(guard, env)) guard = NULL;
  }
  if (guard && init) { /* the padding's init would read past the init's tensors */
    tec_ctx_set_error(ctx, "cache_write: '%s' is a reduction with an init (te_reduce_init) over a "
                           "split that does not divide its axis; split by a divisor or cache "
                           "before splitting", st->tensor->name);
    return NULL;
  }
  if (guard) cond = cond ? ir_and(guard, cond) : guard;
  return ir_reduce_set_init(ir_reduce_like(b, src, b->nargs, b->args, cond), init);
}

/* cache_write of a split/reordered stage: the cache takes the leaf layout of the data loops
 * (TVM's packing idiom: split + reorder + cache_write, then compute_inline of the copy). */
static te_tensor *cache_relayout(sch_schedule *s, sch_stage *st, int ti, const char *scope) {
  tec_ctx *ctx = s->ctx;
  te_tensor *t = st->tensor;
  int n = 0;
  const ir_expr **shape = tec_ctx_alloc(ctx, sizeof *shape * (size_t)st->nleaf);
  const char **names = tec_ctx_alloc(ctx, sizeof *names * (size_t)st->nleaf);
  if (!shape || !names) return NULL;
  for (int l = 0; l < st->nleaf; l++) {
    if (st->leaf[l]->kind != SCH_ITER_DATA) continue;
    shape[n] = sch_iter_extent(st, st->leaf[l]);
    names[n] = st->leaf[l]->name;
    if (!shape[n++]) {
      TEC_INTERNAL(ctx, "leaf without an extent");
      return NULL;
    }
  }
  /* t's element in the new layout: its leaf values, data leaves only */
  const ir_expr **rv = tec_ctx_alloc(ctx, sizeof *rv * (size_t)st->nroot);
  const ir_expr **lv = tec_ctx_alloc(ctx, sizeof *lv * (size_t)st->nleaf);
  const ir_expr **dv = tec_ctx_alloc(ctx, sizeof *dv * (size_t)n);
  if (!rv || !lv || !dv) return NULL;
  for (int i = 0; i < st->nroot; i++) rv[i] = i < t->ndim ? t->axis[i] : st->root[i]->var;
  if (sch_root_to_leaf(st, rv, lv)) return NULL;
  for (int l = 0, k = 0; l < st->nleaf; l++)
    if (st->leaf[l]->kind == SCH_ITER_DATA) dv[k++] = lv[l];
  te_compute_decl d = {0};
  d.ndim = n;
  d.shape = shape;
  d.body = relayout_body;
  d.user = st;
  d.axis_names = names;
  te_tensor *c = add_cache_stage(s, st, ti, scope, &d, n, dv);
  if (!c) return NULL;
  /* t is back to its plain data axes: no relations, its roots are its leaves */
  st->nrel = 0;
  for (int i = 0; i < t->ndim; i++) {
    st->leaf[i] = st->root[i];
    st->root[i]->dead = 0;
  }
  return c;
}

static te_tensor *cache_write(sch_schedule *s, te_tensor *t, const char *scope);

te_tensor *sch_cache_write(sch_schedule *s, te_tensor *t, const char *scope) {
  te_tensor *c = cache_write(s, t, scope);
  if (!c || sch_trace_add(s, SCH_PRIM_CACHE_WRITE,
                          (sch_arg[]){{.tensor = t}, {.str = scope}, {.tensor = c}}))
    return NULL;
  return c;
}

static te_tensor *cache_write(sch_schedule *s, te_tensor *t, const char *scope) {
  if (!s) return NULL;
  tec_ctx *ctx = s->ctx;
  if (!t) {
    if (!tec_ctx_error(ctx)) tec_ctx_set_error(ctx, "cache_write: the tensor is NULL");
    return NULL;
  }
  if (check_scope(ctx, "cache_write", scope)) return NULL;
  if (sch_scan_refuse("cache_write", s, t)) return NULL;
  if (t->ext) {
    tec_ctx_set_error(ctx, "cache_write: '%s' is an extern stage: its C function writes the "
                           "buffer it is given, there is no loop body to move into a cache "
                           "(cache_read its output for the readers instead)", t->name);
    return NULL;
  }
  if (t->nout > 1) {
    tec_ctx_set_error(ctx, "cache_write: '%s' is an output of a multi-output op (%d outputs); "
                           "cache_write of such an op is not supported", t->name, t->nout);
    return NULL;
  }
  int ti = stage_index(s, t);
  if (ti < 0) {
    tec_ctx_set_error(ctx, "cache_write: tensor '%s' is not part of this schedule", t->name);
    return NULL;
  }
  sch_stage *st = s->stages[ti];
  if (t->op != TE_COMPUTE) {
    tec_ctx_set_error(ctx, "cache_write: '%s' is a placeholder; only computed tensors are "
                           "written (use cache_read to copy an input)", t->name);
    return NULL;
  }
  const sch_iter *md, *mr;
  if (sch_mixed_fuse(st, &md, &mr)) {
    tec_ctx_set_error(ctx, "cache_write: stage '%s' is already scheduled (data axis '%s' is "
                           "fused with reduce axis '%s'); call cache_write before other "
                           "primitives on it", t->name, md->name, mr->name);
    return NULL;
  }
  int reordered = st->nrel > 0;
  for (int i = 0; i < st->nleaf && !reordered; i++) reordered |= st->leaf[i] != st->root[i];
  int annotated = st->attach != SCH_ATTACH_ROOT;
  for (int i = 0; i < st->nleaf; i++)
    annotated |= st->leaf[i]->for_kind != IR_FOR_SERIAL || st->leaf[i]->npragma;
  int reduce_split = 0;
  for (int r = 0; r < st->nrel; r++)
    reduce_split |= (st->rel[r].parent ? st->rel[r].parent : st->rel[r].outer)->kind ==
                    SCH_ITER_REDUCE;
  if (annotated || (reordered && reduce_split)) {
    tec_ctx_set_error(ctx, "cache_write: stage '%s' is already scheduled (%s); call cache_write "
                           "before other primitives on it%s", t->name,
                      annotated ? "annotated or attached" : "its reduce axes were split",
                      annotated ? "" : " (a new layout may split data axes only)");
    return NULL;
  }
  for (int r = 0; r < st->nrel; r++)
    if (st->rel[r].kind == SCH_REL_SPLIT && st->rel[r].tail != SCH_TAIL_GUARD_WITH_IF) {
      /* the new layout pads the tail (its element outer*factor + inner is root's); a tail
       * strategy is how loops handle it, and the stage's loops start over */
      tec_ctx_set_error(ctx, "cache_write: axis '%s' of stage '%s' is split with tail strategy "
                             "%s; cache_write lays the cache out in the split loops' order with "
                             "a padded tail and starts the stage's loops over, so only "
                             "guard_with_if splits can be laid out; call cache_write first, then "
                             "split_tail the cache's or the stage's loops",
                        st->rel[r].parent->name, t->name,
                        sch_tail_name(st->rel[r].tail));
      return NULL;
    }
  if (reordered) return cache_relayout(s, st, ti, scope);
  te_compute_decl d = {0};
  d.ndim = t->ndim;
  d.shape = t->shape;
  d.body = write_body;
  d.user = st;
  const char *names[16];
  for (int i = 0; i < t->ndim && i < 16; i++) names[i] = t->axis[i]->name;
  d.axis_names = names;
  return add_cache_stage(s, st, ti, scope, &d, t->ndim, t->axis);
}
