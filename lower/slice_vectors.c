/* slice_vectors.c — cuts stores wider than the target's vector registers into native-width
 * stores, when their lane count is not a power of two. A build-time pass (pipeline.c): the
 * width is the target's, known when tec_build / tec_emit runs, after tec_lower.
 *
 * vectorize() of a 48-wide loop gives `C[ramp(x, 1, 48)] = C[ramp(x, 1, 48)] + ...`. LLVM
 * legalizes a non-power-of-two vector such as <48 x float> badly: carried through a loop it
 * is taken apart into 128-bit pieces and rebuilt on every iteration (a 45x slowdown seen on a
 * GEMM tile). Lanes are independent, so a store of L lanes is the same as L/N stores of N
 * lanes, N = vector_bits / element bits: each piece is the whole value expression restricted
 * to its lanes (a ramp starts further on, a broadcast gets narrower, loads, arithmetic,
 * selects, casts and intrinsics are sliced operand by operand). A remainder of L % N lanes
 * becomes one more, narrower store (a scalar one for a single lane). A value holding something
 * that cannot be sliced (a let-bound vector) keeps its store whole.
 *
 * Power-of-two widths (<64 x float> on AVX-512, <8 x float> on NEON) are left to LLVM, which
 * splits them in halves down to the register width as well as this pass would; slicing them
 * too changed nothing on x86 and cost 1.4% more instructions on a NEON depthwise kernel.
 */
#include "lower/passes.h"

static const ir_expr *slice(const ir_expr *e, int off, int n);

/* The index of lanes [off, off + n) of an access: a scalar index of a vector access is the
 * first of consecutive elements (codegen's dense form), so it moves on by off. */
static const ir_expr *slice_index(const ir_expr *idx, int off, int n) {
  if (!idx || idx->type.lanes != 1) return slice(idx, off, n);
  return off ? ir_add(idx, ir_int_t(idx->ctx, idx->type, off)) : idx;
}

/* Lanes [off, off + n) of e, or NULL if e has a part this pass cannot slice. */
static const ir_expr *slice(const ir_expr *e, int off, int n) {
  if (!e) return NULL;
  if (e->type.lanes == 1) return e; /* scalars (ramp/broadcast operands) are shared */
  tec_ctx *ctx = e->ctx;
  switch (e->kind) {
  case IR_RAMP: { /* a single lane is the scalar base + off*stride */
    const ir_expr *base = e->a;
    if (off) base = ir_add(base, ir_mul(e->b, ir_int_t(ctx, e->b->type, off)));
    return n == 1 ? base : ir_ramp(base, e->b, n);
  }
  case IR_BROADCAST:
    return n == 1 ? e->a : ir_broadcast(e->a, n);
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_FLOORDIV:
  case IR_FLOORMOD: case IR_MIN: case IR_MAX: case IR_EQ: case IR_NE: case IR_LT: case IR_LE:
  case IR_GT: case IR_GE: case IR_AND: case IR_OR: case IR_NOT: case IR_CAST: case IR_SELECT: {
    /* lane-wise on their operands; ir_expr_with takes the lane count from them */
    const ir_expr *a = slice(e->a, off, n), *b = slice(e->b, off, n), *c = slice(e->c, off, n);
    if (!a || (e->b && !b) || (e->c && !c)) return NULL;
    return ir_expr_with(e, a, b, c, NULL);
  }
  case IR_LOAD: {
    const ir_expr *idx = slice_index(e->b, off, n);
    const ir_expr *pred = e->c ? slice(e->c, off, n) : NULL;
    if (!idx || (e->c && !pred)) return NULL;
    return ir_load(tec_dtype_with_lanes(e->type, n), e->a, idx, pred);
  }
  case IR_CALL: {
    if (e->v.i == IR_INTRIN_DOT4 || e->v.i == IR_INTRIN_MMLA || e->v.i == IR_INTRIN_ZIP_LO ||
        e->v.i == IR_INTRIN_ZIP_HI)
      return NULL; /* lanes of groups, or lanes that move */
    const ir_expr **args = tec_ctx_alloc(ctx, sizeof *args * (size_t)(e->nargs ? e->nargs : 1));
    if (!args) return NULL;
    for (int i = 0; i < e->nargs; i++)
      if (!(args[i] = slice(e->args[i], off, n))) return NULL;
    return ir_call(ctx, (ir_intrinsic)e->v.i, e->nargs, args);
  }
  default: /* vector variables, lets, immediates with lanes: leave the store whole */
    return NULL;
  }
}

static const ir_stmt *slice_store(ir_mutator *m, const ir_stmt *s) {
  int vector_bits = *(const int *)m->user;
  if (!s->a || !s->b) return s; /* malformed: the verifier or codegen says so */
  unsigned long errors_before = tec_ctx_error_count(m->ctx);
  int lanes = s->b->type.lanes, bits = s->b->type.bits;
  int native = bits > 0 ? vector_bits / bits : 0;
  if (native < 2 || lanes <= native) return s; /* no SIMD: LLVM scalarizes anyway */
  if ((lanes & (lanes - 1)) == 0) return s; /* LLVM halves these cleanly (see the top) */
  int npieces = (lanes + native - 1) / native;
  const ir_stmt **pieces = tec_ctx_alloc(m->ctx, sizeof *pieces * (size_t)npieces);
  if (!pieces) return s;
  int p = 0;
  for (; p < npieces; p++) {
    int off = p * native, n = lanes - off < native ? lanes - off : native;
    const ir_expr *idx = slice_index(s->a, off, n), *val = slice(s->b, off, n);
    const ir_expr *pred = s->c ? slice(s->c, off, n) : NULL;
    if (idx && val && (!s->c || pred)) pieces[p] = ir_store(s->var, idx, val, pred);
    if (!pieces[p]) break;
  }
  const ir_stmt *r = p == npieces ? ir_seq(m->ctx, npieces, pieces) : NULL;
  if (r) return r;
  /* unsliceable (or out of memory while slicing): the store whole is still right, no error */
  tec_ctx_error_rollback(m->ctx, errors_before);
  return s;
}

const ir_stmt *lower_slice_vectors(tec_ctx *ctx, const ir_stmt *body, int vector_bits) {
  if (!body || vector_bits < 8) return body;
  ir_mutator m;
  ir_mutator_init(&m, ctx, &vector_bits);
  m.stmt[IR_S_STORE] = slice_store;
  const ir_stmt *r = ir_mutate_stmt(&m, body);
  return r ? r : body;
}
