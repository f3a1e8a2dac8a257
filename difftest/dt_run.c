/* dt_run.c — the driver: references once per program variant, then the numbered cases
 * (in a child process each when asked, so a crash or a hang is reported with its schedule),
 * shrinking of failing schedules, and the report.
 *
 * The reference of a program variant is the unscheduled program built through tec, checked
 * against the plain C loops of dt_programs.c; if the two disagree that is a failure of its
 * own and the plain C result becomes the reference. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tec/tec.h"
#include "difftest/dt_internal.h"

#define DT_TEXT_CAP (64 * 1024)
#ifndef DT_TIMEOUT_S
/* a case takes milliseconds; the hang rule (dt_internal.h) fails one after 10 s of build CPU
 * or a slow call, measured when they return; this wall-clock alarm in the child stops one
 * that never returns or blocks (which the build's CPU clock does not see) */
#define DT_TIMEOUT_S 30
#endif

/* What a case leaves behind (in shared memory when it ran in a child). */
typedef struct dt_slot {
  dt_result res;
  char text[DT_TEXT_CAP];
} dt_slot;

typedef struct dt_refs {
  float *ref[DT_NPROGRAMS][4];
  int64_t n[DT_NPROGRAMS][4];
  double run_s[DT_NPROGRAMS][4]; /* a call of the unscheduled program */
} dt_refs;

/* the hang rule's limit on a call, per program and variant (dt_run_limit_s) */
static double run_limit[DT_NPROGRAMS][4];

static int reference(const dt_options *opt, FILE *log, dt_refs *refs, dt_program p, int v,
                     dt_report *rep) {
  if (refs->ref[p][v]) return 0;
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *in = dt_instance_new(ctx, p, v);
  if (!in) {
    fprintf(log, "difftest: cannot build %s variant %d: %s\n", dt_program_name(p), v,
            tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return -1;
  }
  in->target = opt->target;
  int out = in->nargs - 1;
  int64_t n = dt_numel(in, out);
  const float *x[8];
  float *buf[8] = {0}, *plain = malloc(sizeof(float) * (size_t)n);
  float *got = malloc(sizeof(float) * (size_t)n);
  for (int k = 0; k < out; k++) {
    buf[k] = malloc(sizeof(float) * (size_t)dt_numel(in, k));
    dt_fill_input(buf[k], dt_numel(in, k), p, v, k);
    x[k] = buf[k];
  }
  dt_programs[p].reference(v, x, plain);
  dt_result res;
  memset(&res, 0, sizeof res);
  dt_case_reference(in, plain, got, &res);
  if (res.outcome != DT_OK) {
    fprintf(log, "FAIL reference: the unscheduled %s (variant %d) %s: %s%s%s\n",
            dt_program_name(p), v, res.outcome == DT_REFUSED_BUILD ? "does not build" : "fails",
            res.fail_class, *res.fail_class ? ": " : "", res.msg);
    rep->failures++;
    memcpy(got, plain, sizeof(float) * (size_t)n);
  }
  if (opt->inject_fault) got[n / 2] += 0.5f + got[n / 2];
  for (int k = 0; k < out; k++) free(buf[k]);
  free(plain);
  refs->ref[p][v] = got;
  refs->n[p][v] = n;
  refs->run_s[p][v] = res.run_s;
  run_limit[p][v] = 10 * res.run_s + 1;
  tec_ctx_free(ctx);
  return 0;
}

static int max_prims(const dt_options *opt) {
  int m = opt->max_prims > 0 ? opt->max_prims : 8;
  return m < DT_MAX_PRIMS ? m : DT_MAX_PRIMS;
}

static void case_in_process(const dt_options *opt, dt_program p, int v, uint64_t caseno,
                            const dt_prim *prims, int nprims, const float *ref, dt_slot *slot) {
  memset(&slot->res, 0, sizeof slot->res);
  slot->text[0] = 0;
  dt_text text = {slot->text, 0, sizeof slot->text};
  dt_run_limit_s = run_limit[p][v];
  dt_rng r = dt_rng_make(opt->seed, caseno);
  dt_rng_next(&r); /* the program's variant was the first draw */
  dt_case_run(p, v, opt->target, &r, max_prims(opt), prims, nprims, ref, &text, &slot->res);
}

/* Starts a case in a child process writing into slot (shared memory): its pid, or -1. */
static pid_t case_start(const dt_options *opt, dt_program p, int v, uint64_t caseno,
                        const dt_prim *prims, int nprims, const float *ref, dt_slot *slot) {
  memset(&slot->res, 0, sizeof slot->res);
  slot->text[0] = 0;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(DT_TIMEOUT_S);
    case_in_process(opt, p, v, caseno, prims, nprims, ref, slot);
    _exit(0);
  }
  return pid;
}

