/* multi.c — compute ops with several outputs and user-defined (tuple) reducers.
 *
 *   te_compute_multi: one body callback, nout values over the same axes -> nout tensors that
 *   share the axes and know each other (te_tensor.outputs); the schedule makes one stage for
 *   them (schedule.c) and lowering one loop nest (lower/schedule_ops.c).
 *   te_reducer_new: a k-tuple combine, built once over variables lhs/rhs; te_reduce: the k
 *   REDUCE nodes (IR_COMB_USER, value_index 0..k-1) of one tuple reduction. */
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"
#include "te/internal.h"

/* the reduce signature of a body: axes and condition (NULL for a plain value) */
static int same_reduce(const ir_expr *a, const ir_expr *b) {
  if (a->kind != IR_REDUCE || b->kind != IR_REDUCE)
    return (a->kind == IR_REDUCE) == (b->kind == IR_REDUCE);
  if (a->nargs != b->nargs || !a->b != !b->b || (a->b && !ir_expr_equal(a->b, b->b))) return 0;
  for (int i = 0; i < a->nargs; i++)
    if (a->args[i] != b->args[i]) return 0;
  return 1;
}

/* A combine may use its lhs/rhs variables, size variables and constants only. */
typedef struct combine_check {
  const te_reducer *r;
  const ir_expr *bad;
} combine_check;

static void check_combine_expr(ir_visitor *v, const ir_expr *e) {
  combine_check *cc = v->user;
  if (cc->bad) return;
  if (e->kind == IR_READ || e->kind == IR_REDUCE || e->kind == IR_LOAD) {
    cc->bad = e;
    return;
  }
  if (e->kind == IR_VAR && e->v.i != IR_VAR_SIZE) {
    int ok = 0;
    for (int i = 0; i < cc->r->k; i++) ok |= e == cc->r->lhs[i] || e == cc->r->rhs[i];
    if (!ok) {
      cc->bad = e;
      return;
    }
  }
  ir_visit_expr_default(v, e);
}

