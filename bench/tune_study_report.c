/* tune_study_report.c — the tuning study's CSV (one row per layer run and tuner, appended by
 * bench/tune_study.c) written and read back, and the markdown report made from it: per layer
 * the newest run with the requested settings, the reference's best GFLOP/s and each tuner's
 * best-in-N as % of it, trials to 95 % and seconds side by side; then per tuner how many layers
 * met the targets (>= 95 % within its trials, under 60 s), the layers whose reference was loaded
 * from an earlier study (--reference) and the machines the rows came from. */
#include "tune_study.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void put_field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

int study_row_append(const char *path, const study_row *r) {
  FILE *probe = fopen(path, "r");
  int fresh = !probe;
  if (probe) fclose(probe);
  FILE *f = fopen(path, "a");
  if (!f) return -1;
  if (fresh) fprintf(f, "%s\n", STUDY_COLUMNS);
  char num[12][48];
  put_field(f, r->run, 0), put_field(f, r->cpu, 0);
  snprintf(num[0], sizeof num[0], "%.2f", r->load_start);
  snprintf(num[1], sizeof num[1], "%.2f", r->load_end);
  snprintf(num[2], sizeof num[2], "%d", r->threads);
  snprintf(num[3], sizeof num[3], "%u", r->seed);
  for (int i = 0; i < 4; i++) put_field(f, num[i], 0);
  put_field(f, r->layer, 0), put_field(f, r->same_as, 0), put_field(f, r->tmpl, 0);
  put_field(f, r->workload, 0);
  snprintf(num[0], sizeof num[0], "%lld", r->space);
  snprintf(num[1], sizeof num[1], "%.3f", r->mflops);
  put_field(f, num[0], 0), put_field(f, num[1], 0), put_field(f, r->tuner, 0);
  snprintf(num[0], sizeof num[0], "%d", r->trials);
  snprintf(num[1], sizeof num[1], "%.4f", r->best_gflops);
  snprintf(num[2], sizeof num[2], "%d", r->best_trial);
  snprintf(num[3], sizeof num[3], "%.2f", r->pct_of_ref);
  snprintf(num[4], sizeof num[4], "%d", r->trials_to_95);
  snprintf(num[5], sizeof num[5], "%.2f", r->seconds);
  snprintf(num[6], sizeof num[6], "%d", r->errors);
  snprintf(num[7], sizeof num[7], "%.4f", r->default_gflops);
  for (int i = 0; i < 8; i++) put_field(f, num[i], 0);
  put_field(f, r->note, 0);
  snprintf(num[0], sizeof num[0], "%.4f", r->remeasured_gflops);
  snprintf(num[1], sizeof num[1], "%.2f", r->pct_remeasured);
  put_field(f, num[0], 0), put_field(f, num[1], 1);
  return fclose(f) == 0 ? 0 : -1;
}

/* splits a CSV line (quotes honoured) into at most max fields in place; the count */
static int split(char *line, char **fields, int max) {
  int n = 0;
  char *r = line, *w = line;
  while (n < max) {
    fields[n++] = w;
    if (*r == '"') {
      for (r++; *r; r++) {
        if (*r == '"' && r[1] == '"') *w++ = '"', r++;
        else if (*r == '"') { r++; break; }
        else *w++ = *r;
      }
    } else {
      while (*r && *r != ',' && *r != '\n') *w++ = *r++;
    }
    if (*r != ',') break;
    *w++ = 0, r++;
  }
  *w = 0;
  return n;
}

#define COPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src))

