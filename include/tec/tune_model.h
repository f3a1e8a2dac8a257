/* tune_model.h — the tuner's cost model: features of a lowered loop program, a gradient-boosted
 * ranking model over them (XGBoost's C API, as AutoTVM's XGBTuner), and simulated annealing
 * over a template's knob space that proposes the configs the model ranks best.
 *
 *   float x[TUNE_NFEATURES * n];                  one row per measured config:
 *   tune_features(ctx, lowered, x + i * TUNE_NFEATURES, TUNE_NFEATURES);
 *   tune_model *m = tune_model_new(ctx, seed);    NULL + error without libxgboost-dev
 *   tune_model_fit(m, x, gflops, n);              ranks, so only the order of gflops matters
 *   tune_anneal(&space, score_fn, user, visited, seed, k, next);   score_fn predicts with m
 *
 * score_fn schedules and lowers each index it is given to get its features: tens of ms per
 * config (85 ms for a ResNet 3x3 layer's typical conv2d_nchwc config, 3 s for its largest
 * tiles), so a tuner caches features by index across batches; annealing asks ~700 per call.
 *
 * Features (docs/cost_model.md has the table): the loop nest around the hottest store of the
 * run function (the one prepare/run timing measures), level by level from the innermost loop
 * outwards — extent, kind, statements per iteration, the bytes each of the top buffers touches
 * in one iteration of the level and their reuse — then totals over the program: flops, FMAs,
 * vector lanes, loads/stores, allocations, parallel extent, code size. Magnitudes are log2(1+x).
 * The vector has the same meaning for every template, so rows of different workloads mix.
 *
 * Transfer: rows from the records of other workloads are fitted together with
 * tune_model_fit_groups (one group per workload: gflops normalized within each group and pairs
 * compared only inside a group), so a new workload's first batch is proposed from that prior
 * model; after its own measurements refit with the prior groups plus the new workload's rows
 * as one more group.
 *
 * Determinism: features are a pure function of the program; the model runs XGBoost on one
 * thread with the given seed; annealing draws from its own generator seeded by `seed`. Same
 * inputs and seed: same outputs.
 *
 * Availability: the model needs libxgboost-dev at build time. Builds without it (and cross
 * builds, where the target's libxgboost is not looked for) still have features and annealing;
 * tune_model_new then fails with an error saying so. tune_model_available() tells beforehand.
 */
#ifndef TEC_TUNE_MODEL_H
#define TEC_TUNE_MODEL_H

#include <stdint.h>
#include "tec/lower.h"
#include "tec/space.h"
#include "tec/topi.h"

/* Loop levels described (innermost first), features per level, buffers per level. */
#define TUNE_LEVELS 6
#define TUNE_LEVEL_BUFS 3
#define TUNE_PER_LEVEL (7 + 2 * TUNE_LEVEL_BUFS)
#define TUNE_NTOTALS 24
#define TUNE_NFEATURES (TUNE_LEVELS * TUNE_PER_LEVEL + TUNE_NTOTALS)
/* The feature set's version, written into records beside the features (tune/records.c):
 * change it whenever features.c changes what a feature means, so that transfer (tune_options.
 * transfer) refuses older rows instead of mixing two meanings. */
#define TUNE_FEATURES_VERSION 1

/* Per-stage features (tune/features_stage.c; the tuned auto-scheduler's tasks): the
 * TUNE_STAGE_SLOTS stages of most work, TUNE_PER_STAGE features each (elements written, flops,
 * loads and their contiguous share, nest depth, lanes, unrolled / vectorized / parallel loops,
 * the innermost extent, the allocation's size and compute_at level, guards), then
 * tune_features' TUNE_NTOTALS totals: the same TUNE_NFEATURES floats, another feature set. */
#define TUNE_STAGE_SLOTS 6
#define TUNE_PER_STAGE 13
#define TUNE_FEATURES_STAGES_VERSION 101
_Static_assert(TUNE_STAGE_SLOTS * TUNE_PER_STAGE + TUNE_NTOTALS == TUNE_NFEATURES,
               "the per-stage feature set has the model's width");
int tune_features_stages(tec_ctx *ctx, const lower_func *f, float *out, int cap);
/* "S0.flops", ..., then the totals' names (ctx's arena); NULL outside [0, TUNE_NFEATURES). */
const char *tune_feature_stage_name(tec_ctx *ctx, int i);

