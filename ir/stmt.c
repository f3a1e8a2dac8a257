/* stmt.c — constructors for statements (NULL in, NULL out; ir_seq drops NULL items). */
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"

static ir_stmt *new_stmt(tec_ctx *ctx, ir_stmt_kind kind) {
  ir_stmt *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s) return NULL;
  s->kind = kind;
  s->ctx = ctx;
  return s;
}

const ir_stmt *ir_for(const ir_expr *var, const ir_expr *min, const ir_expr *extent,
                      ir_for_kind kind, const ir_stmt *body) {
  if (!var || !min || !extent || !body) return NULL;
  ir_stmt *s = new_stmt(var->ctx, IR_S_FOR);
  if (!s) return NULL;
  s->var = var;
  s->a = min;
  s->b = extent;
  s->for_kind = kind;
  s->body = body;
  return s;
}

const ir_stmt *ir_store(const ir_expr *buf, const ir_expr *index, const ir_expr *value,
                        const ir_expr *pred) {
  if (!buf || !index || !value) return NULL;
  ir_stmt *s = new_stmt(buf->ctx, IR_S_STORE);
  if (!s) return NULL;
  s->var = buf;
  s->a = index;
  s->b = value;
  s->c = pred;
  return s;
}

const ir_stmt *ir_provide(const te_tensor *t, int nargs, const ir_expr *const *idx,
                          const ir_expr *value) {
  if (!t || !value) return NULL;
  ir_stmt *s = new_stmt(value->ctx, IR_S_PROVIDE);
  if (!s) return NULL;
  const ir_expr **a = tec_ctx_alloc(value->ctx, sizeof *a * (size_t)(nargs ? nargs : 1));
  if (!a) return NULL;
  for (int i = 0; i < nargs; i++) {
    if (!idx[i]) return NULL;
    a[i] = idx[i];
  }
  s->tensor = t;
  s->n = nargs;
  s->args = a;
  s->a = value;
  return s;
}

const ir_stmt *ir_realize(const te_tensor *t, int ndim, const ir_expr *const *min_extent,
                          const ir_stmt *body) {
  if (!t || !body) return NULL;
  ir_stmt *s = new_stmt(body->ctx, IR_S_REALIZE);
  if (!s) return NULL;
  const ir_expr **a = tec_ctx_alloc(body->ctx, sizeof *a * (size_t)(2 * ndim + 1));
  if (!a) return NULL;
  for (int i = 0; i < 2 * ndim; i++) {
    if (!min_extent[i]) return NULL;
    a[i] = min_extent[i];
  }
  s->tensor = t;
  s->n = ndim;
  s->args = a;
  s->body = body;
  return s;
}

const ir_stmt *ir_allocate(const ir_expr *buf, tec_dtype t, const ir_expr *size,
                           const ir_stmt *body) {
  if (!buf || !size || !body) return NULL;
  ir_stmt *s = new_stmt(buf->ctx, IR_S_ALLOCATE);
  if (!s) return NULL;
  s->var = buf;
  s->type = t;
  s->a = size;
  s->body = body;
  return s;
}

const ir_stmt *ir_seq(tec_ctx *ctx, int n, const ir_stmt *const *items) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    if (!items[i]) continue;
    count += items[i]->kind == IR_S_SEQ ? items[i]->n : 1;
  }
  if (count == 0) return NULL;
  if (count == 1) {
    for (int i = 0; i < n; i++)
      if (items[i]) return items[i]->kind == IR_S_SEQ ? items[i]->seq[0] : items[i];
  }
  const ir_stmt **flat = tec_ctx_alloc(ctx, sizeof *flat * (size_t)count);
  ir_stmt *s = new_stmt(ctx, IR_S_SEQ);
  if (!flat || !s) return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (!items[i]) continue;
    if (items[i]->kind == IR_S_SEQ)
      for (int j = 0; j < items[i]->n; j++) flat[k++] = items[i]->seq[j];
    else
      flat[k++] = items[i];
  }
  s->n = count;
  s->seq = flat;
  return s;
}

const ir_stmt *ir_seq2(const ir_stmt *a, const ir_stmt *b) {
  if (!a) return b;
  if (!b) return a;
  return ir_seq(a->ctx, 2, (const ir_stmt *const[]){a, b});
}

const ir_stmt *ir_if(const ir_expr *cond, const ir_stmt *then_s, const ir_stmt *else_s) {
  if (!cond || !then_s) return NULL;
  ir_stmt *s = new_stmt(cond->ctx, IR_S_IF);
  if (!s) return NULL;
  s->a = cond;
  s->body = then_s;
  s->else_body = else_s;
  return s;
}

const ir_stmt *ir_let_stmt(const ir_expr *var, const ir_expr *value, const ir_stmt *body) {
  if (!var || !value || !body) return NULL;
  ir_stmt *s = new_stmt(var->ctx, IR_S_LET_STMT);
  if (!s) return NULL;
  s->var = var;
  s->a = value;
  s->body = body;
  return s;
}

const ir_stmt *ir_attr(const char *key, const ir_expr *value, const ir_stmt *body) {
  if (!key || !body) return NULL;
  ir_stmt *s = new_stmt(body->ctx, IR_S_ATTR);
  if (!s) return NULL;
  s->name = tec_ctx_strdup(body->ctx, key);
  s->a = value;
  s->body = body;
  return s;
}

const ir_stmt *ir_attr_buffer_reuse(const ir_expr *buf, const ir_expr *was, const ir_stmt *body) {
  if (!buf || !was || !body) return NULL;
  ir_stmt *s = new_stmt(body->ctx, IR_S_ATTR);
  if (!s) return NULL;
  s->name = IR_ATTR_BUFFER_REUSE;
  s->a = buf;
  s->var = was;
  s->body = body;
  return s;
}

const ir_stmt *ir_evaluate(const ir_expr *value) {
  if (!value) return NULL;
  ir_stmt *s = new_stmt(value->ctx, IR_S_EVALUATE);
  if (s) s->a = value;
  return s;
}

const ir_stmt *ir_produce(const te_tensor *t, const ir_stmt *body) {
  if (!t || !body) return NULL;
  ir_stmt *s = new_stmt(body->ctx, IR_S_PRODUCE);
  if (!s) return NULL;
  s->tensor = t;
  s->body = body;
  return s;
}

const ir_stmt *ir_stmt_with(const ir_stmt *s, const ir_expr *a, const ir_expr *b,
                            const ir_expr *c, const ir_stmt *body, const ir_stmt *else_body,
                            const ir_stmt *const *seq, const ir_expr *const *args) {
  if (!s) return NULL;
  if (s->a == a && s->b == b && s->c == c && s->body == body && s->else_body == else_body &&
      s->seq == seq && s->args == args)
    return s;
  ir_stmt *n = tec_ctx_alloc(s->ctx, sizeof *n);
  if (!n) return NULL;
  *n = *s;
  n->a = a;
  n->b = b;
  n->c = c;
  n->body = body;
  n->else_body = else_body;
  n->seq = seq;
  n->args = args;
  return n;
}

const ir_stmt *ir_assert(const ir_expr *cond, const char *msg, const ir_expr *a,
                         const ir_expr *b) {
  if (!cond || !msg) return NULL;
  ir_stmt *s = new_stmt(cond->ctx, IR_S_ASSERT);
  if (!s) return NULL;
  s->name = tec_ctx_strdup(cond->ctx, msg);
  s->a = cond;
  s->b = a;
  s->c = b;
  return s->name ? s : NULL;
}
