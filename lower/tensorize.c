/* tensorize.c — lower_tensorize: a loop nest marked by sch_tensorize (attr pragma_tensorize =
 * intrinsic) becomes the intrinsic, after the nest is checked to compute what it computes.
 * The intrinsics are a table (intrins[]): per loop role (lane, row, column, reduction) C's
 * step, which tells the role, the legal extents and the legal steps of the two operands.
 *
 *   // attr pragma_tensorize = 0 (dot4)           C[ramp(c, 1, 16)] =
 *   for (j.inner, 0, 16) {                          dot4(C[ramp(c, 1, 16)],
 *     for (k.inner, 0, 4) {                  ->          A[ramp(a, 1, 4)],      // shared
 *       C[c + j.inner] = C[c + j.inner] +               B[ramp(b, 1, 64)])     // 4 per lane
 *         int32(A[a + k.inner]) * int32(B[b + j.inner*4 + k.inner])
 *
 * dot4: a lane loop (4, 8, 16; C steps 1, operands 4 or 0) and a reduction of 4 (C 0,
 * operands 1); or an operand transposed: 1 in the lane loop, L (its extent) in the reduction
 * (ir_dot4_t: 4L contiguous bytes, permuted by codegen; depthwise's taps as the group).
 * mmla: rows (2; C steps 2, a 8, b 0), columns (2; C 1, a 0, b 8) and a reduction of 8
 * (operands 1): C in 2x2 blocks, a and b as [..][2][8].
 * dot4_lane: a group loop (2 or 4) around a dot4 nest whose shared operand steps 4 in it:
 * one read of its 2 or 4 groups, a dot4 per group on that group by element (match_lane).
 * The nest must be exactly those loops (any order), one update C[i] = C[i] + int32(x) *
 * int32(y) with C int32, x and y int8/uint8 loads (either may take slot a: the product
 * commutes). Anything else fails tec_lower with the reason (which loop, which operand, what
 * was found, what would match). The reduction's initialization nest, a single loop storing a
 * value that does not read C, is marked vectorized instead. Runs after loop partitioning
 * (flat, simplified indices) and before vectorize. */
#include "arith/arith.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/pragma.h"

typedef struct tz_state {
  tec_ctx *ctx;
  int failed;
  const char *intrin;  /* the intrinsic being matched, for messages */
} tz_state;

#define REFUSE(st, at, ...) refuse((st), (at), tec_ctx_printf((st)->ctx, __VA_ARGS__))
/* Refuses the nest at loop `at` (first failure only); NULL for the caller to return. */
static const ir_stmt *refuse(tz_state *st, const ir_expr *at, const char *why) {
  if (st->failed) return NULL;
  st->failed = 1;
  tec_ctx_set_error(st->ctx, "tensorize: the nest at loop '%s' does not match %s: %s",
                    at ? at->name : "?", st->intrin, why ? why : "(out of memory)");
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
    return REFUSE(st, at, "operand '%s' is %s; %s multiplies 8-bit integers (int8 or uint8)",
                  x->a->name, tec_dtype_str(x->type, ty, sizeof ty), st->intrin), -1;
  if (x->c) return REFUSE(st, at, "the read of '%s' is predicated (a guard or padding)",
                          x->a->name), -1;
  *load = x;
  return 0;
}

/* ---- the intrinsics as data: each loop's role is told by C's step in it ---- */
typedef struct tz_role {
  const char *name;      /* "lane", "row", "column", "reduction" */
  int64_t c_step;        /* C's index step per step of the loop (identifies the role) */
  int64_t ext[4];        /* legal extents (0 ends) */
  int64_t a_step[2], b_step[2]; /* legal steps of operand slots a, b (-1 ends) */
  const char *ext_rule, *step_rule; /* said when the extent / an operand's step is wrong */
} tz_role;

typedef struct tz_intrin {
  const char *name;
  int nloops;
  tz_role role[3];       /* the reduction last */
  const char *shape;     /* the loops, for "it needs ..." */
} tz_intrin;

