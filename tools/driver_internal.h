/* driver_internal.h — what the `tec` command's files share (not installed). */
#ifndef TEC_DRIVER_INTERNAL_H
#define TEC_DRIVER_INTERNAL_H

#include "tec/driver.h"
#include "tec/topi.h"
#include "tec/tune.h"
#include "topi/problem_kv.h"

struct tec_gen_params {
  topi_kv kv;         /* the --shape pairs (topi/problem_kv.h) */
  const char *target;
  /* the generator's knobs (tools/driver_gen.c): declaring, tec_gen_knob adds each to space;
   * with knob_idx, knob k takes its value number knob_idx[k] (knobs must come in the order
   * and with the values space holds); neither: each knob its default */
  tune_space *space;
  const int64_t *knob_idx;
  int nknob;            /* knobs seen so far in this run */
  const char *knob_bad; /* the first misuse of tec_gen_knob, reported after the run */
  double flops;         /* tec_gen_flops (0: not given) */
};

/* tec tune's own options (0 / NULL: not given) */
typedef struct drv_tune_args {
  const char *tuner, *records, *csv, *svg, *transfer;
  int trials, seed_set;
  unsigned seed;
  int confirm, confirm_set; /* --confirm N: the confirmation stage's configs (0: none) */
  double timeout, build_timeout, min_repeat_ms; /* min_repeat_ms < 0: not given */
  /* measured over SSH (tools/driver_tune.c): --remote HOSTS, --remote-run-prefix,
   * --remote-cc, --remote-runtime, --ssh-option (repeatable) */
  const char *remote, *remote_prefix, *remote_cc, *remote_runtime;
  int nssh;
  const char *ssh[16];
  int autosched; /* --auto: the auto-scheduler's space instead of the template's */
} drv_tune_args;
/* Tunes template t on problem (shape: the --shape text) for the host; the exit status. */
int drv_tune(tec_ctx *ctx, const topi_template *t, const void *problem, const char *shape, const char *target,
             int repeat, const drv_tune_args *a);

/* driver_auto.c: OP's declaration auto-scheduled (records: the best tuned record, NULL: the
 * instant mode), lowered as name; *cfg_str "auto <config>", *trace_c the schedule as C calls.
 * NULL with an error in ctx. */
lower_func *drv_auto_lower(tec_ctx *ctx, const topi_template *t, const void *problem, const char *target,
                           const char *records, const char *name, const char **cfg_str, const char **trace_c);
/* the program's name as the user ran it ("tec", "my_ops"), for the command lines printed */
const char *drv_prog(void);

/* driver_gen.c: generator g's operator lowered as name: its own schedule with the knobs at
 * their defaults or at --config's values (config), or with autosched its program scheduled by
 * the auto-scheduler (records: the best tuned record; NULL: the instant mode). *cfg_str: the
 * config applied as text (NULL without knobs), *trace_c the auto schedule as C calls, *flops
 * what the generator gave tec_gen_flops (0: nothing). NULL
 * with an error in ctx. */
lower_func *drv_gen_lower(tec_ctx *ctx, const tec_generator *g, const char *name, const char *shape,
                          const char *target, const char *config, int autosched, const char *records,
                          const char **cfg_str, const char **trace_c, double *flops);
/* `OP tune` for generator g: its knobs' space (or with --auto the auto-scheduler's); the exit
 * status */
int drv_gen_tune(tec_ctx *ctx, const tec_generator *g, const char *shape, const char *target, int repeat,
                 const drv_tune_args *a);
/* driver_tune.c: task searched as `tec tune` does, then the best printed; op and shape for the
 * command line that reproduces it; fresh: with --auto, an unscheduled schedule of the task's
 * program (the schedule its best record gives is printed from it) */
int drv_tune_task(tec_ctx *ctx, tune_task *task, const char *op, const char *shape, const char *target,
                  int repeat, const drv_tune_args *a, sch_schedule *fresh);
/* tec tune --auto (after tune_task_auto on an unscheduled schedule): drv_auto_print_sched
 * prints the schedule the records give that schedule's program, per stage and as C calls.
 * 0 or -1 with an error in ctx. */
int drv_auto_print_sched(tec_ctx *ctx, sch_schedule *fresh, const char *target, const char *records);

int drv_params_parse(tec_ctx *ctx, const char *text, tec_gen_params *p);
/* -1 with an error if a value was bad or a key was never read (legal: the keys, for the message) */
int drv_params_finish(const tec_gen_params *p, const char *legal);
/* driver_net.c: tec net FILE (file: the network's text); the exit status */
int drv_net(const char *file, int repeat, const char *records, int tasks, const char *target, const char *out);

/* driver_keys.c: `tec list OP` (the problem's keys: topi_problem_keys) */
int drv_list_op(const topi_template *t);

#endif
