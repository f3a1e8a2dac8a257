/* tensor.c — placeholders, compute ops, reduce axes and reductions.
 *
 * A compute op calls the user's body callback once with fresh axis variables and keeps the
 * expression it returns. The body is checked here, once: a reduction may only be the top of
 * the body, every variable it uses must be one of its axes, its reduce axes, or a size var,
 * and the tensors it reads become the op's inputs. Multi-output ops and user reducers build
 * on these checks in te/multi.c. */
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"
#include "te/internal.h"

const ir_expr *te_size_var(tec_ctx *ctx, const char *name) {
  return ir_var(ctx, name, TEC_INDEX, IR_VAR_SIZE);
}

const ir_expr *const *te_shape(tec_ctx *ctx, int n, const int64_t *dims) {
  if (!ctx || n < 0) return NULL;
  const ir_expr **s = tec_ctx_alloc(ctx, sizeof *s * (size_t)(n ? n : 1));
  if (!s) return NULL;
  for (int i = 0; i < n; i++)
    if (!(s[i] = ir_int(ctx, dims[i]))) return NULL;
  return s;
}

/* te/internal.h: validates a shape and copies it into the arena. */
const ir_expr *const *te_copy_shape(tec_ctx *ctx, const char *who, const char *name,
                                    int ndim, const ir_expr *const *shape) {
  if (ndim < 0 || ndim > 16) {
    tec_ctx_set_error(ctx, "%s '%s': ndim is %d; a tensor has 0 (a scalar) to 16 dimensions",
                      who, name, ndim);
    return NULL;
  }
  if (!shape && ndim > 0) {
    tec_ctx_set_error(ctx, "%s '%s': shape is NULL; pass %d extents", who, name, ndim);
    return NULL;
  }
  /* rank 0 (a scalar) has an empty shape: one element, no axes */
  const ir_expr **s = tec_ctx_alloc(ctx, sizeof *s * (size_t)(ndim ? ndim : 1));
  if (!s) return NULL;
  for (int i = 0; i < ndim; i++) {
    if (!shape[i]) {
      tec_ctx_set_error(ctx, "%s '%s': extent %d is NULL", who, name, i);
      return NULL;
    }
    if (!tec_dtype_is_int(shape[i]->type) || shape[i]->type.lanes != 1) {
      tec_ctx_set_error(ctx, "%s '%s': extent %d is not a scalar integer", who, name, i);
      return NULL;
    }
    int64_t v;
    if (ir_is_const_int(shape[i], &v) && v < 0) {
      tec_ctx_set_error(ctx, "%s '%s': extent %d is %lld; extents must be >= 0", who, name, i,
                        (long long)v);
      return NULL;
    }
    s[i] = shape[i]->type.bits == 64 ? shape[i] : ir_cast(TEC_INDEX, shape[i]);
  }
  return s;
}

int te_check_name(tec_ctx *ctx, const char *who, const char *name) {
  if (!name || !*name) {
    tec_ctx_set_error(ctx, "%s: a tensor needs a non-empty name", who);
    return -1;
  }
  return 0;
}

static te_tensor *placeholder(tec_ctx *ctx, const char *who, const char *name, tec_dtype type,
                              int ndim, const ir_expr *const *shape, int is_const) {
  if (!ctx || te_check_name(ctx, who, name)) return NULL;
  if (type.lanes != 1 || type.code == TEC_HANDLE) {
    tec_ctx_set_error(ctx, "%s '%s': element type must be a scalar number or bool", who, name);
    return NULL;
  }
  const ir_expr *const *s = te_copy_shape(ctx, who, name, ndim, shape);
  te_tensor *t = s ? tec_ctx_alloc(ctx, sizeof *t) : NULL;
  if (!t) return NULL;
  t->op = TE_PLACEHOLDER;
  t->ctx = ctx;
  t->name = tec_ctx_strdup(ctx, name);
  t->type = type;
  t->ndim = ndim;
  t->shape = s;
  t->is_const = is_const;
  t->id = tec_ctx_next_id(ctx);
  return t;
}

te_tensor *te_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                          const ir_expr *const *shape) {
  return placeholder(ctx, "te_placeholder", name, type, ndim, shape, 0);
}
te_tensor *te_const_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                                const ir_expr *const *shape) {
  return placeholder(ctx, "te_const_placeholder", name, type, ndim, shape, 1);
}

