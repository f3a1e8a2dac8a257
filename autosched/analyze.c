/* analyze.c — the program as the rules see it: per tensor, whether it reduces, what one
 * element costs, who reads it and how (distinct reads, reads inside a reduction that reuse an
 * element across an output axis), and for reductions the axis along which an input is
 * invariant (data reuse: a register tile pays) and whether the reduction runs along the
 * unit-stride dimension of what it reads (rfactor pays). Only the structure of the bodies is
 * read, never a name. */
#include <string.h>
#include "autosched/internal.h"

int as_index_of(const as_prog *p, const te_tensor *t) {
  for (int i = 0; i < p->n; i++)
    if (p->st[i].t == t) return i;
  return -1;
}

const ir_expr *as_source(const te_tensor *t) {
  const ir_expr *b = t->body;
  return b && b->kind == IR_REDUCE ? b->a : b;
}

int as_affine(const ir_expr *e, int nv, const ir_expr *const *vars, int64_t *coef, int64_t *c0) {
  if (!e) return 0;
  int64_t ca[AS_MAX_DIM * 2 + 1] = {0}, cb[AS_MAX_DIM * 2 + 1] = {0}, ka = 0, kb = 0;
  switch (e->kind) {
    case IR_INT_IMM:
      for (int v = 0; v < nv; v++) coef[v] = 0;
      *c0 = e->v.i;
      return 1;
    case IR_VAR:
      for (int v = 0; v < nv; v++) coef[v] = vars[v] == e;
      *c0 = 0;
      for (int v = 0; v < nv; v++)
        if (coef[v]) return 1;
      return 0;
    case IR_CAST: return as_affine(e->a, nv, vars, coef, c0);
    case IR_ADD:
    case IR_SUB:
      if (!as_affine(e->a, nv, vars, ca, &ka) || !as_affine(e->b, nv, vars, cb, &kb)) return 0;
      for (int v = 0; v < nv; v++) coef[v] = e->kind == IR_ADD ? ca[v] + cb[v] : ca[v] - cb[v];
      *c0 = e->kind == IR_ADD ? ka + kb : ka - kb;
      return 1;
    case IR_MUL: {
      int64_t k;
      const ir_expr *x = NULL;
      if (ir_is_const_int(e->a, &k))
        x = e->b;
      else if (ir_is_const_int(e->b, &k))
        x = e->a;
      if (!x || !as_affine(x, nv, vars, ca, &ka)) return 0;
      for (int v = 0; v < nv; v++) coef[v] = ca[v] * k;
      *c0 = ka * k;
      return 1;
    }
    default: return 0;
  }
}

typedef struct reads_ctx {
  const te_tensor *t;
  const ir_expr **out;
  int cap, n;
  const ir_expr *seen[64];
  int nseen;
} reads_ctx;

static int same_read(const ir_expr *a, const ir_expr *b) {
  if (a->nargs != b->nargs) return 0;
  for (int i = 0; i < a->nargs; i++)
    if (!ir_expr_equal(a->args[i], b->args[i])) return 0;
  return 1;
}

static void visit_read(ir_visitor *v, const ir_expr *e) {
  reads_ctx *r = v->user;
  if (e->tensor == r->t) {
    int dup = 0;
    for (int i = 0; i < r->nseen && !dup; i++) dup = same_read(r->seen[i], e);
    if (!dup) {
      if (r->nseen < 64) r->seen[r->nseen++] = e;
      if (r->n < r->cap) r->out[r->n] = e;
      r->n++;
    }
  }
  ir_visit_expr_default(v, e);
}

int as_reads_of(const ir_expr *e, const te_tensor *t, const ir_expr **out, int cap) {
  reads_ctx r = {.t = t, .out = out, .cap = out ? cap : 0};
  ir_visitor v;
  ir_visitor_init(&v, &r);
  v.expr[IR_READ] = visit_read;
  ir_visit_expr(&v, e);
  return r.n;
}

