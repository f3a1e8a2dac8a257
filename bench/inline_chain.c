/* inline_chain.c — compile time and memory of a deep compute_inline chain (issue #38 item 3):
 * every layer reads its producer at two different elements, one at a squared index kept in
 * range by a mod,
 *
 *   B0[i] = A[i] * 0.5;   Bk[i] = (B(k-1)[i] + B(k-1)[(i*i) % n]) * 0.5   (k = 1..layers)
 *
 * every Bk but the last inlined. Copying bodies makes a tree of 2^layers reads whose indices
 * double in size per layer; the target is a 100-layer chain lowered and built in < 2 s and
 * < 200 MB.
 *
 *   inline_chain [n=64] [opt=-O3|-O0] [layers...]     (default layers: 8 9 20 50 100)
 *
 * Each chain runs in a forked child (peak RSS is the child's own, getrusage(RUSAGE_SELF)) and
 * prints one line: layers, CPU seconds (user + system) to lower and to build (JIT, the given
 * -O level), the same in wall time, peak RSS in MB, the lowered program's size in IR nodes
 * (tec_lower_program_size: a shared node counts at every use, what codegen walks) and whether the output matched plain C (a child that ran
 * over 600 s is killed). One thread: CPU time is the figure to compare on a loaded machine. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"
#include "tec/tec.h"

static int64_t chain_n = 64;

static const ir_expr *first(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 0.5));
}
static const ir_expr *next(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *p = u;
  const ir_expr *sq = ir_mod(ir_mul(i[0], i[0]), ir_int(ctx, chain_n));
  return ir_mul(ir_add(TE_AT(p, i[0]), TE_AT(p, sq)), ir_float(ctx, 0.5));
}

/* wall seconds; CPU seconds of this process (every thread), less disturbed than wall time by
 * the other processes of a loaded machine */
static double now(void) { return bench_now(CLOCK_MONOTONIC); }
static double cpu(void) { return bench_now(CLOCK_PROCESS_CPUTIME_ID); }

/* tree size of the program (every use of a shared node counted) */
static long long nodes;
static void count_e(ir_visitor *v, const ir_expr *e) { nodes++, ir_visit_expr_default(v, e); }
static void count_s(ir_visitor *v, const ir_stmt *s) { nodes++, ir_visit_stmt_default(v, s); }

static int run_chain(int layers, const char *opt) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, chain_n));
  te_tensor **all = tec_ctx_alloc(ctx, sizeof *all * (size_t)(layers + 1));
  all[0] = te_compute(ctx, &(te_compute_decl){.name = "B0", .ndim = 1, .shape = A->shape,
                                              .body = first, .user = A});
  for (int k = 1; k <= layers; k++)
    all[k] = te_compute(ctx, &(te_compute_decl){.name = tec_ctx_printf(ctx, "B%d", k),
                                                .ndim = 1, .shape = A->shape, .body = next,
                                                .user = all[k - 1]});
  double t0 = now(), c0 = cpu();
  sch_schedule *s = sch_create(ctx, 1, &all[layers]);
  for (int k = 0; k < layers; k++)
    if (sch_compute_inline(sch_stage_of(s, all[k]))) goto fail;
  lower_func *f = tec_lower(s, "chain", 2, (te_tensor *[]){A, all[layers]});
  if (!f) goto fail;
  double t1 = now(), c1 = cpu();
  tec_module *m = tec_build(ctx, 1, &f, opt);
  if (!m) goto fail;
  double t2 = now(), c2 = cpu();
  ir_visitor v;
  ir_visitor_init(&v, NULL);
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) v.expr[k] = count_e;
  for (int k = 0; k < IR_STMT_KIND_COUNT; k++) v.stmt[k] = count_s;
  ir_visit_stmt(&v, f->body);
  /* the numbers against plain C */
  DLTensor a, b;
  if (tec_dl_alloc(&a, TEC_F32, 1, &chain_n) || tec_dl_alloc(&b, TEC_F32, 1, &chain_n)) goto fail;
  double *cur = malloc(sizeof *cur * (size_t)chain_n), *nx = malloc(sizeof *nx * (size_t)chain_n);
  for (int64_t i = 0; i < chain_n; i++)
    ((float *)a.data)[i] = (float)((i * 37) % 11) / 11.0f, cur[i] = ((float *)a.data)[i] * 0.5;
  if (tec_module_run(m, "chain", 2, (DLTensor *[]){&a, &b})) goto fail;
  for (int k = 1; k <= layers; k++) {
    for (int64_t i = 0; i < chain_n; i++) nx[i] = (cur[i] + cur[(i * i) % chain_n]) * 0.5;
    memcpy(cur, nx, sizeof *cur * (size_t)chain_n);
  }
  int ok = 1;
  for (int64_t i = 0; i < chain_n; i++)
    ok &= fabs(((float *)b.data)[i] - cur[i]) <= 1e-4 * (1 + fabs(cur[i]));
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%6d %8.3f %8.3f %8.3f %8.3f %8.1f %10lld %s\n", layers, c1 - c0, c2 - c1, t1 - t0,
         t2 - t1, (double)ru.ru_maxrss / 1024, nodes, ok ? "ok" : "WRONG");
  fflush(stdout);
  return ok ? 0 : 1;
fail:
  printf("%6d failed: %s\n", layers, tec_ctx_error(ctx));
  return 1;
}

int main(int argc, char **argv) {
  int a = 1;
  if (a < argc && atoll(argv[a]) > 0 && strchr(argv[a], '-') == NULL && a + 1 < argc &&
      argv[a + 1][0] == '-')
    chain_n = atoll(argv[a++]);
  const char *opt = "llvm -O3";
  if (a < argc && argv[a][0] == '-') opt = strcmp(argv[a++], "-O0") == 0 ? "llvm -O0" : "llvm -O3";
  int deflt[] = {8, 9, 20, 50, 100}, nl = argc - a;
  printf("# inline chain, n %lld, %s: layers, lower and build CPU s, lower and build wall s, "
         "peak RSS MB, IR nodes, check\n",
         (long long)chain_n, opt);
  fflush(stdout);
  int rc = 0;
  for (int k = 0; k < (nl ? nl : 5); k++) {
    int layers = nl ? atoi(argv[a + k]) : deflt[k];
    pid_t pid = fork();
    if (pid == 0) {
      alarm(600);
      _exit(run_chain(layers, opt));
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) return 1;
    if (WIFSIGNALED(st)) printf("%6d killed by signal %d\n", layers, WTERMSIG(st)), rc = 1;
    else rc |= WEXITSTATUS(st);
  }
  return rc;
}
