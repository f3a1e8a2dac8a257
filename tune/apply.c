/* apply.c — a config's knob values onto a schedule a user writes: a split knob's factors as
 * successive splits, a reorder knob's permutation as sch_reorder, an annotate knob's per-axis
 * choices as unroll / vectorize / parallel. The primitives' own errors stand (an unroll of a
 * loop without a constant extent, a vectorize the vectorizer refuses, ...). */
#include "tune/internal.h"

int tune_sch_split(sch_stage *st, sch_iter *iv, const int64_t *factors, int parts, sch_iter **out) {
  if (parts < 1 || parts > 8 || !factors || !iv)
    return tec_ctx_set_error(sch_stage_tensor(st)->ctx, "tune_sch_split: %d parts (1..8) with factors and a loop", parts);
  sch_iter *cur = iv;
  for (int i = 1; i < parts; i++) {
    int64_t inner = 1;
    for (int j = i; j < parts; j++) inner *= factors[j];
    sch_iter *outer, *in;
    if (sch_split(st, cur, inner, &outer, &in) != 0) return -1;
    out[i - 1] = outer, cur = in;
  }
  out[parts - 1] = cur;
  return 0;
}

int tune_sch_reorder(sch_stage *st, int n, sch_iter *const *axes, const int64_t *perm) {
  sch_iter *order[16];
  if (n < 1 || n > 16) return tec_ctx_set_error(sch_stage_tensor(st)->ctx, "tune_sch_reorder: %d axes; 1..16 are legal", n);
  for (int i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n)
      return tec_ctx_set_error(sch_stage_tensor(st)->ctx, "tune_sch_reorder: entry %d of the permutation is %lld, not in 0..%d", i,
                               (long long)perm[i], n - 1);
    order[i] = axes[perm[i]];
  }
  return sch_reorder(st, n, order);
}

int tune_sch_annotate(sch_stage *st, int n, sch_iter *const *axes, const int64_t *anns) {
  for (int i = 0; i < n; i++) {
    int rc = 0;
    if (anns[i] == TUNE_ANN_UNROLL) rc = sch_unroll(st, axes[i]);
    else if (anns[i] == TUNE_ANN_VECTORIZE) rc = sch_vectorize(st, axes[i]);
    else if (anns[i] == TUNE_ANN_PARALLEL) rc = sch_parallel(st, axes[i]);
    if (rc != 0) return -1;
  }
  return 0;
}