typedef struct cost_ctx {
  double c;
} cost_ctx;
static void visit_cost(ir_visitor *v, const ir_expr *e) {
  cost_ctx *c = v->user;
  switch (e->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_MIN:
    case IR_MAX:
      if (tec_dtype_is_float(e->type)) c->c += 1;
      break;
    case IR_DIV: c->c += tec_dtype_is_float(e->type) ? 4 : 0; break;
    case IR_SELECT: c->c += 2; break; /* a compare-and-blend, and masked loads */
    case IR_EQ:
    case IR_NE:
    case IR_LT:
    case IR_LE:
    case IR_GT:
    case IR_GE: c->c += 0.5; break;
    case IR_CALL: c->c += e->v.i == IR_INTRIN_FMA ? 1 : e->v.i == IR_INTRIN_LIKELY ? 0 : 10; break;
    default: break;
  }
  ir_visit_expr_default(v, e);
}

static int has_read(const ir_expr *e) {
  if (!e) return 0;
  if (e->kind == IR_READ) return 1;
  if (has_read(e->a) || has_read(e->b) || has_read(e->c)) return 1;
  for (int i = 0; i < e->nargs; i++)
    if (has_read(e->args[i])) return 1;
  return 0;
}

/* 1 if a select in e has a read in an arm (a guarded read: the padding idiom) */
static int guarded(const ir_expr *e) {
  if (!e) return 0;
  if (e->kind == IR_SELECT && (has_read(e->b) || has_read(e->c))) return 1;
  if (guarded(e->a) || guarded(e->b) || guarded(e->c)) return 1;
  for (int i = 0; i < e->nargs; i++)
    if (guarded(e->args[i])) return 1;
  return 0;
}

static double body_cost(const te_tensor *t) {
  cost_ctx c = {0};
  ir_visitor v;
  ir_visitor_init(&v, &c);
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) v.expr[k] = visit_cost;
  ir_visit_expr(&v, as_source(t));
  return c.c;
}

/* the variables of a reader's index space: data axes then reduce axes */
static int reader_vars(const te_tensor *c, const ir_expr **vars) {
  int nv = 0;
  for (int d = 0; d < c->ndim && nv < AS_MAX_DIM; d++) vars[nv++] = c->axis[d];
  for (int r = 0; r < c->nreduce && nv < 2 * AS_MAX_DIM; r++) vars[nv++] = c->reduce_axis[r];
  return nv;
}

/* the elements read rd of input in moves by per step of var x: the sum over its indices of
 * x's coefficient times the input's elements per step of that index (0: x is in no index, a
 * broadcast; 1 or -1: contiguous); INT64_MAX when an index using x is not affine */
static int64_t read_stride(const as_stage *in, const ir_expr *rd, int nv, const ir_expr **vars,
                           int x) {
  int64_t stride = 0, inner = 1, coef[2 * AS_MAX_DIM], c0;
  for (int d = rd->nargs - 1; d >= 0; d--) {
    if (ir_uses_var(rd->args[d], vars[x])) {
      if (!as_affine(rd->args[d], nv, vars, coef, &c0)) return INT64_MAX;
      if (coef[x] > (1 << 20) || coef[x] < -(1 << 20)) return INT64_MAX;
      stride += coef[x] * inner;
      if (stride > ((int64_t)1 << 40) || stride < -((int64_t)1 << 40)) return INT64_MAX;
    }
    int64_t e = d < AS_MAX_DIM && in->ext[d] > 0 ? in->ext[d] : 1, cap = (int64_t)1 << 40;
    inner = inner > cap / e ? cap : inner * e; /* saturates: any estimate, no overflow */
  }
  return stride;
}

