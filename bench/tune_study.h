/* tune_study.h — what bench/tune_study.c (the runs) and bench/tune_study_report.c (the table)
 * share: one CSV row per (layer run, tuner), the CSV's columns, reading and writing rows. */
#ifndef TEC_BENCH_TUNE_STUDY_H
#define TEC_BENCH_TUNE_STUDY_H

#include <stdio.h>
#include "tec/tune.h"

#define STUDY_COLUMNS                                                                          \
  "run,cpu,load_start,load_end,threads,seed,layer,same_as,template,workload,space,mflops,"    \
  "tuner,trials,best_gflops,best_trial,pct_of_ref,trials_to_95,seconds,errors,default_gflops," \
  "note,remeasured_gflops,pct_remeasured"

/* One tuner's run on one layer. The reference (tuner "reference": random search of --trials)
 * has pct_of_ref 100 and trials_to_95 against its own best. */
typedef struct study_row {
  char run[32];           /* the layer run's start (UTC, ISO 8601): groups its rows */
  char cpu[160];          /* the CPU model and online CPUs */
  double load_start, load_end; /* 1-minute load average before / after the layer */
  int threads;
  unsigned seed;
  char layer[32];         /* the first layer of the workload ("dw7") */
  char same_as[160];      /* the other layers of the same workload ("dw8 dw9 dw10 dw11") */
  char tmpl[32];
  char workload[640];     /* the template's problem, `tec tune --shape` text */
  long long space;        /* configs in the space */
  double mflops;          /* per call */
  char tuner[16];         /* "reference", "random", "anneal", "xgb" */
  int trials;             /* trials run */
  double best_gflops;     /* 0: no trial ran correctly */
  int best_trial;         /* 1-based */
  double pct_of_ref;      /* best_gflops / the reference's, in % */
  int trials_to_95;       /* first trial whose best-so-far is >= 95 % of the reference; 0: none */
  double seconds;         /* wall clock of the tuner's run (task, reference output, trials); a
                             reference loaded from an earlier study (--reference): that run's */
  int errors;             /* trials that failed (build, run, wrong, time-out) */
  double default_gflops;  /* trial 1: the template's default config */
  char note[160];
  /* The reference's 8 and each tuner's 2 fastest confirmed configs measured again after the
   * layer's runs, side by side (tune_compare: 16 rounds timing each in turn, the median of each
   * config's rounds; before 2026-12-04: 3 each, 5 rounds of grid runs); the run's speed: the
   * fastest of its own. The best of many noisy trials is an optimistic measurement, the more
   * trials the more so (the reference's 1000 against a tuner's 64). 0 in rows written before
   * these columns. */
  double remeasured_gflops;
  double pct_remeasured;  /* remeasured_gflops / the reference's, in % */
} study_row;

/* The note of a reference loaded from an earlier study (tune_study --reference), followed by
 * "DIR0 (run TIME)": not searched in its layer run; the report lists these layers. */
#define STUDY_REF_LOADED "reference loaded from "

/* The trials a run of `requested` makes in a space of `space` configs (tune stops there). */
static inline int study_trials(int requested, long long space) {
  return space > 0 && space < requested ? (int)space : requested;
}

/* Appends row as one CSV line (the header first when the file is new). 0, or -1 (errno). */
int study_row_append(const char *path, const study_row *r);
/* Every row of the CSV (malloc'd, *n rows); lines that do not parse are reported on stderr
 * and skipped. 0 with *n = 0 when the file does not exist; -1 if it cannot be read. */
int study_rows_load(const char *path, study_row **rows, int *n);

/* What the table is made of: the rows of these settings, newest run per layer. */
typedef struct study_filter {
  int ref_trials, tuner_trials, threads;
  unsigned seed;
  int nlayers;
  const char *const *layers; /* the network's unique workloads' first layers, in order */
} study_filter;

/* The markdown report (the table, the per-tuner summary, the machines) from the CSV at
 * csv_path, written to out. Returns the number of layers in the table. */
int study_report(FILE *out, const study_row *rows, int n, const study_filter *f, const char *csv_path);

/* A task whose config i (of a one-knob space named knob, n values, in ctx) lowers base's config
 * idx[i] (idx and base outlive it; user holds them): the re-measurement's task (tune_study.c),
 * and --noise's with every idx[i] the default (tune_noise.c). 0, or -1 with the error in ctx. */
typedef struct study_pick {
  const tune_task *base;
  const int64_t *idx;
} study_pick;
int study_pick_task(tec_ctx *ctx, const char *knob, const tune_task *base, const int64_t *idx, int n,
                    study_pick *user, tune_task *out);

/* tune_noise.c: the default config of one layer measured n times in one tune run, with and
 * without compiling beside it (tune-study --noise N); a line of spread each. */
typedef struct study_noise_opts {
  int n, repeats;
  double min_repeat_ms, timeout;
} study_noise_opts;
int study_noise(const char *name, const char *tmpl, const void *problem, const char *shape,
                const study_noise_opts *no);

#endif
