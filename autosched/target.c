/* target.c — the auto-scheduler's one question to the target: how many f32 lanes a vector
 * register holds and how many vector registers there are. Targets are strings today; when the
 * parsed target value lands, this is the one function to switch. */
#include <string.h>
#include "autosched/internal.h"

int as_target_query(tec_ctx *ctx, const char *target, int *lanes, int *regs) {
  int bits = tec_target_vector_bits(ctx, target);
  if (bits < 0) return -1;
  *lanes = bits >= 64 ? bits / 32 : 1;
  const char *ts = tec_target_str(ctx, target);
  /* x86 AVX-512 and AArch64 have 32 vector registers; AVX2, SSE and ARMv7 16 */
  *regs = (ts && strstr(ts, "armv7")) ? 16 : (*lanes >= 16 || *lanes == 4) ? 32 : 16;
  return 0;
}
