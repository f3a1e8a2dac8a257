/* report.c — what the user reads: per compute stage, the rule that fired and why (one line
 * each in rep->text), the choices themselves (rep->stages), and the schedule as C calls. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "autosched/internal.h"

const char *as_fmt(as_prog *p, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tec_ctx_strdup(p->ctx, buf);
}

const char *tec_autosched_kind_name(tec_autosched_kind k) {
  static const char *const names[] = {"leave", "inline", "loops", "tile", "attach", "rfactor"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

int as_report(as_prog *p, sch_schedule *s, int ntries, double seconds, tec_autosched_report *rep) {
  int n = 0;
  for (int i = 0; i < p->n; i++) n += !p->st[i].is_input;
  tec_autosched_stage *st = tec_ctx_alloc(p->ctx, sizeof *st * (size_t)(n ? n : 1));
  if (!st) return -1;
  size_t cap = 256;
  for (int i = 0; i < p->n; i++)
    if (!p->st[i].is_input)
      cap += strlen(p->st[i].t->name) + strlen(p->st[i].rule ? p->st[i].rule : "") +
             strlen(p->st[i].why ? p->st[i].why : "") + 16;
  char *text = tec_ctx_alloc(p->ctx, cap);
  if (!text) return -1;
  size_t len = 0;
  n = 0;
  for (int i = 0; i < p->n; i++) {
    as_stage *a = &p->st[i];
    if (a->is_input) continue;
    st[n++] =
        (tec_autosched_stage){a->t->name, a->ch, a->rule ? a->rule : "?", a->why ? a->why : ""};
    len += (size_t)snprintf(text + len, cap - len, "%s: %s -- %s\n", a->t->name,
                            a->rule ? a->rule : "?", a->why ? a->why : "");
  }
  const char *c = sch_trace_c(p->ctx, sch_get_trace(s));
  if (!c) return -1;
  *rep = (tec_autosched_report){
      .nstages = n, .stages = st, .text = text, .trace_c = c, .ntries = ntries, .seconds = seconds};
  return 0;
}
