/* common.h — what every bench program shares: the clock, medians, comma lists, a check. */
#ifndef TEC_BENCH_COMMON_H
#define TEC_BENCH_COMMON_H
#include <stdint.h>
#include <time.h>
#include "tec/build.h"

/* Seconds on clock c (CLOCK_MONOTONIC: wall time; CLOCK_PROCESS_CPUTIME_ID: this process's
 * CPU time). */
double bench_now(clockid_t c);
/* Sorts x[0..n) ascending in place. */
void bench_sort(double *x, int n);
/* The median of x[0..n), n >= 1 (sorts x). */
double bench_median(double *x, int n);
/* "1,2,4" into out[0..max): the count, or -1 if an item is not an integer in [lo, hi], there
 * are more than max, or the list is empty. */
int bench_parse_list(const char *s, int *out, int max, long lo, long hi);
/* max over i of |got[i] - want[i]| / (1 + |want[i]|), NaN if any is NaN: how far one
 * implementation's output is from another's. */
double bench_max_err(const float *got, const float *want, int64_t n);

/* The median of `runs` calls of function name of module m, each timed in the calling thread's
 * CPU time (one thread: the runtime runs the parallel loop on the caller, and a loaded machine
 * disturbs it less than wall time). A failing call exits with who: the runtime's error. */
double bench_module_median(tec_module *m, const char *name, int nargs, DLTensor *const *args,
                           int runs, const char *who);

/* f's user arguments allocated into args[0..f->nuser) (ap[i] = &args[i]) with small
 * deterministic values of each type (fp32, int8, int32): what a timing needs. f->nuser, or -1
 * (a symbolic shape, more than 8 dimensions, out of memory). */
struct lower_func;
int bench_args_alloc(const struct lower_func *f, DLTensor *args, DLTensor **ap);

#endif
