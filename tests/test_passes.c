/* test_passes.c — the loop-level passes (loop_partition, vectorize, unroll, storage_rewrite):
 * printed IR before/after on hand-built lowered programs, and a small interpreter of lowered
 * scalar/vector IR that checks every pass preserves results (random shapes and guards), then
 * end to end through the JIT with vectorize/unroll schedules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "arith/arith.h"
#include "lower/passes.h"

static tec_ctx *ctx;
static const ir_expr *A, *B, *C, *S, *T, *U, *N, *P, *I, *J, *K, *IO, *II, *JO, *JI;

static void setup(void) {
  ctx = tec_ctx_new();
  A = ir_var(ctx, "A", TEC_HANDLET, IR_VAR_BUFFER);
  B = ir_var(ctx, "B", TEC_HANDLET, IR_VAR_BUFFER);
  C = ir_var(ctx, "C", TEC_HANDLET, IR_VAR_BUFFER);
  S = ir_var(ctx, "S", TEC_HANDLET, IR_VAR_BUFFER);
  T = ir_var(ctx, "T", TEC_HANDLET, IR_VAR_BUFFER);
  U = ir_var(ctx, "U", TEC_HANDLET, IR_VAR_BUFFER);
  N = ir_var(ctx, "n", TEC_INDEX, IR_VAR_SIZE);
  P = ir_var(ctx, "p", TEC_INDEX, IR_VAR_SIZE);
  I = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  J = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  K = ir_var(ctx, "k", TEC_INDEX, IR_VAR_INDEX);
  IO = ir_var(ctx, "i.outer", TEC_INDEX, IR_VAR_INDEX);
  II = ir_var(ctx, "i.inner", TEC_INDEX, IR_VAR_INDEX);
  JO = ir_var(ctx, "j.outer", TEC_INDEX, IR_VAR_INDEX);
  JI = ir_var(ctx, "j.inner", TEC_INDEX, IR_VAR_INDEX);
}
static void teardown(void) { tec_ctx_free(ctx); }

static const ir_expr *c64(int64_t v) { return ir_int(ctx, v); }
static const ir_expr *ld(const ir_expr *buf, const ir_expr *idx) {
  return ir_load(TEC_F32, buf, idx, NULL);
}
static const ir_stmt *loop(const ir_expr *v, int64_t min, const ir_expr *ext, ir_for_kind k,
                           const ir_stmt *body) {
  return ir_for(v, c64(min), ext, k, body);
}

/* ================= the interpreter ================= */

#define MAXL 64
typedef struct val {
  int lanes, isf;
  double f[MAXL];
  int64_t i[MAXL];
} val;

typedef struct buf {
  const ir_expr *var;
  int isf;
  int64_t n;
  double *f;
  int64_t *i;
} buf;

typedef struct interp {
  const ir_expr *vars[256];
  val *vals[256];
  int nv;
  buf bufs[64];
  int nb;
  long steps;
  char err[256];
} interp;

static void ierr(interp *in, const char *msg, const char *name) {
  if (!in->err[0]) snprintf(in->err, sizeof in->err, "%s %s", msg, name ? name : "");
}

static buf *find_buf(interp *in, const ir_expr *v) {
  for (int k = in->nb - 1; k >= 0; k--)
    if (in->bufs[k].var == v) return &in->bufs[k];
  return NULL;
}

static void bind(interp *in, const ir_expr *v, const val *x) {
  if (in->nv >= 256) return ierr(in, "too many bindings", NULL);
  val *c = malloc(sizeof *c);
  *c = *x;
  in->vars[in->nv] = v;
  in->vals[in->nv++] = c;
}
static void unbind(interp *in) { free(in->vals[--in->nv]); }

static val scalar_i(int64_t x) {
  val v;
  v.lanes = 1, v.isf = 0, v.i[0] = x, v.f[0] = (double)x;
  return v;
}

static val eval(interp *in, const ir_expr *e);

static int64_t lane_i(const val *v, int l) { return v->i[v->lanes == 1 ? 0 : l]; }
static double lane_f(const val *v, int l) { return v->f[v->lanes == 1 ? 0 : l]; }

static int64_t floor_div64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static val eval_bin(interp *in, const ir_expr *e) {
  val a = eval(in, e->a), b = eval(in, e->b), r;
  int L = e->type.lanes;
  r.lanes = L;
  r.isf = tec_dtype_is_float(e->type);
  int opf = a.isf;
  for (int l = 0; l < L; l++) {
    double x = lane_f(&a, l), y = lane_f(&b, l);
    int64_t p = lane_i(&a, l), q = lane_i(&b, l), ri = 0;
    double rf = 0;
    switch (e->kind) {
    case IR_ADD: rf = x + y, ri = p + q; break;
    case IR_SUB: rf = x - y, ri = p - q; break;
    case IR_MUL: rf = x * y, ri = p * q; break;
    case IR_DIV:
      if (!opf && q == 0) return ierr(in, "division by zero", NULL), r;
      rf = x / y, ri = opf ? 0 : p / q;
      break;
    case IR_MOD:
      if (q == 0) return ierr(in, "division by zero", NULL), r;
      ri = p % q;
      break;
    case IR_FLOORDIV:
      if (q == 0) return ierr(in, "division by zero", NULL), r;
      ri = floor_div64(p, q);
      break;
    case IR_FLOORMOD:
      if (q == 0) return ierr(in, "division by zero", NULL), r;
      ri = p - q * floor_div64(p, q);
      break;
    case IR_MIN: rf = x < y ? x : y, ri = p < q ? p : q; break;
    case IR_MAX: rf = x > y ? x : y, ri = p > q ? p : q; break;
    case IR_EQ: ri = opf ? x == y : p == q; break;
    case IR_NE: ri = opf ? x != y : p != q; break;
    case IR_LT: ri = opf ? x < y : p < q; break;
    case IR_LE: ri = opf ? x <= y : p <= q; break;
    case IR_GT: ri = opf ? x > y : p > q; break;
    case IR_GE: ri = opf ? x >= y : p >= q; break;
    case IR_AND: ri = p && q; break;
    case IR_OR: ri = p || q; break;
    default: ierr(in, "unknown binary", ir_expr_kind_name(e->kind));
    }
    if (r.isf && e->type.bits == 32) rf = (float)rf;
    r.f[l] = r.isf ? rf : (double)ri;
    r.i[l] = r.isf ? (int64_t)rf : ri;
  }
  return r;
}

