/* driver_internal.h — what the `tec` command's files share (not installed). */
#ifndef TEC_DRIVER_INTERNAL_H
#define TEC_DRIVER_INTERNAL_H

#include "tec/driver.h"
#include "tec/topi.h"
#include "tec/tune.h"

#define DRV_MAX_PARAMS 32
struct tec_gen_params {
  tec_ctx *ctx;
  int n;
  const char *key[DRV_MAX_PARAMS], *val[DRV_MAX_PARAMS];
  int used[DRV_MAX_PARAMS];
  const char *bad;    /* the first value tec_gen_int could not read */
  int nasked;
  const char *asked[DRV_MAX_PARAMS]; /* the keys the generator asked for, for messages */
  const char *target;
};

typedef union drv_problem {
  topi_conv2d conv;
  topi_layout_problem layout;
  topi_dense dense;
  topi_dw_pw dw_pw;
  topi_pool pool;
  topi_softmax softmax;
  topi_eltwise eltwise;
  topi_batch_matmul bmm;
} drv_problem;

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
/* tec tune --auto: OP's declaration as a task of the tuned auto-scheduler (tune_task_auto);
 * then the schedule the records give it printed, per stage and as C calls. 0 or -1 with an
 * error in ctx. */
int drv_auto_task(tec_ctx *ctx, const topi_template *t, const void *problem, const char *target, tune_task *task);
int drv_auto_print(tec_ctx *ctx, const topi_template *t, const void *problem, const char *target,
                   const char *records);

int drv_params_parse(tec_ctx *ctx, const char *text, tec_gen_params *p);
/* -1 with an error if a value was bad or a key was never read (legal: the keys, for the message) */
int drv_params_finish(const tec_gen_params *p, const char *legal);
/* driver_keys.c: the keys of t's problem ("n c h w ..."); key's default for t (NULL:
 * required; a key name: that key's value); -1 with an error naming a required key not given;
 * `tec list OP` */
const char *drv_problem_keys(const topi_template *t);
const char *drv_key_default(const topi_template *t, const char *key);
int drv_keys_check(const topi_template *t, const tec_gen_params *p);
int drv_list_op(const topi_template *t);
int drv_problem_parse(const topi_template *t, const tec_gen_params *p, drv_problem *out);

#endif
