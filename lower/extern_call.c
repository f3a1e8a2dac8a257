/* extern_call.c — the strides of every extern stage's call, once storage_flatten has made its
 * region reads loads (extern_nest.c builds the call before flattening, when a tensor's
 * strides are not known yet).
 *
 * Per buffer, the operands  first, probe_0 .. probe_{n-1}, extents, mins  where probe_d is the
 * load one step along dimension d, become  first, strides, extents, mins  with
 * stride_d = probe_d's index - first's index (a number, or an expression of the sizes):
 *   extern_call(A[(i*64 + j)], A[((i + 1)*64 + j)], A[(i*64 + j + 1)], ...)
 *     -> extern_call(A[(i*64 + j)], 64, 1, ...)
 * The first load stays a load: codegen passes its address, it never reads it. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"

typedef struct xc_state {
  int error;
} xc_state;

/* The rank of buffer b of call e: inputs in declaration order, then the output. */
static int rank_of(const ir_expr *e, int b) {
  const te_extern_decl *d = e->tensor->ext;
  return b < d->ninputs ? d->inputs[b]->ndim : e->tensor->ndim;
}

static const ir_expr *xc_call(ir_mutator *m, const ir_expr *e) {
  xc_state *st = m->user;
  e = ir_mutate_expr_default(m, e);
  if (!e || e->kind != IR_CALL || e->v.i != IR_INTRIN_EXTERN || e->type.code != TEC_INT ||
      !e->tensor || !e->tensor->ext)
    return e; /* the stage's placeholder body (typed like its tensor) is not a call */
  const ir_expr **a = tec_ctx_alloc(m->ctx, sizeof *a * (size_t)(e->nargs + 1));
  if (!a) return NULL;
  int nbuf = e->tensor->ext->ninputs + 1, p = 0;
  for (int b = 0; b < nbuf; b++) {
    int nd = rank_of(e, b);
    if (p + 1 + 3 * nd > e->nargs) break;
    const ir_expr *first = e->args[p];
    if (first->kind != IR_LOAD) {
      st->error = 1;
      TEC_INTERNAL(m->ctx, "an extern call's region is not a load after flattening");
      return NULL;
    }
    a[p] = first;
    for (int d = 0; d < nd; d++) {
      const ir_expr *probe = e->args[p + 1 + d];
      if (probe->kind != IR_LOAD || probe->a != first->a) {
        st->error = 1;
        TEC_INTERNAL(m->ctx, "an extern call's stride probe is not a load of its buffer");
        return NULL;
      }
      a[p + 1 + d] = arith_simplify(ir_sub(probe->b, first->b), NULL);
    }
    for (int k = 1 + nd; k < 1 + 3 * nd; k++) a[p + k] = e->args[p + k];
    p += 1 + 3 * nd;
  }
  if (p != e->nargs) {
    st->error = 1;
    TEC_INTERNAL(m->ctx, "an extern call's operands do not match its declaration");
    return NULL;
  }
  return ir_expr_with(e, e->a, e->b, e->c, a);
}

const ir_stmt *lower_extern_call(const ir_stmt *body) {
  if (!body) return NULL;
  xc_state st = {0};
  ir_mutator m;
  ir_mutator_init(&m, body->ctx, &st);
  m.expr[IR_CALL] = xc_call;
  const ir_stmt *out = ir_mutate_stmt(&m, body);
  return st.error ? NULL : out;
}