/* The features of lowered function f (its run part: f->body; prepare is not timed) into
 * out[0..TUNE_NFEATURES). Returns TUNE_NFEATURES, or -1 with an error in ctx (ctx, f, its body
 * or out NULL; cap < TUNE_NFEATURES; out of memory). */
int tune_features(tec_ctx *ctx, const lower_func *f, float *out, int cap);
/* The name of feature i ("L0.extent", "flops", ...), NULL outside [0, TUNE_NFEATURES). */
const char *tune_feature_name(int i);

typedef struct tune_model tune_model;

/* 1 if this build has XGBoost (host builds with libxgboost-dev), else 0. */
int tune_model_available(void);
/* A new, unfitted model whose errors go to ctx. NULL with an error when this build has no
 * XGBoost ("... install libxgboost-dev and reconfigure") or XGBoost fails. */
tune_model *tune_model_new(tec_ctx *ctx, unsigned seed);
/* Fits (from scratch) on n rows x[n][TUNE_NFEATURES] with measured gflops (>= 0; 0 for a
 * failed config: ranked last). One group: tune_model_fit_groups with ngroups 1. 0, or -1 with
 * an error (NULL arguments, n < 2, a negative or non-finite gflops, XGBoost's message). */
int tune_model_fit(tune_model *m, const float *x, const double *gflops, int n);
/* Fits on rows in ngroups consecutive groups of group_rows[g] rows (one group per workload;
 * the sum must be n): the pairwise ranking objective compares rows of one group only, and each
 * group's gflops are divided by that group's largest, so workloads of different speeds mix. */
int tune_model_fit_groups(tune_model *m, const float *x, const double *gflops, int n,
                          const int *group_rows, int ngroups);
/* tune_model_fit_groups with a weight per group (group_weight[g] > 0, finite; NULL: all 1):
 * each row's pairs count that much (XGBoost's per-group weights for ranking), so a new
 * workload's few rows can count as much as the many rows of the workloads transferred. */
int tune_model_fit_weighted(tune_model *m, const float *x, const double *gflops, int n,
                            const int *group_rows, const float *group_weight, int ngroups);
/* Scores of n rows (higher: predicted faster; only their order means something). -1 with an
 * error before a fit or on NULL arguments. */
int tune_model_predict(tune_model *m, const float *x, int n, double *score);
void tune_model_free(tune_model *m); /* NULL: no-op */

/* Simulated annealing over the configs of sp (mixed-radix indices, tune_space_config),
 * maximizing score(u, idx, n, out) (which scores n indices at once: 0, or -1 to stop with that
 * failure). Parallel chains start at random indices; a step moves one knob of each chain to
 * another of its legal values, accepted by the Metropolis rule under a temperature falling
 * linearly from t0 (0.05) to 0, relative to the spread of the first batch's scores; then hill
 * climbing from the best index scored (all one-knob neighbours, while one is better);
 * scores are cached, so no index is scored twice. The best k distinct indices seen that are
 * not set in visited (bit i of byte i/8 for index i; NULL: none visited) are written to
 * out_idx, best first. Spaces of at most TUNE_ANNEAL_EXHAUSTIVE configs are scored whole.
 * Returns the count written (< k when fewer unvisited configs exist), or -1 (bad arguments, no
 * memory, or score failed). Deterministic for a seed (given a deterministic score). */
#define TUNE_ANNEAL_EXHAUSTIVE 256
int tune_anneal(const tune_space *sp, int (*score)(void *u, const int64_t *idx, int n, double *out),
                void *u, const unsigned char *visited_bitmap_or_NULL, unsigned seed, int k,
                int64_t *out_idx);

/* The same with the schedule's knobs: chains (0: 16), steps (0: 50), early_stop (stop when
 * the best k have not changed for that many steps; 0: 10) and t0 (the starting temperature, a
 * fraction of the first batch's score spread; 0: 0.05). Negative values: -1. */
typedef struct tune_anneal_opts {
  int chains, steps, early_stop;
  double t0;
} tune_anneal_opts;
int tune_anneal_with(const tune_space *sp,
                     int (*score)(void *u, const int64_t *idx, int n, double *out), void *u,
                     const unsigned char *visited_bitmap_or_NULL, unsigned seed, int k,
                     int64_t *out_idx, const tune_anneal_opts *opts);

#endif
