/* dt_compare.c — how close a result is to its reference: the largest
 * |got - want| / max(1, |want|), with NaN on one side only counting as infinitely far (an
 * output element never written stays NaN: the tester fills outputs with NaN first). */
#include <math.h>
#include "difftest/dt_internal.h"

double dt_compare(const float *got, const float *want, int64_t n, int64_t *at) {
  double worst = 0;
  if (at) *at = -1;
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i], e;
    if (isnan(g) || isnan(w))
      e = isnan(g) && isnan(w) ? 0 : INFINITY;
    else if (isinf(g) || isinf(w))
      e = g == w ? 0 : INFINITY;
    else
      e = fabs(g - w) / (fabs(w) > 1 ? fabs(w) : 1);
    if (e > worst || (at && *at < 0 && e == worst && e > 0)) {
      worst = e;
      if (at) *at = i;
    }
  }
  return worst;
}