/* 1 if some read of an input moves backwards by a few elements per step of t's last data axis
 * (in[n - 2x]) or across interleaved channels (below). tec's vectors would load it lane by
 * lane; the scalar loop leaves it to LLVM's loop vectorizer, whose interleaved groups (strides
 * up to INTERLEAVE_MAX) load it as wide vectors and shuffles: 7x faster (a stride-3 subsample,
 * 256 x 256: 0.013 against 0.10 ms). A read by a step the analysis cannot tell (an index not
 * affine in the vector axis: computed coordinates int(1.5 x + 0.25), an upsampling x / 2) is
 * vectorized since session 28 (*gather set): LLVM has no interleaved group for it either (the
 * scalar loop stays scalar), and the vectors load it lane by lane but compute and store whole
 * (bilinear resize 3840x2160 -> 2560x1440: 7.9 against 11.6 ms scalar; the 3-level
 * pyramid's upsampling output 7.2 against 10.0; Zen 4, 1 thread). A forward stride of 2-8 (a
 * stride-2 window, in[2x + rx]) is vectorized: codegen loads it as whole vectors and
 * shuffles (codegen_mem.c), the same loads in every loop, where LLVM's groups fail inside a
 * parallel loop's outlined body (max pool 3x3/2: gathers, 1.5-2x slower). A larger stride (a
 * transposed read, in[x][y]) is lane by lane either way, and the vectors at least store
 * whole: vectorized (0.080-0.092 against 0.085-0.097 ms, a 256 x 256 transpose). */
enum { INTERLEAVE_MAX = 8 }; /* LLVM's max-interleave-group-factor */
static int strided_read(const as_prog *p, const te_tensor *t, int *gather) {
  if (t->ndim < 1) return 0;
  const ir_expr *src = as_source(t), *vars[2 * AS_MAX_DIM];
  int nv = reader_vars(t, vars);
  for (int k = 0; k < t->ninputs; k++) {
    int j = as_index_of(p, t->inputs[k]);
    if (j < 0) continue;
    const ir_expr *reads[64];
    int nr = as_reads_of(src, t->inputs[k], reads, 64);
    for (int r = 0; r < nr && r < 64; r++) {
      int64_t st = read_stride(&p->st[j], reads[r], nv, vars, t->ndim - 1);
      if (st == INT64_MAX) *gather = 1;
      if (st >= -INTERLEAVE_MAX && st <= -2) return 1;
      /* interleaved channels (in[y][x][c], c < 3: the last index does not move with x): the
       * channels' reads share LLVM's wide loads, where tec's load each its own (gray from RGB
       * 256 x 256: 0.031-0.044 ms scalar against 0.049-0.059 vectorized; a tie at 1024) */
      const ir_expr *last = reads[r]->nargs ? reads[r]->args[reads[r]->nargs - 1] : NULL;
      if (st >= 2 && st <= INTERLEAVE_MAX && last && !ir_uses_var(last, vars[t->ndim - 1]))
        return 1;
    }
  }
  return 0;
}

/* 1 if some of the na indices args uses var */
static int args_use(int na, const ir_expr *const *args, const ir_expr *var) {
  for (int i = 0; i < na; i++)
    if (ir_uses_var(args[i], var)) return 1;
  return 0;
}

/* 1 if some index of read uses var */
static int read_uses(const ir_expr *read, const ir_expr *var) {
  return args_use(read->nargs, (const ir_expr *const *)read->args, var);
}

/* ---- the row walk (rule_loops.c): a reduction of ROW_WALK_MIN+ steps without a register
 * tile whose every read that both a reduce axis and the last data axis move uses the reduce
 * axes in outer indices only and the last data axis in its innermost index, with unit stride
 * (a strip of a row, contiguous), and there is such a read (a window of taps along the
 * columns reads columns, not rows); reads the last data axis does not move are broadcasts
 * (GEMV's x[k]). The reads are the ones the loop nest will make: through the producers
 * inlined into the stage (and into them), their indices composed with the reader's (an
 * inlined transpose T[r][x] = a[x][r] reads a column per step: no walk). ---- */
