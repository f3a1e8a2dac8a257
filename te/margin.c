/* margin.c — argument margins: a tensor as the window of a larger caller's buffer.
 *
 *   te_tensor_set_margin(ctx, B, (int64_t[]){1, 2}, (int64_t[]){3, 0});   // B: [4, 5]
 *     B's buffer is [8, 7]; B[i, j] is buffer element [i + 1, j + 2]
 *
 * Only records: te_buffer_shape gives the extents every user of an argument's buffer reads
 * (storage_flatten's strides, the entry checks, the header, the CLI and the tuner), the
 * offsets come from te_margin. tec_lower fixes an argument's margins (margin_fixed_by), since
 * its flattened indices and the build's entry checks must agree on them. */
#include <string.h>
#include "tec/te.h"
#include "ir/internal.h"

int64_t te_margin(const te_tensor *t, int d, int side) {
  if (!t || !t->margin || d < 0 || d >= t->ndim) return 0;
  return t->margin[side ? t->ndim + d : d];
}

int te_has_margin(const te_tensor *t) {
  for (int d = 0; t && t->margin && d < 2 * t->ndim; d++)
    if (t->margin[d]) return 1;
  return 0;
}

const ir_expr *const *te_buffer_shape(const te_tensor *t) {
  return t->buffer_shape ? t->buffer_shape : t->shape;
}

/* 1 if t already has exactly these margins (none counts as zeros). */
static int same_margin(const te_tensor *t, const int64_t *m) {
  for (int k = 0; k < 2 * t->ndim; k++)
    if ((t->margin ? t->margin[k] : 0) != m[k]) return 0;
  return 1;
}

static const char *margin_str(tec_ctx *ctx, int ndim, const int64_t *m) {
  const char *s = "before {";
  for (int d = 0; d < 2 * ndim; d++)
    s = tec_ctx_printf(ctx, "%s%s%lld", s, d == ndim ? "}, after {" : d ? ", " : "",
                       (long long)(m ? m[d] : 0));
  return tec_ctx_printf(ctx, "%s}", s);
}

int te_tensor_set_margin(tec_ctx *ctx, te_tensor *t, const int64_t *before,
                         const int64_t *after) {
  if (!ctx || !t) return -1; /* NULL from an earlier failure: no new message */
  const char *nm = tec_ctx_fmt_escape(ctx, t->name);
  if (t->ndim == 0)
    return tec_ctx_set_error(ctx, "te_tensor_set_margin '%s': a scalar (ndim 0) has no "
                                  "dimensions to give a margin", nm);
  if (t->is_const)
    return tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                                  "te_tensor_set_margin '%s': a te_const_placeholder cannot have "
                                  "a margin (its prepare step packs constants into compact "
                                  "buffers); declare it with te_placeholder or pass a compact "
                                  "buffer", nm);
  int64_t m[32];
  for (int d = 0; d < t->ndim; d++) {
    m[d] = before ? before[d] : 0;
    m[t->ndim + d] = after ? after[d] : 0;
    for (int side = 0; side < 2; side++)
      if (m[side * t->ndim + d] < 0)
        return tec_ctx_set_error(ctx, "te_tensor_set_margin '%s': %s[%d] is %lld; a margin "
                                      "counts elements of the buffer outside the tensor and "
                                      "must be >= 0", nm, side ? "after" : "before", d,
                                 (long long)m[side * t->ndim + d]);
  }
  if (same_margin(t, m)) return 0;
  if (t->margin_fixed_by)
    return tec_ctx_set_error(ctx, "te_tensor_set_margin '%s': function '%s' was lowered with "
                                  "'%s' as an argument and its margins (%s); set margins before "
                                  "tec_lower", nm, tec_ctx_fmt_escape(ctx, t->margin_fixed_by), nm,
                             margin_str(ctx, t->ndim, t->margin));
  if (t->margin)
    return tec_ctx_set_error(ctx, "te_tensor_set_margin '%s': its margins are already %s; they "
                                  "may be set again only to the same values, not to %s", nm,
                             margin_str(ctx, t->ndim, t->margin), margin_str(ctx, t->ndim, m));
  int64_t *keep = tec_ctx_alloc(ctx, sizeof *keep * (size_t)(2 * t->ndim));
  const ir_expr **ext = tec_ctx_alloc(ctx, sizeof *ext * (size_t)t->ndim);
  if (!keep || !ext) return -1;
  memcpy(keep, m, sizeof *keep * (size_t)(2 * t->ndim));
  for (int d = 0; d < t->ndim; d++) {
    int64_t add = m[d] + m[t->ndim + d], v;
    if (__builtin_add_overflow(m[d], m[t->ndim + d], &add) ||
        (ir_is_const_int(t->shape[d], &v) && __builtin_add_overflow(v, add, &v)))
      return tec_ctx_set_error(ctx, "te_tensor_set_margin '%s': the buffer extent of dimension "
                                    "%d overflows int64", nm, d);
    ext[d] = !add ? t->shape[d]
             : ir_is_const_int(t->shape[d], &v) ? ir_int(ctx, v + add)
                                                : ir_add(t->shape[d], ir_int(ctx, add));
    if (!ext[d]) return -1;
  }
  t->margin = keep;
  t->buffer_shape = ext;
  return 0;
}
