/* auto_hand.c — hand schedules for `bench/run auto` ("tec-hand"): the Halide apps' expert
 * decisions written in tec's schedule language, where they need store_at (sch_store_at: a
 * sliding window and a folded buffer), to compare the same decisions in both compilers.
 *   stencil: apps/stencil_chain (as halide_progs.cpp restates it): every 11th stage from the
 *     output at the root in 4 x 4 tiles, fused (parallel), vectorized by 16; the 10 stages
 *     before it stored per tile and computed per row of it, vectorized by 16 with Halide's
 *     default tail for them (TailStrategy::Auto: ShiftInwards; a guarded tail runs scalar at
 *     every row of every stage: 151 against 137 ms).
 *   blur: apps/blur: strips of 32 rows (parallel), blur_y vectorized by 16; blur_x stored per
 *     strip and computed per vector of blur_y, vectorized by 16.
 *   harris: apps/harris (CPU): strips of 32 output rows (parallel), x vectorized by 16; gray, Ix
 *     and Iy stored per strip and computed per row of it, vectorized by 16 (guarded tails, as
 *     measured in session 27; Halide's own are shifted inwards), Ix computed with Iy down to
 *     the vector loop's outer part (sch_compute_with); the rest inlined.
 * tec's shape [rows][cols] is Halide's (x = cols, y = rows). */
#include <string.h>
#include "auto.h"

enum { VEC = 16 };

/* the stage of the tensor named `name` */
static sch_stage *named(sch_schedule *s, const char *name) {
  te_tensor *t = sch_tensor_named(s, name);
  return t ? sch_stage_of(s, t) : NULL;
}

/* cols split by VEC, the inner vectorized; shift: the last vector moved inwards (Halide's
 * default tail for a pure definition, TailStrategy::Auto), else guarded */
static int vec_cols_tail(sch_stage *st, sch_iter *cols, int shift, sch_iter **outer) {
  sch_iter *o, *i;
  if (sch_split_tail(st, cols, VEC, shift ? SCH_TAIL_SHIFT_INWARDS : SCH_TAIL_GUARD_WITH_IF, &o,
                     &i) ||
      sch_vectorize(st, i))
    return -1;
  if (outer) *outer = o;
  return 0;
}
static int vec_cols(sch_stage *st, sch_iter *cols, sch_iter **outer) {
  return vec_cols_tail(st, cols, 0, outer);
}

static int stencil(tec_ctx *ctx, sch_schedule *s) {
  int stages = 0;
  while (sch_tensor_named(s, tec_ctx_printf(ctx, "stage_%d", stages))) stages++;
  tec_ctx_clear_error(ctx); /* (the lookup past the last stage) */
  const int group = 11;
  for (int j = stages - 1; j >= 0; j -= group) {
    sch_stage *o = named(s, tec_ctx_printf(ctx, "stage_%d", j));
    if (!o) return -1;
    int64_t h, w;
    te_tensor *ot = sch_stage_tensor(o);
    if (!ir_is_const_int(ot->shape[0], &h) || !ir_is_const_int(ot->shape[1], &w)) return -1;
    sch_iter *yo, *xo, *yi, *xi, *t;
    if (sch_tile(o, sch_axis(o, 0), sch_axis(o, 1), h / 4, w / 4, &yo, &xo, &yi, &xi) ||
        sch_fuse(o, yo, xo, &t) || sch_parallel(o, t) || vec_cols(o, xi, NULL))
      return -1;
    for (int i = j - 1; i >= 0 && i > j - group; i--) { /* readers first */
      sch_stage *st = named(s, tec_ctx_printf(ctx, "stage_%d", i));
      if (!st || sch_compute_at(st, o, yi) || sch_store_at(st, o, t) ||
          vec_cols_tail(st, sch_axis(st, 1), 1, NULL))
        return -1;
    }
  }
  return 0;
}

static int blur(tec_ctx *ctx, sch_schedule *s) {
  (void)ctx;
  sch_stage *by = named(s, "blur_y"), *bx = named(s, "blur_x");
  sch_iter *yo, *yi, *xo;
  if (!by || !bx || sch_split(by, sch_axis(by, 0), 32, &yo, &yi) || sch_parallel(by, yo) ||
      vec_cols(by, sch_axis(by, 1), &xo))
    return -1;
  return sch_compute_at(bx, by, xo) || sch_store_at(bx, by, yo) ||
                 vec_cols(bx, sch_axis(bx, 1), NULL)
             ? -1
             : 0;
}

static int harris(tec_ctx *ctx, sch_schedule *s) {
  (void)ctx;
  static const char *const inl[] = {"Ixx", "Iyy", "Ixy", "Sxx", "Syy", "Sxy", "det", "trace"};
  for (size_t k = 0; k < sizeof inl / sizeof inl[0]; k++) {
    sch_stage *st = named(s, inl[k]);
    if (!st || sch_compute_inline(st)) return -1;
  }
  sch_stage *o = named(s, "output");
  sch_iter *yo, *yi;
  if (!o || sch_split(o, sch_axis(o, 0), 32, &yo, &yi) || sch_parallel(o, yo) ||
      vec_cols(o, sch_axis(o, 1), NULL))
    return -1;
  static const char *const slid[] = {"Ix", "Iy", "gray"}; /* readers first */
  sch_iter *xo[3];
  for (size_t k = 0; k < sizeof slid / sizeof slid[0]; k++) {
    sch_stage *st = named(s, slid[k]);
    if (!st || sch_compute_at(st, o, yi) || sch_store_at(st, o, yo) ||
        vec_cols(st, sch_axis(st, 1), &xo[k]))
      return -1;
  }
  /* Ix.compute_with(Iy, x): one loop over the columns computes both, sharing gray's loads */
  return sch_compute_with(named(s, "Ix"), named(s, "Iy"), xo[1]) ? -1 : 0;
}

int auto_hand_schedule(tec_ctx *ctx, const char *name, sch_schedule *s) {
  if (!strcmp(name, "stencil")) return stencil(ctx, s);
  if (!strcmp(name, "blur")) return blur(ctx, s);
  if (!strcmp(name, "harris")) return harris(ctx, s);
  return 1;
}