static val eval(interp *in, const ir_expr *e) {
  val r;
  memset(&r, 0, sizeof r);
  r.lanes = 1;
  if (in->err[0]) return r;
  int L = e->type.lanes;
  if (L > MAXL) return ierr(in, "too many lanes", NULL), r;
  switch (e->kind) {
  case IR_INT_IMM: return scalar_i(e->v.i);
  case IR_FLOAT_IMM: r.isf = 1, r.f[0] = e->v.f; return r;
  case IR_VAR:
    for (int k = in->nv - 1; k >= 0; k--)
      if (in->vars[k] == e) return *in->vals[k];
    ierr(in, "unbound variable", e->name);
    return r;
  case IR_NOT: r = eval(in, e->a); for (int l = 0; l < r.lanes; l++) r.i[l] = !r.i[l], r.f[l] = (double)r.i[l]; return r;
  case IR_SELECT: {
    val c = eval(in, e->a), t = eval(in, e->b), f = eval(in, e->c);
    r.lanes = L, r.isf = t.isf;
    for (int l = 0; l < L; l++) {
      int pick = lane_i(&c, l) != 0;
      r.f[l] = pick ? lane_f(&t, l) : lane_f(&f, l);
      r.i[l] = pick ? lane_i(&t, l) : lane_i(&f, l);
    }
    return r;
  }
  case IR_CAST: {
    val a = eval(in, e->a);
    r.lanes = L, r.isf = tec_dtype_is_float(e->type);
    for (int l = 0; l < L; l++) {
      if (r.isf) r.f[l] = a.isf ? lane_f(&a, l) : (double)lane_i(&a, l), r.i[l] = (int64_t)r.f[l];
      else if (e->type.code == TEC_BOOL) r.i[l] = a.isf ? lane_f(&a, l) != 0 : lane_i(&a, l) != 0, r.f[l] = (double)r.i[l];
      else r.i[l] = a.isf ? (int64_t)lane_f(&a, l) : lane_i(&a, l), r.f[l] = (double)r.i[l];
      if (r.isf && e->type.bits == 32) r.f[l] = (float)r.f[l];
    }
    return r;
  }
  case IR_CALL: {
    val a[3];
    for (int k = 0; k < e->nargs && k < 3; k++) a[k] = eval(in, e->args[k]);
    if (e->v.i == IR_INTRIN_LIKELY) return a[0]; /* likely(c) is c */
    r.lanes = L, r.isf = 1;
    for (int l = 0; l < L; l++) {
      double x = lane_f(&a[0], l), y;
      switch (e->v.i) {
      case IR_INTRIN_EXP: y = exp(x); break;
      case IR_INTRIN_LOG: y = log(x); break;
      case IR_INTRIN_SQRT: y = sqrt(x); break;
      case IR_INTRIN_TANH: y = tanh(x); break;
      case IR_INTRIN_FABS: y = fabs(x); break;
      case IR_INTRIN_FMA: y = x * lane_f(&a[1], l) + lane_f(&a[2], l); break;
      default: y = 0; ierr(in, "call", e->name);
      }
      r.f[l] = e->type.bits == 32 ? (float)y : y;
    }
    return r;
  }
  case IR_LOAD: {
    buf *b = find_buf(in, e->a);
    if (!b) return ierr(in, "unknown buffer", e->a->name), r;
    val idx = eval(in, e->b), pred = e->c ? eval(in, e->c) : scalar_i(1);
    r.lanes = L, r.isf = b->isf;
    for (int l = 0; l < L; l++) {
      if (!lane_i(&pred, l)) continue;
      int64_t x = lane_i(&idx, l);
      if (x < 0 || x >= b->n) return ierr(in, "load out of bounds of", e->a->name), r;
      r.f[l] = b->isf ? b->f[x] : (double)b->i[x];
      r.i[l] = b->isf ? (int64_t)b->f[x] : b->i[x];
    }
    return r;
  }
  case IR_RAMP: {
    val base = eval(in, e->a), st = eval(in, e->b);
    r.lanes = L;
    for (int l = 0; l < L; l++) r.i[l] = base.i[0] + l * st.i[0], r.f[l] = (double)r.i[l];
    return r;
  }
  case IR_BROADCAST: {
    val a = eval(in, e->a);
    r = a;
    r.lanes = L;
    for (int l = 0; l < L; l++) r.i[l] = a.i[0], r.f[l] = a.f[0];
    return r;
  }
  case IR_LET: {
    val a = eval(in, e->a);
    bind(in, e->var, &a);
    r = eval(in, e->b);
    unbind(in);
    return r;
  }
  default: return eval_bin(in, e);
  }
}

static void exec(interp *in, const ir_stmt *s) {
  if (!s || in->err[0]) return;
  if (++in->steps > 20000000) return ierr(in, "too many steps", NULL);
  switch (s->kind) {
  case IR_S_FOR: {
    val lo = eval(in, s->a), ext = eval(in, s->b);
    for (int64_t k = lo.i[0]; k < lo.i[0] + ext.i[0] && !in->err[0]; k++) {
      val v = scalar_i(k);
      bind(in, s->var, &v);
      exec(in, s->body);
      unbind(in);
    }
    return;
  }
  case IR_S_STORE: {
    buf *b = find_buf(in, s->var);
    if (!b) return ierr(in, "unknown buffer", s->var->name);
    val idx = eval(in, s->a), v = eval(in, s->b), pred = s->c ? eval(in, s->c) : scalar_i(1);
    for (int l = 0; l < v.lanes; l++) {
      if (!lane_i(&pred, l)) continue;
      int64_t x = lane_i(&idx, l);
      if (x < 0 || x >= b->n) return ierr(in, "store out of bounds of", s->var->name);
      if (b->isf) b->f[x] = v.isf ? v.f[l] : (double)v.i[l];
      else b->i[x] = v.isf ? (int64_t)v.f[l] : v.i[l];
    }
    return;
  }
  case IR_S_ALLOCATE: {
    val n = eval(in, s->a);
    if (n.i[0] < 0 || n.i[0] > (1 << 24)) return ierr(in, "bad allocation size", s->var->name);
    if (in->nb >= 64) return ierr(in, "too many buffers", NULL);
    buf *b = &in->bufs[in->nb++];
    b->var = s->var, b->n = n.i[0], b->isf = tec_dtype_is_float(s->type);
    b->f = malloc(sizeof(double) * (size_t)(b->n + 1));
    b->i = malloc(sizeof(int64_t) * (size_t)(b->n + 1));
    for (int64_t k = 0; k < b->n; k++) b->f[k] = 777.0, b->i[k] = 777;
    exec(in, s->body);
    b = &in->bufs[--in->nb];
    free(b->f), free(b->i);
    return;
  }
  case IR_S_SEQ:
    for (int k = 0; k < s->n; k++) exec(in, s->seq[k]);
    return;
  case IR_S_IF: {
    val c = eval(in, s->a);
    exec(in, c.i[0] ? s->body : s->else_body);
    return;
  }
  case IR_S_LET_STMT: {
    val v = eval(in, s->a);
    bind(in, s->var, &v);
    exec(in, s->body);
    unbind(in);
    return;
  }
  case IR_S_ATTR: case IR_S_PRODUCE: exec(in, s->body); return;
  case IR_S_EVALUATE: eval(in, s->a); return;
  default: ierr(in, "statement", ir_stmt_kind_name(s->kind));
  }
}

/* Runs s over float buffers (A, B, C, S of `len` elements: A, B random from seed, C and S
 * filled with a pattern) with n = nval and p = pval bound; returns C and S concatenated in
 * out (2*len). 0 on success, else the error in msg. */
static int run(const ir_stmt *s, int64_t len, int64_t nval, int64_t pval, unsigned seed,
               double *out, char *msg) {
  interp *in = calloc(1, sizeof *in);
  const ir_expr *bv[4] = {A, B, C, S};
  srand(seed);
  for (int k = 0; k < 4; k++) {
    buf *b = &in->bufs[in->nb++];
    b->var = bv[k], b->isf = 1, b->n = len;
    b->f = malloc(sizeof(double) * (size_t)len);
    b->i = malloc(sizeof(int64_t) * (size_t)len);
    for (int64_t x = 0; x < len; x++)
      b->f[x] = k < 2 ? (float)((rand() % 2000) / 1000.0 - 1.0) : (double)(x % 7) - 100.0;
  }
  val nv = scalar_i(nval), pv = scalar_i(pval);
  bind(in, N, &nv);
  bind(in, P, &pv);
  exec(in, s);
  int rc = in->err[0] ? -1 : 0;
  if (msg) strcpy(msg, in->err);
  for (int64_t x = 0; x < len; x++) out[x] = in->bufs[2].f[x], out[len + x] = in->bufs[3].f[x];
  while (in->nv) unbind(in);
  for (int k = 0; k < in->nb; k++) free(in->bufs[k].f), free(in->bufs[k].i);
  free(in);
  return rc;
}

/* Asserts that a and b compute the same C and S for the given n, p. */
static void same_results(const ir_stmt *a, const ir_stmt *b, int64_t len, int64_t n, int64_t p,
                         const char *what) {
  double *x = malloc(sizeof(double) * (size_t)(2 * len)), *y = malloc(sizeof(double) * (size_t)(2 * len));
  char ea[256], eb[256];
  int ra = run(a, len, n, p, 7, x, ea), rb = run(b, len, n, p, 7, y, eb);
  ck_assert_msg(ra == 0, "%s: reference failed (%s) n=%lld\n%s", what, ea, (long long)n, ir_stmt_str(a));
  ck_assert_msg(rb == 0, "%s: transformed failed (%s) n=%lld p=%lld\n%s", what, eb, (long long)n,
                (long long)p, ir_stmt_str(b));
  for (int64_t k = 0; k < 2 * len; k++)
    ck_assert_msg(x[k] == y[k], "%s: n=%lld p=%lld: element %lld differs: %g vs %g\nbefore:\n%s\nafter:\n%s",
                  what, (long long)n, (long long)p, (long long)k, x[k], y[k], ir_stmt_str(a),
                  ir_stmt_str(b));
  free(x);
  free(y);
}

static int count(const char *s, const char *sub) {
  int c = 0;
  for (const char *p = s; (p = strstr(p, sub)); p++) c++;
  return c;
}

#define STMT_IS(s, want)                                                                   \
  do {                                                                                     \
    const char *got_ = ir_stmt_str(s);                                                     \
    ck_assert_msg(strcmp(got_, (want)) == 0, "got\n%s\nwant\n%s", got_, (want));           \
  } while (0)

