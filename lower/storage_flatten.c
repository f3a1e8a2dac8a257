/* storage_flatten.c — multi-dimensional tensors to 1-d buffers.
 *
 *   realize T([0, 4], [0, n]) { T[i, j] = A[i, j] }
 *     ->  allocate T[float32 * (4*n)] { T[(i*n + j)] = A[(i*n + j)] }
 * Strides are compact row-major, from the tensor's shape (a realize region's extents, for an
 * intermediate, with its mins subtracted); storage_align pads a dimension's stride up to
 * factor*k + offset elements. Arguments keep the buffer variables of the lowered function;
 * intermediates get a fresh handle variable named after the tensor. An argument with a margin
 * (te_tensor_set_margin) is the window of its buffer: strides from the buffer's extents
 * (te_buffer_shape), indices offset by `before` (min = -before):
 *   B[4, 5] with before {1, 2}, after {3, 0}: B[i, j] -> B[((i + 1)*7 + (j + 2))] */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"
#include "schedule/relation.h"

typedef struct buf_entry {
  const te_tensor *t;
  const ir_expr *var;
  const ir_expr *const *min;    /* ndim region mins (NULL: zeros) */
  const ir_expr *const *stride; /* ndim strides, in elements */
} buf_entry;

typedef struct flat {
  tec_ctx *ctx;
  const sch_schedule *sched;
  int n, cap;
  buf_entry *bufs;
  int error;
} flat;

static const buf_entry *find(flat *fl, const te_tensor *t) {
  for (int i = fl->n - 1; i >= 0; i--)
    if (fl->bufs[i].t == t) return &fl->bufs[i];
  return NULL;
}

static int add(flat *fl, buf_entry e) {
  if (tec_grow(fl->ctx, (void **)&fl->bufs, &fl->cap, fl->n + 1, sizeof *fl->bufs)) return -1;
  fl->bufs[fl->n++] = e;
  return 0;
}

static const ir_expr *linear_index(const buf_entry *b, int n, const ir_expr *const *idx) {
  const ir_expr *lin = NULL;
  for (int i = 0; i < n; i++) {
    const ir_expr *x = b->min && !ir_is_zero(b->min[i]) ? ir_sub(idx[i], b->min[i]) : idx[i];
    if (!ir_is_one(b->stride[i])) x = ir_mul(x, b->stride[i]);
    lin = lin ? ir_add(lin, x) : x;
  }
  return lin ? lin : ir_int(b->var->ctx, 0); /* rank 0: the one element */
}

/* Refuses a buffer whose element count or byte count does not fit an int64: what makes it
 * (the dimension, and the storage_align that padded its stride, if any) named. */
static const ir_expr *const *too_big(flat *fl, const te_tensor *t, int d,
                                     const struct sch_align *al) {
  if (al)
    tec_ctx_set_error(fl->ctx, "lower: the buffer of '%s' would hold more than 2^63 - 1 bytes: "
                               "storage_align(axis %d, factor %lld, offset %lld) pads the stride "
                               "of dimension %d past what int64 holds; use a factor below the "
                               "buffer's size", t->name, al->axis, (long long)al->factor,
                      (long long)al->offset, d);
  else
    tec_ctx_set_error(fl->ctx, "lower: the buffer of '%s' would hold more than 2^63 - 1 bytes "
                               "(from dimension %d on, its extents multiply past what int64 "
                               "holds); shapes must fit in memory", t->name, d);
  fl->error = 1;
  return NULL;
}

/* The constant upper bound of an extent: itself, else the tensor's declared extent when that
 * is a constant (a region never exceeds the domain), else -1 (known at run time only). */
static int64_t const_bound(const te_tensor *t, int d, const ir_expr *ext) {
  int64_t v;
  if (ir_is_const_int(ext, &v)) return v;
  if (d < t->ndim && ir_is_const_int(t->shape[d], &v)) return v;
  return -1;
}

/* Row-major strides of extents, padded where the stage asks for storage_align. Returns the
 * element count in *size. Where the extents are constants (or bounded by constant declared
 * extents) every stride and the byte count are computed with overflow checks, and a buffer past
 * int64 is refused (NULL with an error). */
static const ir_expr *const *strides(flat *fl, const te_tensor *t, int n,
                                     const ir_expr *const *ext, const ir_expr **size) {
  const ir_expr **st = tec_ctx_alloc(fl->ctx, sizeof *st * (size_t)n);
  if (!st) return NULL;
  const sch_stage *stage = NULL;
  for (int i = 0; fl->sched && i < fl->sched->nstage; i++)
    if (fl->sched->stages[i]->tensor == t) stage = fl->sched->stages[i];
  int64_t ebytes = tec_dtype_bytes(tec_dtype_scalar(t->type)) * (t->type.lanes ? t->type.lanes : 1);
  int64_t cacc = ebytes > 0 ? ebytes : 1; /* the bytes of one step of dimension d, when known */
  int known = 1;
  const ir_expr *acc = ir_int(fl->ctx, 1);
  for (int d = n - 1; d >= 0; d--) {
    for (int k = 0; stage && k < stage->nalign; k++) {
      if (stage->align[k].axis != d) continue;
      /* smallest value >= acc that is offset modulo factor: ceil((acc - o) / f) * f + o */
      int64_t fv = stage->align[k].factor, ov = stage->align[k].offset, av, q, pv;
      const ir_expr *f = ir_int(fl->ctx, fv), *o = ir_int(fl->ctx, ov);
      if (ir_is_const_int(acc, &av)) {
        q = av - ov <= 0 ? 0 : (av - ov - 1) / fv + 1;
        if (__builtin_mul_overflow(q, fv, &pv) || __builtin_add_overflow(pv, ov, &pv) ||
            __builtin_mul_overflow(pv, ebytes > 0 ? ebytes : 1, &q))
          return too_big(fl, t, d, &stage->align[k]);
        acc = ir_int(fl->ctx, pv);
        if (known) cacc = q;
      } else {
        acc = ir_add(ir_mul(sch_ceildiv(ir_sub(acc, o), f), f), o);
        known = 0;
      }
    }
    st[d] = arith_simplify(acc, NULL);
    int64_t b = const_bound(t, d, ext[d]);
    if (known && b >= 0 && __builtin_mul_overflow(cacc, b, &cacc))
      return too_big(fl, t, d, NULL);
    if (b < 0) known = 0;
    int64_t av, ev, pv;
    if (ir_is_const_int(acc, &av) && ir_is_const_int(ext[d], &ev)) {
      if (__builtin_mul_overflow(av, ev, &pv)) return too_big(fl, t, d, NULL);
      acc = ir_int(fl->ctx, pv);
    } else {
      acc = ir_is_one(acc) ? ext[d] : ir_mul(acc, ext[d]);
    }
  }
  if (size) *size = n ? (ir_is_one(st[0]) ? ext[0] : arith_simplify(ir_mul(ext[0], st[0]), NULL)) : acc;
  return st;
}

