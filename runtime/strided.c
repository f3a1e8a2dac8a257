/* strided.c — any buffer a user holds: the checked entry's general path.
 *
 * A generated function's kernel (name_raw) assumes compact row-major buffers aligned to
 * TEC_ALIGN bytes. Its checked entry makes tec_rt_dl_compact's test of every argument inline;
 * when all are compact it calls the kernel directly (the fast path, unchanged). Otherwise it calls
 * tec_rt_call_strided, which gives the kernel a compact aligned copy of each argument that is
 * not (strides of any sign, zero strides of an input (broadcast), padded rows, a byte_offset
 * or data at any address its element type allows), copied back after the call for the
 * arguments the function writes, and the others as they are:
 *
 *   for each argument i:  compact ? data + byte_offset : copy (its elements gathered)
 *   rc = thunk(ptrs, sizes)                   (the kernel: name_raw(ptrs..., sizes...))
 *   for each written argument copied: scatter the copy back; free every copy
 *
 * Refused (-1, the message in tec_rt_last_error): a written argument with a zero stride in a
 * dimension of extent > 1 (several elements would be one place), a written argument passed
 * as it is that overlaps another argument passed as it is (the kernel declares its buffers
 * noalias; copies never overlap), out of memory. Extents are the caller's (checked before).
 */
#include <stdint.h>
#include <string.h>
#include "tec/runtime.h"

/* bytes of one element (bool: one byte a lane) */
static int64_t elem_bytes(const DLTensor *t) {
  int64_t bits = (int64_t)t->dtype.bits * (t->dtype.lanes ? t->dtype.lanes : 1);
  return bits >= 8 ? bits / 8 : 1;
}

static char *start_of(const DLTensor *t) { return (char *)t->data + t->byte_offset; }

int32_t tec_rt_dl_compact(const DLTensor *t) {
  if (!t || ((uintptr_t)start_of(t) % TEC_ALIGN) != 0) return 0;
  if (!t->strides) return 1;
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect) return 0;
    expect *= t->shape[d];
  }
  return 1;
}

/* Copies between t's elements and a compact buffer c, row-major order (to_compact: t -> c). */
static void copy_elems(const DLTensor *t, char *c, int to_compact) {
  int nd = t->ndim;
  int64_t eb = elem_bytes(t), n = 1, idx[64] = {0};
  for (int d = 0; d < nd; d++) n *= t->shape[d];
  if (n == 0) return;
  if (!t->strides) { /* compact but misaligned: one block */
    if (to_compact) memcpy(c, start_of(t), (size_t)(n * eb));
    else memcpy(start_of(t), c, (size_t)(n * eb));
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += idx[d] * t->strides[d];
    char *p = start_of(t) + off * eb;
    if (to_compact) memcpy(c + k * eb, p, (size_t)eb);
    else memcpy(p, c + k * eb, (size_t)eb);
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
    }
  }
}

/* The bytes [lo, hi) t's elements span (strides of any sign). */
static void span(const DLTensor *t, char **lo, char **hi) {
  int64_t eb = elem_bytes(t), a = 0, b = 0, n = 1;
  for (int d = 0; d < t->ndim; d++) {
    n *= t->shape[d];
    int64_t s = t->strides ? t->strides[d] : 1, e = t->shape[d] - 1;
    if (!t->strides) {
      s = 1;
      for (int q = d + 1; q < t->ndim; q++) s *= t->shape[q];
    }
    if (e > 0) (s >= 0 ? (b += s * e) : (a += s * e));
  }
  *lo = start_of(t) + a * eb;
  *hi = n ? start_of(t) + (b + 1) * eb : *lo;
}

int32_t tec_rt_call_strided(DLTensor *const *args, int32_t nargs, const uint8_t *written, const int64_t *sizes,
                            tec_rt_strided_thunk thunk, const char *fname) {
  void *ptrs[64] = {0};
  int copied[64] = {0}, own[64] = {0}; /* own: a copy was allocated */
  if (nargs > 64) return tec_rt_set_error("%s: %d arguments; a strided call takes at most 64", fname, nargs);
  for (int i = 0; i < nargs; i++) {
    const DLTensor *t = args[i];
    if (t->ndim > 64) return tec_rt_set_error("%s: argument %d has %d dimensions; at most 64", fname, i, t->ndim);
    for (int d = 0; written[i] && t->strides && d < t->ndim; d++)
      if (t->strides[d] == 0 && t->shape[d] > 1)
        return tec_rt_set_error("%s: argument %d is written but has stride 0 in dimension %d (extent %lld): its "
                                "elements would share one place; pass a buffer with distinct elements",
                                fname, i, d, (long long)t->shape[d]);
    copied[i] = !tec_rt_dl_compact(t);
    ptrs[i] = start_of(t);
  }
  for (int i = 0; i < nargs; i++) /* written and passed as it is: no overlap with another passed as it is */
    for (int j = 0; j < nargs && written[i] && !copied[i]; j++) {
      if (j == i || copied[j]) continue;
      char *li, *hi, *lj, *hj;
      span(args[i], &li, &hi), span(args[j], &lj, &hj);
      if (li < hi && lj < hj && li < hj && lj < hi)
        return tec_rt_set_error("%s: argument %d overlaps argument %d in memory; the function writes argument %d "
                                "and assumes no argument overlaps another: pass separate buffers", fname, i, j, i);
    }
  int32_t rc = 0;
  for (int i = 0; i < nargs && rc == 0; i++) {
    if (!copied[i]) continue;
    int64_t n = elem_bytes(args[i]);
    for (int d = 0; d < args[i]->ndim; d++) n *= args[i]->shape[d];
    ptrs[i] = tec_rt_alloc((size_t)(n > 0 ? n : 1));
    own[i] = ptrs[i] != NULL;
    if (!ptrs[i]) {
      rc = tec_rt_set_error("%s: out of memory copying argument %d (%lld bytes) into a compact buffer", fname, i,
                            (long long)n);
      break;
    }
    copy_elems(args[i], ptrs[i], 1);
  }
  if (rc == 0) rc = thunk(ptrs, sizes);
  for (int i = 0; i < nargs; i++) {
    if (!own[i]) continue;
    if (rc == 0 && written[i]) copy_elems(args[i], ptrs[i], 0);
    tec_rt_free(ptrs[i]);
  }
  return rc;
}
