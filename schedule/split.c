/* split.c — split (by factor or by nparts) and tile.
 *
 *   split(i, 8):  for (i, 0, 100)  ->  for (i.outer, 0, 13) for (i.inner, 0, 8)
 *                                        if (i.outer*8 + i.inner < 100) ...
 * A factor that does not divide the extent leaves a guard (see the tail note in
 * schedule.h). */
#include "tec/schedule.h"
#include "schedule/internal.h"

static int do_split(const char *who, sch_stage *st, sch_iter *iv, int64_t v, int by_nparts,
                    sch_iter **outer, sch_iter **inner) {
  if (outer) *outer = NULL;
  if (inner) *inner = NULL;
  if (!st) return -1;
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf(who, st, iv)) return -1;
  if (v <= 0)
    return tec_ctx_set_error(ctx, "%s: %s %lld for axis '%s' of stage '%s'; it must be >= 1",
                             who, by_nparts ? "nparts" : "factor", (long long)v, iv->name,
                             st->tensor->name);
  sch_iter *o = sch_iter_new(st, tec_ctx_printf(ctx, "%s.outer", iv->name), iv->kind);
  sch_iter *in = sch_iter_new(st, tec_ctx_printf(ctx, "%s.inner", iv->name), iv->kind);
  if (!o || !in) return -1;
  sch_relation r = {0};
  r.kind = SCH_REL_SPLIT;
  r.parent = iv;
  r.outer = o;
  r.inner = in;
  if (by_nparts)
    r.nparts = ir_int(ctx, v);
  else
    r.factor = ir_int(ctx, v);
  if (sch_add_relation(st, r)) return -1;
  int pos = sch_leaf_index(st, iv);
  if (sch_replace_leaf(st, pos, 2, (sch_iter *const[]){o, in})) return -1;
  iv->dead = 1;
  sch_move_attachments(st, iv, in);
  if (outer) *outer = o;
  if (inner) *inner = in;
  return 0;
}

/* split and split_nparts: the split, then its record. */
static int split_rec(sch_prim_kind k, sch_stage *st, sch_iter *iv, int64_t v, sch_iter **outer,
                     sch_iter **inner) {
  sch_iter *o, *in;
  int by_nparts = k == SCH_PRIM_SPLIT_NPARTS;
  if (do_split(by_nparts ? "split_nparts" : "split", st, iv, v, by_nparts, &o, &in) ||
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

int sch_tile(sch_stage *st, sch_iter *x, sch_iter *y, int64_t xf, int64_t yf, sch_iter **xo,
             sch_iter **yo, sch_iter **xi, sch_iter **yi) {
  if (!st) return -1;
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf("tile", st, x) || sch_check_leaf("tile", st, y)) return -1;
  if (x == y)
    return tec_ctx_set_error(ctx, "tile: x and y are the same axis '%s' of stage '%s'; tile "
                                  "two different axes", x->name, st->tensor->name);
  if (xf <= 0 || yf <= 0)
    return tec_ctx_set_error(ctx, "tile: factors %lld and %lld for stage '%s'; both must be >= 1",
                             (long long)xf, (long long)yf, st->tensor->name);
  sch_iter *a, *b, *c, *d;
  if (do_split("tile", st, x, xf, 0, &a, &c) || do_split("tile", st, y, yf, 0, &b, &d)) return -1;
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