static const tz_intrin intrins[SCH_INTRIN_COUNT] = {
  [SCH_INTRIN_DOT4_LANE] = {"dot4_lane", 2, {{NULL}}, "three loops (a group loop of 2 or 4 "
    "around dot4's lane and reduction loops)"}, /* the group loop, then dot4's row (match_lane) */
  [SCH_INTRIN_DOT4] = {"dot4", 2, {
    {"lane", 1, {4, 8, 16, 0}, {4, 0}, {4, 0}, "dot4 fills 4, 8 or 16 int32 lanes (128, 256 or "
     "512 bits)", "dot4 needs 4 (the [..][lanes][4] layout) or 0 (one group of 4 shared by "
     "every lane)"},
    {"reduction", 0, {4, 0}, {1, -1}, {1, -1}, "dot4 sums 4 products per lane (split the "
     "reduction by 4)", "dot4 reads 4 consecutive bytes per lane (pack it as [..][lanes][4])"}},
    "two loops (a lane loop of 4, 8 or 16 and a reduction loop of 4)"},
  [SCH_INTRIN_MMLA] = {"mmla", 3, {
    {"row", 2, {2, 0}, {8, -1}, {0, -1}, "mmla computes 2 rows of a 2x2 block", "mmla needs "
     "a's 2 rows 8 bytes apart and b the same in every row (pack a as [..][2][8])"},
    {"column", 1, {2, 0}, {0, -1}, {8, -1}, "mmla computes 2 columns of a 2x2 block", "mmla "
     "needs b's 2 columns 8 bytes apart and a the same in every column (pack b as "
     "[..][2][8])"},
    {"reduction", 0, {8, 0}, {1, -1}, {1, -1}, "mmla sums 8 products per element (split the "
     "reduction by 8)", "mmla reads 8 consecutive bytes per row and column (pack as "
     "[..][2][8])"}},
    "three loops (2 rows, 2 columns of C, stored as a 2x2 block, and a reduction loop of 8)"},
};

static int in_list(int64_t v, const int64_t *list, int n, int64_t end) {
  for (int i = 0; i < n && list[i] != end; i++)
    if (list[i] == v) return 1;
  return 0;
}

/* The loops of the nest from `outer` (n of them, outermost first) and the update inside, or
 * -1 refused. */
static int nest(tz_state *st, const tz_intrin *in, const ir_stmt *outer, const ir_stmt **loops,
                const ir_stmt **upd) {
  const ir_expr *at = outer->var;
  const ir_stmt *s = outer;
  for (int i = 0; i < in->nloops; i++) {
    if (s && s->kind == IR_S_SEQ)
      return REFUSE(st, at, "it needs %s around one update; inside '%s' are %d statements (the "
                            "reduction's initialization is inside it: reorder so that every "
                            "other reduction loop is outside '%s')", in->shape,
                    loops[i - 1]->var->name, s->n, at->name), -1;
    if (!s || s->kind != IR_S_FOR)
      return REFUSE(st, at, "it needs %s around one update; inside '%s' is a %s", in->shape,
                    loops[i - 1]->var->name, s ? ir_stmt_kind_name(s->kind) : "nothing"), -1;
    int64_t e;
    if (s->for_kind == IR_FOR_PARALLEL)
      return REFUSE(st, at, "loop '%s' is parallel", s->var->name), -1;
    if (!ir_is_const_int(s->b, &e))
      return REFUSE(st, at, "loop '%s' has extent %s, not a constant", s->var->name,
                    ir_expr_str(s->b)), -1;
    loops[i] = s;
    s = s->body;
  }
  if (!s || s->kind != IR_S_STORE)
    return REFUSE(st, at, "it covers %d loops; inside '%s' is a %s, not one update C[i] = C[i] "
                          "+ int32(a)*int32(b) (tensorize the loop %d levels above the update)",
                  in->nloops, loops[in->nloops - 1]->var->name,
                  s ? ir_stmt_kind_name(s->kind) : "nothing", in->nloops), -1;
  *upd = s;
  return 0;
}

/* The product p of the update C[x] = C[x] + p (either order), or NULL refused. */
static const ir_expr *update_product(tz_state *st, const tz_intrin *in, const ir_expr *at,
                                     const ir_stmt *upd) {
  char ty[32];
  const ir_expr *cbuf = upd->var, *cidx = upd->a, *val = upd->b, *prod = NULL;
  if (upd->c) return REFUSE(st, at, "the store to '%s' is predicated", cbuf->name), NULL;
  if (val->type.code != TEC_INT || val->type.bits != 32 || val->type.lanes != 1)
    return REFUSE(st, at, "the accumulator '%s' is %s; %s accumulates int32", cbuf->name,
                  tec_dtype_str(val->type, ty, sizeof ty), in->name), NULL;
  if (val->kind == IR_ADD)
    for (int s = 0; s < 2 && !prod; s++) {
      const ir_expr *acc = s ? val->b : val->a;
      if (acc->kind == IR_LOAD && acc->a == cbuf && !acc->c && ir_expr_equal(acc->b, cidx))
        prod = s ? val->a : val->b;
    }
  if (!prod)
    return REFUSE(st, at, "the update of '%s' is not C[i] = C[i] + product (it stores %s)",
                  cbuf->name, ir_expr_str(val)), NULL;
  if (prod->kind != IR_MUL)
    return REFUSE(st, at, "'%s' accumulates %s, not a product int32(a) * int32(b)", cbuf->name,
                  ir_expr_str(prod)), NULL;
  return prod;
}