const ir_expr *te_reduce_axis(tec_ctx *ctx, const char *name, const ir_expr *min,
                              const ir_expr *extent) {
  if (!ctx || !min || !extent) return NULL;
  if (!tec_dtype_is_int(min->type) || !tec_dtype_is_int(extent->type)) {
    tec_ctx_set_error(ctx, "te_reduce_axis '%s': min and extent must be integers",
                      name ? name : "?");
    return NULL;
  }
  int64_t v;
  if (ir_is_const_int(extent, &v) && v < 1) {
    tec_ctx_set_error(ctx, "te_reduce_axis '%s': extent is %lld; it must be >= 1",
                      name ? name : "?", (long long)v);
    return NULL;
  }
  ir_expr *e = (ir_expr *)ir_var(ctx, name, TEC_INDEX, IR_VAR_REDUCE);
  if (!e) return NULL;
  e->dom_min = ir_cast(TEC_INDEX, min);
  e->dom_extent = ir_cast(TEC_INDEX, extent);
  return e;
}

const ir_expr *te_reduce_axis_n(tec_ctx *ctx, const char *name, int64_t extent) {
  return te_reduce_axis(ctx, name, ir_int(ctx, 0), ir_int(ctx, extent));
}

const ir_expr *te_sum(const ir_expr *src, int n, const ir_expr *const *axes, const ir_expr *c) {
  return ir_reduce(IR_COMB_SUM, src, n, axes, c);
}
const ir_expr *te_max(const ir_expr *src, int n, const ir_expr *const *axes, const ir_expr *c) {
  return ir_reduce(IR_COMB_MAX, src, n, axes, c);
}
const ir_expr *te_min(const ir_expr *src, int n, const ir_expr *const *axes, const ir_expr *c) {
  return ir_reduce(IR_COMB_MIN, src, n, axes, c);
}
const ir_expr *te_prod(const ir_expr *src, int n, const ir_expr *const *axes, const ir_expr *c) {
  return ir_reduce(IR_COMB_PROD, src, n, axes, c);
}

const ir_expr *te_reduce_init(const ir_expr *red, const ir_expr *init) {
  if (!red) return NULL; /* the reduction's own error stands */
  tec_ctx *ctx = red->ctx;
  char a[32], b[32];
  if (red->kind != IR_REDUCE)
    tec_ctx_set_error(ctx, "te_reduce_init: the first argument (a %s expression) is not a "
                           "reduction (te_sum, te_max, te_min or te_prod)", ir_expr_kind_name(red->kind));
  else if (!init)
    tec_ctx_set_error(ctx, "te_reduce_init: init is NULL (give the value the reduction starts "
                           "from, e.g. bias[c])");
  else if (red->v.i == IR_COMB_USER)
    tec_ctx_set_error(ctx, "te_reduce_init: the reduction is a value of reducer '%s', whose "
                           "identity starts every value; init is for te_sum, te_max, te_min and "
                           "te_prod",
                      red->reducer->name);
  else if (red->c)
    tec_ctx_set_error(ctx, "te_reduce_init: the reduction already has an init");
  else if (!tec_dtype_eq(init->type, red->type))
    tec_ctx_set_error(ctx, "te_reduce_init: init is %s and the reduction %s; they must be the "
                           "same type (cast init)", tec_dtype_str(init->type, a, sizeof a),
                      tec_dtype_str(red->type, b, sizeof b));
  else {
    for (int i = 0; i < red->nargs; i++)
      if (ir_uses_var(init, red->args[i])) {
        tec_ctx_set_error(ctx, "te_reduce_init: init uses reduce axis '%s'; it is evaluated once "
                               "per output element, before the reduction: use the output's "
                               "axes only", red->args[i]->name);
        return NULL;
      }
    return ir_reduce_set_init(red, init);
  }
  return NULL;
}

const ir_expr *te_read(const te_tensor *t, int nidx, const ir_expr *const *idx) {
  if (!t) return NULL;
  return ir_read(t->ctx, t, nidx, idx);
}

/* ---- checking a compute body ---- */
typedef struct body_check {
  tec_ctx *ctx;
  const char *name;
  int ndim;
  const ir_expr *const *axis;
  int nreduce;
  const ir_expr *const *raxis;
  int depth_reduce;          /* > 0 inside the top-level reduce */
  int error;
  const te_tensor **inputs;
  int ninputs, cap;
} body_check;

