/* scan.c — recurrences (te_scan, TVM's te.scan): a tensor whose step t along axis 0 follows
 * from its earlier steps.
 *
 *   y_state = placeholder (T, W)                       the earlier steps, as the update sees them
 *   y_upd[t, x] = a * y_state[t - 1, x] + b * in[t, x]
 *   y = te_scan(init (1, W), y_upd, y_state)           steps [0, 1) from init, [1, T) from y_upd
 *
 * The result is a TE_COMPUTE op whose body reads the update at the same element and whose
 * inputs are init and the update, so the graph stays acyclic: the state is a placeholder that
 * lowering (lower/scan.c) reads from the result's own buffer. Here the declaration is
 * checked once: shapes and dtypes, and every read of the state (through the update's stages,
 * the "chain") at an earlier step that init or the scan has computed. The chain and whether
 * each step is per element (pointwise) are kept in te_scan_info for the schedule's rules. */
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"
#include "te/internal.h"
#include "arith/arith.h"

typedef struct chain_walk {
  tec_ctx *ctx;
  const char *name;            /* the scan's */
  te_tensor *state;
  int64_t ninit;
  const ir_expr *steps;        /* T */
  te_tensor **chain;
  int n, cap;
  const te_tensor **no;        /* tensors known not to read the state */
  int nno, capno;
} chain_walk;

static int listed(te_tensor *const *ts, int n, const te_tensor *t) {
  for (int i = 0; i < n; i++)
    if (ts[i] == t) return 1;
  return 0;
}

int te_scan_in_chain(const te_scan_info *sc, const te_tensor *t) {
  return sc && listed(sc->chain, sc->nchain, t);
}

/* 1 if t reads the state (directly or through other stages), adding such stages to the chain
 * (producers first); -1 on error. */
static int find_chain(chain_walk *w, te_tensor *t, int depth) {
  if (t == w->state) return 1;
  if (t->op != TE_COMPUTE) return 0;
  if (listed(w->chain, w->n, t)) return 1;
  if (listed((te_tensor *const *)w->no, w->nno, t)) return 0;
  if (depth > 10000) return tec_ctx_set_error(w->ctx, "te_scan '%s': the update is more than "
                                                      "10000 ops deep", w->name);
  int reads = 0;
  for (int i = 0; i < t->ninputs; i++) {
    int r = find_chain(w, (te_tensor *)t->inputs[i], depth + 1);
    if (r < 0) return -1;
    reads |= r;
  }
  te_tensor ***arr = reads ? &w->chain : (te_tensor ***)&w->no;
  int *n = reads ? &w->n : &w->nno, *cap = reads ? &w->cap : &w->capno;
  if (tec_grow(w->ctx, (void **)arr, cap, *n + 1, sizeof **arr)) return -1;
  (*arr)[(*n)++] = t;
  return reads;
}

/* idx - axis folded to a constant (*d), or 0 when it is not one */
static int offset_of(const ir_expr *idx, const ir_expr *axis, int64_t *d) {
  if (!idx || !axis) return 0;
  if (idx->type.bits != 64) idx = ir_cast(TEC_INDEX, idx);
  const ir_expr *diff = idx ? arith_simplify(ir_sub(idx, axis), NULL) : NULL;
  return diff && ir_is_const_int(diff, d);
}

typedef struct read_check {
  chain_walk *w;
  const te_tensor *reader;
  int pointwise;
  int error;
} read_check;

static void check_read(ir_visitor *v, const ir_expr *e) {
  read_check *rc = v->user;
  chain_walk *w = rc->w;
  if (rc->error) return;
  ir_visit_expr_default(v, e);
  int is_state = e->tensor == w->state;
  if (!is_state && !listed(w->chain, w->n, e->tensor)) return;
  const te_tensor *p = rc->reader;
  int64_t d = 0;
  const ir_expr *i0 = e->nargs > 0 ? e->args[0] : NULL;
  int known = offset_of(i0, p->axis[0], &d);
  const char *at = i0 ? ir_expr_str(i0) : "(none)";
  if (is_state && (!known || d > -1 || d < -w->ninit)) {
    const char *what = !known ? "at a step that is not t minus a constant"
                       : d == 0 ? "at step t itself, which it is computing"
                       : d > 0  ? "at a later step"
                                : "further back than init reaches";
    rc->error = tec_ctx_set_error(
        w->ctx, "te_scan '%s': stage '%s' reads the state '%s' at index %s (%s; t is axis 0 of "
                "'%s', '%s'); a step reads only earlier steps t - k with 1 <= k <= %lld (init "
                "gives %lld step%s): read %s[%s - 1, ...]",
        w->name, p->name, w->state->name, at, what, p->name, p->axis[0]->name,
        (long long)w->ninit, (long long)w->ninit, w->ninit == 1 ? "" : "s", w->state->name,
        p->axis[0]->name);
    return;
  }
  if (!is_state && (!known || d != 0)) {
    rc->error = tec_ctx_set_error(
        w->ctx, "te_scan '%s': stage '%s' reads '%s' (a stage of the update: it reads the state) "
                "at index %s, not at its own step %s; the update's stages are computed one step "
                "at a time, so each reads the others at step %s only",
        w->name, p->name, e->tensor->name, at, p->axis[0]->name, p->axis[0]->name);
    return;
  }
  /* per element: the other indices are the reader's own axes, in order */
  if (e->tensor->ndim != p->ndim) rc->pointwise = 0;
  for (int k = 1; k < e->nargs && rc->pointwise; k++)
    if (k >= p->ndim || !ir_expr_equal(e->args[k], p->axis[k])) rc->pointwise = 0;
}