/* Checks operand x in slot (0: a, 1: b) against every role; the lanes of its load in *lanes.
 * 0, or -1 (refused when `say`). */
static int operand_fits(tz_state *st, const tz_intrin *in, const ir_expr *at, const ir_expr *x,
                        int slot, const ir_stmt *const *byrole, int say, int *lanes, int *tr) {
  *lanes = 1, *tr = 0;
  int64_t ls, rs, le;
  /* dot4's transposed operand: consecutive in the lane loop, the lane count apart in the
   * reduction's (4 rows of L bytes, e.g. 4 pixels of a channel block): one contiguous
   * 4L-byte read, permuted by codegen (ir_dot4_t) */
  if (in->nloops == 2 && stride_of(x->b, byrole[0]->var, &ls) && ls == 1 &&
      stride_of(x->b, byrole[1]->var, &rs) && ir_is_const_int(byrole[0]->b, &le) && rs == le) {
    *lanes = 4 * (int)le, *tr = 1;
    return 0;
  }
  for (int r = in->nloops - 1; r >= 0; r--) { /* the reduction (last) first */
    const tz_role *ro = &in->role[r];
    const ir_stmt *l = byrole[r];
    int64_t step, e;
    const int64_t *legal = slot ? ro->b_step : ro->a_step;
    if (stride_of(x->b, l->var, &step) && in_list(step, legal, 2, -1)) {
      ir_is_const_int(l->b, &e);
      if (step) *lanes *= (int)e;
      continue;
    }
    if (!say) return -1;
    if (ro->c_step == 0)
      return REFUSE(st, at, "operand '%s' does not read consecutive bytes in reduction loop "
                            "'%s'; %s", x->a->name, l->var->name, ro->step_rule), -1;
    if (!stride_of(x->b, l->var, &step))
      return REFUSE(st, at, "the index of operand '%s' is not linear in %s loop '%s'",
                    x->a->name, ro->name, l->var->name), -1;
    return REFUSE(st, at, "operand '%s' moves by %lld elements per step of %s loop '%s'; %s",
                  x->a->name, (long long)step, ro->name, l->var->name, ro->step_rule), -1;
  }
  return 0;
}