enum { ROW_WALK_MIN = 16, WALK_DEPTH = 8 };
typedef struct walk_ctx {
  const te_tensor *t;
  int nv, moved;
  const ir_expr *vars[2 * AS_MAX_DIM];
} walk_ctx;

/* one read of t's (its na indices over t's variables): 1 if it keeps the walk */
static int walk_read(walk_ctx *w, int na, const ir_expr *const *args) {
  const te_tensor *t = w->t;
  int nd = t->ndim, moves = 0;
  for (int a = 0; a < t->nreduce && !moves; a++) moves = args_use(na, args, t->reduce_axis[a]);
  if (!moves || !args_use(na, args, t->axis[nd - 1])) return 1; /* a broadcast per step */
  int64_t coef[2 * AS_MAX_DIM], c0;
  if (na < 2 || !as_affine(args[na - 1], w->nv, w->vars, coef, &c0) || coef[nd - 1] != 1) return 0;
  for (int v = 0; v < w->nv; v++)
    if (v != nd - 1 && coef[v]) return 0;
  if (args_use(na - 1, args, t->axis[nd - 1])) return 0;
  w->moved = 1;
  return 1;
}

/* the reads of reader's inputs in src (its variables replaced by to[] when nsub > 0: an
 * inlined producer's indices in the stage's): 1 if every one keeps the walk */
static int walk_reads(const as_prog *p, walk_ctx *w, const te_tensor *reader, const ir_expr *src,
                      int nsub, const ir_expr *const *to, int depth) {
  for (int k = 0; k < reader->ninputs; k++) {
    const ir_expr *reads[8];
    int nr = as_reads_of(src, reader->inputs[k], reads, 8), j = as_index_of(p, reader->inputs[k]);
    if (nr > 8) return 0;
    const as_stage *q = j >= 0 && p->st[j].ch.kind == TEC_AS_INLINE ? &p->st[j] : NULL;
    for (int r = 0; r < nr; r++) {
      const ir_expr *args[AS_MAX_DIM];
      int na = reads[r]->nargs;
      if (na > AS_MAX_DIM) return 0;
      for (int d = 0; d < na; d++)
        args[d] = nsub ? ir_substitute(reads[r]->args[d], nsub, reader->axis, to) : reads[r]->args[d];
      if (!q) {
        if (!walk_read(w, na, args)) return 0;
      } else if (depth >= WALK_DEPTH || na != q->t->ndim ||
                 !walk_reads(p, w, q->t, as_source(q->t), na, args, depth + 1)) {
        return 0;
      }
    }
  }
  return 1;
}

int as_row_walk(const as_prog *p, as_stage *s) {
  const te_tensor *t = s->t;
  if (t->ndim < 1 || s->nred < 1 || s->red_total < ROW_WALK_MIN || s->reuse_axis >= 0) return 0;
  if (s->row_walk >= 0) return s->row_walk;
  walk_ctx w = {.t = t};
  w.nv = reader_vars(t, w.vars);
  return s->row_walk = walk_reads(p, &w, t, as_source(t), 0, NULL, 0) && w.moved;
}

/* how many elements of reader c read one element through read's indices divided by constants
 * (an upsampling up[y][x] = f[y / 2][x / 2]: each element of f read 4 times): the product over
 * indices floordiv(e, k), k >= 2, e using one of c's data axes, of k / |a|, a the largest
 * coefficient of c's data axes in e where that is below k (f[(3 y) / 2] reads each element at
 * most once: 1; f[(2 x) / 2]: 1); k where e is not affine in c's axes (unknown: as many) */
