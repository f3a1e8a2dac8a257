/* example_main.h — the network examples' main: argv [iters [size [width]]], the model
 * built (examples/net/models.c) and reported by net_report (include/tec/net.h). */
#ifndef TEC_EXAMPLES_NET_MAIN_H
#define TEC_EXAMPLES_NET_MAIN_H

#include <stdio.h>
#include "../example_args.h"
#include "models.h"

static int net_example_main(net_kind kind, int argc, char **argv) {
  int64_t iters = 20, size = 224;
  double width = 1.0;
  ex_opt opts[] = {{"iters", EX_INT, &iters, 1, 1e6, "timed runs of the whole network"},
                   {"size", EX_INT, &size, 8, 4096, "the input image's height and width"},
                   {"width", EX_REAL, &width, 0.0625, 4, "the width multiplier of every layer's channels"}};
  char about[160];
  snprintf(about, sizeof about, "%s, batch 1, fp32: built from tec's templates, checked and timed layer by layer.",
           model_title(kind));
  int arc = ex_args_parse(about, argc, argv, opts, 3);
  if (arc) return arc == 1 ? 0 : 2;
  char err[256];
  net *n = model_create(&(model_options){.kind = kind, .size = size, .width = width, .seed = 1}, err, sizeof err);
  if (!n) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("%s: batch 1, fp32, %lldx%lld, width %.2f, packed layout NCHW%lldc, seeded weights\n",
         model_title(kind), (long long)size, (long long)size, width, (long long)n->opt.block);
  int rc = net_report(n, (int)iters, stdout);
  if (rc) fprintf(stderr, "%s\n", net_error(n));
  net_free(n);
  return rc ? 1 : 0;
}

#endif
