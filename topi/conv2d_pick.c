/* conv2d_pick.c — topi_conv2d_pick: which conv2d template computes a layer, from a small rule
 * table. The first rule whose condition holds and whose template applies to the problem (its
 * layouts, groups, kernel) wins; a forced name overrides the table. The reason returned names
 * the rule.
 *
 *   rule  condition                                  template             why
 *   1     depthwise, blocked layouts                 depthwise_nchwc      the depthwise kernel
 *   2     depthwise, NCHW                            dw_spatial_pack      the depthwise kernel
 *   3     3x3, stride 1, dilation 1, groups 1,       conv2d_winograd      F(4x4) 1.4-2.0x direct
 *         output >= 14x14                                                 (ResNet-18, AVX-512)
 *   4     groups 1, output NCHW[y]c                  conv2d_nchwc         direct, blocked
 *   5     output NHWC, or groups > 1                 conv2d_im2col        any groups
 *   6     NCHW -> NCHW                               conv2d_spatial_pack  TVM arm_cpu
 *
 * Rule 3's bound: on 7x7 outputs (512 channels) Winograd's transformed kernel (4x the weights
 * for F(4x4): 37.7 MB) streams from memory on every call; it ran at 0.94x the direct template
 * on a quiet machine and 0.3x with other tenants loading memory (bench/run conv, 1 thread, AMD
 * EPYC AVX-512; 56x56: 1.6x, 28x28: 2.0x, 14x14: 1.4x the direct template).
 */
#include "topi/internal.h"

typedef struct pick_rule {
  const char *template_name;
  const char *why;
  int (*holds)(const topi_conv2d *p, int64_t oh, int64_t ow);
} pick_rule;

static int64_t groups_of(const topi_conv2d *p) { return p->groups ? p->groups : 1; }
static int depthwise(const topi_conv2d *p) {
  return groups_of(p) > 1 && groups_of(p) == p->c_in && p->c_in == p->c_out;
}
static int r_dw_blocked(const topi_conv2d *p, int64_t oh, int64_t ow) {
  (void)oh, (void)ow;
  return depthwise(p) && p->in_layout.kind == TOPI_NCHWC;
}
static int r_dw_nchw(const topi_conv2d *p, int64_t oh, int64_t ow) {
  (void)oh, (void)ow;
  return depthwise(p) && p->in_layout.kind == TOPI_NCHW;
}
static int r_winograd(const topi_conv2d *p, int64_t oh, int64_t ow) {
  return p->kh == 3 && p->kw == 3 && p->stride_h == 1 && p->stride_w == 1 && groups_of(p) == 1 &&
         topi_conv2d_dilation_h(p) == 1 && topi_conv2d_dilation_w(p) == 1 && oh >= 14 && ow >= 14;
}
static int r_direct(const topi_conv2d *p, int64_t oh, int64_t ow) {
  (void)oh, (void)ow;
  return groups_of(p) == 1 && p->out_layout.kind == TOPI_NCHWC;
}
static int r_im2col(const topi_conv2d *p, int64_t oh, int64_t ow) {
  (void)oh, (void)ow;
  return p->out_layout.kind == TOPI_NHWC || groups_of(p) > 1;
}
static int r_spatial(const topi_conv2d *p, int64_t oh, int64_t ow) {
  (void)oh, (void)ow;
  return p->in_layout.kind == TOPI_NCHW && p->out_layout.kind == TOPI_NCHW;
}

static const pick_rule rules[] = {
    {"depthwise_nchwc", "depthwise, blocked layouts", r_dw_blocked},
    {"dw_spatial_pack", "depthwise, NCHW", r_dw_nchw},
    {"conv2d_winograd",
     "3x3, stride 1, dilation 1, groups 1, output >= 14x14: Winograd F(4x4,3x3)",
     r_winograd},
    {"conv2d_nchwc", "groups 1, blocked output: direct", r_direct},
    {"conv2d_im2col", "NHWC output or groups > 1: im2col + GEMM", r_im2col},
    {"conv2d_spatial_pack", "NCHW -> NCHW: spatial pack", r_spatial},
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

int topi_conv2d_pick(tec_ctx *ctx, const topi_conv2d *p, const char *force,
                     const topi_template **out, const char **why) {
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "topi_conv2d_pick: problem and out are required");
  int64_t oh, ow;
  if (topi_conv2d_check(ctx, "topi_conv2d_pick", p) || topi_conv2d_out_hw(ctx, p, &oh, &ow))
    return -1;
  if (force) {
    const topi_template *t = topi_template_find(force);
    const char *no = NULL;
    if (!t || t->problem_kind != TOPI_PROBLEM_CONV2D)
      return tec_ctx_set_error(ctx, "topi_conv2d_pick: '%s' is not a conv2d template", force);
    if (!t->applies(ctx, p, &no))
      return tec_ctx_set_error(ctx, "topi_conv2d_pick: forced template '%s' does not apply: %s",
                               force, no ? no : "(no reason given)");
    *out = t;
    if (why) *why = tec_ctx_printf(ctx, "%s: forced", force);
    return 0;
  }
  for (int i = 0; i < NRULES; i++) {
    const topi_template *t = topi_template_find(rules[i].template_name);
    if (!t || !rules[i].holds(p, oh, ow) || !t->applies(ctx, p, NULL)) continue;
    tec_ctx_clear_error(ctx);
    *out = t;
    if (why) *why = tec_ctx_printf(ctx, "%s: rule %d (%s)", t->name, i + 1, rules[i].why);
    return 0;
  }
  tec_ctx_clear_error(ctx);
  return tec_ctx_set_error(ctx, "topi_conv2d_pick: no rule picks a template for %s -> %s, groups "
                                "%lld (NCHW[x]c or NCHW -> NCHW[y]c, NHWC output, or NCHW -> "
                                "NCHW are covered)",
                           topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout),
                           (long long)groups_of(p));
}
