/* split.c — split (by factor or by nparts) and tile.
 *
 *   split(i, 8):  for (i, 0, 100)  ->  for (i.outer, 0, 13) for (i.inner, 0, 8)
 *                                        if (i.outer*8 + i.inner < 100) ...
 * A factor that does not divide the extent leaves a guard (see the tail note in
 * schedule.h). */
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"
#include "schedule/relation.h"

/* The tail strategies' legality (schedule.h); the run-time side is checked by tec_lower. */
static int split_tail_check(const char *who, sch_stage *st, sch_iter *iv, int64_t factor,
                            sch_tail tail) {
  tec_ctx *ctx = st->sched->ctx;
  const char *tn = st->tensor->name;
  if (tail == SCH_TAIL_SHIFT_INWARDS) {
    if (st->body && st->body->kind == IR_REDUCE)
      return tec_ctx_set_error(ctx, "%s: tail strategy shift_inwards on axis '%s' of stage "
                                    "'%s', a reduction: the shifted last chunk computes some "
                                    "points twice, and a reduction's update is not idempotent; "
                                    "use guard_with_if or predicate (or round_up on a data axis "
                                    "of a stage that is not an output)",
                               who, iv->name, tn);
    const ir_expr *e = sch_iter_extent(st, iv);
    int64_t ev;
    if (e && ir_is_const_int(e, &ev) && ev < factor)
      return tec_ctx_set_error(ctx, "%s: tail strategy shift_inwards on axis '%s' of stage "
                                    "'%s': its extent %lld is less than the factor %lld, so no "
                                    "chunk fits inside it; use a factor <= %lld, or "
                                    "guard_with_if or predicate",
                               who, iv->name, tn, (long long)ev, (long long)factor,
                               (long long)ev);
  }
  if (tail == SCH_TAIL_ROUND_UP) {
    if (iv->kind == SCH_ITER_REDUCE)
      return tec_ctx_set_error(ctx, "%s: tail strategy round_up on reduce axis '%s' of stage "
                                    "'%s': the loop would reduce past the axis' extent; "
                                    "round_up applies to data axes; use guard_with_if or "
                                    "predicate", who, iv->name, tn);
    if (st->is_output)
      return tec_ctx_set_error(ctx, "%s: tail strategy round_up on axis '%s' of stage '%s', an "
                                    "output: the loop runs past the extent and would write past "
                                    "the end of the caller's buffer; round_up is legal on a "
                                    "stage whose buffer tec allocates (an intermediate or a "
                                    "cache); use guard_with_if, predicate or shift_inwards",
                               who, iv->name, tn);
    int root = 0;
    for (int d = 0; d < st->tensor->ndim; d++) root |= st->root[d] == iv;
    if (!root)
      return tec_ctx_set_error(ctx, "%s: tail strategy round_up on axis '%s' of stage '%s', "
                                    "which a split or fuse made: round_up rounds the tensor's "
                                    "own dimension up, so split a data axis of the tensor itself "
                                    "with it (then split the parts as you like)",
                               who, iv->name, tn);
  }
  return 0;
}