static int64_t upsampling(const ir_expr *read, const te_tensor *c, int nv,
                          const ir_expr *const *vars) {
  int64_t f = 1, k;
  for (int i = 0; i < read->nargs; i++) {
    const ir_expr *e = read->args[i];
    if (!e || !(e->kind == IR_FLOORDIV || (e->kind == IR_DIV && !tec_dtype_is_float(e->type))) ||
        !ir_is_const_int(e->b, &k) || k < 2 || k > 64)
      continue;
    int uses = 0;
    for (int d = 0; d < c->ndim && !uses; d++) uses = ir_uses_var(e->a, c->axis[d]);
    if (!uses) continue;
    int64_t coef[2 * AS_MAX_DIM], c0, step = 0;
    if (as_affine(e->a, nv, vars, coef, &c0))
      for (int d = 0; d < c->ndim && d < nv; d++) {
        int64_t m = coef[d] < 0 ? -coef[d] : coef[d];
        if (m > step) step = m;
      }
    int64_t times = step == 0 ? k : step < k ? k / step : 1;
    if (f < ((int64_t)1 << 30)) f *= times;
  }
  return f;
}

/* the reduction facts of stage s: a data axis along which an input is invariant (the one
 * where the most inputs are, innermost on ties, never the last axis: that one is vectorized),
 * (an input read as vectors along the last axis counts double), and whether its main read
 * runs along its last reduce axis with unit stride (and not along
 * its last data axis, which would vectorize instead) */
static void reduction_facts(as_prog *p, as_stage *s) {
  const te_tensor *t = s->t;
  const ir_expr *src = as_source(t);
  int best = -1, best_n = 0;
  for (int d = 0; d + 1 < t->ndim; d++) {
    if (s->ext[d] < 2) continue;
    int n = 0;
    for (int k = 0; k < t->ninputs; k++) {
      const ir_expr *reads[8];
      int nr = as_reads_of(src, t->inputs[k], reads, 8);
      int inv = nr > 0, vec = 0;
      for (int r = 0; r < nr && r < 8; r++) {
        inv &= !read_uses(reads[r], t->axis[d]);
        vec |= reads[r]->nargs &&
               ir_uses_var(reads[r]->args[reads[r]->nargs - 1], t->axis[t->ndim - 1]);
      }
      /* an input loaded as vectors along the last axis and reused across d saves a vector
       * load per row of the tile; one only broadcast saves a broadcast: worth half */
      n += inv ? (vec ? 2 : 1) : 0;
    }
    if (n > 0 && n >= best_n) best = d, best_n = n;
  }
  s->reuse_axis = best;
  s->unit_reduce = 0;
  if (t->nreduce < 1) return;
  const ir_expr *last = t->reduce_axis[t->nreduce - 1];
  /* along_data: a read the reduction moves runs along the last data axis; fixed_data: one it
   * does not move (loaded once per output) does; gather: a read it moves uses the last data
   * axis in another index, so vectors along that axis would gather it */
  int along_reduce = 0, along_data = 0, fixed_data = 0, gather = 0;
  const ir_expr *xv = t->ndim > 0 ? t->axis[t->ndim - 1] : NULL;
  const ir_expr *vars[2 * AS_MAX_DIM];
  int nv = reader_vars(t, vars);
  for (int k = 0; k < t->ninputs; k++) {
    const ir_expr *reads[8];
    int nr = as_reads_of(src, t->inputs[k], reads, 8);
    for (int r = 0; r < nr && r < 8; r++) {
      int64_t coef[2 * AS_MAX_DIM], c0;
      int na = reads[r]->nargs, moves = 0;
      const ir_expr *in = na ? reads[r]->args[na - 1] : NULL;
      if (!in) continue;
      for (int a = 0; a < t->nreduce && !moves; a++) moves = read_uses(reads[r], t->reduce_axis[a]);
      if (xv && ir_uses_var(in, xv)) *(moves ? &along_data : &fixed_data) = 1;
      for (int d = 0; d + 1 < na && xv && moves; d++) gather |= ir_uses_var(reads[r]->args[d], xv);
      if (as_affine(in, nv, vars, coef, &c0) && coef[nv - 1] == 1 && vars[nv - 1] == last)
        along_reduce = 1;
    }
  }
  /* some input runs along the last reduce axis and none along the last data axis; a read the
   * reduction does not move counts only where vectors along the data axis would not gather
   * (layer norm's variance: mean[i] does not make it vectorize across x[i, k]'s rows) */
  s->unit_reduce = along_reduce && !along_data && !(fixed_data && !gather);
}

