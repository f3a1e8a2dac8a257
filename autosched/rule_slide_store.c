/* rule_slide_store.c — the tuned mode's `slide` knob of a host of producers with a halo
 * (space.c): instead of computing each producer per tile of the host (its halo rows again in
 * every tile), keep its buffer per tile (store_at the tile loop) and compute it per row of the
 * tile (compute_at the row loop), so tec_lower slides a window down the tile's rows and folds
 * the buffer to a power of two of rows (sch_store_at, lower/store_at.c):
 *
 *   blur_y: for y.outer, x.outer: { blur_x buffer: 4 rows x (C + halo) columns;
 *             for y.inner: { blur_x: the one new row (3 in the first); blur_y's row } }
 *
 * The row loop is the host's loop inside the tile loop made from the host's row axis (the
 * rows of the tile: "<row axis>.inner"). A tile of one row has no such loop: the producers
 * stay at the tile (as_apply_slide returns 0). */
#include <string.h>
#include "autosched/internal.h"

/* the host cs's loop after leaf `at` made from its root axis `row` (by name: "i" -> "i.inner",
 * "i.inner.outer", ...), or NULL */
static sch_iter *row_loop(sch_stage *cs, const sch_iter *at, int row) {
  sch_iter *r = sch_axis(cs, row);
  if (!r) return NULL;
  const char *rn = sch_iter_name(r);
  size_t len = strlen(rn);
  int after = 0;
  for (int k = 0; k < sch_stage_nleaf(cs); k++) {
    sch_iter *l = sch_stage_leaf(cs, k);
    const char *n = sch_iter_name(l);
    if (after && strncmp(n, rn, len) == 0 && (n[len] == '.' || n[len] == 0)) return l;
    if (l == at) after = 1;
  }
  return NULL;
}

int as_apply_slide(as_prog *p, int i, sch_stage *st, sch_stage *cs, sch_iter *at) {
  const as_stage *a = &p->st[i], *c = &p->st[a->attach_to];
  if (!as_slides(p, c) || c->host_row < 0) return 0;
  sch_iter *row = row_loop(cs, at, c->host_row);
  if (!row) return 0;
  return sch_compute_at(st, cs, row) || sch_store_at(st, cs, at) ? -1 : 1;
}
