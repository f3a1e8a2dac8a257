/* difftest.h — the differential schedule tester: random primitive sequences on a set of small
 * programs, each result compared with the unscheduled program.
 *
 *   dt_options o = {.seed = 1, .count = 500};
 *   dt_report r;
 *   dt_run(&o, &r);            // 0: no failures; 1: failures (reproducers went to o.log)
 *
 * A case builds one program in a fresh tec_ctx, draws 1..max_prims primitives — valid ones and
 * deliberately risky ones (stale or foreign axes, factors 0..extent+3, every integer argument
 * now and then an extreme: 0, 1, extent +- 1, 2^31 +- 1, 2^62, INT64_MAX, negatives;
 * non-adjacent fuse, compute_at anywhere, inline of reductions and outputs, caches in odd places, nested
 * parallel, vectorize of symbolic extents, pragmas) — then lowers, builds and runs it. The
 * contract it checks:
 *   - a primitive returns 0, or -1 (NULL for the caches) with a non-empty tec_ctx_error;
 *   - tec_lower + tec_build succeed, or fail with a non-empty message ("refused");
 *   - a built function returns 0 (or fails to allocate 2^32 bytes or more a schedule asked
 *     for, storage_align(i, 2^31, 0): a refusal at run time, with its message), writes every
 *     output element and nothing outside its buffers, leaves its inputs alone, and matches the reference (relative 1e-4);
 *   - no hang: lower + build within 10 s of the calling thread's CPU time (time blocked or
 *     asleep is not counted), a call within 10x the unscheduled program's + 1 s of wall time;
 *     with isolate, a whole case within 30 s of wall time (what never returns is stopped
 *     there; without isolate nothing stops it).
 * Anything else is a failure, printed as readable C calls that replay it (see
 * dt_instance_new). The reference is the unscheduled program built through tec, itself checked
 * once against plain C loops (difftest/dt_programs.c).
 *
 * Cases are numbered; case k of seed s is the same schedule on every run, so
 * `tec-difftest --seed s --case k` replays one.
 */
#ifndef TEC_DIFFTEST_H
#define TEC_DIFFTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tec/build.h"

/* The programs. Shapes are small (a case must run in milliseconds); each has a few variants
 * (shapes, a symbolic size, sum or max). */
typedef enum dt_program {
  DT_MATMUL,    /* C[i, j] = sum over k of A[i, k] * B[k, j] */
  DT_CONV2D,    /* pad = select(in bounds, data, 0); out = sum over rc, ry, rx of pad * kernel */
  DT_DEPTHWISE, /* dw[c, h, w] = sum over ry, rx of data[c, h+ry, w+rx] * kernel[c, ry, rx];
                   out = dw + bias[c] */
  DT_ELEMWISE,  /* B = 2A, C = exp(B)/2, D = relu(C - 1), E = D + A: a chain made for inlining */
  DT_REDUCE,    /* R[i, j] = sum (or max) over a 3x2 window of A: made for cache_write */
  DT_PRODCONS,  /* B = A*A + 1; C[i, j] = B[i, j] + 2 B[i+1, j+1] + B[i+2, j]: for compute_at */
  DT_EXTERN,    /* B = A*A + 1; E[i, j] = B[i, j] + B[i+1, j] by a C function (te_extern, rows
                   [m, m + e + 1) of B per region); C = 2E + B[i+1, j]: scheduled around an
                   extern stage (variant 0 not thread-safe, so parallel loops around it are
                   refused; variant 1 thread-safe) */
  DT_SCAN,      /* a recurrence (te_scan) along rows: Y[0] = A[0]; variant 0 per element,
                   Y[t, x] = Y[t-1, x]/2 + A[t, x]; variant 1 through a matmul stage of the
                   update, Y[t, x] = sum_k Y[t-1, k] W[k, x]/4 + A[t, x] */
  DT_NPROGRAMS
} dt_program;

