/* driver_keys.c — `tec list OP`: a template's --shape keys (the table of topi/problem_keys.c:
 * each key's default, or required, and legal values), an example command line, and the
 * example's knob space on this host. */
#include <stdio.h>
#include <string.h>
#include "tec/space.h"
#include "tools/driver_internal.h"

int drv_list_op(const topi_template *t) {
  printf("%s: %s\n--shape keys (KEY=VALUE, comma separated):\n", t->name, t->doc);
  printf("  %-18s %-10s %s\n", "key", "default", "legal values");
  for (const topi_problem_key *k = topi_problem_keys(t); k->key; k++) {
    const char *d = topi_problem_key_default(t, k->key);
    printf("  %-18s %-10s %s\n", k->key, d ? d : "required", k->legal);
  }
  tec_ctx *ctx = tec_ctx_new();
  const char *example = ctx ? topi_problem_example(ctx, t) : NULL;
  printf("e.g. tec print %s --shape %s\n", t->name, example ? example : "?");
  /* the knobs (--config), for the example on the host: what the space looks like */
  topi_problem prob;
  tune_space sp;
  const tec_target *host = ctx ? tec_target_parse(ctx, NULL) : NULL;
  if (host && example && topi_problem_parse(ctx, t, example, &prob) == 0 && t->space(ctx, &prob, host, &sp) == 0) {
    printf("--config knobs (tec print ... --config KNOB=V,...), for the example on this host:\n");
    tune_space_print(stdout, &sp);
  } else {
    printf("--config knobs: (the example's space: %s)\n", ctx ? tec_ctx_error(ctx) : "out of memory");
  }
  tec_ctx_free(ctx);
  return 0;
}
