/* dltensor.c — DLTensor helpers: allocate, free, view, count elements.
 *
 * tec dtypes map onto DLPack's (code, bits, lanes) unchanged, except bool: DLPack v0.6 has no
 * kDLBool, so TEC_BOOL is stored as {kDLUInt, 8, lanes} (one byte per truth value), which is
 * also what generated entry checks expect. Handles have no tensor form.
 *
 * tec_dl_alloc makes one block through tec_rt_alloc:
 *
 *   [ data: numel * elem bytes, rounded up to TEC_ALIGN | shape: ndim int64 ]
 *   ^ t->data (TEC_ALIGN-aligned)                        ^ t->shape
 *
 * so tec_dl_free releases both with one call. The data is zero-filled.
 */
#include <string.h>
#include "tec/runtime.h"

#define RT_MAX_NDIM 64

/* DLPack dtype of a tec dtype; 0 on success. */
static int rt_dl_dtype(tec_dtype type, DLDataType *out) {
  switch (type.code) {
  case TEC_INT: out->code = kDLInt; break;
  case TEC_UINT: out->code = kDLUInt; break;
  case TEC_FLOAT: out->code = kDLFloat; break;
  case TEC_BOOL:
    out->code = kDLUInt;
    out->bits = 8;
    out->lanes = type.lanes ? type.lanes : 1;
    return 0;
  default: return -1;
  }
  out->bits = type.bits;
  out->lanes = type.lanes ? type.lanes : 1;
  return 0;
}

int tec_dl_alloc(DLTensor *t, tec_dtype type, int ndim, const int64_t *shape) {
  DLDataType dt;
  if (!t) return tec_rt_set_error("tec_dl_alloc: tensor is NULL");
  memset(t, 0, sizeof *t);
  if (rt_dl_dtype(type, &dt) != 0 || type.bits == 0)
    return tec_rt_set_error("tec_dl_alloc: dtype (code %d, bits %d) has no tensor form",
                            type.code, type.bits);
  if (ndim < 0 || ndim > RT_MAX_NDIM)
    return tec_rt_set_error("tec_dl_alloc: ndim %d is out of range [0, %d]", ndim, RT_MAX_NDIM);
  if (ndim > 0 && !shape) return tec_rt_set_error("tec_dl_alloc: shape is NULL");
  size_t elem = (size_t)((dt.bits + 7) / 8) * dt.lanes;
  size_t bytes = elem;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return tec_rt_set_error("tec_dl_alloc: shape[%d] is %lld, expected >= 0", d,
                              (long long)shape[d]);
    if (shape[d] != 0 && bytes > SIZE_MAX / 2 / (size_t)shape[d])
      return tec_rt_set_error("tec_dl_alloc: tensor of %d dims is too large", ndim);
    bytes *= (size_t)shape[d];
  }
  size_t data_bytes = (bytes + (TEC_ALIGN - 1)) & ~(size_t)(TEC_ALIGN - 1);
  size_t total = data_bytes + (size_t)ndim * sizeof(int64_t);
  char *block = tec_rt_alloc(total);
  if (!block) return -1; /* tec_rt_alloc said why */
  memset(block, 0, data_bytes);
  int64_t *shp = (int64_t *)(block + data_bytes);
  if (ndim > 0) memcpy(shp, shape, (size_t)ndim * sizeof(int64_t));
  t->data = block;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = ndim;
  t->dtype = dt;
  t->shape = shp;
  t->strides = NULL;
  t->byte_offset = 0;
  return 0;
}

void tec_dl_free(DLTensor *t) {
  if (!t) return;
  tec_rt_free(t->data);
  memset(t, 0, sizeof *t);
}

DLTensor tec_dl_view(void *data, tec_dtype type, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  if (rt_dl_dtype(type, &t.dtype) != 0) { /* no tensor form: an invalid dtype the checks reject */
    t.dtype.code = (uint8_t)type.code;
    t.dtype.bits = type.bits;
    t.dtype.lanes = type.lanes;
  }
  t.shape = shape;
  return t;
}

int64_t tec_dl_numel(const DLTensor *t) {
  if (!t || t->ndim < 0 || (t->ndim > 0 && !t->shape)) return 0;
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}