static const ir_expr *flat_read(ir_mutator *m, const ir_expr *e) {
  flat *fl = m->user;
  e = ir_mutate_expr_default(m, e);
  if (!e || e->kind != IR_READ) return e;
  const buf_entry *b = find(fl, e->tensor);
  if (!b) {
    tec_ctx_set_error(fl->ctx, "lower: tensor '%s' is read but is neither an argument nor "
                               "computed in the function; pass it in args", e->tensor->name);
    fl->error = 1;
    return e;
  }
  return ir_load(e->type, b->var, linear_index(b, e->nargs, e->args), NULL);
}

static const ir_stmt *flat_provide(ir_mutator *m, const ir_stmt *s) {
  flat *fl = m->user;
  s = ir_mutate_stmt_default(m, s);
  if (!s) return s;
  const buf_entry *b = find(fl, s->tensor);
  if (!b) {
    TEC_INTERNAL(fl->ctx, "provide without a buffer");
    fl->error = 1;
    return s;
  }
  return ir_store(b->var, linear_index(b, s->n, s->args), s->a, NULL);
}

static const ir_stmt *flat_realize(ir_mutator *m, const ir_stmt *s) {
  flat *fl = m->user;
  const te_tensor *t = s->tensor;
  const ir_expr **mins = tec_ctx_alloc(fl->ctx, sizeof *mins * (size_t)s->n);
  const ir_expr **exts = tec_ctx_alloc(fl->ctx, sizeof *exts * (size_t)s->n);
  if (!mins || !exts) return NULL;
  const ir_expr *size = NULL;
  /* a region's min may read memory (an attached stage read through a gathered index,
   * C[X[i, j]], is computed at X[i, j]): flattened like any read */
  for (int i = 0; i < s->n; i++) {
    mins[i] = ir_mutate_expr(m, s->args[2 * i]);
    exts[i] = ir_mutate_expr(m, s->args[2 * i + 1]);
    if (!mins[i] || !exts[i]) return NULL;
  }
  const ir_expr *const *st = strides(fl, t, s->n, exts, &size);
  /* a region can be empty, its extent negative: an attached stage at an iteration of a split
   * loop past the end of its consumer (nparts 9 of 5 rows). Its loops then run no time; the
   * allocation is clamped to 0 elements unless its size is provably non-negative. */
  if (st && size && !arith_prove(ir_ge(size, ir_int_t(fl->ctx, size->type, 0)), NULL))
    size = ir_max(size, ir_int_t(fl->ctx, size->type, 0));
  const ir_expr *var = ir_var(fl->ctx, t->name, TEC_HANDLET, IR_VAR_BUFFER);
  if (!st || add(fl, (buf_entry){t, var, mins, st})) return NULL;
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  fl->n--;
  return ir_allocate(var, t->type, size, body);
}

const ir_stmt *lower_storage_flatten(const ir_stmt *body, lower_func *f, const sch_schedule *s) {
  flat fl = {f->ctx, NULL, 0, 0, NULL, 0};
  for (int i = 0; i < f->nargs; i++) {
    const te_tensor *t = f->args[i];
    const ir_expr *const *st = strides(&fl, t, t->ndim, te_buffer_shape(t), NULL);
    const ir_expr **min = te_has_margin(t) ? tec_ctx_alloc(f->ctx, sizeof *min * (size_t)t->ndim)
                                           : NULL;
    if (te_has_margin(t) && !min) return NULL;
    for (int d = 0; min && d < t->ndim; d++) /* the window starts `before` into the buffer */
      if (!(min[d] = ir_int(f->ctx, -te_margin(t, d, 0)))) return NULL;
    if (!st || add(&fl, (buf_entry){t, f->arg_bufs[i], min, st})) return NULL;
  }
  fl.sched = s; /* arguments are compact: storage_align applies to intermediates only */
  ir_mutator m;
  ir_mutator_init(&m, f->ctx, &fl);
  m.expr[IR_READ] = flat_read;
  m.stmt[IR_S_PROVIDE] = flat_provide;
  m.stmt[IR_S_REALIZE] = flat_realize;
  const ir_stmt *out = ir_mutate_stmt(&m, body);
  return fl.error ? NULL : out;
}