/* partition + simplify, as the pipeline runs it */
static const ir_stmt *partition(const ir_stmt *s) { return lower_simplify(lower_loop_partition(s)); }

/* ================= loop partition ================= */

/* for io in [0, ceil(n/tile)) for ii in [0, tile): if (io*tile + ii < n) C[io*tile+ii] = A[..]+1 */
static const ir_stmt *tiled_vadd(int64_t tile, ir_for_kind inner) {
  const ir_expr *idx = ir_add(ir_mul(IO, c64(tile)), II);
  const ir_stmt *st = ir_store(C, idx, ir_add(ld(A, idx), ir_float(ctx, 1)), NULL);
  const ir_stmt *body = ir_if(ir_lt(idx, N), st, NULL);
  const ir_expr *outer = ir_floordiv(ir_add(N, c64(tile - 1)), c64(tile));
  return loop(IO, 0, outer, IR_FOR_SERIAL, loop(II, 0, c64(tile), inner, body));
}

START_TEST(partition_constant) {
  const ir_expr *idx = ir_add(ir_mul(IO, c64(8)), II);
  const ir_stmt *s = loop(IO, 0, c64(3), IR_FOR_SERIAL,
                          loop(II, 0, c64(8), IR_FOR_SERIAL,
                               ir_if(ir_lt(idx, c64(20)), ir_store(C, idx, ld(A, idx), NULL), NULL)));
  STMT_IS(s, "for (i.outer, 0, 3) {\n"
             "  for (i.inner, 0, 8) {\n"
             "    if ((((i.outer*8) + i.inner) < 20)) {\n"
             "      C[((i.outer*8) + i.inner)] = A[((i.outer*8) + i.inner)]\n"
             "    }\n"
             "  }\n"
             "}\n");
  STMT_IS(partition(s), "for (i.outer, 0, 2) {\n"
                        "  for (i.inner, 0, 8) {\n"
                        "    C[((i.outer*8) + i.inner)] = A[((i.outer*8) + i.inner)]\n"
                        "  }\n"
                        "}\n"
                        "for (i.inner, 0, 4) {\n"
                        "  C[(i.inner + 16)] = A[(i.inner + 16)]\n"
                        "}\n");
}
END_TEST

START_TEST(partition_symbolic) {
  const ir_stmt *s = tiled_vadd(8, IR_FOR_SERIAL), *p = partition(s);
  const char *t = ir_stmt_str(p);
  /* the hot loop: no condition inside, split at n/8 */
  tu_assert_contains(t, "for (i.outer, 0, ");
  tu_assert_contains(t, "  for (i.inner, 0, 8) {\n"
                        "    C[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)] + 1f)\n"
                        "  }\n");
  ck_assert_int_eq(count(t, "if ("), 0); /* the tail's inner loop lost its guard too */
  ck_assert_int_eq(count(t, "for (i.outer"), 2);
  for (int64_t n = 0; n <= 40; n++) same_results(s, p, 48, n, 0, "tiled vadd");
}
END_TEST

START_TEST(partition_keeps_kind_and_skips_vectorized) {
  const ir_expr *idx = ir_add(ir_mul(IO, c64(4)), II);
  const ir_stmt *body = ir_if(ir_lt(idx, N), ir_store(C, idx, ld(A, idx), NULL), NULL);
  const ir_stmt *s = loop(IO, 0, ir_floordiv(ir_add(N, c64(3)), c64(4)), IR_FOR_PARALLEL,
                          loop(II, 0, c64(4), IR_FOR_VECTORIZED, body));
  const ir_stmt *p = partition(s);
  /* a parallel loop stays one loop (one job for the thread pool, the tail iteration shared out
   * with the others); each iteration picks its part. The vectorized loop keeps its constant
   * extent; the tail keeps the guard. */
  STMT_IS(p, "for (i.outer, 0, ((n + 3) / 4)) parallel {\n"
             "  if ((i.outer < (n / 4))) {\n"
             "    for (i.inner, 0, 4) vectorized {\n"
             "      C[((i.outer*4) + i.inner)] = A[((i.outer*4) + i.inner)]\n"
             "    }\n"
             "  } else {\n"
             "    for (i.inner, 0, 4) vectorized {\n"
             "      if ((((i.outer*4) + i.inner) < n)) {\n"
             "        C[((i.outer*4) + i.inner)] = A[((i.outer*4) + i.inner)]\n"
             "      }\n"
             "    }\n"
             "  }\n"
             "}\n");
  for (int64_t n = 0; n <= 17; n++) same_results(s, p, 24, n, 0, "parallel outer");
}
END_TEST

START_TEST(partition_vectorized_constant_split) {
  /* a vectorized tail with a constant guard becomes a shorter vectorized loop */
  const ir_expr *idx = ir_add(II, c64(16));
  const ir_stmt *s = loop(II, 0, c64(16), IR_FOR_VECTORIZED,
                          ir_if(ir_lt(idx, c64(29)), ir_store(C, idx, ld(A, idx), NULL), NULL));
  const ir_stmt *p = partition(s);
  STMT_IS(p, "for (i.inner, 0, 13) vectorized {\n"
             "  C[(i.inner + 16)] = A[(i.inner + 16)]\n"
             "}\n");
  const ir_stmt *v = lower_vectorize(p);
  STMT_IS(v, "C[ramp(16, 1, 13)] = A[ramp(16, 1, 13)]\n");
  same_results(s, v, 32, 0, 0, "vectorized tail");
}
END_TEST

START_TEST(partition_two_dims_conjunction) {
  /* a 2-d tile: if (io*4+ii < n && jo*4+ji < p) C[(io*4+ii)*16 + jo*4+ji] = A[...] */
  const ir_expr *i = ir_add(ir_mul(IO, c64(4)), II), *j = ir_add(ir_mul(JO, c64(4)), JI);
  const ir_expr *idx = ir_add(ir_mul(i, c64(16)), j);
  const ir_stmt *st = ir_store(C, idx, ir_mul(ld(A, idx), ir_float(ctx, 2)), NULL);
  const ir_stmt *s = loop(
      IO, 0, ir_floordiv(ir_add(N, c64(3)), c64(4)), IR_FOR_SERIAL,
      loop(JO, 0, ir_floordiv(ir_add(P, c64(3)), c64(4)), IR_FOR_SERIAL,
           loop(II, 0, c64(4), IR_FOR_SERIAL,
                loop(JI, 0, c64(4), IR_FOR_SERIAL,
                     ir_if(ir_and(ir_lt(i, N), ir_lt(j, P)), st, NULL)))));
  const ir_stmt *p = partition(s);
  const char *t = ir_stmt_str(p);
  /* the first nest (both conjuncts dropped) has no condition */
  const char *first_if = strstr(t, "if (");
  const char *second_nest = strstr(t + 1, "\nfor (i.outer");
  ck_assert_msg(!first_if || (second_nest && first_if > second_nest), "%s", t);
  for (int64_t n = 0; n <= 16; n += 1)
    for (int64_t q = 0; q <= 16; q += 3) same_results(s, p, 16 * 16, n, q, "2-d tile");
}
END_TEST

START_TEST(partition_decreasing_padding) {
  /* padding: for i in [0, 20): if (i >= p && i < n) C[i] = A[i - p] */
  const ir_stmt *st = ir_store(C, I, ld(A, ir_sub(I, P)), NULL);
  const ir_stmt *s = loop(I, 0, c64(20), IR_FOR_SERIAL,
                          ir_if(ir_and(ir_ge(I, P), ir_lt(I, N)), st,
                                ir_store(C, I, ir_float(ctx, 0), NULL)));
  const ir_stmt *p = partition(s);
  const char *t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "for (i, "), 3);
  /* one exact threshold each way: the head and the tail take the else branch, no guard left */
  ck_assert_int_eq(count(t, "if ("), 0);
  ck_assert_int_eq(count(t, "C[i] = 0f"), 2);
  for (int64_t n = 0; n <= 22; n++)
    for (int64_t q = 0; q <= 22; q += 2) same_results(s, p, 24, n, q, "padding"); /* sizes are >= 0 */
}
END_TEST

