/* trace_check.c — TEC_CHECK_TRACE=1: every tec_lower also proves that the schedule's trace is
 * the whole schedule.
 *
 * After a successful lowering, the trace goes through its JSON form (sch_trace_json, then
 * sch_trace_parse_json), is replayed onto a fresh schedule of the same outputs, and that
 * schedule is lowered too; the two programs must print identically. A difference means a
 * primitive changed the schedule without a record (or a record that replays differently),
 * and the tec_lower call fails with an error naming the first line that differs. The replay
 * lowers with the caller's stop_after and verify, without its observer and quiet under
 * TEC_DUMP_IR, so a test that counts either sees its own lowering only. Running a
 * test suite with TEC_CHECK_TRACE=1 checks every schedule its tests and examples write (CTest
 * does it for the schedule-heavy tests: tests/CMakeLists.txt). Off, the cost is one getenv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/internal.h"
#include "lower/passes.h"
#include "tec/lower.h"
#include "schedule/internal.h"

int lower_trace_check_wanted(void) {
  const char *e = getenv("TEC_CHECK_TRACE");
  return e && *e && strcmp(e, "0") != 0;
}

/* The printed program (malloc'd), or NULL. */
static char *printed(const lower_func *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return NULL;
  tec_lower_print(m, f);
  if (fclose(m)) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* 1-based number of the first line where a and b differ, and that line of each. */
static int first_diff(const char *a, const char *b, const char **la, const char **lb) {
  int line = 1;
  const char *sa = a, *sb = b;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') line++, sa = a + 1, sb = b + 1;
  *la = sa, *lb = sb;
  return line;
}

static int check(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args,
                 const lower_func *f, const tec_lower_options *opt) {
  tec_ctx *ctx = s->ctx;
  const char *js = sch_trace_json(ctx, sch_get_trace(s));
  sch_trace *t = js ? sch_trace_parse_json(ctx, js) : NULL;
  sch_schedule *fresh = t ? sch_create(ctx, s->nout, s->outputs) : NULL;
  if (!fresh || sch_trace_replay(fresh, t))
    return tec_ctx_set_error(ctx, "TEC_CHECK_TRACE: the trace of '%s' does not replay: %s", name,
                             tec_ctx_error(ctx) ? tec_ctx_error(ctx) : "(no message)");
  /* the same stop, verification and folding; the caller's observer sees its own lowering */
  tec_lower_options same = {0};
  if (opt)
    same.stop_after = opt->stop_after, same.verify = opt->verify,
    same.no_storage_folding = opt->no_storage_folding;
  lower_func *g = tec_lower_with(fresh, name, nargs, args, &same);
  if (!g)
    return tec_ctx_set_error(ctx, "TEC_CHECK_TRACE: the replayed schedule of '%s' does not "
                                  "lower: %s",
                             name, tec_ctx_error(ctx) ? tec_ctx_error(ctx) : "(no message)");
  char *a = printed(f), *b = printed(g);
  int rc = 0;
  if (!a || !b) rc = tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "TEC_CHECK_TRACE: out of memory");
  else if (strcmp(a, b)) {
    const char *la, *lb;
    int line = first_diff(a, b, &la, &lb);
    rc = tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                                "TEC_CHECK_TRACE: '%s' lowers differently after its trace is "
                                "replayed; line %d:\n  scheduled: %.*s\n  replayed:  %.*s",
                           name, line, (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
  }
  free(a);
  free(b);
  tec_lower_free(g);
  return rc;
}

static _Thread_local int inside; /* the replay's own tec_lower is not checked again */

int lower_trace_replaying(void) { return inside; }

int lower_trace_check(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args,
                      const lower_func *f, const tec_lower_options *opt) {
  if (inside) return 0;
  inside = 1;
  int rc = check(s, name, nargs, args, f, opt);
  inside = 0;
  return rc;
}
