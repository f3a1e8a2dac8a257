/* tensorize.c — sch_tensorize: marks a loop whose nest becomes an instruction-level intrinsic.
 * It validates what the schedule alone can tell (the stage is an int32 sum, the intrinsic
 * exists) and records the pragma "tensorize" = intrinsic; lower/tensorize.c checks the nest
 * that lowering produced (loops, extents, strides, operand types) and replaces it. */
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

static const char *const names[SCH_INTRIN_COUNT] = {[SCH_INTRIN_DOT4] = "dot4",
                                                    [SCH_INTRIN_MMLA] = "mmla",
                                                    [SCH_INTRIN_DOT4_LANE] = "dot4_lane"};

const char *sch_intrin_name(sch_intrin intrin) {
  return (unsigned)intrin < SCH_INTRIN_COUNT ? names[intrin] : NULL;
}

int sch_tensorize(sch_stage *st, sch_iter *iv, sch_intrin intrin) {
  if (!st) return sch_null_arg("tensorize", "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  const te_tensor *t = st->tensor;
  if ((unsigned)intrin >= SCH_INTRIN_COUNT)
    return tec_ctx_set_error(ctx, "tensorize: stage '%s': unknown intrinsic %d; known: %d "
                                  "(SCH_INTRIN_DOT4), %d (SCH_INTRIN_MMLA), %d "
                                  "(SCH_INTRIN_DOT4_LANE)", t->name, (int)intrin,
                             SCH_INTRIN_DOT4, SCH_INTRIN_MMLA, SCH_INTRIN_DOT4_LANE);
  if (!t->body || t->body->kind != IR_REDUCE || t->body->v.i != IR_COMB_SUM)
    return tec_ctx_set_error(ctx, "tensorize: stage '%s' is not a sum reduction; %s "
                                  "accumulates products (C = sum(int32(a) * int32(b)))",
                             t->name, names[intrin]);
  char ty[32];
  if (t->type.code != TEC_INT || t->type.bits != 32 || t->type.lanes != 1)
    return tec_ctx_set_error(ctx, "tensorize: stage '%s' is %s; %s accumulates into int32",
                             t->name, tec_dtype_str(t->type, ty, sizeof ty), names[intrin]);
  return sch_pragma(st, iv, "tensorize", ir_int(ctx, intrin));
}