START_TEST(partition_inner_only_and_le) {
  /* for i in [0, 8): for j in [0, 8): if (j <= i) C[i*8+j] = A[...]  (triangle) */
  const ir_expr *idx = ir_add(ir_mul(I, c64(8)), J);
  const ir_stmt *s = loop(I, 0, c64(8), IR_FOR_SERIAL,
                          loop(J, 0, c64(8), IR_FOR_SERIAL,
                               ir_if(ir_le(J, I), ir_store(C, idx, ld(A, idx), NULL), NULL)));
  const ir_stmt *p = partition(s);
  const char *t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "if ("), 0);
  tu_assert_contains(t, "for (j, 0, (i + 1)) {");
  same_results(s, p, 64, 0, 0, "triangle");
  /* a guard on an inner variable with a constant bound */
  s = loop(J, 0, c64(8), IR_FOR_SERIAL, ir_if(ir_lt(J, c64(5)), ir_store(C, J, ld(A, J), NULL), NULL));
  STMT_IS(partition(s), "for (j, 0, 5) {\n  C[j] = A[j]\n}\n");
}
END_TEST

START_TEST(partition_leaves_what_it_cannot) {
  /* a guard reading memory, a guard on a let variable bound inside: unchanged */
  const ir_stmt *s = loop(I, 0, N, IR_FOR_SERIAL,
                          ir_if(ir_lt(ld(B, I), ir_float(ctx, 0)), ir_store(C, I, ld(A, I), NULL), NULL));
  ck_assert_ptr_eq(lower_loop_partition(s), s);
  const ir_expr *x = ir_var(ctx, "x", TEC_INDEX, IR_VAR_LET);
  s = loop(I, 0, N, IR_FOR_SERIAL,
           ir_let_stmt(x, ir_cast(TEC_INDEX, ld(B, I)),
                       ir_if(ir_lt(ir_add(I, x), N), ir_store(C, I, ld(A, I), NULL), NULL)));
  ck_assert_ptr_eq(lower_loop_partition(s), s);
}
END_TEST

/* random guards: for io in [0, E) for ii in [0, tile): if (a*io + b*ii + c < n [&& ...]) */
START_TEST(partition_random) {
  srand(12345);
  for (int trial = 0; trial < 60; trial++) {
    int64_t tile = 1 + rand() % 9, a = 1 + rand() % 3, b = rand() % 4 - 1, c = rand() % 7 - 3;
    int64_t ext = 1 + rand() % 6;
    const ir_expr *e = ir_add(ir_add(ir_mul(IO, c64(a)), ir_mul(II, c64(b))), c64(c));
    const ir_expr *cond = rand() % 2 ? ir_lt(e, N) : ir_le(e, N);
    if (rand() % 3 == 0) cond = ir_and(cond, ir_ge(ir_add(ir_mul(IO, c64(tile)), II), P));
    if (rand() % 4 == 0) cond = ir_and(ir_gt(N, ir_sub(II, IO)), cond);
    const ir_expr *idx = ir_add(ir_mul(IO, c64(tile)), II);
    const ir_stmt *st = ir_store(C, idx, ir_add(ld(C, idx), ld(A, idx)), NULL);
    const ir_stmt *els = rand() % 2 ? ir_store(S, idx, ld(B, idx), NULL) : NULL;
    const ir_stmt *s = loop(IO, rand() % 3, c64(ext), IR_FOR_SERIAL,
                            loop(II, 0, c64(tile), IR_FOR_SERIAL, ir_if(cond, st, els)));
    const ir_stmt *p = partition(s);
    for (int64_t n = 0; n <= 30; n += 1 + rand() % 3) /* n is a size: >= 0 */
      same_results(s, p, 100, n, rand() % 12, "random guard");
  }
}
END_TEST

/* ================= likely(): partitioning selects and load predicates ================= */

/* for i in [0, 20): C[i] = select(cond, A[i - p], 0f) with cond = (i >= p && i < n + p),
 * marked likely or not; the load predicated as guard_loads does it. */
static const ir_stmt *padded_copy(int marked, ir_for_kind k) {
  const ir_expr *in = ir_and(ir_ge(I, P), ir_lt(I, ir_add(N, P)));
  const ir_expr *val = ir_select(marked ? ir_likely(in) : in, ld(A, ir_sub(I, P)), ir_float(ctx, 0));
  return lower_guard_loads(loop(I, 0, c64(20), k, ir_store(C, I, val, NULL)));
}

START_TEST(partition_likely_select) {
  const ir_stmt *s = padded_copy(1, IR_FOR_SERIAL), *p = partition(s);
  const char *t = ir_stmt_str(p);
  tu_assert_contains(ir_stmt_str(s), "C[i] = select(likely(((i >= p) && (i < (n + p)))), "
                                     "A[(i - p)] if likely(((i >= p) && (i < (n + p)))), 0f)");
  /* three loops; the middle one's select and predicate are gone, head and tail keep theirs */
  ck_assert_int_eq(count(t, "for (i, "), 3);
  tu_assert_contains(t, "  C[i] = A[(i - p)]\n");
  ck_assert_int_eq(count(t, "select("), 2);
  ck_assert_int_eq(count(t, "likely("), 4);
  for (int64_t n = 0; n <= 22; n++)
    for (int64_t q = 0; q + n <= 24; q += 1 + n % 3) same_results(s, p, 24, n, q, "likely padding");
  /* unmarked: nothing to do (the select stays in every iteration: no code growth) */
  s = padded_copy(0, IR_FOR_SERIAL);
  ck_assert_ptr_eq(lower_loop_partition(s), s);
  /* a parallel loop stays one loop, each iteration picking its part */
  s = padded_copy(1, IR_FOR_PARALLEL), p = partition(s);
  t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "for (i, "), 1);
  ck_assert_int_eq(count(t, "parallel"), 1);
  tu_assert_contains(t, "C[i] = A[(i - p)]\n");
  for (int64_t n = 0; n <= 22; n += 3)
    for (int64_t q = 0; q + n <= 24; q += 2) same_results(s, p, 24, n, q, "likely parallel");
}
END_TEST

START_TEST(partition_likely_if_and_predicate) {
  /* likely() around an IF's condition: the same split as the plain IF (partition_symbolic) */
  const ir_expr *idx = ir_add(ir_mul(IO, c64(8)), II);
  const ir_stmt *st = ir_store(C, idx, ir_add(ld(A, idx), ir_float(ctx, 1)), NULL);
  const ir_stmt *s = loop(IO, 0, ir_floordiv(ir_add(N, c64(7)), c64(8)), IR_FOR_SERIAL,
                          loop(II, 0, c64(8), IR_FOR_SERIAL, ir_if(ir_likely(ir_lt(idx, N)), st, NULL)));
  const ir_stmt *p = partition(s);
  const char *t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "for (i.outer"), 2);
  ck_assert_int_eq(count(t, "if ("), 0);
  for (int64_t n = 0; n <= 40; n++) same_results(s, p, 48, n, 0, "likely if");
  /* a load predicate alone (no select): C[i] = A[i - p] if likely(i >= p) */
  s = loop(I, 0, ir_add(N, P), IR_FOR_SERIAL,
           ir_store(C, I, ir_load(TEC_F32, A, ir_sub(I, P), ir_likely(ir_ge(I, P))), NULL));
  p = partition(s);
  t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "for (i, "), 2);
  tu_assert_contains(t, "  C[i] = A[(i - p)]\n");
  for (int64_t n = 0; n <= 12; n++)
    for (int64_t q = 0; q <= 12; q += 3) same_results(s, p, 24, n, q, "likely predicate");
}
END_TEST