/* Checks every stage of the chain; sets *pointwise. */
static int check_chain(chain_walk *w, int *pointwise) {
  *pointwise = 1;
  for (int i = 0; i < w->n; i++) {
    te_tensor *p = w->chain[i];
    const char *why = p->ext               ? "an extern stage (a C function cannot read a step)"
                      : p->nout > 1        ? "a multi-output op"
                      : p->ndim < 1        ? "a scalar (it has no step axis)"
                                           : NULL;
    if (why)
      return tec_ctx_set_error(w->ctx, "te_scan '%s': stage '%s' reads the state '%s', so it "
                                       "is part of the update, but it is %s; compute it from "
                                       "the state with te_compute", w->name, p->name,
                               w->state->name, why);
    int64_t d;
    if (!offset_of(p->shape[0], w->steps, &d) || d != 0)
      return tec_ctx_set_error(w->ctx, "te_scan '%s': stage '%s' is part of the update (it reads "
                                       "the state '%s') but has %s steps in axis 0, not the "
                                       "scan's %s; give it shape (%s, ...)", w->name, p->name,
                               w->state->name, ir_expr_str(p->shape[0]), ir_expr_str(w->steps),
                               ir_expr_str(w->steps));
    read_check rc = {w, p, 1, 0};
    ir_visitor v;
    ir_visitor_init(&v, &rc);
    v.expr[IR_READ] = check_read;
    ir_visit_expr(&v, p->body);
    if (rc.error) return -1;
    *pointwise &= rc.pointwise;
  }
  return 0;
}

static int same_extent(const ir_expr *a, const ir_expr *b) {
  int64_t d;
  return offset_of(a, b, &d) && d == 0;
}

/* Shapes and dtypes of state, init and update. */
static int check_decl(tec_ctx *ctx, const te_scan_decl *d, int64_t *ninit) {
  const char *nm = d->name;
  te_tensor *st = d->state, *in = d->init, *up = d->update;
  if (!st || !in || !up) {
    if (!tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "te_scan '%s': the %s is NULL", nm,
                        !st ? "state" : !in ? "init" : "update");
    return -1;
  }
  if (st->ctx != ctx || in->ctx != ctx || up->ctx != ctx)
    return tec_ctx_set_error(ctx, "te_scan '%s': state, init and update must belong to this ctx",
                             nm);
  if (st->op != TE_PLACEHOLDER || st->is_const || te_has_margin(st))
    return tec_ctx_set_error(ctx, "te_scan '%s': the state '%s' must be a plain te_placeholder "
                                  "(not computed, not constant, no margin): it stands for the "
                                  "scan's earlier steps", nm, st->name);
  if (st->scan_of)
    return tec_ctx_set_error(ctx, "te_scan '%s': the state '%s' is already the state of scan "
                                  "'%s'; each scan needs its own", nm, st->name,
                             st->scan_of->name);
  if (up->op != TE_COMPUTE)
    return tec_ctx_set_error(ctx, "te_scan '%s': the update '%s' is a placeholder; it must be "
                                  "computed from the state", nm, up->name);
  if (up->ndim < 1 || st->ndim != up->ndim || in->ndim != up->ndim)
    return tec_ctx_set_error(ctx, "te_scan '%s': the update '%s' has %d dimensions, the state "
                                  "'%s' %d and init '%s' %d; all three need the same number, at "
                                  "least 1 (axis 0 is the step)", nm, up->name, up->ndim,
                             st->name, st->ndim, in->name, in->ndim);
  char bu[32], bs[32], bi[32];
  if (!tec_dtype_eq(st->type, up->type) || !tec_dtype_eq(in->type, up->type))
    return tec_ctx_set_error(ctx, "te_scan '%s': the update '%s' is %s, the state '%s' %s and init "
                                  "'%s' %s; they must agree", nm, up->name,
                             tec_dtype_str(up->type, bu, 32), st->name,
                             tec_dtype_str(st->type, bs, 32), in->name,
                             tec_dtype_str(in->type, bi, 32));
  for (int k = 0; k < up->ndim; k++) {
    if (!same_extent(st->shape[k], up->shape[k]))
      return tec_ctx_set_error(ctx, "te_scan '%s': the state '%s' has extent %s in dimension %d, "
                                    "the update '%s' %s; the state has the update's shape", nm,
                               st->name, ir_expr_str(st->shape[k]), k, up->name,
                               ir_expr_str(up->shape[k]));
    if (k && !same_extent(in->shape[k], up->shape[k]))
      return tec_ctx_set_error(ctx, "te_scan '%s': init '%s' has extent %s in dimension %d, the "
                                    "update '%s' %s; init is (steps, ...) with the update's "
                                    "extents after the first", nm, in->name,
                               ir_expr_str(in->shape[k]), k, up->name, ir_expr_str(up->shape[k]));
  }
  int64_t L, T;
  if (!ir_is_const_int(in->shape[0], &L) || L < 1)
    return tec_ctx_set_error(ctx, "te_scan '%s': init '%s' gives %s steps (its extent 0); it "
                                  "must be a constant >= 1", nm, in->name,
                             ir_expr_str(in->shape[0]));
  if (ir_is_const_int(up->shape[0], &T) && T <= L)
    return tec_ctx_set_error(ctx, "te_scan '%s': init '%s' gives %lld steps of %lld, leaving "
                                  "none to the update '%s'; give init fewer steps than the scan",
                             nm, in->name, (long long)L, (long long)T, up->name);
  *ninit = L;
  return 0;
}