int te_compute_multi(tec_ctx *ctx, const te_compute_multi_decl *d, int nout, te_tensor **outs) {
  if (!ctx) return -1;
  if (!d || !outs) return tec_ctx_set_error(ctx, "te_compute_multi: the declaration or outs is NULL");
  if (nout < 2 || nout > 16)
    return tec_ctx_set_error(ctx, "te_compute_multi: nout is %d; an op has 2 to 16 outputs (use "
                                  "te_compute for one)", nout);
  if (!d->names) return tec_ctx_set_error(ctx, "te_compute_multi: names is NULL; pass %d names", nout);
  for (int i = 0; i < nout; i++) {
    if (te_check_name(ctx, "te_compute_multi", d->names[i])) return -1;
    for (int j = 0; j < i; j++)
      if (strcmp(d->names[i], d->names[j]) == 0)
        return tec_ctx_set_error(ctx, "te_compute_multi '%s': outputs %d and %d are both called "
                                      "'%s'; each output is its own tensor and needs its own name",
                                 d->names[0], j, i, d->names[i]);
  }
  const char *name = d->names[0];
  if (!d->body) return tec_ctx_set_error(ctx, "te_compute_multi '%s': body callback is NULL", name);
  const ir_expr *const *shape = te_copy_shape(ctx, "te_compute_multi", name, d->ndim, d->shape);
  const ir_expr *const *axis = shape ? te_new_axes(ctx, d->ndim, shape, d->axis_names) : NULL;
  const ir_expr **vals = tec_ctx_alloc(ctx, sizeof *vals * (size_t)nout);
  te_tensor **ts = tec_ctx_alloc(ctx, sizeof *ts * (size_t)nout);
  if (!axis || !vals || !ts) return -1;
  const char *had_error = tec_ctx_error(ctx);
  int rc = d->body(ctx, axis, d->user, vals);
  for (int i = 0; i < nout && rc == 0; i++)
    if (!vals[i]) rc = -1;
  if (rc) {
    if (!had_error && !tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "te_compute_multi '%s': the body callback failed or left a value "
                             "NULL", name);
    return -1;
  }
  te_body_info info = {0};
  for (int i = 0; i < nout; i++) {
    if (!same_reduce(vals[0], vals[i]))
      return tec_ctx_set_error(ctx, "te_compute_multi '%s': values 0 and %d %s; the values are "
                                    "all plain or all reductions over the same axes and "
                                    "condition",
                               name, i,
                               (vals[0]->kind == IR_REDUCE) != (vals[i]->kind == IR_REDUCE)
                                   ? "differ: one is a reduction, the other is not"
                                   : "reduce over different axes or conditions");
    const ir_expr *v = vals[i];
    if (v->kind == IR_REDUCE && v->v.i == IR_COMB_USER &&
        (v->reducer->k != nout || v->value_index != i || vals[0]->reducer != v->reducer))
      return tec_ctx_set_error(ctx, "te_compute_multi '%s': value %d is value %d of reducer '%s' "
                                    "(%d values); a te_reduce's values must be the op's values, "
                                    "all of them and in order",
                               name, i, v->value_index, v->reducer->name, v->reducer->k);
    if (vals[0]->kind == IR_REDUCE && (vals[0]->v.i == IR_COMB_USER) != (v->v.i == IR_COMB_USER))
      return tec_ctx_set_error(ctx, "te_compute_multi '%s': values 0 and %d mix a te_reduce with "
                                    "a built-in reduction; give all values by one te_reduce",
                               name, i);
    if (te_check_body(ctx, "te_compute_multi", d->names[i], d->ndim, axis, v, &info)) return -1;
  }
  if (te_rename_default_axes(ctx, d->ndim, axis, d->axis_names, info.nreduce, info.raxis))
    return -1;
  for (int i = 0; i < nout; i++) {
    te_tensor *t = tec_ctx_alloc(ctx, sizeof *t);
    if (!t) return -1;
    t->op = TE_COMPUTE;
    t->ctx = ctx;
    t->name = tec_ctx_strdup(ctx, d->names[i]);
    t->type = vals[i]->type;
    t->ndim = d->ndim;
    t->shape = shape;
    t->axis = axis;
    t->nreduce = info.nreduce;
    t->reduce_axis = info.raxis;
    t->body = vals[i];
    t->ninputs = info.ninputs; /* every output reads what the op reads */
    t->inputs = info.inputs;
    t->tag = d->tag ? tec_ctx_strdup(ctx, d->tag) : NULL;
    t->nout = nout;
    t->value_index = i;
    t->outputs = ts;
    t->id = tec_ctx_next_id(ctx);
    ts[i] = t;
  }
  memcpy(outs, ts, sizeof *outs * (size_t)nout);
  return 0;
}