START_TEST(partition_likely_leaves_what_it_cannot) {
  const ir_expr *zero = ir_float(ctx, 0);
  /* not linear in i, reading memory, on a let variable bound inside: no split */
  const ir_expr *conds[3] = {ir_lt(ir_mul(I, I), N), ir_lt(ir_cast(TEC_INDEX, ld(B, I)), N), NULL};
  for (int k = 0; k < 2; k++) {
    const ir_stmt *s = loop(I, 0, c64(20), IR_FOR_SERIAL,
                            ir_store(C, I, ir_select(ir_likely(conds[k]), ld(A, I), zero), NULL));
    ck_assert_ptr_eq(lower_loop_partition(s), s);
  }
  const ir_expr *x = ir_var(ctx, "x", TEC_INDEX, IR_VAR_LET);
  const ir_stmt *s = loop(I, 0, c64(20), IR_FOR_SERIAL,
                          ir_let_stmt(x, ir_cast(TEC_INDEX, ld(B, I)),
                                      ir_store(C, I, ir_select(ir_likely(ir_lt(ir_add(I, x), N)), ld(A, I), zero), NULL)));
  ck_assert_ptr_eq(lower_loop_partition(s), s);
  /* a vectorized or unrolled loop splits only at constant points: here symbolic */
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, I, ir_select(ir_likely(ir_lt(I, N)), ld(A, I), zero), NULL));
  ck_assert_ptr_eq(lower_loop_partition(s), s);
  /* ... and with a symbolic threshold the vectorizer carries likely() as a lane mask */
  s = lower_guard_loads(s);
  const ir_stmt *v = lower_vectorize(lower_loop_partition(s));
  tu_assert_contains(ir_stmt_str(v), "select(likely((ramp(0, 1, 8) < x8(n))), A[ramp(0, 1, 8)] if "
                                     "likely((ramp(0, 1, 8) < x8(n))), x8(0f))");
  for (int64_t n = 0; n <= 9; n++) same_results(s, v, 16, n, 0, "vector likely");
  /* unrolled: the copies fold to constants where they can */
  s = loop(I, 0, c64(4), IR_FOR_UNROLLED,
           ir_store(C, I, ir_select(ir_likely(ir_lt(I, ir_add(N, c64(2)))), ld(A, I), zero), NULL));
  const ir_stmt *u = lower_simplify(lower_unroll(partition(s)));
  ck_assert_int_eq(count(ir_stmt_str(u), "likely("), 2); /* i = 0, 1 hold for every n >= 0 */
  for (int64_t n = 0; n <= 5; n++) same_results(s, u, 8, n, 0, "unrolled likely");
}
END_TEST

START_TEST(partition_likely_shared_condition) {
  /* one likely() node under two inner loops of the same variable: j in [0, 2) gives i < 7,
   * but under the let it is unknown, so the node stays in the clean part (only the
   * threshold of the first splits i) */
  const ir_expr *zero = ir_float(ctx, 0);
  const ir_expr *cond = ir_likely(ir_lt(ir_add(I, J), c64(8)));
  const ir_expr *idx = ir_add(ir_mul(I, c64(2)), J);
  const ir_stmt *first = loop(J, 0, c64(2), IR_FOR_SERIAL, ir_store(C, idx, ir_select(cond, ld(A, idx), zero), NULL));
  const ir_stmt *second = ir_let_stmt(J, ir_cast(TEC_INDEX, ir_mul(ld(B, I), ir_float(ctx, 4))),
                                      ir_store(S, I, ir_select(cond, ld(A, I), zero), NULL));
  const ir_stmt *s = loop(I, 0, c64(10), IR_FOR_SERIAL, ir_seq2(first, second));
  const ir_stmt *p = partition(s);
  const char *t = ir_stmt_str(p);
  ck_assert_int_eq(count(t, "for (i, "), 2);
  tu_assert_contains(t, "for (i, 0, 7) {\n  for (j, 0, 2) {\n    C[((i*2) + j)] = A[((i*2) + j)]\n");
  tu_assert_contains(t, "  let j = int64((B[i]*4f))\n  S[i] = select(likely(((i + j) < 8)), A[i], 0f)\n}\n"
                        "for (i, 7, 3) {\n");
  ck_assert_int_eq(count(t, "select("), 3); /* the clean part's let, the tail's two */
  same_results(s, p, 32, 0, 0, "shared likely");
  /* both occurrences analysable: both dropped in the clean part (the tighter split wins) */
  second = loop(J, 0, c64(5), IR_FOR_SERIAL, ir_store(S, idx, ir_select(cond, ld(A, idx), zero), NULL));
  s = loop(I, 0, c64(10), IR_FOR_SERIAL, ir_seq2(first, second));
  p = partition(s);
  t = ir_stmt_str(p);
  tu_assert_contains(t, "for (i, 0, 4) {\n");
  ck_assert_int_eq(count(t, "select("), 2);
  same_results(s, p, 32, 0, 0, "shared likely, both");
}
END_TEST

/* random likely() selects through the whole loop pipeline (vectorize, unroll): the loads are
 * predicated (guard_loads), the interpreter fails any read out of bounds */
START_TEST(partition_likely_random) {
  srand(4242);
  ir_for_kind kinds[] = {IR_FOR_SERIAL, IR_FOR_VECTORIZED, IR_FOR_UNROLLED};
  for (int trial = 0; trial < 60; trial++) {
    int64_t tile = 1 + rand() % 9, a = 1 + rand() % 3, b = rand() % 4 - 1, c = rand() % 7 - 3;
    int64_t ext = 1 + rand() % 6;
    const ir_expr *idx = ir_add(ir_mul(IO, c64(tile)), II);
    const ir_expr *e = ir_add(ir_add(ir_mul(IO, c64(a)), ir_mul(II, c64(b))), c64(c));
    const ir_expr *cond = ir_ge(idx, P); /* guards the read of A[idx - p] */
    if (rand() % 2) cond = ir_and(cond, rand() % 2 ? ir_lt(e, N) : ir_le(e, N));
    if (rand() % 3 == 0) cond = ir_and(ir_gt(N, ir_sub(II, IO)), cond);
    const ir_expr *val = ir_select(ir_likely(cond), ld(A, ir_sub(idx, P)), ld(B, idx));
    if (rand() % 3 == 0) val = ir_select(ir_lt(ld(B, idx), ir_float(ctx, 0)), val, ir_float(ctx, 2));
    const ir_stmt *s = loop(IO, rand() % 3, c64(ext), rand() % 4 ? IR_FOR_SERIAL : IR_FOR_PARALLEL,
                            loop(II, 0, c64(tile), kinds[rand() % 3], ir_store(C, idx, val, NULL)));
    s = lower_simplify(lower_guard_loads(s));
    const ir_stmt *p = lower_simplify(lower_loop_partition(s));
    p = lower_simplify(lower_unroll(lower_vectorize(p)));
    for (int64_t n = 0; n <= 30; n += 1 + rand() % 3)
      same_results(s, p, 100, n, rand() % 12, "random likely");
  }
}
END_TEST

/* ================= vectorize ================= */

START_TEST(vectorize_elementwise) {
  const ir_stmt *s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
                          ir_store(C, I, ir_add(ld(A, I), ld(B, I)), NULL));
  STMT_IS(s, "for (i, 0, 8) vectorized {\n  C[i] = (A[i] + B[i])\n}\n");
  const ir_stmt *v = lower_vectorize(s);
  STMT_IS(v, "C[ramp(0, 1, 8)] = (A[ramp(0, 1, 8)] + B[ramp(0, 1, 8)])\n");
  same_results(s, v, 8, 0, 0, "elementwise");
  /* an inner tile: the outer variable stays scalar inside the ramp base; a constant is
   * broadcast where it meets the vector */
  const ir_expr *idx = ir_add(ir_mul(IO, c64(16)), II);
  s = loop(IO, 0, c64(4), IR_FOR_SERIAL,
           loop(II, 0, c64(16), IR_FOR_VECTORIZED, ir_store(C, idx, ir_mul(ld(A, idx), ir_float(ctx, 3)), NULL)));
  v = lower_vectorize(s);
  STMT_IS(v, "for (i.outer, 0, 4) {\n"
             "  C[ramp((i.outer*16), 1, 16)] = (A[ramp((i.outer*16), 1, 16)]*x16(3f))\n"
             "}\n");
  same_results(s, v, 64, 0, 0, "tile");
}
END_TEST

START_TEST(vectorize_gemm_microkernel) {
  /* for ji vectorized 8 { for k { C[i*16 + jo*8 + ji] = C[..] + A[i*16 + k] * B[k*16 + jo*8 + ji] } } */
  const ir_expr *cidx = ir_add(ir_add(ir_mul(I, c64(16)), ir_mul(JO, c64(8))), JI);
  const ir_expr *bidx = ir_add(ir_add(ir_mul(K, c64(16)), ir_mul(JO, c64(8))), JI);
  const ir_expr *aidx = ir_add(ir_mul(I, c64(16)), K);
  const ir_stmt *upd = ir_store(C, cidx, ir_add(ld(C, cidx), ir_mul(ld(A, aidx), ld(B, bidx))), NULL);
  const ir_stmt *s = loop(
      I, 0, c64(16), IR_FOR_SERIAL,
      loop(JO, 0, c64(2), IR_FOR_SERIAL,
           loop(JI, 0, c64(8), IR_FOR_VECTORIZED,
                ir_seq2(ir_store(C, cidx, ir_float(ctx, 0), NULL),
                        loop(K, 0, c64(16), IR_FOR_SERIAL, upd)))));
  const ir_stmt *v = lower_simplify(lower_vectorize(s));
  STMT_IS(v, "for (i, 0, 16) {\n"
             "  for (j.outer, 0, 2) {\n"
             "    C[ramp(((i*16) + (j.outer*8)), 1, 8)] = x8(0f)\n"
             "    for (k, 0, 16) {\n"
             "      C[ramp(((i*16) + (j.outer*8)), 1, 8)] = (C[ramp(((i*16) + (j.outer*8)), 1, 8)] + "
             "(x8(A[((i*16) + k)])*B[ramp(((k*16) + (j.outer*8)), 1, 8)]))\n"
             "    }\n"
             "  }\n"
             "}\n");
  same_results(s, v, 256, 0, 0, "gemm");
}
END_TEST

