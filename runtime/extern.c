/* extern.c — the call of an extern stage's C function (te_extern): generated code passes each
 * region as a data pointer and a row of int64s (desc), this builds the tec_extern_buffer
 * views the function reads, calls it and turns a nonzero return into an error naming the
 * stage.
 *
 *   desc, per buffer: ndim, dtype code, bits, lanes, extents[ndim], strides[ndim], mins[ndim]
 */
#include <string.h>
#include "tec/runtime.h"


int32_t tec_rt_extern_call(int32_t (*fn)(const tec_extern_buffer *, int32_t), const char *stage,
                           int32_t nbuf, void *const *data, const int64_t *desc,
                           const char *const *names) {
  if (!fn) return tec_rt_set_error("extern stage '%s': its function is NULL", stage);
  if (nbuf < 1 || nbuf > TEC_EXTERN_MAX_BUF)
    return tec_rt_set_error("extern stage '%s': %d buffers (1 to %d)", stage, (int)nbuf,
                            TEC_EXTERN_MAX_BUF);
  tec_extern_buffer bufs[TEC_EXTERN_MAX_BUF];
  memset(bufs, 0, sizeof bufs);
  const int64_t *p = desc;
  for (int b = 0; b < nbuf; b++) {
    int nd = (int)p[0];
    DLTensor *t = &bufs[b].dl;
    t->data = data[b];
    t->device.device_type = kDLCPU;
    t->ndim = nd;
    t->dtype.code = (uint8_t)p[1];
    t->dtype.bits = (uint8_t)p[2];
    t->dtype.lanes = (uint16_t)p[3];
    /* the views point into desc, which lives on the caller's stack for the call */
    t->shape = (int64_t *)(p + 4);
    t->strides = (int64_t *)(p + 4 + nd);
    t->byte_offset = 0;
    bufs[b].min = p + 4 + 2 * nd;
    bufs[b].name = names ? names[b] : "";
    p += 4 + 3 * nd;
  }
  int32_t rc = fn(bufs, nbuf);
  if (rc != 0)
    return tec_rt_set_error("extern stage '%s': its function returned %d for the region "
                            "starting at %lld in dimension 0",
                            stage, (int)rc, (long long)bufs[nbuf - 1].min[0]);
  return 0;
}
