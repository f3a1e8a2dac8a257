/* tensorize.c — lower_tensorize: a loop nest marked by sch_tensorize (attr pragma_tensorize =
 * intrinsic) becomes the intrinsic, after the nest is checked to compute what it computes.
 * Today the one intrinsic is dot4 (IR_INTRIN_DOT4):
 *
 *   // attr pragma_tensorize = 0                  C[ramp(c, 1, 16)] =
 *   for (j.inner, 0, 16) {                          dot4(C[ramp(c, 1, 16)],
 *     for (k.inner, 0, 4) {                  ->          A[ramp(a, 1, 4)],      // shared
 *       C[c + j.inner] = C[c + j.inner] +               B[ramp(b, 1, 64)])     // 4 per lane
 *         int32(A[a + k.inner]) * int32(B[b + j.inner*4 + k.inner])
 *
 * The nest must be exactly two loops (either order), one update C[i] = C[i] + int32(x) *
 * int32(y) with C int32, x and y int8/uint8 loads; C's index moves by 1 per step of the lane
 * loop and not at all in the reduction loop; x's and y's indices move by 1 per step of the
 * reduction loop and by 4 or 0 per step of the lane loop; 4, 8 or 16 lanes, a reduction of 4.
 * Anything else fails tec_lower with the reason (which loop, which operand, what was found,
 * what would match). The reduction's initialization nest, a single loop storing a value that
 * does not read C, is marked vectorized instead. Runs after loop partitioning (the indices
 * are flat and simplified) and before vectorize. */
#include "arith/arith.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/pragma.h"

typedef struct tz_state {
  tec_ctx *ctx;
  int failed;
} tz_state;

#define REFUSE(st, at, ...) refuse((st), (at), tec_ctx_printf((st)->ctx, __VA_ARGS__))
/* Refuses the nest at loop `at` (first failure only); NULL for the caller to return. */
static const ir_stmt *refuse(tz_state *st, const ir_expr *at, const char *why) {
  if (st->failed) return NULL;
  st->failed = 1;
  tec_ctx_set_error(st->ctx, "tensorize: the nest at loop '%s' does not match dot4: %s",
                    at ? at->name : "?", why ? why : "(out of memory)");
  return NULL;
}

/* The constant step of e per step of v: 1 with *stride set, 0 when not linear in v. */
static int stride_of(const ir_expr *e, const ir_expr *v, int64_t *stride) {
  tec_ctx *ctx = e->ctx;
  const ir_expr *one = ir_add(v, ir_int_t(ctx, v->type, 1)), *two = ir_add(one, ir_int_t(ctx, v->type, 1));
  const ir_expr *d1 = arith_simplify(ir_sub(ir_substitute(e, 1, &v, &one), e), NULL);
  const ir_expr *d2 = arith_simplify(ir_sub(ir_substitute(e, 1, &v, &two), e), NULL);
  int64_t s1, s2;
  if (!ir_is_const_int(d1, &s1) || !ir_is_const_int(d2, &s2) || s2 != 2 * s1) return 0;
  *stride = s1;
  return 1;
}

static int is_byte(tec_dtype t) {
  return (t.code == TEC_INT || t.code == TEC_UINT) && t.bits == 8 && t.lanes == 1;
}

/* One factor of the product: int32(load of an 8-bit buffer); *load receives the load. */
static int factor(tz_state *st, const ir_expr *at, const ir_expr *f, const ir_expr **load) {
  char ty[32];
  const ir_expr *x = f->kind == IR_CAST ? f->a : f;
  if (x->kind != IR_LOAD)
    return REFUSE(st, at, "the factor %s of the product is not a read of a tensor",
                  ir_expr_str(f)), -1;
  if (!is_byte(x->type))
    return REFUSE(st, at, "operand '%s' is %s; dot4 multiplies 8-bit integers (int8 or uint8)",
                  x->a->name, tec_dtype_str(x->type, ty, sizeof ty)), -1;
  if (x->c) return REFUSE(st, at, "the read of '%s' is predicated (a guard or padding)",
                          x->a->name), -1;
  *load = x;
  return 0;
}

