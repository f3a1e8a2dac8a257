/* fp16.c — the float16 handling the float templates share (topi_fp, docs/fp16.md): which
 * templates take it, the storage and accumulation types, the casts between them, the target
 * check and the vector lanes a space counts in.
 *
 *   TOPI_FP16_ACC32, conv2d_nchwc:  data, kernel_p: float16 (storage, packing in float16)
 *     conv[..] = sum float32(pad[..]) * float32(kernel_p[..])       (fmlal on +fp16fml)
 *     out[..]  = float16(epilogue(conv[..], float32(bias_p[..]), float32(residual[..])))
 *   TOPI_FP16: the same with every cast a no-op: products and sums in float16 (fmla v.8h).
 */
#include <string.h>
#include "topi/internal.h"

/* the templates that take float16 problems (the others compute float32 only) */
static const char *const fp16_templates[] = {"conv2d_nchwc", "depthwise_nchwc", "dense", NULL};

const char *topi_fp_why(tec_ctx *ctx, const char *who, topi_fp fp) {
  if (fp != TOPI_FP32 && fp != TOPI_FP16 && fp != TOPI_FP16_ACC32)
    return tec_ctx_printf(ctx, "fp = %d is not one of TOPI_FP32, TOPI_FP16 (float16, float16 "
                               "accumulation), TOPI_FP16_ACC32 (float16, float32 accumulation)",
                          (int)fp);
  if (fp == TOPI_FP32) return NULL;
  for (const char *const *t = fp16_templates; *t; t++)
    if (strcmp(*t, who) == 0) return NULL;
  return "computes float32 only (fp = TOPI_FP32); float16 problems (TOPI_FP16, "
         "TOPI_FP16_ACC32) are taken by conv2d_nchwc, depthwise_nchwc and dense";
}

int topi_fp_check(tec_ctx *ctx, const char *who, topi_fp fp) {
  const char *why = topi_fp_why(ctx, who, fp);
  return why ? tec_ctx_set_error(ctx, "%s: %s", who, why) : 0;
}

tec_dtype topi_fp_storage(topi_fp fp) { return fp == TOPI_FP32 ? TEC_F32 : TEC_F16; }
tec_dtype topi_fp_acc(topi_fp fp) { return fp == TOPI_FP16 ? TEC_F16 : TEC_F32; }

const ir_expr *topi_fp_widen(topi_fp fp, const ir_expr *v) {
  return v ? ir_cast(topi_fp_acc(fp), v) : NULL;
}
const ir_expr *topi_fp_narrow(topi_fp fp, const ir_expr *v) {
  return v ? ir_cast(topi_fp_storage(fp), v) : NULL;
}

int topi_fp_target_check(tec_ctx *ctx, const char *who, topi_fp fp, const tec_target *target) {
  if (fp != TOPI_FP16) return 0;
  const tec_target *t = topi_target_of(ctx, target);
  if (!t) return -1;
  if (tec_target_has(t, TEC_FEATURE_FULLFP16) || tec_target_has(t, TEC_FEATURE_AVX512FP16))
    return 0;
  return tec_ctx_set_error(
      ctx, "%s: float16 accumulation (TOPI_FP16) needs half-precision arithmetic, which target "
           "'%s' lacks (AArch64/ARMv7: -mattr=+fullfp16; x86: +avx512fp16); tec does not "
           "emulate it. Legal here: TOPI_FP16_ACC32 (float16 storage, float32 arithmetic) or "
           "TOPI_FP32", who, t->str);
}

int topi_fp_lanes(tec_ctx *ctx, const tec_target *target, topi_fp fp) {
  int lanes = topi_target_lanes(ctx, target);
  return lanes > 0 && fp == TOPI_FP16 ? 2 * lanes : lanes;
}

const ir_expr *topi_fp_epilogue(tec_ctx *ctx, topi_fp fp, const topi_epilogue *e,
                                const ir_expr *v, const ir_expr *bias_v, const ir_expr *res_v) {
  if (bias_v) bias_v = topi_fp_widen(fp, bias_v);
  if (res_v) res_v = topi_fp_widen(fp, res_v);
  return topi_fp_narrow(fp, topi_epilogue_expr(ctx, e, v, bias_v, res_v));
}