/* Reads how the child of a slot ended: a signal or an exit status is a failure. */
static void case_finish(dt_slot *slot, int status, int started) {
  slot->text[DT_TEXT_CAP - 1] = 0; /* a crash stops mid-line: the text is what came before */
  if (started && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  dt_result *res = &slot->res;
  res->outcome = DT_FAIL;
  if (!started) {
    snprintf(res->fail_class, sizeof res->fail_class, "harness");
    snprintf(res->msg, sizeof res->msg, "fork failed");
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    snprintf(res->fail_class, sizeof res->fail_class, "hang");
    snprintf(res->msg, sizeof res->msg, "no result after %d s", DT_TIMEOUT_S);
  } else if (WIFSIGNALED(status)) {
    snprintf(res->fail_class, sizeof res->fail_class, "crash");
    snprintf(res->msg, sizeof res->msg, "killed by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  } else {
    snprintf(res->fail_class, sizeof res->fail_class, "crash");
    snprintf(res->msg, sizeof res->msg, "exited with status %d (an abort or a sanitizer "
             "report: see above)", WEXITSTATUS(status));
  }
}

/* Runs a case to the end, in a child if isolate; the result and the reproducer land in slot. */
static void run_case(const dt_options *opt, dt_program p, int v, uint64_t caseno,
                     const dt_prim *prims, int nprims, const float *ref, dt_slot *slot) {
  if (!opt->isolate) {
    case_in_process(opt, p, v, caseno, prims, nprims, ref, slot);
    return;
  }
  pid_t pid = case_start(opt, p, v, caseno, prims, nprims, ref, slot);
  int status = 0;
  int started = pid > 0 && waitpid(pid, &status, 0) == pid;
  case_finish(slot, status, started);
}

/* Drops primitives while the case still fails the same way. */
static void shrink(const dt_options *opt, dt_program p, int v, uint64_t caseno, const float *ref,
                   dt_slot *slot, dt_slot *scratch) {
  dt_prim cur[DT_MAX_PRIMS];
  int n = slot->res.nprims;
  memcpy(cur, slot->res.prims, sizeof cur[0] * (size_t)n);
  char cls[64];
  snprintf(cls, sizeof cls, "%s", slot->res.fail_class);
  for (int changed = 1, tries = 0; changed && tries < 200;) {
    changed = 0;
    for (int i = 0; i < n && tries < 200; i++, tries++) {
      dt_prim t[DT_MAX_PRIMS];
      int m = 0;
      for (int k = 0; k < n; k++)
        if (k != i) t[m++] = cur[k];
      run_case(opt, p, v, caseno, t, m, ref, scratch);
      if (scratch->res.outcome == DT_FAIL && strcmp(scratch->res.fail_class, cls) == 0) {
        memcpy(cur, t, sizeof t[0] * (size_t)m);
        n = m;
        memcpy(slot, scratch, sizeof *slot);
        changed = 1;
        break;
      }
    }
  }
}

static const char *outcome_name(dt_outcome o) {
  static const char *const names[] = {"ok", "refused at a primitive", "refused at lower/build",
                                      "FAIL"};
  return names[o];
}

void dt_report_print(FILE *f, const dt_report *r) {
  fprintf(f, "difftest: %d cases: %d ok, %d refused at a primitive, %d refused at lower/build, "
             "%d failures, %d known open bugs (%ld primitives called, %ld refused)\n",
          r->cases, r->ok, r->refused_primitive, r->refused_build, r->failures, r->known,
          r->prims, r->prims_refused);
  for (int p = 0; p < DT_NPROGRAMS; p++) {
    const int *c = r->per_program[p];
    if (c[0] + c[1] + c[2] + c[3])
      fprintf(f, "  %-10s %5d ok  %5d refused-prim  %5d refused-build  %5d failures\n",
              dt_program_name((dt_program)p), c[0], c[1], c[2], c[3]);
  }
}

int dt_run(const dt_options *opt, dt_report *out) {
  dt_report rep;
  memset(&rep, 0, sizeof rep);
  if (out) *out = rep;
  if (!opt) return -1;
  FILE *log = opt->log ? opt->log : stderr;
  unsigned mask = opt->programs ? opt->programs : (1u << DT_NPROGRAMS) - 1;
  dt_program progs[DT_NPROGRAMS];
  int nprog = 0;
  for (int p = 0; p < DT_NPROGRAMS; p++)
    if (mask & (1u << p)) progs[nprog++] = (dt_program)p;
  if (!nprog || (mask >> DT_NPROGRAMS)) {
    fprintf(log, "difftest: no such program in mask 0x%x\n", mask);
    return -1;
  }
  int count = opt->count > 0 ? opt->count : 100;
  int jobs = opt->isolate && opt->jobs > 1 ? (opt->jobs < 64 ? opt->jobs : 64) : 1;
  size_t map = (size_t)(jobs + 1) * sizeof(dt_slot);
  dt_slot *slot = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (slot == MAP_FAILED) return -1;
  dt_slot *scratch = slot + jobs;
  struct { pid_t pid; uint64_t caseno; dt_program p; int v, slot; } run[64];
  int busy[64] = {0};
  int nrun = 0, next = 0, rc = 0, stop = 0;
  dt_refs refs;
  memset(&refs, 0, sizeof refs);
  while ((next < count && !stop) || nrun > 0) {
    /* start cases while a slot is free */
    while (next < count && !stop && nrun < jobs) {
      uint64_t caseno = (uint64_t)opt->first_case + (uint64_t)next++;
      dt_program p = progs[caseno % (uint64_t)nprog];
      dt_rng r = dt_rng_make(opt->seed, caseno);
      int v = (int)(dt_rng_next(&r) % (uint64_t)dt_programs[p].nvariants);
      if (reference(opt, log, &refs, p, v, &rep)) {
        rc = -1, stop = 1;
        break;
      }
      int k = nrun, free_slot = 0;
      while (busy[free_slot]) free_slot++;
      busy[free_slot] = 1;
      run[k].caseno = caseno, run[k].p = p, run[k].v = v, run[k].slot = free_slot;
      dt_slot *sl = &slot[free_slot];
      if (jobs == 1) {
        run_case(opt, p, v, caseno, NULL, 0, refs.ref[p][v], sl);
        run[k].pid = 0;
      } else {
        run[k].pid = case_start(opt, p, v, caseno, NULL, 0, refs.ref[p][v], sl);
        if (run[k].pid < 0) case_finish(sl, 0, 0);
      }
      nrun++;
      if (jobs == 1) break;
    }
    if (nrun == 0) break;
    /* the next finished case */
    int k = 0;
    if (jobs > 1) {
      int status = 0;
      pid_t pid = -1;
      for (k = 0; k < nrun; k++)
        if (run[k].pid < 0) break; /* never started */
      if (k == nrun) {
        pid = wait(&status);
        for (k = 0; k < nrun && run[k].pid != pid; k++) {}
        if (k == nrun) continue;
        case_finish(&slot[run[k].slot], status, 1);
      }
    }
    dt_slot *done = &slot[run[k].slot];
    dt_program p = run[k].p;
    int v = run[k].v;
    uint64_t caseno = run[k].caseno;
    dt_result *res = &done->res;
    rep.cases++;
    rep.prims += res->calls;
    rep.prims_refused += res->refused;
    rep.per_program[p][res->outcome]++;
    int known = 0;
    for (int i = 0; res->outcome == DT_FAIL && opt->known_issues && opt->known_issues[i]; i++)
      known |= strstr(res->msg, opt->known_issues[i]) != NULL;
    switch (res->outcome) {
    case DT_OK: rep.ok++; break;
    case DT_REFUSED_PRIM: rep.refused_primitive++; break;
    case DT_REFUSED_BUILD: rep.refused_build++; break;
    case DT_FAIL: known ? rep.known++ : rep.failures++; break;
    }
    if (opt->verbose)
      fprintf(log, "case %llu %s/%d: %s%s%s\n", (unsigned long long)caseno, dt_program_name(p), v,
              outcome_name(res->outcome), res->outcome == DT_REFUSED_BUILD ? ": " : "",
              res->outcome == DT_REFUSED_BUILD ? res->msg : "");
    if (opt->verbose >= 2 && res->outcome != DT_FAIL) fprintf(log, "%s\n", done->text);
    if (res->outcome == DT_FAIL) {
      int before = res->nprims;
      if (opt->minimize && !opt->inject_fault)
        shrink(opt, p, v, caseno, refs.ref[p][v], done, scratch);
      fprintf(log, "%s seed %llu case %llu (%s variant %d): %s: %s\n",
              known ? "KNOWN" : "FAIL", (unsigned long long)opt->seed, (unsigned long long)caseno, dt_program_name(p), v,
              res->fail_class, res->msg);
      if (res->nprims != before)
        fprintf(log, "(shrunk from %d to %d primitives)\n", before, res->nprims);
      fprintf(log, "%s\n", done->text);
      if (opt->stop_on_fail && !known) stop = 1;
    }
    /* free the slot; keep running entries packed */
    busy[run[k].slot] = 0;
    run[k] = run[--nrun];
  }
  for (int p = 0; p < DT_NPROGRAMS; p++)
    for (int v = 0; v < 4; v++) free(refs.ref[p][v]);
  munmap(slot, map);
  if (out) *out = rep;
  return rc ? rc : rep.failures ? 1 : 0;
}