/* The intrinsic's store replacing the nest at `outer`, or NULL (refused). */
static const ir_stmt *match(tz_state *st, const tz_intrin *in, int id, const ir_stmt *outer) {
  const ir_expr *at = outer->var;
  const ir_stmt *loops[3], *upd, *byrole[3] = {NULL, NULL, NULL};
  if (nest(st, in, outer, loops, &upd)) return NULL;
  const ir_expr *prod = update_product(st, in, at, upd), *x, *y;
  if (!prod || factor(st, at, prod->a, &x) || factor(st, at, prod->b, &y)) return NULL;
  const ir_expr *cbuf = upd->var, *cidx = upd->a;
  /* each loop's role from C's step in it */
  for (int i = 0; i < in->nloops; i++) {
    int64_t cs, e;
    const ir_stmt *l = loops[i];
    if (!stride_of(cidx, l->var, &cs))
      return REFUSE(st, at, "the index of '%s' is not linear in loop '%s'", cbuf->name,
                    l->var->name);
    int r = 0;
    while (r < in->nloops && in->role[r].c_step != cs) r++;
    if (r == in->nloops)
      return REFUSE(st, at, "'%s' moves by %lld elements per step of loop '%s'; %s needs %s",
                    cbuf->name, (long long)cs, l->var->name, in->name,
                    in->nloops == 2 ? "1 (the lane loop, consecutive int32 lanes) or 0 (the "
                                      "reduction loop)"
                                    : "2 (the row loop), 1 (the column loop) or 0 (the "
                                      "reduction loop): C as 2x2 blocks");
    if (byrole[r])
      return REFUSE(st, at, "'%s' moves alike in loops '%s' and '%s'; each of %s's loops has "
                            "its own role", cbuf->name, byrole[r]->var->name, l->var->name,
                    in->name);
    byrole[r] = l;
    ir_is_const_int(l->b, &e);
    if (!in_list(e, in->role[r].ext, 4, 0))
      return REFUSE(st, at, "%s loop '%s' has extent %lld; %s", in->role[r].name, l->var->name,
                    (long long)e, in->role[r].ext_rule);
  }
  /* the operands in their slots: as written, or swapped (the product commutes) */
  int la, lb, ta, tb, swap = 0;
  if (operand_fits(st, in, at, x, 0, byrole, 0, &la, &ta) ||
      operand_fits(st, in, at, y, 1, byrole, 0, &lb, &tb)) {
    swap = 1;
    if (operand_fits(st, in, at, y, 0, byrole, 0, &la, &ta) ||
        operand_fits(st, in, at, x, 1, byrole, 0, &lb, &tb)) { /* neither: say why, as written */
      if (!operand_fits(st, in, at, x, 0, byrole, 1, &la, &ta))
        operand_fits(st, in, at, y, 1, byrole, 1, &lb, &tb);
      return NULL;
    }
  }
  const ir_expr *vars[3], *mins[3];
  int clanes = 1;
  for (int r = 0; r < in->nloops; r++) {
    int64_t e;
    vars[r] = byrole[r]->var, mins[r] = byrole[r]->a;
    ir_is_const_int(byrole[r]->b, &e);
    if (in->role[r].c_step) clanes *= (int)e;
  }
  const ir_expr *op[2] = {swap ? y : x, swap ? x : y}, *nop[2];
  int lanes[2] = {la, lb};
  for (int i = 0; i < 2; i++) {
    const ir_expr *base = arith_simplify(ir_substitute(op[i]->b, in->nloops, vars, mins), NULL);
    nop[i] = ir_load(op[i]->type, op[i]->a, ir_ramp(base, ir_int_t(st->ctx, base->type, 1),
                                                    lanes[i]), NULL);
  }
  const ir_expr *cbase = arith_simplify(ir_substitute(cidx, in->nloops, vars, mins), NULL);
  const ir_expr *cvec = ir_ramp(cbase, ir_int_t(st->ctx, cbase->type, 1), clanes);
  const ir_expr *acc = ir_load(tec_dtype_with_lanes(upd->b->type, clanes), cbuf, cvec, NULL);
  return ir_store(cbuf, cvec, id == SCH_INTRIN_DOT4 ? ir_dot4_t(acc, nop[0], nop[1], ta | tb << 1)
                                                    : ir_mmla(acc, nop[0], nop[1]), NULL);
}

/* dot4_lane: a group loop g (2 or 4 iterations) around a dot4 nest whose shared operand (one
 * group of 4 bytes for every lane) moves by 4 per step of g: its 4G bytes read at once (one
 * ldr d / ldr q), step g a dot4 on its group g (ir_dot4_lane: sdot by element). C and the
 * other operand move by any constant in g: columns of C (conv2d's output columns: C steps by
 * the lanes, b by 0) or a reduction (dense's k: C steps 0, b by a group of the panel). */