START_TEST(vectorize_select_call_cast_let) {
  /* C[i*2] = let x = A[i]*2 in select(x > 0, exp(x), float(i)) + B[3] */
  const ir_expr *x = ir_var(ctx, "x", TEC_F32, IR_VAR_LET);
  const ir_expr *ax = ir_mul(ld(A, I), ir_float(ctx, 2));
  const ir_expr *val = ir_add(ir_select(ir_gt(x, ir_float(ctx, 0)), ir_exp(x), ir_cast(TEC_F32, I)),
                              ld(B, c64(3)));
  const ir_stmt *s = loop(I, 4, c64(8), IR_FOR_VECTORIZED,
                          ir_let_stmt(x, ax, ir_store(C, ir_mul(I, c64(2)), val, NULL)));
  const ir_stmt *v = lower_vectorize(s);
  const char *t = ir_stmt_str(v);
  tu_assert_contains(t, "C[ramp(8, 2, 8)] = ");
  tu_assert_contains(t, "A[ramp(4, 1, 8)]");
  tu_assert_contains(t, "float32x8(ramp(4, 1, 8))");
  tu_assert_contains(t, "x8(B[3])"); /* invariant: a scalar load, broadcast */
  ck_assert_int_eq(count(t, "for ("), 0);
  same_results(s, v, 32, 0, 0, "select/call/cast/let");
  /* a load predicated by a vector condition, an int64 buffer index computed through a let */
  const ir_stmt *s2 = loop(I, 0, c64(16), IR_FOR_VECTORIZED,
                           ir_store(S, I, ir_load(TEC_F32, A, ir_sub(I, c64(2)), ir_ge(I, c64(2))), NULL));
  const ir_stmt *v2 = lower_vectorize(s2);
  tu_assert_contains(ir_stmt_str(v2), "A[ramp(-2, 1, 16)] if (ramp(0, 1, 16) >= x16(2))");
  same_results(s2, v2, 16, 0, 0, "predicated load");
}
END_TEST

START_TEST(vectorize_fallbacks) {
  /* a reduction into a scalar */
  const ir_stmt *s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
                          ir_store(S, c64(0), ir_add(ld(S, c64(0)), ld(A, I)), NULL));
  const ir_stmt *v = lower_vectorize(s);
  STMT_IS(v, "for (i, 0, 8) {\n  S[0] = (S[0] + A[i])\n}\n");
  same_results(s, v, 8, 0, 0, "reduction");
  /* an IF on the variable */
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_if(ir_lt(I, N), ir_store(C, I, ld(A, I), NULL), NULL));
  ck_assert_int_eq(lower_vectorize(s)->for_kind, IR_FOR_SERIAL);
  /* a recurrence: B[i+1] = B[i] + 1 (lanes depend on each other) */
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, ir_add(I, c64(1)), ir_add(ld(C, I), ir_float(ctx, 1)), NULL));
  v = lower_vectorize(s);
  ck_assert_int_eq(v->kind, IR_S_FOR);
  ck_assert_int_eq(v->for_kind, IR_FOR_SERIAL);
  same_results(s, v, 9, 0, 0, "recurrence");
  /* ... at a distance of 7 < 8 lanes: still serial; of 8 lanes (a scan's previous row): no
   * lane touches what another stores; a load just ahead (C[i] = C[i + 1]) stays serial */
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, ir_add(I, c64(7)), ir_add(ld(C, I), ir_float(ctx, 1)), NULL));
  ck_assert_int_eq(lower_vectorize(s)->for_kind, IR_FOR_SERIAL);
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, ir_add(I, c64(8)), ir_add(ld(C, I), ir_float(ctx, 1)), NULL));
  v = lower_vectorize(s);
  STMT_IS(v, "C[ramp(8, 1, 8)] = (C[ramp(0, 1, 8)] + x8(1f))\n");
  same_results(s, v, 16, 0, 0, "a row behind");
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, I, ir_add(ld(C, ir_add(I, c64(1))), ir_float(ctx, 1)), NULL));
  ck_assert_int_eq(lower_vectorize(s)->for_kind, IR_FOR_SERIAL);
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           ir_store(C, I, ir_add(ld(C, ir_add(I, c64(8))), ir_float(ctx, 1)), NULL));
  v = lower_vectorize(s);
  ck_assert_int_eq(count(ir_stmt_str(v), "for ("), 0);
  same_results(s, v, 16, 0, 0, "a row ahead");
  /* a row behind, but through an inner loop's variable: lanes meet across its iterations
   * (lane 1's store at j = 0 is lane 0's load at j = 9) */
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED,
           loop(J, 0, c64(12), IR_FOR_SERIAL,
                ir_store(C, ir_add(ir_add(I, J), c64(8)), ir_add(ld(C, ir_add(I, J)), ir_float(ctx, 1)),
                         NULL)));
  v = lower_vectorize(s);
  ck_assert_int_eq(count(ir_stmt_str(v), "ramp"), 0);
  same_results(s, v, 27, 0, 0, "a row behind through an inner loop");
  /* a non-constant extent */
  s = loop(I, 0, N, IR_FOR_VECTORIZED, ir_store(C, I, ld(A, I), NULL));
  STMT_IS(lower_vectorize(s), "for (i, 0, n) {\n  C[i] = A[i]\n}\n");
  /* an inner loop whose extent depends on the variable */
  s = loop(I, 0, c64(4), IR_FOR_VECTORIZED,
           loop(J, 0, I, IR_FOR_SERIAL, ir_store(C, ir_add(ir_mul(I, c64(4)), J), ld(A, J), NULL)));
  v = lower_vectorize(s);
  ck_assert_int_eq(v->for_kind, IR_FOR_SERIAL);
  same_results(s, v, 16, 0, 0, "triangular inner");
  /* two lanes storing one element (not injective) while reading it: serial */
  const ir_expr *h = ir_floordiv(I, c64(2));
  s = loop(I, 0, c64(8), IR_FOR_VECTORIZED, ir_store(C, h, ir_add(ld(C, h), ld(A, I)), NULL));
  v = lower_vectorize(s);
  ck_assert_int_eq(v->for_kind, IR_FOR_SERIAL);
  same_results(s, v, 8, 0, 0, "colliding lanes");
}
END_TEST

/* ================= unroll ================= */

START_TEST(unroll_basic) {
  const ir_stmt *s = loop(I, 0, c64(4), IR_FOR_SERIAL,
                          loop(K, 0, c64(3), IR_FOR_UNROLLED,
                               ir_store(C, I, ir_add(ld(C, I), ld(A, ir_add(I, K))), NULL)));
  const ir_stmt *u = lower_simplify(lower_unroll(s));
  STMT_IS(u, "for (i, 0, 4) {\n"
             "  C[i] = (C[i] + A[i])\n"
             "  C[i] = (C[i] + A[(i + 1)])\n"
             "  C[i] = (C[i] + A[(i + 2)])\n"
             "}\n");
  same_results(s, u, 8, 0, 0, "unroll");
  /* non-zero min */
  s = loop(K, 2, c64(2), IR_FOR_UNROLLED, ir_store(C, K, ld(A, K), NULL));
  STMT_IS(lower_simplify(lower_unroll(s)), "C[2] = A[2]\nC[3] = A[3]\n");
  /* too long or symbolic: stays a serial loop */
  s = loop(K, 0, c64(2000), IR_FOR_UNROLLED, ir_store(C, c64(0), ld(A, K), NULL));
  u = lower_unroll(s);
  ck_assert_int_eq(u->kind, IR_S_FOR);
  ck_assert_int_eq(u->for_kind, IR_FOR_SERIAL);
  s = loop(K, 0, N, IR_FOR_UNROLLED, ir_store(C, K, ld(A, K), NULL));
  STMT_IS(lower_unroll(s), "for (k, 0, n) {\n  C[k] = A[k]\n}\n");
}
END_TEST