/* the value v is NULL for a constant factor/nparts n, else the symbolic factor */
static int do_split(const char *who, sch_stage *st, sch_iter *iv, int64_t n, const ir_expr *v,
                    int by_nparts, sch_tail tail, sch_iter **outer, sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  if (!st) return sch_null_arg(who, "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf(who, st, iv)) return -1;
  if (!v && n <= 0)
    return tec_ctx_set_error(ctx, "%s: %s %lld for axis '%s' of stage '%s'; it must be >= 1",
                             who, by_nparts ? "nparts" : "factor", (long long)n, iv->name,
                             st->tensor->name);
  if (split_tail_check(who, st, iv, n, tail)) return -1;
  /* a factor (or nparts) past SCH_CLAMP_FROM and above a known extent is that extent: the
   * same loops' iterations, and no loop or allocation sized by the factor (TVM clamps too). The
   * trace keeps the given value; a replay clamps it the same way. round_up too: its buffer,
   * a multiple of the factor, is then the extent. */
  const ir_expr *ext = v ? NULL : sch_iter_extent(st, iv);
  int64_t ev;
  if (ext && ir_is_const_int(ext, &ev) && ev >= 1 && n > ev && n > SCH_CLAMP_FROM) n = ev;
  sch_iter *o = sch_iter_new(st, tec_ctx_printf(ctx, "%s.outer", iv->name), iv->kind);
  sch_iter *in = sch_iter_new(st, tec_ctx_printf(ctx, "%s.inner", iv->name), iv->kind);
  if (!o || !in) return -1;
  sch_relation r = {0};
  r.kind = SCH_REL_SPLIT;
  r.tail = tail;
  r.parent = iv;
  r.outer = o;
  r.inner = in;
  /* a symbolic factor below 1 at run time counts as 1 (schedule.h) */
  const ir_expr *e = v ? ir_max(v, ir_int_t(ctx, v->type, 1)) : ir_int(ctx, n);
  if (v && !tec_dtype_eq(v->type, TEC_I64)) e = ir_cast(TEC_I64, e);
  if (by_nparts)
    r.nparts = e;
  else
    r.factor = e;
  if (sch_add_relation(st, r)) return -1;
  int pos = sch_leaf_index(st, iv);
  if (sch_replace_leaf(st, pos, 2, (sch_iter *const[]){o, in})) return -1;
  iv->dead = 1;
  sch_move_attachments(st, iv, in);
  sch_move_stores(st, iv, o);
  if (outer) *outer = o;
  if (inner) *inner = in;
  return 0;
}

/* split and split_nparts: the split, then its record. */
static int split_rec(sch_prim_kind k, sch_stage *st, sch_iter *iv, int64_t v, sch_iter **outer,
                     sch_iter **inner) {
  sch_iter *o, *in;
  int by_nparts = k == SCH_PRIM_SPLIT_NPARTS;
  if (do_split(by_nparts ? "split_nparts" : "split", st, iv, v, NULL, by_nparts,
               SCH_TAIL_GUARD_WITH_IF, &o, &in) ||
      sch_trace_add(st->sched, k, (sch_arg[]){{.stage = st}, {.iter = iv}, {.i = v},
                                              {.iter = o}, {.iter = in}}))
    return -1;
  if (outer) *outer = o;
  if (inner) *inner = in;
  return 0;
}

int sch_split(sch_stage *st, sch_iter *iv, int64_t factor, sch_iter **outer, sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  return split_rec(SCH_PRIM_SPLIT, st, iv, factor, outer, inner);
}

int sch_split_nparts(sch_stage *st, sch_iter *iv, int64_t nparts, sch_iter **outer,
                     sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  return split_rec(SCH_PRIM_SPLIT_NPARTS, st, iv, nparts, outer, inner);
}

int sch_split_tail(sch_stage *st, sch_iter *iv, int64_t factor, int64_t tail, sch_iter **outer,
                   sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  if (!st) return sch_null_arg("split_tail", "stage", sch_iter_ctx(iv));
  if (tail < SCH_TAIL_GUARD_WITH_IF || tail > SCH_TAIL_PREDICATE)
    return tec_ctx_set_error(st->sched->ctx, "split_tail: tail strategy %lld for axis '%s' of "
                                             "stage '%s'; it must be 0 (guard_with_if), 1 "
                                             "(shift_inwards), 2 (round_up) or 3 (predicate)",
                             (long long)tail, iv ? iv->name : "?", st->tensor->name);
  sch_iter *o, *in;
  if (do_split("split_tail", st, iv, factor, NULL, 0, (sch_tail)tail, &o, &in) ||
      sch_trace_add(st->sched, SCH_PRIM_SPLIT_TAIL,
                    (sch_arg[]){{.stage = st}, {.iter = iv}, {.i = factor}, {.i = tail},
                                {.iter = o}, {.iter = in}}))
    return -1;
  if (outer) *outer = o;
  if (inner) *inner = in;
  return 0;
}

/* the first variable that is not a size variable, or tensor read, of a factor */
static void find_non_size(ir_visitor *vis, const ir_expr *e) {
  const ir_expr **bad = vis->user;
  if (!*bad && ((e->kind == IR_VAR && e->v.i != IR_VAR_SIZE) || e->kind == IR_READ)) *bad = e;
  ir_visit_expr_default(vis, e);
}

int sch_split_expr(sch_stage *st, sch_iter *iv, const ir_expr *factor, sch_iter **outer,
                   sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  if (!st) return sch_null_arg("split_expr", "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  const char *ax = iv ? iv->name : "?", *tn = st->tensor->name;
  if (!factor)
    return tec_ctx_set_error(ctx, "split_expr: the factor for axis '%s' of stage '%s' is NULL; "
                                  "give an integer expression of size variables", ax, tn);
  if (!tec_dtype_is_int(factor->type) || factor->type.lanes != 1)
    return tec_ctx_set_error(ctx, "split_expr: the factor %s for axis '%s' of stage '%s' is not "
                                  "a scalar integer; give an integer expression of size "
                                  "variables", ir_expr_str(factor), ax, tn);
  const ir_expr *bad = NULL;
  ir_visitor vis;
  ir_visitor_init(&vis, &bad);
  vis.expr[IR_VAR] = find_non_size;
  vis.expr[IR_READ] = find_non_size;
  ir_visit_expr(&vis, factor);
  if (bad)
    return tec_ctx_set_error(ctx, "split_expr: the factor %s for axis '%s' of stage '%s' uses "
                                  "%s%s%s; a factor may use constants and size variables only "
                                  "(it is fixed before the loops run)",
                             ir_expr_str(factor), ax, tn,
                             bad->kind == IR_READ ? "a read of tensor '" : "'",
                             bad->kind == IR_READ ? bad->tensor->name : bad->name,
                             bad->kind == IR_READ ? "'" : "', which is not a size variable");
  int64_t c;
  int is_const = ir_is_const_int(factor, &c);
  sch_iter *o, *in;
  if (do_split("split_expr", st, iv, is_const ? c : 1, is_const ? NULL : factor, 0,
               SCH_TAIL_GUARD_WITH_IF, &o, &in) ||
      sch_trace_add(st->sched, SCH_PRIM_SPLIT_EXPR,
                    (sch_arg[]){{.stage = st}, {.iter = iv}, {.value = factor}, {.iter = o},
                                {.iter = in}}))
    return -1;
  if (outer) *outer = o;
  if (inner) *inner = in;
  return 0;
}

int sch_tile(sch_stage *st, sch_iter *x, sch_iter *y, int64_t xf, int64_t yf, sch_iter **xo,
             sch_iter **yo, sch_iter **xi, sch_iter **yi) {
  if (!st) return sch_null_arg("tile", "stage", sch_iter_ctx(x ? x : y));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf("tile", st, x) || sch_check_leaf("tile", st, y)) return -1;
  if (x == y)
    return tec_ctx_set_error(ctx, "tile: x and y are the same axis '%s' of stage '%s'; tile "
                                  "two different axes", x->name, st->tensor->name);
  if (xf <= 0 || yf <= 0)
    return tec_ctx_set_error(ctx, "tile: factors %lld and %lld for stage '%s'; both must be >= 1",
                             (long long)xf, (long long)yf, st->tensor->name);
  if (sch_scan_check_tile(st, x, y)) return -1; /* before the splits: refused whole */
  sch_iter *a, *b, *c, *d;
  if (do_split("tile", st, x, xf, NULL, 0, SCH_TAIL_GUARD_WITH_IF, &a, &c) ||
      do_split("tile", st, y, yf, NULL, 0, SCH_TAIL_GUARD_WITH_IF, &b, &d))
    return -1;
  if (sch_reorder_leaves(st, 4, (sch_iter *const[]){a, b, c, d}) ||
      sch_trace_add(st->sched, SCH_PRIM_TILE,
                    (sch_arg[]){{.stage = st}, {.iter = x}, {.iter = y}, {.i = xf}, {.i = yf},
                                {.iter = a}, {.iter = b}, {.iter = c}, {.iter = d}}))
    return -1;
  if (xo) *xo = a;
  if (yo) *yo = b;
  if (xi) *xi = c;
  if (yi) *yi = d;
  return 0;
}