const char *dt_program_name(dt_program p);
/* The program called name ("matmul", "conv2d", ...), or -1. */
int dt_program_by_name(const char *name);
int dt_program_variants(dt_program p);

/* One program built in a ctx, with its schedule (unscheduled until you call primitives). */
typedef struct dt_instance {
  tec_ctx *ctx;
  dt_program program;
  int variant;
  sch_schedule *sched;
  int nargs;                 /* inputs, then the output */
  te_tensor *args[8];
  int ndim[8];
  int64_t shape[8][4];       /* concrete shapes of args (symbolic sizes bound to these) */
  const char *target;        /* tec_build's target (NULL: the host at -O3) */
} dt_instance;

/* Builds program p (variant v) in ctx. NULL with an error in ctx if v is out of range. */
dt_instance *dt_instance_new(tec_ctx *ctx, dt_program p, int variant);
/* The tensor of the instance's schedule called name ("pad", "C.local", ...), or NULL. */
te_tensor *dt_instance_tensor(dt_instance *in, const char *name);
/* Lowers, builds and runs the instance's schedule on fixed random inputs and compares with
 * plain C loops. 0: matches; 1: refused by lower/build (msg holds the error); 2: failure (msg
 * says what). msg may be NULL. This is what a printed reproducer ends with. */
int dt_instance_check(dt_instance *in, char *msg, size_t cap);

/* Largest relative error |got - want| / max(1, |want|) over n floats; NaN on either side
 * counts as infinite unless both are NaN. *at receives the index of the worst element. */
double dt_compare(const float *got, const float *want, int64_t n, int64_t *at);

typedef struct dt_options {
  uint64_t seed;
  int count;          /* cases to run (<= 0: 100) */
  int first_case;     /* run cases first_case .. first_case + count - 1 */
  unsigned programs;  /* bit (1u << p) for each program to draw from; 0: all */
  int max_prims;      /* 1..max_prims primitives a case (<= 0: 8; at most 16) */
  int verbose;        /* 1: a line per case; 2: also every case's schedule */
  int stop_on_fail;   /* stop at the first failure */
  FILE *log;          /* reports and reproducers (NULL: stderr) */
  int isolate;        /* run each case in a child process: a crash or a hang becomes a failure
                         with its schedule instead of ending the run */
  int jobs;           /* with isolate: cases run at once (<= 1: one at a time) */
  int minimize;       /* drop primitives from a failing schedule while it still fails the same
                         way, and print the shortest one */
  int inject_fault;   /* self-test: perturb one element of every reference, so every case that
                         builds must be reported as a failure */
  const char *target;  /* tec_build's target for every case (NULL: the host at -O3); "llvm -O0"
                          builds several times faster (tec-difftest --fast-build) and tests
                          the same lowering, with LLVM's fast instruction selection */
  const char *const *known_issues; /* NULL-terminated substrings: a failure whose message
                         contains one is a reported bug still open; it is counted as known,
                         not as a failure (still printed with its reproducer) */
} dt_options;

typedef struct dt_report {
  int cases;
  int ok;                 /* every primitive accepted; built; matched */
  int refused_primitive;  /* some primitive refused (with a message); the rest built, matched */
  int refused_build;      /* tec_lower or tec_build refused (with a message) */
  int failures;           /* wrong numbers, crashes, hangs, errors without a message, ... */
  int known;              /* failures matching opt->known_issues (not in failures) */
  long prims;             /* primitives called */
  long prims_refused;     /* ... and refused */
  int per_program[DT_NPROGRAMS][4]; /* ok, refused_primitive, refused_build, failures */
} dt_report;

/* Runs the cases. 0: no failures; 1: failures (each reported to opt->log); -1: bad options. */
int dt_run(const dt_options *opt, dt_report *out);
/* Prints a report's counts (one paragraph). */
void dt_report_print(FILE *f, const dt_report *r);

#endif
