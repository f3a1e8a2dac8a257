/* verify.c — lower_verify: the structural IR verifier the pipeline runs between passes.
 *
 * It checks what every pass and codegen assume, not what a program computes:
 * - every loop, let and reduce-axis variable used is bound by an enclosing FOR, LET_STMT, LET
 *   or REDUCE; a size variable is one of the function's (once check_sizes has run); a buffer
 *   variable is an argument's or an enclosing ALLOCATE's;
 * - before storage_flatten a tensor read or provided is an argument or realized around the
 *   access; after it no READ, PROVIDE or REALIZE is left;
 * - constant loop extents and allocation sizes are non-negative, loop variables are scalar
 *   integers, children a kind requires are there (a SEQ holds no NULL, an IF has a
 *   condition), LOAD and STORE name a buffer variable.
 * A violation is an internal error naming the pass after which the program broke and what is
 * wrong. The scope stack is malloc'd, so verifying leaves nothing in the ctx's arena. */
#include <stdlib.h>
#include "lower/passes.h"

typedef struct vf_state {
  const lower_func *f;
  const lower_verify_what *what;
  const void **bound;          /* VAR expressions and tensors in scope, innermost last */
  int n, cap;
  const char *bad;             /* the first violation (static text) */
  const ir_expr *bad_var;
  const te_tensor *bad_tensor;
  int oom;
} vf_state;

static void push(vf_state *v, const void *x) {
  if (v->n == v->cap) {
    int cap = v->cap ? 2 * v->cap : 64;
    const void **nb = realloc(v->bound, sizeof *nb * (size_t)cap);
    if (!nb) {
      v->oom = 1;
      return;
    }
    v->bound = nb, v->cap = cap;
  }
  v->bound[v->n++] = x;
}

static int in_scope(const vf_state *v, const void *x) {
  for (int i = v->n - 1; i >= 0; i--)
    if (v->bound[i] == x) return 1;
  return 0;
}

static void fail(vf_state *v, const char *what, const ir_expr *var, const te_tensor *t) {
  if (v->bad) return;
  v->bad = what, v->bad_var = var, v->bad_tensor = t;
}

static int is_arg_tensor(const vf_state *v, const te_tensor *t) {
  for (int i = 0; i < v->f->nargs; i++)
    if (v->f->args[i] == t) return 1;
  return 0;
}

static void check_var(vf_state *v, const ir_expr *e) {
  switch ((ir_var_kind)e->v.i) {
  case IR_VAR_SIZE:
    if (v->what->sizes) {
      int ok = 0;
      for (int i = 0; i < v->f->nsize; i++) ok |= v->f->size_vars[i] == e;
      if (!ok) fail(v, "size variable is not one of the function's", e, NULL);
    }
    return;
  case IR_VAR_BUFFER: {
    int ok = in_scope(v, e);
    for (int i = 0; i < v->f->nargs && !ok; i++) ok = v->f->arg_bufs[i] == e;
    if (!ok) fail(v, "buffer is neither an argument nor allocated around its use", e, NULL);
    return;
  }
  default:
    if (!in_scope(v, e)) fail(v, "variable is used outside the loop, let or reduction that "
                                 "binds it", e, NULL);
  }
}

static void expr(vf_state *v, const ir_expr *e);
static void stmt(vf_state *v, const ir_stmt *s);

static void exprs(vf_state *v, int n, const ir_expr *const *a) {
  for (int i = 0; a && i < n; i++) {
    if (!a[i]) fail(v, "an expression list holds NULL", NULL, NULL);
    expr(v, a[i]);
  }
}

static void expr(vf_state *v, const ir_expr *e) {
  if (!e || v->bad) return;
  int mark = v->n;
  switch (e->kind) {
  case IR_VAR: check_var(v, e); return;
  case IR_READ: {
    /* a scan's state (before the pass scan) is read where the scan's buffer is */
    const te_tensor *t = e->tensor && e->tensor->scan_of ? e->tensor->scan_of : e->tensor;
    if (v->what->flat) fail(v, "a tensor READ is left after storage_flatten", NULL, e->tensor);
    else if (!is_arg_tensor(v, t) && !in_scope(v, t))
      fail(v, "tensor is read outside its realize and is no argument", NULL, e->tensor);
    exprs(v, e->nargs, e->args);
    return;
  }
  case IR_LOAD:
    if (!e->a || e->a->kind != IR_VAR || e->a->v.i != IR_VAR_BUFFER || !e->b)
      fail(v, "a LOAD without a buffer variable or an index", NULL, NULL);
    break;
  case IR_LET:
    expr(v, e->a);
    push(v, e->var);
    expr(v, e->b);
    v->n = mark;
    return;
  case IR_REDUCE:
    expr(v, e->c); /* the init, outside the reduce axes' scope */
    for (int i = 0; i < e->nargs; i++) push(v, e->args[i]);
    expr(v, e->a);
    expr(v, e->b);
    v->n = mark;
    return;
  case IR_CALL: exprs(v, e->nargs, e->args); return;
  default: break;
  }
  expr(v, e->a);
  expr(v, e->b);
  expr(v, e->c);
}

