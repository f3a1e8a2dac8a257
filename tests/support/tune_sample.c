/* tune_sample.c — prints n configs of a template's space for one problem, sampled by a fixed
 * seed, one "index config" line each ("1234 mr=4 nr=32 ..."): the inputs of
 * scripts/tune_table.sh, which times them with `tec bench` once and writes the table that
 * tests/test_tune_model.c reads (tests/data/tune_dense_*.txt). Dense problems, b constant (`tec bench` default):
 *   tune_sample M N K COUNT SEED */
#include <stdio.h>
#include <stdlib.h>
#include "tec/tec.h"

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: tune_sample M N K COUNT SEED\n");
    return 2;
  }
  topi_dense p = {.m = atoll(argv[1]), .n = atoll(argv[2]), .k = atoll(argv[3]), .const_b = 1};
  int count = atoi(argv[4]);
  unsigned long long x = strtoull(argv[5], NULL, 10) * 2654435761ull + 1;
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  if (topi_space_of(ctx, "dense", &p, NULL, &sp)) {
    fprintf(stderr, "%s\n", tec_ctx_error(ctx));
    return 1;
  }
  int64_t size = tune_space_size(&sp);
  char *seen = calloc((size_t)size, 1);
  void *cfg = malloc(sp.config_size);
  for (int i = 0; i < count && i < size;) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t idx = (int64_t)(x % (unsigned long long)size);
    if (seen[idx]) continue;
    seen[idx] = 1, i++;
    tune_space_config(&sp, idx, cfg);
    printf("%lld %s\n", (long long)idx, tune_config_str(ctx, &sp, cfg));
  }
  free(seen), free(cfg);
  tec_ctx_free(ctx);
  return 0;
}
