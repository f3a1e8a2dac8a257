/* auto.h — `bench/run auto`: the programs of issue #36 item 6, declared once in tec
 * (auto_progs.c) and once in Halide (halide_progs.cpp), and the C interface of the Halide side
 * (halide_auto.cpp) that bench/auto.c calls.
 *
 * Layout contract shared by both sides: every tensor is a dense row-major fp32 array, the last
 * dimension unit-stride. tec's shape [d0][d1]...[dn-1] is Halide's (x = dn-1, ..., d0): the
 * Halide side wraps the same memory with the dimensions reversed. Inputs that a stencil reads
 * beyond the output are pre-padded (the Halide apps' boundary conditions are not part of
 * these programs), so both sides compute the same affine reads of the same buffers. */
#ifndef TEC_BENCH_AUTO_H
#define TEC_BENCH_AUTO_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the tec side (auto_progs.c) ---- */
#ifndef __cplusplus
#include "tec/tec.h"
typedef struct auto_prog {
  const char *title;      /* "GEMM 1024" */
  int nargs;              /* inputs, then the output (last) */
  te_tensor *args[6];
  const char *tmpl;       /* a topi template computing the same thing (own layouts), or NULL */
  const void *problem;    /* its problem struct */
  double flops;           /* per call (0: not counted) */
} auto_prog;
/* Declares program `name` (quick: small sizes) into p. 0, or -1 (unknown name). */
int auto_prog_declare(tec_ctx *ctx, const char *name, int quick, auto_prog *p);
/* The Halide app's expert decisions for program `name` written in tec (auto_hand.c) applied to
 * s: 0, 1 when there is none, -1 with an error. */
int auto_hand_schedule(tec_ctx *ctx, const char *name, sch_schedule *s);
/* oneDNN's operation for program `prog` on the bench's buffers (auto_dnnl.c), or NULL with
 * msg saying why (starting "oneDNN has no" when it has no such operation). */
typedef struct auto_dnnl auto_dnnl;
auto_dnnl *auto_dnnl_create(const char *prog, int nargs, DLTensor *const *args, char *msg, int n);
int auto_dnnl_run(auto_dnnl *d);
void auto_dnnl_free(auto_dnnl *d);
#endif
/* The programs, in the order the bench runs them; NULL-terminated. */
extern const char *const auto_prog_names[];

/* ---- the Halide side (halide_auto.cpp) ---- */
typedef struct hl_pipe hl_pipe;
/* 1 when the bench was built with Halide. */
int hl_available(void);
/* Program `prog` on buffers args[0..nargs) (inputs, then the output, shapes as tec's) with
 * schedule `sched`: "root" (every stage compute_root, serial: the reference), "expert" (the
 * Halide app's decisions, written anew), or an autoscheduler name ("Mullapudi2016", "Li2018",
 * "Adams2019", run for 1 thread). JIT-compiled; the output is written into args[nargs - 1].
 * NULL with a message in err when the program has no such schedule ("expert" where no app
 * has one) or Halide failed. *sched_s gets the scheduling (autoscheduler) time, *build_s the
 * JIT compile time. */
hl_pipe *hl_create(const char *prog, const char *sched, int nargs, DLTensor *const *args,
                   double *sched_s, double *build_s, char *err, int errlen);
int hl_run(hl_pipe *p, char *err, int errlen); /* 0 or -1 */
void hl_free(hl_pipe *p);

#ifdef __cplusplus
}
#endif
#endif