/* The dot4 store replacing loops outer/inner around `upd`, or NULL (refused). */
static const ir_stmt *match(tz_state *st, const ir_stmt *outer) {
  const ir_expr *at = outer->var;
  const ir_stmt *inner = outer->body;
  if (inner && inner->kind == IR_S_SEQ)
    return REFUSE(st, at, "it needs two loops (a lane loop of 4, 8 or 16 and a reduction loop of "
                          "4) around one update; inside '%s' are %d statements (the "
                          "reduction's initialization is inside it: reorder so that every "
                          "other reduction loop is outside '%s')", at->name, inner->n, at->name);
  if (!inner || inner->kind != IR_S_FOR)
    return REFUSE(st, at, "it needs two loops (a lane loop of 4, 8 or 16 and a reduction loop of "
                          "4) around one update; inside '%s' is a %s", at->name,
                  inner ? ir_stmt_kind_name(inner->kind) : "nothing");
  const ir_stmt *upd = inner->body;
  if (!upd || upd->kind != IR_S_STORE)
    return REFUSE(st, at, "it covers two loops; inside '%s' is a %s, not one update C[i] = "
                          "C[i] + int32(a)*int32(b) (tensorize the loop two levels above the "
                          "update)", inner->var->name,
                  upd ? ir_stmt_kind_name(upd->kind) : "nothing");
  const ir_stmt *loops[2] = {outer, inner};
  for (int i = 0; i < 2; i++) {
    int64_t e;
    if (loops[i]->for_kind == IR_FOR_PARALLEL)
      return REFUSE(st, at, "loop '%s' is parallel", loops[i]->var->name);
    if (!ir_is_const_int(loops[i]->b, &e))
      return REFUSE(st, at, "loop '%s' has extent %s, not a constant", loops[i]->var->name,
                    ir_expr_str(loops[i]->b));
  }
  char ty[32];
  const ir_expr *cbuf = upd->var, *cidx = upd->a, *val = upd->b;
  if (upd->c) return REFUSE(st, at, "the store to '%s' is predicated", cbuf->name);
  if (val->type.code != TEC_INT || val->type.bits != 32 || val->type.lanes != 1)
    return REFUSE(st, at, "the accumulator '%s' is %s; dot4 accumulates int32", cbuf->name,
                  tec_dtype_str(val->type, ty, sizeof ty));
  /* C[i] + p or p + C[i] */
  const ir_expr *prod = NULL;
  if (val->kind == IR_ADD)
    for (int s = 0; s < 2 && !prod; s++) {
      const ir_expr *acc = s ? val->b : val->a;
      if (acc->kind == IR_LOAD && acc->a == cbuf && !acc->c && ir_expr_equal(acc->b, cidx))
        prod = s ? val->a : val->b;
    }
  if (!prod)
    return REFUSE(st, at, "the update of '%s' is not C[i] = C[i] + product (it stores %s)",
                  cbuf->name, ir_expr_str(val));
  if (prod->kind != IR_MUL)
    return REFUSE(st, at, "'%s' accumulates %s, not a product int32(a) * int32(b)", cbuf->name,
                  ir_expr_str(prod));
  const ir_expr *x, *y;
  if (factor(st, at, prod->a, &x) || factor(st, at, prod->b, &y)) return NULL;
  /* which loop is the lanes: C's index moves by 1 in it, not at all in the reduction */
  int64_t cs[2];
  for (int i = 0; i < 2; i++)
    if (!stride_of(cidx, loops[i]->var, &cs[i]))
      return REFUSE(st, at, "the index of '%s' is not linear in loop '%s'", cbuf->name,
                    loops[i]->var->name);
  int red = cs[1] == 0 ? 1 : cs[0] == 0 ? 0 : -1;
  if (red < 0)
    return REFUSE(st, at, "'%s' moves in both loops ('%s' and '%s'); one must be the reduction, "
                          "where C stays put", cbuf->name, outer->var->name, inner->var->name);
  const ir_stmt *lr = loops[1 - red], *rr = loops[red];
  int64_t lanes, rext;
  ir_is_const_int(lr->b, &lanes);
  ir_is_const_int(rr->b, &rext);
  if (cs[1 - red] != 1)
    return REFUSE(st, at, "'%s' moves by %lld elements per step of lane loop '%s'; dot4 writes "
                          "consecutive int32 lanes (stride 1)", cbuf->name, (long long)cs[1 - red],
                  lr->var->name);
  if (rext != 4)
    return REFUSE(st, at, "reduction loop '%s' has extent %lld; dot4 sums 4 products per lane "
                          "(split the reduction by 4)", rr->var->name, (long long)rext);
  if (lanes != 4 && lanes != 8 && lanes != 16)
    return REFUSE(st, at, "lane loop '%s' has extent %lld; dot4 fills 4, 8 or 16 int32 lanes "
                          "(128, 256 or 512 bits)", lr->var->name, (long long)lanes);
  const ir_expr *op[2] = {x, y}, *nop[2];
  const ir_expr *vars[2] = {lr->var, rr->var}, *mins[2] = {lr->a, rr->a};
  for (int i = 0; i < 2; i++) {
    int64_t sl, sr;
    const ir_expr *idx = op[i]->b;
    if (!stride_of(idx, rr->var, &sr) || sr != 1)
      return REFUSE(st, at, "operand '%s' does not read consecutive bytes in reduction loop "
                            "'%s'; dot4 reads 4 consecutive bytes per lane (pack it as "
                            "[..][lanes][4])", op[i]->a->name, rr->var->name);
    if (!stride_of(idx, lr->var, &sl) || (sl != 4 && sl != 0))
      return REFUSE(st, at, "operand '%s' moves by %lld elements per step of lane loop '%s'; "
                            "dot4 needs 4 (the [..][lanes][4] layout) or 0 (one group of 4 "
                            "shared by every lane)", op[i]->a->name, (long long)sl,
                    lr->var->name);
    const ir_expr *base = arith_simplify(ir_substitute(idx, 2, vars, mins), NULL);
    nop[i] = ir_load(op[i]->type, op[i]->a, ir_ramp(base, ir_int_t(st->ctx, base->type, 1),
                                                    sl ? 4 * (int)lanes : 4), NULL);
  }
  const ir_expr *cbase = arith_simplify(ir_substitute(cidx, 2, vars, mins), NULL);
  const ir_expr *cvec = ir_ramp(cbase, ir_int_t(st->ctx, cbase->type, 1), (int)lanes);
  const ir_expr *acc = ir_load(tec_dtype_with_lanes(val->type, (int)lanes), cbuf, cvec, NULL);
  return ir_store(cbuf, cvec, ir_dot4(acc, nop[0], nop[1]), NULL);
}