te_tensor *te_scan(tec_ctx *ctx, const te_scan_decl *d) {
  if (!ctx) return NULL;
  if (!d) {
    tec_ctx_set_error(ctx, "te_scan: the declaration is NULL");
    return NULL;
  }
  if (te_check_name(ctx, "te_scan", d->name)) return NULL;
  int64_t L = 0;
  if (check_decl(ctx, d, &L)) return NULL;
  te_tensor *up = d->update;
  chain_walk w = {ctx, d->name, d->state, L, up->shape[0], NULL, 0, 0, NULL, 0, 0};
  int r = find_chain(&w, up, 0);
  if (r < 0) return NULL;
  if (!r) {
    tec_ctx_set_error(ctx, "te_scan '%s': the update '%s' never reads the state '%s', so this is "
                           "no recurrence; read %s[t - 1, ...] in it, or use te_compute",
                      d->name, up->name, d->state->name, d->state->name);
    return NULL;
  }
  int pointwise;
  if (check_chain(&w, &pointwise)) return NULL;
  chain_walk wi = {ctx, d->name, d->state, L, up->shape[0], NULL, 0, 0, NULL, 0, 0};
  if ((r = find_chain(&wi, d->init, 0)) != 0) {
    if (r > 0)
      tec_ctx_set_error(ctx, "te_scan '%s': init '%s' reads the state '%s', which holds the steps "
                             "init gives; compute init from other tensors", d->name,
                        d->init->name, d->state->name);
    return NULL;
  }
  int n = up->ndim;
  const char **names = tec_ctx_alloc(ctx, sizeof *names * (size_t)n);
  te_scan_info *sc = tec_ctx_alloc(ctx, sizeof *sc);
  const te_tensor **inputs = tec_ctx_alloc(ctx, sizeof *inputs * 2);
  te_tensor *t = tec_ctx_alloc(ctx, sizeof *t);
  if (!names || !sc || !inputs || !t) return NULL;
  names[0] = d->axis_name && *d->axis_name ? d->axis_name : "t";
  for (int k = 1; k < n; k++) names[k] = up->axis[k]->name;
  const ir_expr *const *axis = te_new_axes(ctx, n, up->shape, names);
  const ir_expr *body = axis ? te_read(up, n, axis) : NULL;
  if (!body) return NULL;
  *sc = (te_scan_info){d->state, d->init, up, L, w.n, w.chain, pointwise};
  inputs[0] = d->init;
  inputs[1] = up;
  t->op = TE_COMPUTE;
  t->ctx = ctx;
  t->name = tec_ctx_strdup(ctx, d->name);
  t->type = up->type;
  t->ndim = n;
  t->shape = up->shape;
  t->axis = axis;
  t->body = body;
  t->ninputs = 2;
  t->inputs = inputs;
  t->nout = 1;
  t->id = tec_ctx_next_id(ctx);
  t->scan = sc;
  d->state->scan_of = t;
  return t;
}
