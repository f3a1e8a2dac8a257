/* lower.h — from a schedule to a loop program (a lowered function).
 *
 * tec_lower runs the pass pipeline (lower/pipeline.c lists it, in order) and returns a
 * function whose body is a flat loop program over 1-d buffers, ready for codegen. Setting the
 * environment variable TEC_DUMP_IR=1 prints the program after every pass to stderr
 * (TEC_DUMP_IR=simplify prints it after the passes whose name contains that word).
 */
#ifndef TEC_LOWER_H
#define TEC_LOWER_H

#include "tec/schedule.h"

typedef struct lower_func {
  tec_ctx *ctx;
  const char *name;            /* C identifier: the generated function's name */
  int nargs;
  te_tensor **args;            /* tensor arguments, in call order */
  const ir_expr **arg_bufs;    /* the buffer VAR (handle) that stands for each argument */
  int nsize;
  const ir_expr **size_vars;   /* symbolic sizes the arguments' shapes bind */
  const ir_stmt *body;         /* the loop program */
  /* The prepare/run split (constant precompute). Stages computed from constant placeholders
   * alone (te_const_placeholder: weights) run once in `prepare` (named <name>_prepare, args:
   * the constants it reads, then the packed tensors); this function is then the run part
   * (named <name>_run, args: the other arguments, then the packed tensors). NULL when there
   * is nothing to precompute or the schedule turned it off (sch_set_precompute). */
  struct lower_func *prepare;
  const char *user_name;       /* the name given to tec_lower */
  int nuser;
  te_tensor **user_args;       /* the arguments as given to tec_lower */
  int npacked;
  te_tensor **packed;          /* tensors prepare writes and run reads */
  /* What the lowering did other than the schedule asked, without failing: a vectorized loop
   * the vectorizer kept serial (and why), a compute_at'd stage of constants alone computed
   * whole in prepare instead. One sentence each; tec_lower_print shows them. In strict mode
   * (tec_ctx_set_strict, TEC_STRICT=1) tec_lower fails with the first one instead. Kept by
   * the function tec_lower returns (not by its prepare). */
  int nnotes;
  const char *const *notes;
} lower_func;

/* Lowers schedule s into a function taking args (every placeholder reachable from the
 * schedule's outputs, and the outputs, must be among them). NULL with an error in the ctx. */
lower_func *tec_lower(sch_schedule *s, const char *name, int nargs, te_tensor *const *args);

/* The lowered function as text: a signature line, then the body. Arena string. */
const char *tec_lower_str(const lower_func *f);
void tec_lower_print(FILE *out, const lower_func *f);

#endif
