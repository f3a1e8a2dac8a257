/* error.c — per-thread error message of the runtime and of generated code.
 *
 * Generated entry checks call tec_rt_check_fail("vadd: argument 2 ('C') shape[0] is %lld,
 * expected %lld", 5, 7); users read the text back with tec_rt_last_error() after a call
 * returned -1. Messages are truncated to the buffer; nothing here allocates.
 */
#include <stdarg.h>
#include <stdio.h>
#include "tec/runtime.h"

#define RT_ERROR_MAX 1024

static _Thread_local char rt_last_error[RT_ERROR_MAX];

const char *tec_rt_last_error(void) { return rt_last_error; }

int32_t tec_rt_set_error(const char *fmt, ...) {
  va_list ap;
  if (!fmt) {
    rt_last_error[0] = '\0';
    return -1;
  }
  va_start(ap, fmt);
  vsnprintf(rt_last_error, sizeof rt_last_error, fmt, ap);
  va_end(ap);
  return -1;
}

/* fmt is a string baked into generated code with at most two %lld conversions (a, then b);
 * both values are always passed, so a format using fewer is fine. */
int32_t tec_rt_check_fail(const char *fmt, int64_t a, int64_t b) {
  if (!fmt) return tec_rt_set_error("tec: entry check failed");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
  snprintf(rt_last_error, sizeof rt_last_error, fmt, (long long)a, (long long)b);
#pragma GCC diagnostic pop
  return -1;
}

/* Every checked entry calls tec_rt_check_fail, so this file is linked whenever the runtime
 * library is; this reference brings the strided path (runtime/strided.c) along, which entries
 * reference only weakly (an object linked without the runtime refuses a non-compact argument
 * instead, saying to link it; a weak reference alone would not pull it from the archive). */
tec_rt_strided_call_fn const tec_rt_strided_link = tec_rt_call_strided;