START_TEST(unroll_auto_max_step) {
  /* attr auto_unroll_max_step = 8 around: for i 0..16 { for j 0..2 { for k 0..3 { .. } } } */
  const ir_expr *idx = ir_add(ir_mul(I, c64(2)), J);
  const ir_stmt *inner = loop(J, 0, c64(2), IR_FOR_SERIAL,
                              loop(K, 0, c64(3), IR_FOR_SERIAL,
                                   ir_store(C, idx, ir_add(ld(C, idx), ld(A, ir_add(idx, K))), NULL)));
  const ir_stmt *s = ir_attr("pragma_auto_unroll_max_step", c64(8),
                             loop(I, 0, c64(16), IR_FOR_SERIAL, inner));
  const ir_stmt *u = lower_simplify(lower_unroll(s));
  const char *t = ir_stmt_str(u);
  /* j*k = 6 steps <= 8: unrolled; i (96 steps) stays; the attribute is consumed */
  ck_assert_int_eq(count(t, "for ("), 1);
  tu_assert_contains(t, "for (i, 0, 16) {\n");
  ck_assert_int_eq(count(t, "C[(i*2)] = "), 3);
  ck_assert_int_eq(count(t, "attr"), 0);
  same_results(s, u, 40, 0, 0, "auto unroll");
  /* pragma_unroll on one loop */
  s = ir_attr("pragma_unroll", NULL, loop(K, 0, c64(2), IR_FOR_SERIAL, ir_store(C, K, ld(A, K), NULL)));
  STMT_IS(lower_simplify(lower_unroll(s)), "C[0] = A[0]\nC[1] = A[1]\n");
}
END_TEST

/* ================= storage rewrite ================= */

START_TEST(storage_hoist) {
  /* for io { allocate T[8] { for j: T[j] = A[io*8+j]; for j: C[io*8+j] = T[7-j] } } */
  const ir_expr *g = ir_add(ir_mul(IO, c64(8)), J);
  const ir_stmt *body = ir_seq2(loop(J, 0, c64(8), IR_FOR_SERIAL, ir_store(T, J, ld(A, g), NULL)),
                                loop(J, 0, c64(8), IR_FOR_SERIAL, ir_store(C, g, ld(T, ir_sub(c64(7), J)), NULL)));
  const ir_stmt *s = loop(IO, 0, c64(4), IR_FOR_SERIAL, ir_allocate(T, TEC_F32, c64(8), body));
  const ir_stmt *r = lower_storage_rewrite(s);
  STMT_IS(r, "allocate T[float32 * 8] {\n"
             "  for (i.outer, 0, 4) {\n"
             "    for (j, 0, 8) {\n"
             "      T[j] = A[((i.outer*8) + j)]\n"
             "    }\n"
             "    for (j, 0, 8) {\n"
             "      C[((i.outer*8) + j)] = T[(7 - j)]\n"
             "    }\n"
             "  }\n"
             "}\n");
  same_results(s, r, 32, 0, 0, "hoist");
  /* a size that depends on the loop variable stays inside; a parallel loop keeps its own */
  s = loop(I, 0, c64(4), IR_FOR_SERIAL,
           ir_allocate(T, TEC_F32, ir_add(I, c64(1)), ir_store(T, I, ld(A, I), NULL)));
  ck_assert_ptr_eq(lower_storage_rewrite(s), s);
  s = loop(I, 0, c64(4), IR_FOR_PARALLEL,
           ir_allocate(T, TEC_F32, c64(4), ir_store(T, I, ld(A, I), NULL)));
  ck_assert_ptr_eq(lower_storage_rewrite(s), s);
  /* symbolic size hoisted out of a loop that may not run: clamped at 0 */
  s = loop(I, 0, P, IR_FOR_SERIAL,
           ir_allocate(T, TEC_F32, ir_sub(N, c64(2)),
                       ir_seq2(ir_store(T, c64(0), ld(A, I), NULL), ir_store(C, I, ld(T, c64(0)), NULL))));
  r = lower_storage_rewrite(s);
  tu_assert_contains(ir_stmt_str(r), "allocate T[float32 * max((n - 2), 0)] {\n  for (i, 0, p) {");
  same_results(s, r, 8, 5, 4, "symbolic hoist");
  same_results(s, r, 8, 1, 0, "symbolic hoist, loop not run");
}
END_TEST

START_TEST(storage_reuse) {
  /* two temporaries with disjoint lifetimes share one buffer; copies of one buffer merge */
  const ir_stmt *first = ir_allocate(
      T, TEC_F32, c64(8),
      ir_seq2(loop(J, 0, c64(8), IR_FOR_SERIAL, ir_store(T, J, ld(A, J), NULL)),
              loop(J, 0, c64(8), IR_FOR_SERIAL, ir_store(C, J, ld(T, J), NULL))));
  const ir_stmt *second = ir_allocate(
      U, TEC_F32, c64(16),
      ir_seq2(loop(J, 0, c64(16), IR_FOR_SERIAL, ir_store(U, J, ld(B, J), NULL)),
              loop(J, 0, c64(16), IR_FOR_SERIAL, ir_store(S, J, ld(U, ir_sub(c64(15), J)), NULL))));
  const ir_stmt *s = ir_seq2(first, second);
  const ir_stmt *r = lower_storage_rewrite(s);
  const char *t = ir_stmt_str(r);
  ck_assert_int_eq(count(t, "allocate"), 1);
  tu_assert_contains(t, "allocate T[float32 * 16] {\n");
  tu_assert_contains(t, "S[j] = T[(15 - j)]");
  tu_assert_contains(t, "  // T now holds U\n  for (j, 0, 16) {\n    T[j] = B[j]\n");
  same_results(s, r, 16, 0, 0, "reuse");
  /* nested lifetimes (T live while U is): no sharing */
  s = ir_allocate(T, TEC_F32, c64(8),
                  ir_seq2(ir_store(T, c64(0), ld(A, c64(0)), NULL),
                          ir_allocate(U, TEC_F32, c64(8),
                                      ir_seq2(ir_store(U, c64(0), ld(T, c64(0)), NULL),
                                              ir_store(C, c64(0), ld(U, c64(0)), NULL)))));
  r = lower_storage_rewrite(s);
  ck_assert_int_eq(count(ir_stmt_str(r), "allocate"), 2);
  same_results(s, r, 8, 0, 0, "nested");
  /* the copies of a temporary that loop partition puts in the branches of a parallel loop's
   * body are one allocation per iteration, not three */
  {
    const ir_expr *idx = ir_add(ir_mul(IO, c64(4)), II);
    const ir_stmt *tile = ir_allocate(
        T, TEC_F32, c64(4),
        ir_seq2(loop(II, 0, c64(4), IR_FOR_SERIAL,
                     ir_if(ir_lt(idx, N), ir_store(T, II, ld(A, idx), NULL), NULL)),
                loop(II, 0, c64(4), IR_FOR_SERIAL,
                     ir_if(ir_lt(idx, N), ir_store(C, idx, ld(T, II), NULL), NULL))));
    s = loop(IO, 0, ir_floordiv(ir_add(N, c64(3)), c64(4)), IR_FOR_PARALLEL, tile);
    const ir_stmt *p = partition(s);
    ck_assert_int_eq(count(ir_stmt_str(p), "allocate"), 2); /* the clean and the tail copy */
    r = lower_storage_rewrite(p);
    t = ir_stmt_str(r);
    ck_assert_int_eq(count(t, "allocate"), 1);
    tu_assert_contains(t, ") parallel {\n  allocate T[float32 * 4] {\n    if (");
    for (int64_t n = 0; n <= 13; n++) same_results(s, r, 16, n, 0, "partitioned parallel");
  }
  /* different types never share */
  s = ir_seq2(ir_allocate(T, TEC_F32, c64(4), ir_store(T, c64(0), ld(A, c64(0)), NULL)),
              ir_allocate(U, TEC_I32, c64(4), ir_store(U, c64(0), ir_int_t(ctx, TEC_I32, 3), NULL)));
  ck_assert_int_eq(count(ir_stmt_str(lower_storage_rewrite(s)), "allocate"), 2);
}
END_TEST

/* ================= all passes together on random tiled programs ================= */