const te_reducer *te_reducer_new(tec_ctx *ctx, const char *name, int k, const tec_dtype *types,
                                 const ir_expr *const *identity, te_combine_fn combine,
                                 void *user) {
  if (!ctx) return NULL;
  if (!name || !*name) name = "reducer";
  if (k < 1 || k > 16) {
    tec_ctx_set_error(ctx, "te_reducer_new '%s': k is %d; a reducer combines 1 to 16 values",
                      name, k);
    return NULL;
  }
  if (!types || !identity || !combine) {
    tec_ctx_set_error(ctx, "te_reducer_new '%s': types, identity and combine are required "
                           "(%d of each)", name, k);
    return NULL;
  }
  te_reducer *r = tec_ctx_alloc(ctx, sizeof *r);
  tec_dtype *ty = tec_ctx_alloc(ctx, sizeof *ty * (size_t)k);
  const ir_expr **lhs = tec_ctx_alloc(ctx, sizeof *lhs * (size_t)k);
  const ir_expr **rhs = tec_ctx_alloc(ctx, sizeof *rhs * (size_t)k);
  const ir_expr **res = tec_ctx_alloc(ctx, sizeof *res * (size_t)k);
  const ir_expr **id = tec_ctx_alloc(ctx, sizeof *id * (size_t)k);
  if (!r || !ty || !lhs || !rhs || !res || !id) return NULL;
  for (int i = 0; i < k; i++) {
    char b1[32];
    ty[i] = types[i];
    if (ty[i].lanes != 1 || ty[i].code == TEC_HANDLE || ty[i].code == TEC_BOOL) {
      tec_ctx_set_error(ctx, "te_reducer_new '%s': value %d has type %s; a reducer combines "
                             "scalar numbers", name, i, tec_dtype_str(ty[i], b1, sizeof b1));
      return NULL;
    }
    if (!identity[i]) {
      tec_ctx_set_error(ctx, "te_reducer_new '%s': identity %d is NULL; give %d identities",
                        name, i, k);
      return NULL;
    }
    if (identity[i]->kind != IR_INT_IMM && identity[i]->kind != IR_FLOAT_IMM) {
      tec_ctx_set_error(ctx, "te_reducer_new '%s': identity %d is %s, not a constant", name, i,
                        ir_expr_str(identity[i]));
      return NULL;
    }
    id[i] = tec_dtype_eq(identity[i]->type, ty[i])
                ? identity[i]
                : (identity[i]->kind == IR_FLOAT_IMM ? ir_float_t(ctx, ty[i], identity[i]->v.f)
                                                     : ir_int_t(ctx, ty[i], identity[i]->v.i));
    lhs[i] = ir_var(ctx, tec_ctx_printf(ctx, "%s_x%d", name, i), ty[i], IR_VAR_LET);
    rhs[i] = ir_var(ctx, tec_ctx_printf(ctx, "%s_y%d", name, i), ty[i], IR_VAR_LET);
    if (!id[i] || !lhs[i] || !rhs[i]) return NULL;
  }
  const char *had_error = tec_ctx_error(ctx);
  int rc = combine(ctx, lhs, rhs, user, res);
  for (int i = 0; i < k && rc == 0; i++)
    if (!res[i]) rc = -1;
  if (rc) {
    if (!had_error && !tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "te_reducer_new '%s': the combine callback failed or left a value "
                             "NULL", name);
    return NULL;
  }
  for (int i = 0; i < k; i++)
    if (!tec_dtype_eq(res[i]->type, ty[i])) {
      char b1[32], b2[32];
      tec_ctx_set_error(ctx, "te_reducer_new '%s': combined value %d is %s but the reducer "
                             "declares %s", name, i, tec_dtype_str(res[i]->type, b1, sizeof b1),
                        tec_dtype_str(ty[i], b2, sizeof b2));
      return NULL;
    }
  r->k = k;
  r->lhs = lhs;
  r->rhs = rhs;
  for (int i = 0; i < k; i++) {
    combine_check cc = {r, NULL};
    ir_visitor v;
    ir_visitor_init(&v, &cc);
    for (int x = 0; x < IR_EXPR_KIND_COUNT; x++) v.expr[x] = check_combine_expr;
    ir_visit_expr(&v, res[i]);
    if (cc.bad) {
      tec_ctx_set_error(ctx, "te_reducer_new '%s': combined value %d uses %s; a combine may use "
                             "its lhs and rhs variables, size variables and constants only",
                        name, i, ir_expr_str(cc.bad));
      return NULL;
    }
  }
  r->name = tec_ctx_strdup(ctx, name);
  r->types = ty;
  r->lhs = lhs;
  r->rhs = rhs;
  r->result = res;
  r->identity = id;
  return r;
}

int te_reduce(tec_ctx *ctx, const te_reducer *r, const ir_expr *const *srcs, int naxes,
              const ir_expr *const *axes, const ir_expr *cond, const ir_expr **out) {
  if (!ctx || !r || !srcs || !out) return -1;
  for (int i = 0; i < r->k; i++) {
    if (!srcs[i]) return -1;
    if (!tec_dtype_eq(srcs[i]->type, r->types[i])) {
      char b1[32], b2[32];
      return tec_ctx_set_error(ctx, "te_reduce '%s': value %d is %s but the reducer combines %s; "
                                    "cast it", r->name, i,
                               tec_dtype_str(srcs[i]->type, b1, sizeof b1),
                               tec_dtype_str(r->types[i], b2, sizeof b2));
    }
  }
  for (int i = 0; i < r->k; i++) {
    ir_expr *u = (ir_expr *)ir_reduce(IR_COMB_USER, srcs[i], naxes, axes, cond);
    if (!u) return -1; /* fresh: not shared yet */
    u->reducer = r;
    u->value_index = i;
    out[i] = u;
  }
  return 0;
}