/* Does e load from buf? */
static int loads_from(const ir_expr *e, const ir_expr *buf) {
  if (!e) return 0;
  if (e->kind == IR_LOAD && e->a == buf) return 1;
  if (loads_from(e->a, buf) || loads_from(e->b, buf) || loads_from(e->c, buf)) return 1;
  for (int i = 0; i < e->nargs; i++)
    if (loads_from(e->args[i], buf)) return 1;
  return 0;
}

static const ir_stmt *tz_attr(ir_mutator *m, const ir_stmt *s) {
  tz_state *st = m->user;
  if (sch_pragma_id_of_attr(s->name) != SCH_PRAGMA_TENSORIZE) return ir_mutate_stmt_default(m, s);
  int64_t id;
  const ir_stmt *loop = s->body;
  if (!ir_is_const_int(s->a, &id) || id != SCH_INTRIN_DOT4) {
    st->failed = 1;
    tec_ctx_set_error(st->ctx, "tensorize: unknown intrinsic %s; known: %d (SCH_INTRIN_DOT4)",
                      ir_expr_str(s->a), SCH_INTRIN_DOT4);
    return NULL;
  }
  if (!loop || loop->kind != IR_S_FOR)
    return REFUSE(st, NULL, "the pragma is not on a loop (found a %s)",
                  loop ? ir_stmt_kind_name(loop->kind) : "nothing");
  /* the reduction's initialization: one loop around one store that does not read C */
  const ir_stmt *b = loop->body;
  if (b && b->kind == IR_S_STORE && !loads_from(b->b, b->var)) {
    if (loop->for_kind != IR_FOR_SERIAL) return loop;
    return ir_for(loop->var, loop->a, loop->b, IR_FOR_VECTORIZED, b);
  }
  return match(st, loop);
}

const ir_stmt *lower_tensorize(tec_ctx *ctx, const ir_stmt *s) {
  if (!s) return NULL;
  tz_state st = {ctx, 0};
  ir_mutator m;
  ir_mutator_init(&m, ctx, &st);
  m.stmt[IR_S_ATTR] = tz_attr;
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  return st.failed ? NULL : r;
}
