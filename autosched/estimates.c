/* estimates.c — symbolic sizes: every extent the rules read is a number, either a constant of
 * the program or computed from the user's estimates (Halide's set_estimates). A size without
 * an estimate refuses the call, naming it; an estimate naming no size of the program, or
 * below 1, too (a typo would otherwise be ignored silently). A reduce axis whose extent uses
 * other axes (a triangular sum) marks its stage for the rules to leave alone. */
#include <stdio.h>
#include <string.h>
#include "autosched/internal.h"

static int estimate_of(const as_prog *p, const char *name, int64_t *v) {
  const tec_autosched_options *o = p->opt;
  for (int i = 0; o && i < o->nestimates; i++)
    if (o->estimates[i].name && !strcmp(o->estimates[i].name, name)) {
      *v = o->estimates[i].value;
      return 1;
    }
  return 0;
}

int as_eval(const as_prog *p, const ir_expr *e, int64_t *out, const char **missing) {
  int64_t a = 0, b = 0;
  if (!e) return -1;
  switch (e->kind) {
    case IR_INT_IMM: *out = e->v.i; return 0;
    case IR_VAR:
      if (e->v.i == IR_VAR_SIZE && estimate_of(p, e->name, out)) return 0;
      if (e->v.i == IR_VAR_SIZE && missing && !*missing) *missing = e->name;
      return -1;
    case IR_CAST: return as_eval(p, e->a, out, missing);
    default: break;
  }
  if (!e->a || !e->b) return -1;
  int ra = as_eval(p, e->a, &a, missing), rb = as_eval(p, e->b, &b, missing);
  if (ra || rb) return -1;
  switch (e->kind) {
    case IR_ADD: *out = a + b; return 0;
    case IR_SUB: *out = a - b; return 0;
    case IR_MUL: *out = a * b; return 0;
    case IR_MIN: *out = a < b ? a : b; return 0;
    case IR_MAX: *out = a > b ? a : b; return 0;
    case IR_DIV:
    case IR_FLOORDIV:
      if (b == 0) return -1;
      *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
      return 0;
    case IR_MOD:
    case IR_FLOORMOD:
      if (b == 0) return -1;
      *out = ((a % b) + b) % b;
      return 0;
    default: return -1;
  }
}

/* 1 if a size variable called name occurs in e */
static int uses_size(const ir_expr *e, const char *name) {
  if (!e) return 0;
  if (e->kind == IR_VAR) return e->v.i == IR_VAR_SIZE && !strcmp(e->name, name);
  if (uses_size(e->a, name) || uses_size(e->b, name) || uses_size(e->c, name)) return 1;
  for (int i = 0; i < e->nargs; i++)
    if (uses_size(e->args[i], name)) return 1;
  return 0;
}

static int fill(as_prog *p, as_stage *s, const char **missing, const char **where) {
  const te_tensor *t = s->t;
  s->const_ext = 1;
  for (int d = 0; d < t->ndim && d < AS_MAX_DIM; d++) {
    s->const_ext &= t->shape[d]->kind == IR_INT_IMM;
    if (as_eval(p, t->shape[d], &s->ext[d], missing)) {
      if (*missing && !*where) *where = t->name;
      return -1;
    }
  }
  s->red_total = 1;
  for (int r = 0; r < s->nred && r < AS_MAX_DIM; r++) {
    const ir_expr *ax = t->reduce_axis[r];
    s->const_ext &= ax->dom_extent && ax->dom_extent->kind == IR_INT_IMM;
    if (as_eval(p, ax->dom_extent, &s->rext[r], missing)) {
      if (*missing && !*where) *where = t->name;
      if (*missing) return -1;
      /* a domain over other axes (a triangular r < j + 1): the rules leave the stage alone */
      s->odd_domain = 1;
      s->rext[r] = 1;
    }
    if (s->red_total < ((int64_t)1 << 40)) s->red_total *= s->rext[r] > 0 ? s->rext[r] : 1;
  }
  return 0;
}

int as_estimates(as_prog *p) {
  const tec_autosched_options *o = p->opt;
  for (int i = 0; o && i < o->nestimates; i++) {
    const tec_autosched_estimate *e = &o->estimates[i];
    if (!e->name) return tec_ctx_set_error(p->ctx, "tec_autoschedule: estimate %d has no name", i);
    if (e->value < 1)
      return tec_ctx_set_error(p->ctx,
                               "tec_autoschedule: the estimate of '%s' is %lld; estimates "
                               "must be >= 1",
                               e->name, (long long)e->value);
    int used = 0;
    for (int k = 0; k < p->n && !used; k++) {
      const te_tensor *t = p->st[k].t;
      for (int d = 0; d < t->ndim; d++) used |= uses_size(t->shape[d], e->name);
      for (int r = 0; r < p->st[k].nred; r++)
        used |= uses_size(t->reduce_axis[r]->dom_extent, e->name);
    }
    if (!used)
      return tec_ctx_set_error(p->ctx,
                               "tec_autoschedule: an estimate names '%s', which is no size of "
                               "the program",
                               e->name);
  }
  /* every size without an estimate, named, before anything is computed */
  char names[512] = "";
  const char *first_where = NULL;
  int nmiss = 0;
  for (int k = 0; k < p->n; k++) {
    const te_tensor *t = p->st[k].t;
    int nx = t->ndim + p->st[k].nred;
    for (int x = 0; x < nx; x++) {
      const ir_expr *e = x < t->ndim ? t->shape[x] : t->reduce_axis[x - t->ndim]->dom_extent;
      const char *missing = NULL;
      int64_t v;
      while (as_eval(p, e, &v, &missing) && missing) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "'%s'", missing);
        if (!strstr(names, quoted) && strlen(names) + strlen(quoted) + 3 < sizeof names) {
          if (nmiss++) strcat(names, ", ");
          strcat(names, quoted);
          if (!first_where) first_where = t->name;
        }
        e = NULL; /* one size per extent is enough to name; the others show up elsewhere */
        break;
      }
    }
  }
  if (nmiss)
    return tec_ctx_set_error(p->ctx,
                             "tec_autoschedule: symbolic size%s %s ha%s no estimate (first "
                             "used by '%s'); give one per size in "
                             "tec_autosched_options.estimates",
                             nmiss > 1 ? "s" : "", names, nmiss > 1 ? "ve" : "s", first_where);
  for (int k = 0; k < p->n; k++) {
    const char *missing = NULL, *where = NULL;
    if (fill(p, &p->st[k], &missing, &where))
      return tec_ctx_set_error_kind(p->ctx, TEC_ERR_UNSUPPORTED,
                                    "tec_autoschedule: an extent of '%s' is not an integer "
                                    "expression of sizes and constants",
                                    p->st[k].t->name);
  }
  return 0;
}
