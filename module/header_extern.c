/* header_extern.c — the AOT header's declarations of the C functions that extern stages
 * (te_extern) call: the object file references them by name, the user links them in.
 *
 *   /- extern stages: link these functions (tec/runtime.h: struct tec_extern_buffer) -/
 *   struct tec_extern_buffer;
 *   int32_t my_sgemm(const struct tec_extern_buffer *bufs, int32_t nbuf);  /- stage 'G' -/ */
#include <string.h>
#include "module/module.h"

typedef struct xsyms {
  tec_ctx *ctx;
  int n, cap;
  const te_tensor **t;
} xsyms;

static void find_call(ir_visitor *v, const ir_expr *e) {
  xsyms *x = v->user;
  if (e->kind == IR_CALL && e->v.i == IR_INTRIN_EXTERN && e->tensor && e->tensor->ext &&
      e->tensor->ext->symbol) {
    int seen = 0;
    for (int i = 0; i < x->n; i++) seen |= strcmp(x->t[i]->ext->symbol, e->tensor->ext->symbol) == 0;
    if (!seen && !tec_grow(x->ctx, (void **)&x->t, &x->cap, x->n + 1, sizeof *x->t))
      x->t[x->n++] = e->tensor;
  }
  ir_visit_expr_default(v, e);
}

void mod_header_externs(FILE *out, tec_ctx *ctx, int nfuncs, lower_func *const *funcs) {
  xsyms x = {ctx, 0, 0, NULL};
  ir_visitor v;
  ir_visitor_init(&v, &x);
  v.expr[IR_CALL] = find_call;
  for (int i = 0; i < nfuncs; i++) {
    ir_visit_stmt(&v, funcs[i]->body);
    if (funcs[i]->prepare) ir_visit_stmt(&v, funcs[i]->prepare->body);
  }
  if (!x.n) return;
  fprintf(out, "\n/* extern stages: the object calls these functions, link them in (struct\n"
               " * tec_extern_buffer: tec/runtime.h; 0 for success) */\nstruct tec_extern_buffer;\n");
  for (int i = 0; i < x.n; i++)
    fprintf(out, "int32_t %s(const struct tec_extern_buffer *bufs, int32_t nbuf); /* stage '%s' */\n",
            x.t[i]->ext->symbol, x.t[i]->name);
}
