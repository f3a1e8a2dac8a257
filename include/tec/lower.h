/* lower.h — from a schedule to a loop program (a lowered function).
 *
 * tec_lower runs the pass pipeline (lower/pipeline.c: one table, in order) and returns a
 * function whose body is a flat loop program over 1-d buffers; tec_build and tec_emit run the
 * table's build-time passes on it for their target, then translate. Setting the environment
 * variable TEC_DUMP_IR=1 prints the program after every pass to stderr (TEC_DUMP_IR=simplify
 * prints it after the passes whose name contains that word); tec_lower_with's observer sees
 * the same steps.
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
  /* How it was lowered (tec_lower_with): the options (NULL: none), kept for the build-time
   * passes (tec_build and tec_emit observe and verify them too); and the pass it stopped
   * after (NULL: lowered whole; a stopped function cannot be built). */
  const struct tec_lower_options *options;
  const char *stopped_after;
  /* Reads whose bounds depend on the sizes (lower/read_bounds.c): asserts the checked entry
   * runs once it has bound the sizes, before calling the kernel (NULL: none). */
  const ir_stmt *read_checks;
  struct tec_mem_scope *mem_scope; /* the memory of this lowering (tec_lower_free) */
} lower_func;

/* Called after every pass that turns a program into a program (the ones TEC_DUMP_IR shows):
 * f is the function being lowered (its body is not set yet: the program is `body`). */
typedef void (*tec_lower_observer)(void *user, const lower_func *f, const char *pass,
                                   const ir_stmt *body);
typedef struct tec_lower_options {
  const char *stop_after;      /* a pass name (tec_lower_pass_name): stop after it; NULL: all */
  tec_lower_observer observe;  /* NULL: none */
  void *user;                  /* for observe; must outlive tec_build of the function */
  int verify;                  /* 1: the IR verifier (lower/verify.c) runs after every pass;
                                * also on with TEC_VERIFY_IR=1 and in builds without NDEBUG */
  int check_bounds;            /* 1: every load and store checked at run time against its
                                * buffer (lower/bound_checkers.c, TVM's instrument_bound_
                                * checkers): an access outside returns -1 with a message naming
                                * the buffer, the flat index and the extent. Off by default
                                * (it costs time); also on with TEC_CHECK_BOUNDS=1. tec_build
                                * and tec_emit apply it (JIT and AOT alike). */
  int no_storage_folding;      /* 1: a store_at buffer keeps every row of its sliding window's
                                * dimension instead of a power of two of them (schedule.h,
                                * sch_store_at) */
} tec_lower_options;

/* tec_lower with options (opt may be NULL). With stop_after, the function's body is the
 * program after that pass (for tests and for reading), and tec_build refuses it. */
lower_func *tec_lower_with(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args,
                           const tec_lower_options *opt);
/* The pipeline's passes in order, those of tec_lower then those tec_build/tec_emit run per
 * function for the target (i from 0; NULL past the end); *ir (may be NULL) receives 1 for a
 * pass from program to program (dumped, observed, verified, a legal stop_after). */
const char *tec_lower_pass_name(int i, int *ir, int *at_build);

/* Lowers schedule s into a function taking args (every placeholder reachable from the
 * schedule's outputs, and the outputs, must be among them). NULL with an error in the ctx.
 * s is only read: lowering it again gives the same function, and primitives may be applied
 * to it afterwards. */
lower_func *tec_lower(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args);
/* The same with the arguments listed: TEC_LOWER(s, "mm", A, B, C). */
#define TEC_LOWER(s, name, ...)                                                           \
  tec_lower((s), (name), (int)(sizeof((te_tensor *[]){__VA_ARGS__}) / sizeof(te_tensor *)), \
            (te_tensor *const[]){__VA_ARGS__})

/* Gives back the memory of f (and of its prepare half): everything tec_lower made for it.
 * f must not be used afterwards, nor freed while a module built from it is in use (the
 * module's prepare/run calls read it). Without this call the ctx frees it. NULL: no-op. */
void tec_lower_free(lower_func *f);

/* The lowered function as text: a signature line (an argument with a margin followed by
 * `margin[before+after, ...]` per dimension), then the body. Arena string. */
const char *tec_lower_str(const lower_func *f);
void tec_lower_print(FILE *out, const lower_func *f);

/* How much code a lowered function is (its prepare half included), as code generation sees
 * it after unrolling and partitioning (lower/program_size.c): LLVM's time grows faster than
 * the largest straight-line stretch, so templates cap it in their spaces (topi_unroll_ok,
 * docs/tuning.md) and tests bound a program's size with it. */
typedef struct tec_program_size {
  int64_t nodes;         /* expression and statement nodes, every use of a shared one counted */
  int64_t stores;        /* store statements */
  int64_t unrolled_body; /* the most stores in one loop body (or the top level) outside the
                          * loops nested in it, the longer arm of an if: what unrolling
                          * multiplies */
} tec_program_size;
tec_program_size tec_lower_program_size(const lower_func *f);

#endif
