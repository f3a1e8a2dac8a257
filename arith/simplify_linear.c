/* simplify_linear.c — canonical linear forms of integer index expressions.
 *
 * An expression built from + - and multiplication by constants is flattened into
 * sum(coef_i * term_i) + c, like terms (ir_expr_equal) are collected, zero terms dropped, and
 * the sum is rebuilt in a fixed order: positive terms in order of first appearance, then the
 * negative ones subtracted, then the constant.
 *
 *   (i*4 + j) - i*4          ->  j
 *   x*2 + x*3                ->  x*5
 *   (a + 3) + 4              ->  a + 7
 *   3*(a + 2) - a            ->  a*2 + 6
 *   floordiv(x, 8)*8 + floormod(x, 8)  ->  x
 *
 * Integer + - * are a ring under wrapping, so this is exact at any width.
 */
#include <stdlib.h>
#include <string.h>
#include "arith/arith.h"

void arith_linear_init(arith_linear *l, tec_ctx *ctx, tec_dtype t) {
  memset(l, 0, sizeof *l);
  l->ctx = ctx;
  l->type = t;
}

void arith_linear_free(arith_linear *l) {
  free(l->t);
  l->t = NULL;
  l->n = l->cap = 0;
}

static int64_t wrap_add(tec_dtype t, int64_t a, int64_t b) {
  return arith_wrap(t, (int64_t)((uint64_t)a + (uint64_t)b));
}
static int64_t wrap_mul(tec_dtype t, int64_t a, int64_t b) {
  return arith_wrap(t, (int64_t)((uint64_t)a * (uint64_t)b));
}

void arith_linear_add_term(arith_linear *l, const ir_expr *term, int64_t coef) {
  if (l->oom) return;
  if (!term) {
    l->oom = 1;
    return;
  }
  for (int i = 0; i < l->n; i++)
    if (l->t[i].e == term || ir_expr_equal(l->t[i].e, term)) {
      l->t[i].coef = wrap_add(l->type, l->t[i].coef, coef);
      return;
    }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    arith_term *t = realloc(l->t, sizeof *t * (size_t)cap);
    if (!t) { /* the caller keeps the expression unsimplified; the call fails (te.h) */
      l->oom = 1;
      tec_ctx_set_error_kind(term->ctx, TEC_ERR_OOM, "out of memory (simplifying an expression)");
      return;
    }
    l->t = t;
    l->cap = cap;
  }
  l->t[l->n++] = (arith_term){term, arith_wrap(l->type, coef)};
}

void arith_linear_add_expr(arith_linear *l, const ir_expr *e, int64_t scale) {
  int64_t v;
  if (l->oom) return;
  if (!e) {
    l->oom = 1;
    return;
  }
  if (scale == 0) return;
  if (!tec_dtype_eq(e->type, l->type)) {
    arith_linear_add_term(l, e, scale);
    return;
  }
  switch (e->kind) {
  case IR_INT_IMM:
    l->c = wrap_add(l->type, l->c, wrap_mul(l->type, e->v.i, scale));
    return;
  case IR_ADD:
    arith_linear_add_expr(l, e->a, scale);
    arith_linear_add_expr(l, e->b, scale);
    return;
  case IR_SUB:
    arith_linear_add_expr(l, e->a, scale);
    arith_linear_add_expr(l, e->b, wrap_mul(l->type, scale, -1));
    return;
  case IR_MUL:
    if (arith_is_imm(e->b, &v)) {
      arith_linear_add_expr(l, e->a, wrap_mul(l->type, scale, v));
      return;
    }
    if (arith_is_imm(e->a, &v)) {
      arith_linear_add_expr(l, e->b, wrap_mul(l->type, scale, v));
      return;
    }
    break;
  default:
    break;
  }
  arith_linear_add_term(l, e, scale);
}

/* Is d a division of x by c, of the kind (floor or trunc) matching the modulo kind m? */
static int is_div_of(const ir_expr *d, ir_expr_kind kind, const ir_expr *x, int64_t c) {
  int64_t v;
  return d->kind == kind && arith_is_imm(d->b, &v) && v == c && ir_expr_equal(d->a, x);
}

void arith_linear_normalize(arith_linear *l) {
  if (l->oom) return;
  /* floordiv(x, c)*(c*k) + floormod(x, c)*k == x*k (truncating forms too). */
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < l->n && !changed; i++) {
      const ir_expr *m = l->t[i].e;
      int64_t c, k = l->t[i].coef, ck;
      if (k == 0 || (m->kind != IR_FLOORMOD && m->kind != IR_MOD) || !arith_is_imm(m->b, &c) ||
          c == 0 || __builtin_mul_overflow(c, k, &ck))
        continue;
      ir_expr_kind dk = m->kind == IR_FLOORMOD ? IR_FLOORDIV : IR_DIV;
      for (int j = 0; j < l->n; j++) {
        if (j == i || l->t[j].coef != ck || !is_div_of(l->t[j].e, dk, m->a, c)) continue;
        l->t[i].coef = 0;
        l->t[j].coef = 0;
        arith_linear_add_expr(l, m->a, k);
        changed = 1;
        break;
      }
    }
  }
  int n = 0;
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef != 0) l->t[n++] = l->t[i];
  l->n = n;
}

static const ir_expr *term_times(const arith_linear *l, const ir_expr *t, int64_t coef) {
  if (coef == 1) return t;
  return ir_mul(t, ir_int_t(l->ctx, l->type, coef));
}

const ir_expr *arith_linear_build(const arith_linear *l) {
  if (l->oom) return NULL;
  const ir_expr *acc = NULL;
  int64_t c = l->c;
  /* positive terms (INT64_MIN has no positive twin: it goes with them, as a product) */
  for (int i = 0; i < l->n; i++) {
    int64_t k = l->t[i].coef;
    if (k == 0 || (k < 0 && k != INT64_MIN)) continue;
    const ir_expr *t = term_times(l, l->t[i].e, k);
    acc = acc ? ir_add(acc, t) : t;
  }
  for (int i = 0; i < l->n; i++) {
    int64_t k = l->t[i].coef;
    if (k >= 0 || k == INT64_MIN) continue;
    if (!acc) {
      if (c > 0) {
        acc = ir_sub(ir_int_t(l->ctx, l->type, c), term_times(l, l->t[i].e, -k));
        c = 0;
      } else {
        acc = term_times(l, l->t[i].e, k);
      }
      continue;
    }
    acc = ir_sub(acc, term_times(l, l->t[i].e, -k));
  }
  if (!acc) return ir_int_t(l->ctx, l->type, c);
  if (c > 0 || c == INT64_MIN) return ir_add(acc, ir_int_t(l->ctx, l->type, c));
  if (c < 0) return ir_sub(acc, ir_int_t(l->ctx, l->type, -c));
  return acc;
}

const ir_expr *arith_canonical(const ir_expr *e) {
  if (!e || !arith_is_index_type(e->type)) return NULL;
  arith_linear l;
  arith_linear_init(&l, e->ctx, e->type);
  arith_linear_add_expr(&l, e, 1);
  arith_linear_normalize(&l);
  const ir_expr *r = arith_linear_build(&l);
  arith_linear_free(&l);
  return r;
}
