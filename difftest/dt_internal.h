/* dt_internal.h — what the difftest files share: the random generator, the text buffer a
 * reproducer is written into, primitives as data (so a failing schedule can be replayed and
 * shrunk) and the state a case keeps while it applies them. Not public. */
#ifndef TEC_DT_INTERNAL_H
#define TEC_DT_INTERNAL_H

#include "tec/difftest.h"

/* ---- dt_rng.c: a small deterministic generator (splitmix64) ---- */
typedef struct dt_rng { uint64_t s; } dt_rng;
dt_rng dt_rng_make(uint64_t seed, uint64_t stream);
uint64_t dt_rng_next(dt_rng *r);
int64_t dt_rng_int(dt_rng *r, int64_t lo, int64_t hi); /* uniform in [lo, hi] */
int dt_rng_chance(dt_rng *r, int percent);               /* 1 with probability percent/100 */

/* ---- dt_text.c: an append-only text buffer of fixed capacity (may live in shared memory) */
typedef struct dt_text {
  char *buf;
  size_t len, cap; /* len < cap; buf[len] == 0 */
} dt_text;
void dt_text_printf(dt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A C identifier from a tec name: '.' and other non-identifier characters become '_'. */
void dt_ident(char *out, size_t cap, const char *name);

/* ---- programs (dt_programs.c) ---- */
typedef struct dt_program_def {
  const char *name;
  int nvariants;
  /* declares the tensors in ctx; fills in->args, ndim, shape (inputs, then the output) */
  int (*build)(dt_instance *in);
  /* plain C loops: out from the inputs, for variant v */
  void (*reference)(int v, const float *const *inputs, float *out);
} dt_program_def;
extern const dt_program_def dt_programs[DT_NPROGRAMS];
int64_t dt_numel(const dt_instance *in, int arg);
/* Deterministic input data in [-1, 1) for argument arg. */
void dt_fill_input(float *p, int64_t n, dt_program prog, int variant, int arg);

/* ---- primitives as data (dt_prim.c) ---- */
#define DT_ID 80
#define DT_MAX_PRIMS 16

/* A primitive of the schedule's list (SCH_FOR_EACH_PRIM, include/tec/schedule.h) with its
 * arguments as C identifiers of the reproducer ("s_C", "C_i_outer", "" for NULL), so a
 * primitive still means the same thing when earlier ones are dropped. dt_prim_apply fills the
 * primitive's operands from these fields in order (stage, stage2; iters; tensor; readers; a,
 * b; str; a as the value if has_value). */
typedef struct dt_prim {
  sch_prim_kind kind;
  char stage[DT_ID], stage2[DT_ID];
  int niter;
  char iters[6][DT_ID];
  int64_t a, b;
  int has_value;
  char tensor[DT_ID];
  int nreaders;
  char readers[4][DT_ID];
  char str[DT_ID];
} dt_prim;

/* What a case knows while it applies primitives: every iter it has named (live or not). */
#define DT_MAX_ITERS 256
typedef struct dt_state {
  dt_instance *in;
  dt_text *text;     /* the reproducer being written */
  int niter;
  struct { char id[DT_ID]; sch_iter *it; } iters[DT_MAX_ITERS];
  long prims, refused;
  char bad[512];     /* a broken error protocol, if a primitive broke it */
} dt_state;

/* Starts the reproducer: the instance and the declarations of its stages and axes. */
void dt_state_init(dt_state *st, dt_instance *in, dt_text *text);
sch_stage *dt_state_stage(dt_state *st, const char *id);  /* by "s_<name>", or NULL */
te_tensor *dt_state_tensor(dt_state *st, const char *id); /* by identifier, or NULL */
sch_iter *dt_state_iter(dt_state *st, const char *id);    /* by identifier, or NULL */
const char *dt_state_iter_id(dt_state *st, const sch_iter *it); /* "" if unknown */
void dt_stage_id(char *out, const sch_stage *s);
/* Extent of a loop if it is a known constant, else -1. */
int64_t dt_iter_extent(const sch_iter *it);
/* Applies p: writes the C call, calls the primitive, checks the error protocol. 0 if
 * accepted, 1 if refused with a message, -1 if the protocol broke (st->bad says how). */
int dt_prim_apply(dt_state *st, const dt_prim *p);

/* ---- dt_draw.c: a random primitive for the current state ---- */
void dt_draw(dt_state *st, dt_rng *r, dt_prim *p);

/* ---- dt_case.c: one case ---- */
typedef enum dt_outcome {
  DT_OK,               /* built and matched, every primitive accepted */
  DT_REFUSED_PRIM,     /* built and matched, some primitive refused */
  DT_REFUSED_BUILD,    /* lower/build refused with a message */
  DT_FAIL              /* anything else */
} dt_outcome;

typedef struct dt_result {
  dt_outcome outcome;
  char fail_class[64]; /* for failures: "mismatch", "crash", "no message", ... */
  char msg[1024];
  long calls, refused; /* primitives called, and refused */
  int nprims;
  dt_prim prims[DT_MAX_PRIMS];
  size_t text_len;     /* the reproducer's length in text */
  double build_s, run_s; /* lower + build, and the first call, in seconds */
} dt_result;

/* The hang rule (issue #38): lower + build over DT_BUILD_LIMIT_S seconds of the calling thread's CPU
 * time (under load the wall clock measures the other tenants; time blocked or asleep, or
 * spent on other threads, is not counted), or a call over dt_run_limit_s of wall time (10x
 * the unscheduled program's call + 1 s; set by dt_run before each case, 0: unchecked), is a
 * failure. Both are measured when the step returns: one that never returns is stopped only
 * in a child (dt_options.isolate: DT_TIMEOUT_S of wall time for the whole case, dt_run.c). */
#define DT_BUILD_LIMIT_S 10.0
extern double dt_run_limit_s;

/* Runs one case on instance program/variant: draws primitives from r (if prims is NULL) or
 * replays the given ones, then lowers, builds, runs and compares with ref (numel floats). */
void dt_case_run(dt_program prog, int variant, const char *target, dt_rng *r, int max_prims,
                 const dt_prim *prims, int nprims, const float *ref, dt_text *text,
                 dt_result *res);
/* Lowers, builds and runs in's schedule against ref; fills res->outcome/msg (not prims). */
void dt_case_exec(dt_instance *in, const float *ref, dt_result *res);
/* The same for the unscheduled instance against plain C; its output goes to got. */
void dt_case_reference(dt_instance *in, const float *plain, float *got, dt_result *res);

#endif