const te_tensor *as_scan_of(const as_prog *p, const te_tensor *t) {
  if (t->scan) return t;
  for (int i = 0; i < p->n; i++)
    if (p->st[i].t->scan && te_scan_in_chain(p->st[i].t->scan, t)) return p->st[i].t;
  return NULL;
}

int as_analyze(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    te_tensor *t = s->t;
    s->is_input = t->op == TE_PLACEHOLDER;
    s->nred = t->op == TE_COMPUTE ? t->nreduce : 0;
    s->reuse_axis = -1;
    s->row_walk = -1;
    s->anchor = s->attach_to = -1;
    s->host_row = -1;
    for (int o = 0; o < p->nout; o++) s->is_output |= p->outs[o] == t;
    if (s->is_input) {
      s->const_only = t->is_const;
      continue;
    }
    s->is_reduce = t->body && t->body->kind == IR_REDUCE && t->body->v.i != IR_COMB_USER;
    s->understood = !t->ext && !as_scan_of(p, t) && t->nout <= 1 && t->ndim <= AS_MAX_DIM && t->nreduce <= AS_MAX_DIM &&
                    !s->odd_domain &&
                    !(t->body && t->body->kind == IR_REDUCE && t->body->v.i == IR_COMB_USER);
    s->cost = body_cost(t);
    s->guarded_read = guarded(t->body);
    s->strided_read = t->op == TE_COMPUTE && s->understood && strided_read(p, t, &s->gather_read);
    s->const_only = t->ninputs > 0;
    const ir_expr *vars[2 * AS_MAX_DIM]; /* the reader's variables, for upsampling */
    int nv = reader_vars(t, vars), reduce_body = s->is_reduce || (t->body && t->body->kind == IR_REDUCE);
    for (int k = 0; k < t->ninputs; k++) {
      int j = as_index_of(p, t->inputs[k]);
      if (j < 0)
        return tec_ctx_set_error_kind(p->ctx, TEC_ERR_INTERNAL,
                                      "internal error: tec_autoschedule: input '%s' "
                                      "of '%s' not in the program",
                                      t->inputs[k]->name, t->name);
      s->const_only &= p->st[j].const_only;
      as_stage *in = &p->st[j];
      if (in->nconsumers < 32) in->consumers[in->nconsumers] = i;
      in->nconsumers++;
      const ir_expr *reads[16];
      int nr = as_reads_of(t->body, in->t, reads, 16);
      if (nr > 16) in->reads_total += nr - 16;
      for (int r = 0; r < nr && r < 16; r++) {
        /* a read through a window of the reader's reduce axes counts once per tap */
        int64_t taps = 1;
        for (int a = 0; a < s->nred && a < AS_MAX_DIM; a++)
          if (read_uses(reads[r], t->reduce_axis[a]) && s->rext[a] <= 16) taps *= s->rext[a];
        in->reads_total += (int)(taps < 1024 ? taps : 1024);
        /* an element-wise reader over axes the read does not index reads each element that
         * many times (inlined: recomputed that many times); a reduction reading it so
         * reuses an element across those axes */
        int64_t b = 1;
        int unused = 0;
        for (int d = 0; d < t->ndim; d++)
          if (s->ext[d] > 1 && !read_uses(reads[r], t->axis[d])) b *= s->ext[d], unused = 1;
        b *= upsampling(reads[r], t, nv, vars);
        if (b > in->bcast) in->bcast = b;
        if (unused && reduce_body) in->reused_by_reduction = 1;
      }
    }
    if (s->is_reduce && s->understood) reduction_facts(p, s);
  }
  return 0;
}