int study_rows_load(const char *path, study_row **rows, int *n) {
  *rows = NULL, *n = 0;
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : -1;
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, have = 0;
  while (getline(&line, &cap, f) >= 0) {
    if (++lineno == 1 || line[0] == '\n') continue; /* the header */
    char *c[26];
    int nc = split(line, c, 26);
    if (nc != 22 && nc != 24) { /* 22: written before the re-measured columns */
      fprintf(stderr, "tune-study: %s:%d: skipped: not the 22 or 24 columns of %s\n", path,
              lineno, "the study's CSV");
      continue;
    }
    if (*n == have) {
      have = have ? 2 * have : 64;
      study_row *m = realloc(*rows, sizeof *m * (size_t)have);
      if (!m) break;
      *rows = m;
    }
    study_row *r = &(*rows)[(*n)++];
    memset(r, 0, sizeof *r);
    COPY(r->run, c[0]), COPY(r->cpu, c[1]);
    r->load_start = atof(c[2]), r->load_end = atof(c[3]);
    r->threads = atoi(c[4]), r->seed = (unsigned)strtoul(c[5], NULL, 10);
    COPY(r->layer, c[6]), COPY(r->same_as, c[7]), COPY(r->tmpl, c[8]), COPY(r->workload, c[9]);
    r->space = atoll(c[10]), r->mflops = atof(c[11]);
    COPY(r->tuner, c[12]);
    r->trials = atoi(c[13]), r->best_gflops = atof(c[14]), r->best_trial = atoi(c[15]);
    r->pct_of_ref = atof(c[16]), r->trials_to_95 = atoi(c[17]), r->seconds = atof(c[18]);
    r->errors = atoi(c[19]), r->default_gflops = atof(c[20]);
    COPY(r->note, c[21]);
    char *nl = strchr(r->note, '\n');
    if (nl) *nl = 0;
    if (nc == 24) r->remeasured_gflops = atof(c[22]), r->pct_remeasured = atof(c[23]);
  }
  free(line);
  fclose(f);
  return 0;
}

static const char *const TUNERS[] = {"random", "anneal", "xgb", "xgb-t"};
#define NT 4

/* the newest reference row of layer with the filter's settings, or NULL */
static const study_row *newest_ref(const study_row *rows, int n, const study_filter *f, const char *layer) {
  const study_row *best = NULL;
  for (int i = 0; i < n; i++) {
    const study_row *r = &rows[i];
    if (strcmp(r->layer, layer) || strcmp(r->tuner, "reference") || r->threads != f->threads ||
        r->seed != f->seed || r->trials != study_trials(f->ref_trials, r->space))
      continue;
    if (!best || strcmp(r->run, best->run) >= 0) best = r;
  }
  return best;
}