START_TEST(pipeline_random) {
  srand(777);
  for (int trial = 0; trial < 40; trial++) {
    int64_t tile = 2 + rand() % 7;
    ir_for_kind kinds[] = {IR_FOR_SERIAL, IR_FOR_VECTORIZED, IR_FOR_UNROLLED};
    ir_for_kind ik = kinds[rand() % 3];
    const ir_expr *idx = ir_add(ir_mul(IO, c64(tile)), II);
    const ir_expr *val = rand() % 2 ? ir_add(ld(A, idx), ld(B, II))
                                    : ir_select(ir_lt(ld(A, idx), ir_float(ctx, 0)), ld(B, idx), ir_float(ctx, 1));
    const ir_stmt *st = ir_store(C, idx, val, NULL);
    /* a temporary per tile, used through a loop-carried copy */
    const ir_stmt *tmp = ir_allocate(T, TEC_F32, c64(tile),
                                     ir_seq2(loop(II, 0, c64(tile), IR_FOR_SERIAL, ir_store(T, II, ld(A, ir_add(idx, c64(0))), NULL)),
                                             loop(II, 0, c64(tile), ik, ir_if(ir_lt(idx, N), ir_store(S, idx, ld(T, II), NULL), NULL))));
    const ir_stmt *s = loop(IO, 0, ir_floordiv(ir_add(N, c64(tile - 1)), c64(tile)), IR_FOR_SERIAL,
                            ir_seq2(loop(II, 0, c64(tile), ik, ir_if(ir_lt(idx, N), st, NULL)), tmp));
    s = lower_simplify(s);
    const ir_stmt *p = lower_simplify(lower_loop_partition(s));
    p = lower_storage_rewrite(lower_simplify(lower_unroll(lower_vectorize(p))));
    for (int64_t n = 0; n <= 3 * tile + 1; n++) same_results(s, p, 64, n, 0, "pipeline");
  }
}
END_TEST

/* ================= end to end through the JIT ================= */

typedef struct vin { te_tensor *a, *b; } vin;
static const ir_expr *vadd_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  vin *t = u;
  return ir_add(TE_AT(t->a, i[0]), ir_mul(TE_AT(t->b, i[0]), ir_float(c, 2)));
}

START_TEST(jit_vectorized_vadd) {
  static const int64_t ns[] = {1, 7, 8, 9, 31, 100, 1000};
  for (int k = 0; k < 7; k++) {
    tec_ctx *c = tec_ctx_new();
    const ir_expr *n = te_size_var(c, "n");
    te_tensor *a = te_placeholder(c, "A", TEC_F32, 1, &n);
    te_tensor *b = te_placeholder(c, "B", TEC_F32, 1, &n);
    vin u = {a, b};
    te_tensor *out = te_compute(c, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &n,
                                                      .body = vadd_body, .user = &u});
    sch_schedule *s = sch_create(c, 1, &out);
    sch_stage *st = sch_stage_of(s, out);
    sch_iter *o, *in;
    ck_assert_int_eq(sch_split(st, sch_axis(st, 0), 8, &o, &in), 0);
    ck_assert_int_eq(sch_vectorize(st, in), 0);
    te_tensor *args[] = {a, b, out};
    lower_func *f = tec_lower(s, "vadd", 3, args);
    ck_assert_msg(f, "%s", tec_ctx_error(c));
    const char *t = tec_lower_str(f);
    tu_assert_contains(t, "C[ramp((i.outer*8), 1, 8)] = ");
    tec_packed_fn fn = tu_build(c, s, "vadd", 3, args);
    int64_t nn = ns[k];
    DLTensor da = tu_rand_f32(1, &nn, 1), db = tu_rand_f32(1, &nn, 2), dc = tu_zeros(TEC_F32, 1, &nn);
    ck_assert_msg(fn((DLTensor *[]){&da, &db, &dc}, 3) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < nn; i++)
      ck_assert_float_eq(tu_f32(&dc)[i], tu_f32(&da)[i] + tu_f32(&db)[i] * 2.0f);
    tec_dl_free(&da), tec_dl_free(&db), tec_dl_free(&dc);
    tec_ctx_free(c);
  }
}
END_TEST

typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  mm *t = u;
  return ir_reduce(IR_COMB_SUM, ir_mul(TE_AT(t->a, i[0], t->k), TE_AT(t->b, t->k, i[1])), 1,
                   &t->k, NULL);
}

static void run_matmul(int64_t M, int64_t Nn, int64_t Kk, int unroll) {
  tec_ctx *c = tec_ctx_new();
  te_tensor *a = te_placeholder(c, "A", TEC_F32, 2, TE_SHAPE(c, M, Kk));
  te_tensor *b = te_placeholder(c, "B", TEC_F32, 2, TE_SHAPE(c, Kk, Nn));
  mm u = {a, b, te_reduce_axis(c, "k", ir_int(c, 0), ir_int(c, Kk))};
  te_tensor *out = te_compute(c, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(c, M, Nn),
                                                    .body = mm_body, .user = &u});
  sch_schedule *s = sch_create(c, 1, &out);
  sch_stage *st = sch_stage_of(s, out);
  sch_iter *io, *ii, *jo, *ji;
  ck_assert_int_eq(sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), 4, 8, &io, &jo, &ii, &ji), 0);
  ck_assert_int_eq(sch_reorder(st, 5, (sch_iter *[]){io, jo, sch_reduce_axis(st, 0), ii, ji}), 0);
  ck_assert_int_eq(sch_vectorize(st, ji), 0);
  if (unroll) ck_assert_int_eq(sch_unroll(st, ii), 0);
  te_tensor *args[] = {a, b, out};
  tec_packed_fn fn = tu_build(c, s, "mm", 3, args);
  DLTensor da = tu_rand_f32(2, (int64_t[]){M, Kk}, 3), db = tu_rand_f32(2, (int64_t[]){Kk, Nn}, 4);
  DLTensor dc = tu_zeros(TEC_F32, 2, (int64_t[]){M, Nn});
  ck_assert_msg(fn((DLTensor *[]){&da, &db, &dc}, 3) == 0, "%s", tec_rt_last_error());
  float *ref = calloc((size_t)(M * Nn), sizeof *ref);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < Nn; j++) {
      float acc = 0;
      for (int64_t k = 0; k < Kk; k++) acc += tu_f32(&da)[i * Kk + k] * tu_f32(&db)[k * Nn + j];
      ref[i * Nn + j] = acc;
    }
  ck_assert_double_le(tu_max_err(tu_f32(&dc), ref, M * Nn), 1e-5);
  free(ref);
  tec_dl_free(&da), tec_dl_free(&db), tec_dl_free(&dc);
  tec_ctx_free(c);
}

START_TEST(jit_matmul_vectorized) {
  run_matmul(16, 32, 16, 0);
  run_matmul(16, 32, 16, 1);
  run_matmul(13, 29, 7, 0); /* non-dividing tiles: partition, then the tails */
  run_matmul(13, 29, 7, 1);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("passes");
  TCase *tc = tcase_create("loop_partition");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, partition_constant);
  tcase_add_test(tc, partition_symbolic);
  tcase_add_test(tc, partition_keeps_kind_and_skips_vectorized);
  tcase_add_test(tc, partition_vectorized_constant_split);
  tcase_add_test(tc, partition_two_dims_conjunction);
  tcase_add_test(tc, partition_decreasing_padding);
  tcase_add_test(tc, partition_inner_only_and_le);
  tcase_add_test(tc, partition_leaves_what_it_cannot);
  tcase_add_test(tc, partition_random);
  tcase_add_test(tc, partition_likely_select);
  tcase_add_test(tc, partition_likely_if_and_predicate);
  tcase_add_test(tc, partition_likely_leaves_what_it_cannot);
  tcase_add_test(tc, partition_likely_shared_condition);
  tcase_add_test(tc, partition_likely_random);
  suite_add_tcase(s, tc);
  tc = tcase_create("vectorize");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, vectorize_elementwise);
  tcase_add_test(tc, vectorize_gemm_microkernel);
  tcase_add_test(tc, vectorize_select_call_cast_let);
  tcase_add_test(tc, vectorize_fallbacks);
  suite_add_tcase(s, tc);
  tc = tcase_create("unroll");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, unroll_basic);
  tcase_add_test(tc, unroll_auto_max_step);
  suite_add_tcase(s, tc);
  tc = tcase_create("storage_rewrite");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, storage_hoist);
  tcase_add_test(tc, storage_reuse);
  suite_add_tcase(s, tc);
  tc = tcase_create("together");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, pipeline_random);
  tcase_add_test(tc, jit_vectorized_vadd);
  tcase_add_test(tc, jit_matmul_vectorized);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
