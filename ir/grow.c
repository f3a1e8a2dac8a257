/* grow.c — growable arrays in the arena (the old storage is left to the arena). */
#include <string.h>
#include "ir/internal.h"

int tec_grow(tec_ctx *ctx, void **arr, int *cap, int need, size_t size) {
  if (need <= *cap) return 0;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *n = tec_ctx_alloc(ctx, size * (size_t)ncap);
  if (!n) return -1;
  if (*arr) memcpy(n, *arr, size * (size_t)*cap);
  *arr = n;
  *cap = ncap;
  return 0;
}
