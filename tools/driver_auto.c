/* driver_auto.c — `--auto`: an operator tec knows (a topi template's declaration) scheduled by
 * the auto-scheduler instead of its template: `tec print/compile/bench OP --auto` lowers the
 * instant schedule, or with `--records F` the best record tuned for the program; `tec tune OP
 * --auto` searches the space the rules generate (tune_task_auto) and prints the chosen
 * schedule as the C calls that build it. */
#include <stdio.h>
#include <string.h>
#include "tec/autosched.h"
#include "tools/driver_internal.h"

/* t's program for problem, unscheduled */
static sch_schedule *declared(tec_ctx *ctx, const topi_template *t, const void *problem, topi_decl *d) {
  if (t->declare(ctx, problem, d) != 0) return NULL;
  return sch_create(ctx, 1, &d->out);
}

lower_func *drv_auto_lower(tec_ctx *ctx, const topi_template *t, const void *problem, const char *target,
                           const char *records, const char *name, const char **cfg_str, const char **trace_c) {
  topi_decl d;
  sch_schedule *s = declared(ctx, t, problem, &d);
  tec_autosched_report rep;
  if (!s) return NULL;
  if (records ? tec_autoschedule_tuned(s, target, NULL, records, &rep) : tec_autoschedule(s, target, NULL, &rep))
    return NULL;
  if (rep.warning) fprintf(stderr, "%s\n", rep.warning);
  *cfg_str = tec_ctx_printf(ctx, "auto %s", rep.config ? rep.config : "(instant)");
  *trace_c = rep.trace_c;
  return tec_lower(s, name, d.nargs, d.args);
}

int drv_auto_print_sched(tec_ctx *ctx, sch_schedule *best, const char *target, const char *records) {
  (void)ctx;
  tec_autosched_report rep;
  if (tec_autoschedule_tuned(best, target, NULL, records, &rep) != 0) return -1;
  if (rep.warning) printf("%s\n", rep.warning);
  printf("config: %s\n", rep.config);
  printf("the schedule (tec_autoschedule_tuned with %s applies it), per stage, then as C calls:\n%s%s",
         records, rep.text, rep.trace_c);
  return 0;
}