static const study_row *tuner_row(const study_row *rows, int n, const study_row *ref, const char *tuner) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].run, ref->run) && !strcmp(rows[i].layer, ref->layer) &&
        !strcmp(rows[i].tuner, tuner))
      return &rows[i];
  return NULL;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int study_report(FILE *out, const study_row *rows, int n, const study_filter *f, const char *csv_path) {
  fprintf(out, "# Tuning study: MobileNet v1 layers (issue #16's targets)\n\n");
  fprintf(out, "Reference: random search of %d trials; each tuner: %d trials (both: the whole space "
          "when it is smaller), seed %u, %d thread%s; "
          "from `%s` (newest run per layer with these settings). `%%`: the tuner's best as measured in "
          "its trials / as re-measured side by side after the layer's runs (tune_compare: the "
          "reference's 7 and each tuner's 2 fastest configs after their confirmation stages, and the "
          "default config, 64 rounds timing each in turn, a config's median over them; twice, every "
          "config built anew each time, a config's the mean of its two; a run's fastest), "
          "as %% of the reference's re-measured best. In the trials a run's scale is its speed-up over "
          "the default config (anchored trials: the anchor's base over the cost; else trial 1's cost "
          "over it), and the reference's re-measured best over the default re-measured beside it is "
          "100 %%; the best of 1000 noisy trials is luckier than the best of 64. `t95`: the "
          "first trial whose best-so-far reaches 95 %% of the reference on that scale (trial "
          "measurements; `>N`: never); `s`: the tuner's wall-clock seconds; `xgb-t`: xgb with transfer from the xgb-t records "
          "of the layers run before it (same template). Trial 1 of every run is the "
          "template's default config (`default %%`). A tuner meets the target on a layer when "
          "its re-measured %% is >= 95 in under 60 s (rows without a re-measurement: its "
          "trials' %% and t95).\n\n",
          f->ref_trials, f->tuner_trials, f->seed, f->threads, f->threads > 1 ? "s" : "", csv_path);
  fprintf(out, "| layer | template | space | ref GFLOP/s (trial) | ref s/trial | default %% |");
  for (int t = 0; t < NT; t++) fprintf(out, " %s %% | t95 | s |", TUNERS[t]);
  fprintf(out, " run (UTC), load |\n|---|---|---:|---:|---:|---:|");
  for (int t = 0; t < NT; t++) fprintf(out, "---:|---:|---:|");
  fprintf(out, "---|\n");
  int nl = 0, met[NT] = {0}, ran[NT] = {0}, *t95[NT];
  double maxs[NT] = {0};
  for (int t = 0; t < NT; t++) t95[t] = calloc((size_t)f->nlayers + 1, sizeof(int));
  char cpus[8][160];
  int ncpu = 0;
  for (int l = 0; l < f->nlayers; l++) {
    const study_row *ref = newest_ref(rows, n, f, f->layers[l]);
    if (!ref) continue;
    nl++;
    int seen = 0;
    for (int c = 0; c < ncpu; c++) seen |= !strcmp(cpus[c], ref->cpu);
    if (!seen && ncpu < 8) COPY(cpus[ncpu++], ref->cpu);
    char name[200];
    snprintf(name, sizeof name, "%s%s%s%s", ref->layer, ref->same_as[0] ? " (=" : "", ref->same_as,
             ref->same_as[0] ? ")" : "");
    fprintf(out, "| %s | %s | %lld | %.2f (%d) | %.3f | %.0f |", name, ref->tmpl, ref->space,
            ref->best_gflops, ref->best_trial, ref->seconds / (ref->trials ? ref->trials : 1),
            ref->best_gflops > 0 ? 100 * ref->default_gflops / ref->best_gflops : 0);
    for (int t = 0; t < NT; t++) {
      const study_row *r = tuner_row(rows, n, ref, TUNERS[t]);
      if (!r) {
        fprintf(out, " n/a | | |");
        continue;
      }
      char k[16];
      if (r->trials_to_95) snprintf(k, sizeof k, "%d", r->trials_to_95);
      else snprintf(k, sizeof k, ">%d", r->trials);
      if (r->remeasured_gflops > 0)
        fprintf(out, " %.1f / %.1f | %s | %.1f |", r->pct_of_ref, r->pct_remeasured, k, r->seconds);
      else
        fprintf(out, " %.1f | %s | %.1f |", r->pct_of_ref, k, r->seconds);
      t95[t][ran[t]++] = r->trials_to_95 ? r->trials_to_95 : r->trials + 1;
      met[t] += (r->remeasured_gflops > 0 ? r->pct_remeasured >= 95 : r->trials_to_95 > 0) &&
                r->seconds < 60;
      if (r->seconds > maxs[t]) maxs[t] = r->seconds;
    }
    fprintf(out, " %s, %.2f-%.2f |\n", ref->run, ref->load_start, ref->load_end);
  }
  fprintf(out, "\n%d of %d unique layers measured.\n\n", nl, f->nlayers);
  int reused = 0; /* references loaded from an earlier study (tune_study --reference) */
  for (int l = 0; l < f->nlayers; l++) {
    const study_row *ref = newest_ref(rows, n, f, f->layers[l]);
    if (!ref || strncmp(ref->note, STUDY_REF_LOADED, strlen(STUDY_REF_LOADED))) continue;
    if (!reused++)
      fprintf(out, "References loaded from an earlier study's records (`--reference`), not searched in the "
              "layer's run: their GFLOP/s, trial and s/trial are that run's, so the tuners' trial %% and t95 "
              "compare a run's speed-ups over the default with another's; the re-measured %% stays within the run (the reference's fastest configs "
              "measured side by side with the tuners'):\n\n");
    fprintf(out, "- %s: %s\n", ref->layer, ref->note);
  }
  if (reused) fputc('\n', out);
  for (int t = 0; t < NT; t++) {
    if (!ran[t]) continue;
    qsort(t95[t], (size_t)ran[t], sizeof(int), cmp_int);
    int med = t95[t][ran[t] / 2];
    char m[24];
    if (med > f->tuner_trials) snprintf(m, sizeof m, ">%d", f->tuner_trials);
    else snprintf(m, sizeof m, "%d", med);
    fprintf(out, "- %s: %d of %d layers reach 95 %% of the reference within %d trials in under 60 s "
            "(re-measured); "
            "median trials to 95 %%: %s; slowest run %.1f s\n", TUNERS[t], met[t], ran[t],
            f->tuner_trials, m, maxs[t]);
  }
  fprintf(out, "\nMachine%s:", ncpu > 1 ? "s" : "");
  for (int c = 0; c < ncpu; c++) fprintf(out, "%s %s", c ? ";" : "", cpus[c]);
  fprintf(out, "\n");
  for (int t = 0; t < NT; t++) free(t95[t]);
  return nl;
}
