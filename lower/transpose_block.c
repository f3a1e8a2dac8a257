/* transpose_block.c — lower_transpose_block: a loop under pragma "transpose_block" whose L
 * steps each copy a vector of L lanes read at a stride becomes L row loads and an in-register
 * transpose (zip shuffles), instead of L gathers.
 *
 *   attr pragma_transpose_block {             let r0 = b[ramp(s, 1, 4)]        (row l: s + l*S)
 *     for (k.inner, 0, 4) {                   ...  let r3 = b[ramp(s + 3*S, 1, 4)]
 *       p[ramp(d(k.inner), 1, 4)] =     ->    let t0 = zip_lo(r0, r2)  let t1 = zip_hi(r0, r2)
 *         b[ramp(s + k.inner, S, 4)]          let t2 = zip_lo(r1, r3)  let t3 = zip_hi(r1, r3)
 *     }                                       (log2 L such stages)
 *   }                                         p[ramp(d(0), 1, 4)] = u0 ... p[ramp(d(3), 1, 4)] = u3
 *
 * Step k reads lane l at s + k + l*S: the L x L block whose row l is L consecutive elements at
 * s + l*S, and writes its column k. log2(L) rounds of "new[2i] = zip_lo(v[i], v[i + L/2]),
 * new[2i+1] = zip_hi(v[i], v[i + L/2])" transpose L vectors of L lanes (each round rotates
 * the (vector, lane) bit address by one; L rounds of log2 L bits swap the halves): L*log2(L)
 * two-input shuffles, which the backends make zip1/zip2 (AArch64) or unpck/vpermt2ps (x86).
 * The rows are the elements the steps read, so nothing outside the copy's region is touched.
 *
 * Runs after vectorize (the lane loop inside is then one vector store) and before unroll (the
 * loop, unrolled or serial, is replaced whole). Applies when: the loop has a constant extent
 * L, a power of two from 2 to 64; its body is one unpredicated store of L lanes at a ramp of
 * stride 1, of a value that is one unpredicated load of another buffer at ramp(s(k), S, L)
 * with s(k) = s(min) + (k - min) and S not depending on k. Otherwise the loop stays as it was
 * and the lowered function's notes say why. Every copy of the loop (loop partitioning copies
 * loops) under the attribute is tried; the attribute is consumed.
 */
#include <string.h>
#include "arith/arith.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/pragma.h"

#define TB_MAX_LANES 64

typedef struct tb_state {
  int applied;       /* copies transformed under the current attribute */
  const char *why;   /* the first refusal under it */
  const char *loop;  /* its loop's name */
} tb_state;

static int is_pow2(int64_t v) { return v >= 2 && (v & (v - 1)) == 0; }

/* 1 if e simplifies to the integer v */
static int is_const(const ir_expr *e, int64_t v) {
  int64_t x;
  const ir_expr *s = e ? arith_simplify(e, NULL) : NULL;
  return s && ir_is_const_int(s, &x) && x == v;
}

/* e with var := min + k */
static const ir_expr *at(const ir_expr *e, const ir_expr *var, const ir_expr *min, int64_t k) {
  const ir_expr *val = arith_simplify(ir_add(min, ir_int_t(min->ctx, min->type, k)), NULL);
  const ir_expr *r = val ? ir_substitute(e, 1, &var, &val) : NULL;
  return r ? arith_simplify(r, NULL) : NULL;
}