static void nonneg(vf_state *v, const ir_expr *e, const char *what) {
  int64_t k;
  if (!e) fail(v, what, NULL, NULL);
  else if (ir_is_const_int(e, &k) && k < 0) fail(v, what, NULL, NULL);
}

static void stmt(vf_state *v, const ir_stmt *s) {
  if (!s || v->bad) return;
  int mark = v->n;
  switch (s->kind) {
  case IR_S_FOR:
    if (!s->var || s->var->kind != IR_VAR || s->var->type.lanes != 1 ||
        !tec_dtype_is_int(s->var->type) || !s->a)
      fail(v, "a loop without a scalar integer variable or a start", s->var, NULL);
    nonneg(v, s->b, "a loop extent is missing or a negative constant");
    expr(v, s->a);
    expr(v, s->b);
    push(v, s->var);
    stmt(v, s->body);
    break;
  case IR_S_LET_STMT:
    expr(v, s->a);
    push(v, s->var);
    stmt(v, s->body);
    break;
  case IR_S_ALLOCATE:
    if (!s->var || s->var->kind != IR_VAR || s->var->v.i != IR_VAR_BUFFER)
      fail(v, "an allocate without a buffer variable", s->var, NULL);
    nonneg(v, s->a, "an allocation size is missing or a negative constant");
    expr(v, s->a);
    push(v, s->var);
    stmt(v, s->body);
    break;
  case IR_S_STORE:
    if (!s->var || s->var->kind != IR_VAR || s->var->v.i != IR_VAR_BUFFER || !s->a || !s->b)
      fail(v, "a STORE without a buffer variable, an index or a value", NULL, NULL);
    else check_var(v, s->var);
    expr(v, s->a);
    expr(v, s->b);
    expr(v, s->c);
    break;
  case IR_S_PROVIDE:
    if (v->what->flat) fail(v, "a PROVIDE is left after storage_flatten", NULL, s->tensor);
    else if (!is_arg_tensor(v, s->tensor) && !in_scope(v, s->tensor))
      fail(v, "tensor is provided outside its realize and is no argument", NULL, s->tensor);
    exprs(v, s->n, s->args);
    expr(v, s->a);
    break;
  case IR_S_REALIZE:
    if (v->what->flat) fail(v, "a REALIZE is left after storage_flatten", NULL, s->tensor);
    exprs(v, 2 * s->n, s->args);
    push(v, s->tensor);
    stmt(v, s->body);
    break;
  case IR_S_SEQ:
    for (int i = 0; i < s->n; i++) {
      if (!s->seq[i]) fail(v, "a sequence holds NULL", NULL, NULL);
      stmt(v, s->seq[i]);
    }
    break;
  case IR_S_IF:
    if (!s->a) fail(v, "an if without a condition", NULL, NULL);
    expr(v, s->a);
    stmt(v, s->body);
    stmt(v, s->else_body);
    break;
  case IR_S_ASSERT:
    if (!s->a || !s->name) fail(v, "an assert without a condition or a message", NULL, NULL);
    expr(v, s->a);
    expr(v, s->b);
    expr(v, s->c);
    break;
  default: /* ATTR, EVALUATE, PRODUCE */
    expr(v, s->a);
    stmt(v, s->body);
    break;
  }
  v->n = mark;
}

int lower_verify(const lower_func *f, const ir_stmt *body, const char *after,
                 const lower_verify_what *what) {
  vf_state v = {.f = f, .what = what};
  stmt(&v, body);
  free(v.bound);
  if (v.oom) return 0; /* could not check: not a verdict on the program */
  if (!v.bad) return 0;
  const char *name = v.bad_var ? v.bad_var->name : v.bad_tensor ? v.bad_tensor->name : NULL;
  tec_ctx_set_error_kind(f->ctx, TEC_ERR_INTERNAL,
                         "internal error: the program of '%s' is malformed after pass '%s': "
                         "%s%s%s%s",
                         f->name, after, v.bad, name ? " ('" : "", name ? name : "",
                         name ? "')" : "");
  return -1;
}
