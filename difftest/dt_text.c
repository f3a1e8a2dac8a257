/* dt_text.c — the reproducer's text: a fixed-capacity buffer (it may live in memory shared
 * with a child process, so a crash still leaves the schedule readable), and C identifiers
 * made from tec names ("C.local" -> "C_local", "i.outer" -> "i_outer"). */
#include <stdarg.h>
#include <string.h>
#include "difftest/dt_internal.h"

void dt_text_printf(dt_text *t, const char *fmt, ...) {
  if (!t || !t->buf || t->cap == 0 || t->len + 1 >= t->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  t->len += (size_t)n;
  if (t->len >= t->cap) t->len = t->cap - 1; /* truncated */
}

void dt_ident(char *out, size_t cap, const char *name) {
  size_t n = 0;
  for (const char *c = name ? name : ""; *c && n + 1 < cap; c++) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
    out[n++] = ok ? *c : '_';
  }
  out[n] = 0;
}