static const ir_stmt *match_lane(tz_state *st, const ir_stmt *outer) {
  tec_ctx *ctx = st->ctx;
  const ir_expr *g = outer->var;
  int64_t G, as, cs, bs, lay = 0;
  if (outer->for_kind == IR_FOR_PARALLEL)
    return REFUSE(st, g, "loop '%s' is parallel", g->name);
  if (!ir_is_const_int(outer->b, &G) || (G != 2 && G != 4))
    return REFUSE(st, g, "group loop '%s' has extent %s; dot4_lane reads 2 or 4 groups of 4 "
                         "bytes (8 or 16: one register)", g->name, ir_expr_str(outer->b));
  if (!outer->body || outer->body->kind != IR_S_FOR)
    return REFUSE(st, g, "it needs %s; inside '%s' is a %s", intrins[SCH_INTRIN_DOT4_LANE].shape,
                  g->name, outer->body ? ir_stmt_kind_name(outer->body->kind) : "nothing");
  st->intrin = "dot4_lane";
  const ir_stmt *in = match(st, &intrins[SCH_INTRIN_DOT4], SCH_INTRIN_DOT4, outer->body);
  if (!in) return NULL;
  const ir_expr *call = in->b;
  if (call->nargs == 4) ir_is_const_int(call->args[3], &lay);
  int sh = 0; /* the shared operand's slot (1: a, 2: b), the one moving by 4 in g */
  for (int k = 1; k <= 2 && !sh; k++)
    if (call->args[k]->type.lanes == 4 && !(lay >> (k - 1) & 1) &&
        stride_of(call->args[k]->b->a, g, &as) && as == 4)
      sh = k;
  if (!sh)
    return REFUSE(st, g, "no operand of the dot4 nest is one group of 4 bytes shared by every "
                         "lane moving by 4 elements per step of group loop '%s'; dot4_lane reads "
                         "%lld consecutive groups of such an operand at once", g->name,
                  (long long)G);
  const ir_expr *A = call->args[sh], *B = call->args[3 - sh], *cvec = in->a;
  if (lay)
    return REFUSE(st, g, "operand '%s' is read transposed ([4][lanes]); dot4_lane takes the "
                         "[lanes][4] layout or a shared group", B->a->name);
  if (!stride_of(cvec->a, g, &cs) || !stride_of(B->b->kind == IR_RAMP ? B->b->a : B->b, g, &bs))
    return REFUSE(st, g, "the index of '%s' or '%s' is not linear in group loop '%s'",
                  in->var->name, B->a->name, g->name);
  const ir_expr *abase = arith_simplify(ir_substitute(A->b->a, 1, &g, &outer->a), NULL);
  const ir_expr *all = ir_load(tec_dtype_with_lanes(A->type, 4 * (int)G), A->a,
                               ir_ramp(abase, ir_int_t(ctx, abase->type, 1), 4 * (int)G), NULL);
  if (!all) return NULL; /* out of memory: the arena's error stands */
  const ir_stmt *steps[4];
  for (int j = 0; j < G; j++) {
    const ir_expr *gj = arith_simplify(ir_add(outer->a, ir_int_t(ctx, g->type, j)), NULL);
    const ir_expr *cj = arith_simplify(ir_substitute(cvec, 1, &g, &gj), NULL);
    const ir_expr *bj = arith_simplify(ir_substitute(B, 1, &g, &gj), NULL);
    const ir_expr *acc = ir_load(call->args[0]->type, in->var, cj, NULL);
    steps[j] = ir_store(in->var, cj, ir_dot4_lane(acc, all, bj, j), NULL);
    if (!steps[j]) return REFUSE(st, g, "%s", tec_ctx_error(ctx));
  }
  return ir_seq(ctx, (int)G, steps);
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

/* The chain of loops at s with its innermost loop marked vectorized (if serial). */
static const ir_stmt *vectorize_innermost(const ir_stmt *s) {
  if (s->body->kind == IR_S_FOR)
    return ir_stmt_with(s, s->a, s->b, s->c, vectorize_innermost(s->body), NULL, NULL, NULL);
  if (s->for_kind != IR_FOR_SERIAL) return s;
  return ir_for(s->var, s->a, s->b, IR_FOR_VECTORIZED, s->body);
}

static const ir_stmt *tz_attr(ir_mutator *m, const ir_stmt *s) {
  tz_state *st = m->user;
  if (sch_pragma_id_of_attr(s->name) != SCH_PRAGMA_TENSORIZE) return ir_mutate_stmt_default(m, s);
  int64_t id;
  const ir_stmt *loop = s->body;
  if (!ir_is_const_int(s->a, &id) || id < 0 || id >= SCH_INTRIN_COUNT) {
    st->failed = 1;
    tec_ctx_set_error(st->ctx, "tensorize: unknown intrinsic %s; known: %d (SCH_INTRIN_DOT4), "
                               "%d (SCH_INTRIN_MMLA), %d (SCH_INTRIN_DOT4_LANE)",
                      ir_expr_str(s->a), SCH_INTRIN_DOT4, SCH_INTRIN_MMLA, SCH_INTRIN_DOT4_LANE);
    return NULL;
  }
  st->intrin = sch_intrin_name((sch_intrin)id);
  if (!loop || loop->kind != IR_S_FOR)
    return REFUSE(st, NULL, "the pragma is not on a loop (found a %s)",
                  loop ? ir_stmt_kind_name(loop->kind) : "nothing");
  /* the reduction's initialization: loops around one store that does not read C; the
   * innermost loop is vectorized */
  const ir_stmt *b = loop;
  while (b && b->kind == IR_S_FOR) b = b->body;
  if (b && b->kind == IR_S_STORE && !loads_from(b->b, b->var)) return vectorize_innermost(loop);
  return id == SCH_INTRIN_DOT4_LANE ? match_lane(st, loop) : match(st, &intrins[id], (int)id, loop);
}

const ir_stmt *lower_tensorize(tec_ctx *ctx, const ir_stmt *s) {
  if (!s) return NULL;
  tz_state st = {ctx, 0, "?"};
  ir_mutator m;
  ir_mutator_init(&m, ctx, &st);
  m.stmt[IR_S_ATTR] = tz_attr;
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  return st.failed ? NULL : r;
}