static void check_expr(ir_visitor *v, const ir_expr *e) {
  body_check *bc = v->user;
  if (bc->error) return;
  if (e->kind == IR_REDUCE) {
    tec_ctx_set_error(bc->ctx,
                      "te_compute '%s': a reduction must be the whole body (the top of the "
                      "expression), not part of it; compute it as its own tensor",
                      bc->name);
    bc->error = 1;
    return;
  }
  if (e->kind == IR_VAR) {
    ir_var_kind k = (ir_var_kind)e->v.i;
    if (k == IR_VAR_SIZE || k == IR_VAR_LET) return;
    for (int i = 0; i < bc->ndim; i++)
      if (bc->axis[i] == e) return;
    for (int i = 0; i < bc->nreduce; i++)
      if (bc->raxis[i] == e) return;
    tec_ctx_set_error(bc->ctx,
                      "te_compute '%s': the body uses variable '%s', which is neither an axis "
                      "of '%s', one of its reduce axes nor a size variable",
                      bc->name, e->name, bc->name);
    bc->error = 1;
    return;
  }
  if (e->kind == IR_LOAD) {
    tec_ctx_set_error(bc->ctx, "te_compute '%s': the body contains a lowered load; read "
                               "tensors with te_read/TE_AT", bc->name);
    bc->error = 1;
    return;
  }
  if (e->kind == IR_READ) {
    int seen = 0;
    for (int i = 0; i < bc->ninputs; i++) seen |= bc->inputs[i] == e->tensor;
    if (!seen) {
      if (tec_grow(bc->ctx, (void **)&bc->inputs, &bc->cap, bc->ninputs + 1, sizeof *bc->inputs)) {
        bc->error = 1;
        return;
      }
      bc->inputs[bc->ninputs++] = e->tensor;
    }
  }
  ir_visit_expr_default(v, e);
}

static const char *const default_axis_names[] = {"i", "j", "k", "l", "m"};

/* te/internal.h */
const ir_expr *const *te_new_axes(tec_ctx *ctx, int ndim, const ir_expr *const *shape,
                                  const char *const *names) {
  const ir_expr **axis = tec_ctx_alloc(ctx, sizeof *axis * (size_t)(ndim ? ndim : 1));
  if (!axis) return NULL;
  for (int i = 0; i < ndim; i++) {
    const char *nm = names && names[i] ? names[i]
                     : i < 5 ? default_axis_names[i]
                             : tec_ctx_printf(ctx, "ax%d", i);
    ir_expr *v = (ir_expr *)ir_var(ctx, nm, TEC_INDEX, IR_VAR_INDEX);
    if (!v) return NULL;
    v->dom_min = ir_int(ctx, 0);
    v->dom_extent = shape[i];
    axis[i] = v;
  }
  return axis;
}

static int axis_name_used(const char *nm, int ndim, const ir_expr *const *axis, int nreduce,
                          const ir_expr *const *raxis) {
  for (int i = 0; i < ndim; i++)
    if (strcmp(axis[i]->name, nm) == 0) return 1;
  for (int i = 0; i < nreduce; i++)
    if (strcmp(raxis[i]->name, nm) == 0) return 1;
  return 0;
}

/* te/internal.h */
int te_rename_default_axes(tec_ctx *ctx, int ndim, const ir_expr *const *axis,
                           const char *const *names, int nreduce, const ir_expr *const *raxis) {
  static const char *const spare[] = {"i", "j", "k", "l", "m", "n", "p", "q", "r", "s"};
  for (int i = 0; i < ndim; i++) {
    if (names && names[i]) continue; /* the user's own name stays */
    int clash = 0;
    for (int r = 0; r < nreduce && !clash; r++) clash = strcmp(raxis[r]->name, axis[i]->name) == 0;
    if (!clash) continue;
    const char *nm = NULL;
    for (int c = 0; c < 10 && !nm; c++)
      if (!axis_name_used(spare[c], ndim, axis, nreduce, raxis)) nm = spare[c];
    if (!nm) nm = tec_ctx_printf(ctx, "ax%d", i);
    /* the variable was made by te_new_axes for this op alone: naming it is still ours */
    ((ir_expr *)axis[i])->name = nm ? tec_ctx_strdup(ctx, nm) : NULL;
    if (!axis[i]->name) return -1;
  }
  return 0;
}

/* te/internal.h */
int te_check_body(tec_ctx *ctx, const char *who, const char *name, int ndim,
                  const ir_expr *const *axis, const ir_expr *body, te_body_info *info) {
  if (body->type.lanes != 1 || body->type.code == TEC_HANDLE)
    return tec_ctx_set_error(ctx, "%s '%s': the body must be a scalar number or bool", who, name);
  body_check bc = {ctx, name, ndim, axis, 0, NULL, 0, 0, (const te_tensor **)info->inputs,
                   info->ninputs, info->cap};
  const ir_expr *top = body;
  if (body->kind == IR_REDUCE) {
    bc.nreduce = body->nargs;
    bc.raxis = body->args;
    top = NULL;
  }
  ir_visitor v;
  ir_visitor_init(&v, &bc);
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v.expr[i] = check_expr;
  if (top)
    ir_visit_expr(&v, top);
  else {
    ir_visit_expr(&v, body->a);
    ir_visit_expr(&v, body->b);
    ir_visit_expr(&v, body->c); /* the init: te_reduce_init kept reduce axes out of it */
  }
  info->inputs = (const te_tensor **)bc.inputs;
  info->ninputs = bc.ninputs;
  info->cap = bc.cap;
  info->nreduce = bc.nreduce;
  info->raxis = bc.raxis;
  return bc.error ? -1 : 0;
}

