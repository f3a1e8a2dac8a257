/* transfer.c — the rows a cost-model tuner learns from before measuring anything
 * (tune_options.transfer; AutoTVM's load_history for XGBTuner): the records of a file that
 * belong to other workloads of the task's template, on the task's target, with features of
 * this build's feature set (TUNE_FEATURES_VERSION), grouped by workload in the order the file
 * first names them. A failed record is a row at 0 GFLOP/s (ranked last, as the tuner's own
 * failures are). A group with fewer than 2 rows or no correct one ranks nothing and is left
 * out. What was skipped, and why, is counted into the tune_result (a corrupt line also
 * reported on `warn`), so nothing in the file is passed over without a word (the reader
 * leaves a record whose features are not TUNE_NFEATURES finite floats without any). The
 * whole file is read and the model refitted on every row at each batch: a file of a few
 * thousand rows costs tens of ms a fit; nothing caps it (a network's worth of layers is what
 * it is for). */
#include <stdlib.h>
#include <string.h>
#include "tec/tune_model.h"
#include "tune/internal.h"

/* a record's row label: its GFLOP/s when correct, else 0 (ranked last) */
static double row_gflops(const tune_record *r) { return !strcmp(r->status, "ok") && r->gflops > 0 ? r->gflops : 0.0; }

void tune_prior_free(tune_prior *p) {
  if (!p) return;
  free(p->x), free(p->y), free(p->group_rows);
  memset(p, 0, sizeof *p);
}

int tune_prior_load(tec_ctx *ctx, const tune_task *task, const char *path, FILE *warn, tune_prior *out,
                    tune_result *counts) {
  memset(out, 0, sizeof *out);
  tec_ctx *tmp = tec_ctx_new();
  tune_record *recs = NULL;
  int n = 0, rc = -1;
  int *group = NULL, *order = NULL; /* per record: its group (-1: not a row); group -> first record */
  if (!tmp) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
  if (tune_records_load_counted(tmp, path, warn, &recs, &n, &counts->transfer_skipped_corrupt) != 0) {
    tec_ctx_set_error_kind(ctx, tec_ctx_error_kind(tmp), "%s (the transfer records)", tec_ctx_error(tmp));
    goto done;
  }
  group = malloc(sizeof *group * (size_t)(n ? n : 1));
  order = malloc(sizeof *order * (size_t)(n ? n : 1));
  if (!group || !order) goto oom;
  int ng = 0;
  /* the task's target as a value (a task made by hand has only its text: parsed once here) */
  const tec_target *tg = task->target_value ? task->target_value : tec_target_parse(tmp, task->target);
  tec_target_memo memo = {0};
  if (!tg) tec_ctx_clear_error(tmp); /* no target: no record is of it */
  for (int i = 0; i < n; i++) {
    const tune_record *r = &recs[i];
    group[i] = -1;
    if (strcmp(r->template_name, task->template_name) || !tec_target_matches(tmp, &memo, r->target, tg)) {
      counts->transfer_skipped_other++;
      continue;
    }
    if (!strcmp(r->workload, task->workload)) {
      counts->transfer_skipped_self++;
      continue;
    }
    if (r->features_version != tune_task_features_version(task) || !r->features) {
      counts->transfer_skipped_nofeat++;
      continue;
    }
    int g = 0;
    while (g < ng && strcmp(recs[order[g]].workload, r->workload)) g++;
    if (g == ng) order[ng++] = i;
    group[i] = g;
  }
  /* rows per group, and whether a group ranks anything */
  int *rows = calloc((size_t)(ng ? ng : 1), sizeof *rows), *good = calloc((size_t)(ng ? ng : 1), sizeof *good);
  if (!rows || !good) {
    free(rows), free(good);
    goto oom;
  }
  for (int i = 0; i < n; i++)
    if (group[i] >= 0) rows[group[i]]++, good[group[i]] |= row_gflops(&recs[i]) > 0;
  int total = 0;
  for (int g = 0; g < ng; g++) {
    if (rows[g] >= 2 && good[g]) total += rows[g];
    else counts->transfer_skipped_small += rows[g], rows[g] = 0;
  }
  out->x = malloc(sizeof *out->x * (size_t)(total ? total : 1) * TUNE_NFEATURES);
  out->y = malloc(sizeof *out->y * (size_t)(total ? total : 1));
  out->group_rows = malloc(sizeof *out->group_rows * (size_t)(ng ? ng : 1));
  if (!out->x || !out->y || !out->group_rows) {
    free(rows), free(good);
    goto oom;
  }
  for (int g = 0; g < ng; g++) { /* group by group, each in file order */
    if (!rows[g]) continue;
    for (int i = 0; i < n; i++) {
      if (group[i] != g) continue;
      memcpy(out->x + (size_t)out->n * TUNE_NFEATURES, recs[i].features, sizeof *out->x * TUNE_NFEATURES);
      out->y[out->n++] = row_gflops(&recs[i]);
    }
    out->group_rows[out->ngroups++] = rows[g];
  }
  free(rows), free(good);
  counts->transfer_rows = out->n, counts->transfer_groups = out->ngroups;
  rc = 0;
  goto done;
oom:
  tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory reading the transfer records %s", path);
done:
  if (rc != 0) tune_prior_free(out);
  free(group), free(order);
  tec_ctx_free(tmp);
  return rc;
}
