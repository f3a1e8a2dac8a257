/* dtype.c — printing dtypes ("float32", "int64x8", "bool"). */
#include <stdio.h>
#include "tec/dtype.h"

char *tec_dtype_str(tec_dtype t, char *buf, int size) {
  const char *base;
  switch (t.code) {
  case TEC_INT: base = "int"; break;
  case TEC_UINT: base = "uint"; break;
  case TEC_FLOAT: base = "float"; break;
  case TEC_HANDLE: base = "handle"; break;
  case TEC_BOOL: base = "bool"; break;
  default: base = "unknown"; break;
  }
  int n;
  if (t.code == TEC_BOOL || t.code == TEC_HANDLE)
    n = snprintf(buf, (size_t)size, "%s", base);
  else
    n = snprintf(buf, (size_t)size, "%s%d", base, t.bits);
  if (t.lanes > 1 && n > 0 && n < size) snprintf(buf + n, (size_t)(size - n), "x%d", t.lanes);
  return buf;
}
