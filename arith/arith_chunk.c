/* arith_chunk.c — the rows and columns a chunk of a fused loop touches (a division and modulo
 * rule of the symbolic interval analysis, arith_interval.c; bound inference relies on it).
 *
 * After fuse(i, j) -> f and split(f, F) -> (o, f.inner) with constant extents, one iteration
 * of o covers x = o*F + f.inner in [lo, lo + w] (w = F - 1), and the consumer reads row
 * x / m, column x % m (m: j's extent). Interval arithmetic alone says every column, and the
 * row count is a difference of two divisions no bound can see through. Here the start's
 * residue decides instead: lo is a linear form sum(c_k * v_k) + c0 over integers, so
 * lo % m takes only values congruent to c0 modulo g = gcd(m, c_k ...), at most
 * m - g + (c0 mod g). When that plus w stays below m the chunk never leaves its row:
 *   x / m in [lo / m, lo / m],   x % m in [lo % m, lo % m + w]   (F divides m: 1 x F)
 * otherwise it spans at most (maxres + w) / m + 1 rows, and every column of those whose
 * chunk crosses a row end:
 *   x / m in [lo / m, lo / m + min((lo % m + w) / m, (maxres + w) / m)]
 *                                                 (m divides F: F / m whole rows)
 *   x % m in [s, s + select(fits, w, m - 1)],  s = select(fits, lo % m, 0),
 *   fits = lo % m + w < m
 * written so that the extent (hi - lo + 1) has a constant bound for the storage. */
#include "arith/arith.h"

int arith_chunk_divmod(const ir_expr *lo, const ir_expr *hi, int64_t m, int mod,
                       const ir_expr **olo, const ir_expr **ohi) {
  if (!lo || !hi || m <= 0 || !tec_dtype_is_int(lo->type) || lo->type.lanes != 1) return 0;
  tec_ctx *ctx = lo->ctx;
  int64_t w;
  if (!arith_is_imm(arith_simplify(ir_sub(hi, lo), NULL), &w) || w < 0) return 0;
  arith_linear l;
  arith_linear_init(&l, ctx, lo->type);
  arith_linear_add_expr(&l, lo, 1);
  int64_t g = m;
  for (int k = 0; k < l.n && !l.oom; k++) g = arith_gcd(g, l.t[k].coef);
  int64_t r0 = 0;
  int ok = !l.oom && g > 0 && arith_floormod64(l.c, g, &r0);
  arith_linear_free(&l);
  if (!ok) return 0;
  int64_t maxres = m - g + r0;
  const ir_expr *M = ir_int(ctx, m), *W = ir_int(ctx, w);
  const ir_expr *q = ir_floordiv(lo, M), *r = ir_floormod(lo, M);
  if (maxres + w < m) { /* inside one row */
    *olo = mod ? r : q;
    *ohi = mod ? ir_add(r, W) : q;
    return 1;
  }
  if (!mod) {
    *olo = q;
    *ohi = ir_add(q, ir_min(ir_floordiv(ir_add(r, W), M), ir_int(ctx, (maxres + w) / m)));
    return 1;
  }
  const ir_expr *fits = ir_lt(ir_add(r, W), M);
  const ir_expr *s = ir_select(fits, r, ir_int(ctx, 0));
  *olo = s;
  *ohi = ir_add(s, ir_select(fits, W, ir_int(ctx, m - 1)));
  return 1;
}
