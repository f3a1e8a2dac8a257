/* target.c — the auto-scheduler's one question to the target: how many f32 lanes a vector
 * register holds, how many vector registers there are and how large a cache an output must
 * exceed to be streamed (rule_stream.c), read from the parsed target value
 * (include/tec/target.h): parsed once per call of tec_autoschedule. */
#include "autosched/internal.h"

int as_target_query(tec_ctx *ctx, const char *target, int *lanes, int *regs, int64_t *llc) {
  const tec_target *t = tec_target_parse(ctx, target);
  if (!t) return -1;
  *lanes = t->vector_bits >= 64 ? t->vector_bits / 32 : 1;
  *regs = t->vector_regs;
  *llc = as_stream_llc(t);
  return 0;
}