te_tensor *te_compute(tec_ctx *ctx, const te_compute_decl *d) {
  if (!ctx) return NULL;
  if (!d) {
    tec_ctx_set_error(ctx, "te_compute: the declaration is NULL");
    return NULL;
  }
  if (te_check_name(ctx, "te_compute", d->name)) return NULL;
  if (!d->body) {
    tec_ctx_set_error(ctx, "te_compute '%s': body callback is NULL", d->name);
    return NULL;
  }
  const ir_expr *const *shape = te_copy_shape(ctx, "te_compute", d->name, d->ndim, d->shape);
  if (!shape) return NULL;
  const ir_expr *const *axis = te_new_axes(ctx, d->ndim, shape, d->axis_names);
  if (!axis) return NULL;
  const char *had_error = tec_ctx_error(ctx);
  const ir_expr *body = d->body(ctx, axis, d->user);
  if (!body) {
    if (!had_error && !tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "te_compute '%s': the body callback returned NULL", d->name);
    return NULL;
  }
  if (body->kind == IR_REDUCE && body->v.i == IR_COMB_USER && body->reducer->k != 1) {
    tec_ctx_set_error(ctx, "te_compute '%s': the body is value %d of reducer '%s', which has %d "
                           "values that reduce together; declare the op with te_compute_multi "
                           "and give it all %d",
                      d->name, body->value_index, body->reducer->name, body->reducer->k,
                      body->reducer->k);
    return NULL;
  }
  te_body_info info = {0};
  if (te_check_body(ctx, "te_compute", d->name, d->ndim, axis, body, &info) ||
      te_rename_default_axes(ctx, d->ndim, axis, d->axis_names, info.nreduce, info.raxis))
    return NULL;
  te_tensor *t = tec_ctx_alloc(ctx, sizeof *t);
  if (!t) return NULL;
  t->op = TE_COMPUTE;
  t->ctx = ctx;
  t->name = tec_ctx_strdup(ctx, d->name);
  t->type = body->type;
  t->ndim = d->ndim;
  t->shape = shape;
  t->axis = axis;
  t->nreduce = info.nreduce;
  t->reduce_axis = info.raxis;
  t->body = body;
  t->ninputs = info.ninputs;
  t->inputs = info.inputs;
  t->tag = d->tag ? tec_ctx_strdup(ctx, d->tag) : NULL;
  t->nout = 1;
  t->id = tec_ctx_next_id(ctx);
  return t;
}

/* ---- topological order ---- */
typedef struct topo {
  tec_ctx *ctx;
  te_tensor **out;
  int n, cap;
  int err;
} topo;

static void visit(topo *tp, te_tensor *t, int depth) {
  if (tp->err) return;
  /* a multi-output op: its first output stands for the op; all outputs follow its inputs */
  int nout = t->nout > 1 ? t->nout : 1;
  if (nout > 1) t = t->outputs[0];
  for (int i = 0; i < tp->n; i++)
    if (tp->out[i] == t) return;
  if (depth > 10000) {
    tec_ctx_set_error(tp->ctx, "te_topo_order: the graph is more than 10000 ops deep (at "
                               "'%s'); split it into several schedules", t->name);
    tp->err = 1;
    return;
  }
  for (int i = 0; i < t->ninputs; i++) visit(tp, (te_tensor *)t->inputs[i], depth + 1);
  if (tec_grow(tp->ctx, (void **)&tp->out, &tp->cap, tp->n + nout, sizeof *tp->out)) {
    tp->err = 1;
    return;
  }
  for (int k = 0; k < nout; k++) tp->out[tp->n++] = nout > 1 ? t->outputs[k] : t;
}

int te_topo_order(tec_ctx *ctx, int nout, te_tensor *const *outs, te_tensor ***out) {
  topo tp = {ctx, NULL, 0, 0, 0};
  for (int i = 0; i < nout; i++) {
    if (!outs[i]) return -1;
    visit(&tp, outs[i], 0);
  }
  if (tp.err) return -1;
  *out = tp.out;
  return tp.n;
}