/* The transposed form of loop s, or NULL with the reason in *why (NULL *why: out of memory). */
static const ir_stmt *transpose_loop(const ir_stmt *s, const char **why) {
  tec_ctx *ctx = s->ctx;
  const ir_expr *k = s->var, *min = s->a;
  const ir_stmt *st = s->body;
  int64_t L = 0, one;
  *why = "its extent is not a constant power of two from 2 to 64";
  if (!ir_is_const_int(s->b, &L) || !is_pow2(L) || L > TB_MAX_LANES || ir_uses_var(min, k))
    return NULL;
  *why = tec_ctx_printf(ctx, "its body is not one store of a %lld-lane vector (a copy vectorized "
                             "over a lane loop of the same extent, with no predicate)", (long long)L);
  if (!st || st->kind != IR_S_STORE || !st->b || st->b->type.lanes != L ||
      (st->c && !(ir_is_const_int(st->c, &one) && one)))
    return NULL;
  *why = "its store's index is not a ramp of stride 1 (consecutive lanes)";
  const ir_expr *di = st->a, *v = st->b;
  if (!di || di->kind != IR_RAMP || !is_const(di->b, 1)) return NULL;
  *why = "the value stored is not one load (a plain copy) without a predicate";
  if (v->kind != IR_LOAD || v->c || !v->b || v->b->kind != IR_RAMP) return NULL;
  *why = "it reads the buffer it writes";
  if (v->a == st->var) return NULL;
  const ir_expr *sb = v->b->a, *S = v->b->b;
  *why = "the read's lane stride depends on the loop variable";
  if (ir_uses_var(S, k)) return NULL;
  *why = "successive steps do not read successive elements (the read's first lane must move by "
         "1 per step: a transposed source)";
  const ir_expr *s0 = at(sb, k, min, 0);
  if (!s0 || !is_const(ir_sub(ir_sub(sb, s0), ir_sub(k, min)), 0)) return NULL;

  *why = NULL;
  int n = (int)L;
  const ir_expr *rows[TB_MAX_LANES], *vars[TB_MAX_LANES];
  const ir_expr *lvar[TB_MAX_LANES * 7], *lval[TB_MAX_LANES * 7]; /* L rows + L*log2(L) zips */
  int nlet = 0;
  const char *src = v->a->name ? v->a->name : "src";
  tec_dtype et = tec_dtype_scalar(v->type);
  for (int l = 0; l < n; l++) {
    const ir_expr *base = arith_simplify(ir_add(s0, ir_mul(S, ir_int_t(ctx, S->type, l))), NULL);
    const ir_expr *ld = base ? ir_load(et, v->a, ir_ramp(base, ir_int_t(ctx, S->type, 1), n), NULL)
                             : NULL;
    const ir_expr *var = ld ? ir_var(ctx, tec_ctx_printf(ctx, "%s.row%d", src, l), ld->type,
                                     IR_VAR_LET)
                            : NULL;
    if (!var) return NULL;
    lvar[nlet] = var, lval[nlet++] = ld;
    rows[l] = var;
  }
  for (int round = 0; (1 << round) < n; round++) {
    for (int i = 0; i < n / 2; i++)
      for (int hi = 0; hi < 2; hi++) {
        const ir_expr *z = ir_zip(rows[i], rows[i + n / 2], hi);
        const ir_expr *var = z ? ir_var(ctx, tec_ctx_printf(ctx, "%s.t%d_%d", src, round, 2 * i + hi),
                                        z->type, IR_VAR_LET)
                               : NULL;
        if (!var) return NULL;
        lvar[nlet] = var, lval[nlet++] = z;
        vars[2 * i + hi] = var;
      }
    memcpy(rows, vars, sizeof *rows * (size_t)n);
  }
  const ir_stmt *stores[TB_MAX_LANES];
  for (int r = 0; r < n; r++) {
    const ir_expr *idx = at(di, k, min, r);
    if (!idx || !(stores[r] = ir_store(st->var, idx, rows[r], NULL))) return NULL;
  }
  const ir_stmt *body = ir_seq(ctx, n, stores);
  for (int i = nlet - 1; i >= 0 && body; i--) body = ir_let_stmt(lvar[i], lval[i], body);
  return body;
}

/* Tries every loop directly under the attribute (through sequences, lets and ifs that loop
 * partitioning leaves, and the attributes of other pragmas on the same loop), inner loops
 * untouched. */
static const ir_stmt *apply(tb_state *tb, const ir_stmt *s) {
  if (!s) return s;
  switch (s->kind) {
  case IR_S_FOR: {
    const char *why = NULL;
    const ir_stmt *r = transpose_loop(s, &why);
    if (r) return tb->applied++, r;
    if (!why) return NULL; /* out of memory */
    if (!tb->why) tb->why = why, tb->loop = s->var->name;
    return s;
  }
  case IR_S_SEQ: {
    const ir_stmt **items = tec_ctx_alloc(s->ctx, sizeof *items * (size_t)s->n);
    if (!items) return NULL;
    for (int i = 0; i < s->n; i++)
      if (!(items[i] = apply(tb, s->seq[i]))) return NULL;
    return ir_seq(s->ctx, s->n, items);
  }
  case IR_S_LET_STMT: case IR_S_IF: case IR_S_ATTR: {
    const ir_stmt *b = apply(tb, s->body), *e = s->else_body ? apply(tb, s->else_body) : NULL;
    if (!b || (s->else_body && !e)) return NULL;
    return ir_stmt_with(s, s->a, s->b, s->c, b, e, NULL, NULL);
  }
  default:
    if (!tb->why) tb->why = "the pragma's loop was not found (it is not directly inside the attribute)";
    return s;
  }
}

static const ir_stmt *tb_attr(ir_mutator *m, const ir_stmt *s) {
  if (sch_pragma_id_of_attr(s->name) != SCH_PRAGMA_TRANSPOSE_BLOCK)
    return ir_mutate_stmt_default(m, s);
  const ir_stmt *body = ir_mutate_stmt(m, s->body); /* nested attributes first */
  if (!body) return NULL;
  tb_state tb = {0};
  const ir_stmt *r = apply(&tb, body);
  if (!r) return NULL;
  if (tb.why &&
      tec_ctx_note(s->ctx, "transpose_block: %sloop '%s' stays a strided copy (gathers): %s",
                   tb.applied ? "a copy of " : "", tb.loop ? tb.loop : "?", tb.why))
    return NULL;
  return r;
}

const ir_stmt *lower_transpose_block(const ir_stmt *s) {
  if (!s) return NULL;
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, NULL);
  m.stmt[IR_S_ATTR] = tb_attr;
  unsigned long errors_before = tec_ctx_error_count(s->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  if (tec_ctx_error_count(s->ctx) != errors_before) return NULL; /* out of memory half way */
  return r ? r : s;
}
