/* dw_pw_fused.c — MobileNet's block, a depthwise convolution and the pointwise (1x1) one that
 * reads it, as one template: the two templates' computes chained, one loop nest.
 *
 *   mid[n, C, oy, ox, u] = depthwise_nchwc(data)       (its kernel_p, dw, out: renamed dw_*)
 *   out[n, O, oy, ox, v] = conv2d_nchwc(mid)           (GEMM form; its kernel_p, bias_p, conv)
 *
 * The declarations are the two templates' own (topi_depthwise_nchwc_declare, then
 * topi_conv2d_nchwc_declare_on with mid as its data), so both stages compute exactly what the
 * two layers compute; their schedules are the templates' too (topi_*_schedule_in), with one
 * change when fused = R > 0: the pointwise's outermost loop is (n, tiles of R output rows),
 * parallel, and mid is computed there (compute_at), R rows x all channel blocks, by the
 * depthwise's register tiles (not parallel on their own). The pointwise needs no halo, so
 * nothing is computed twice; the tile, R x ow x c floats, is read from L1/L2 by every
 * output-channel tile of the pointwise instead of from wherever a whole-image pass left it.
 * fused = 0 keeps mid at root: the two loop nests one after the other (the unfused layers).
 */
#include <stdio.h>
#include <string.h>
#include "topi/internal.h"

#define WHO "dw_pw_fused"

typedef struct dp_decl {
  topi_dw_pw p;
  topi_decl dw, pw; /* the depthwise's declaration and the pointwise's, reading dw.out */
} dp_decl;

static int same_layout(topi_layout a, topi_layout b) {
  return a.kind == b.kind && (a.kind != TOPI_NCHWC || a.block == b.block);
}

static int dp_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_dw_pw *p = problem;
  const char *w = NULL, *sub = NULL;
  int64_t oh = 0, ow = 0;
  if (!p) w = "the problem is NULL";
  else if ((w = topi_margin_refused(ctx, "dw_pw_fused's intermediate", "dw's output",
                                     p->dw.out_layout)) ||
           (w = topi_margin_refused(ctx, "dw_pw_fused's intermediate", "pw's input",
                                     p->pw.in_layout))) {
  } else if (!topi_tmpl_depthwise_nchwc.applies(ctx, &p->dw, &sub))
    w = tec_ctx_printf(ctx, "dw: %s", sub ? sub : "(no reason given)");
  else if (p->dw.epi.residual)
    w = "dw: a residual is not supported (the pointwise may have one)";
  else if (!topi_tmpl_conv2d_nchwc.applies(ctx, &p->pw, &sub))
    w = tec_ctx_printf(ctx, "pw: %s", sub ? sub : "(no reason given)");
  else if (!topi_conv2d_is_pointwise(&p->pw))
    w = tec_ctx_printf(ctx, "pw must be 1x1, stride 1, unpadded (got kernel %lldx%lld, stride "
                            "%lldx%lld, pad %lldx%lld)",
                       (long long)p->pw.kh, (long long)p->pw.kw, (long long)p->pw.stride_h,
                       (long long)p->pw.stride_w, (long long)p->pw.pad_h, (long long)p->pw.pad_w);
  else if (topi_conv2d_out_hw(ctx, &p->dw, &oh, &ow) == 0 &&
           (p->pw.n != p->dw.n || p->pw.c_in != p->dw.c_out || p->pw.h != oh || p->pw.w != ow ||
            !same_layout(p->pw.in_layout, p->dw.out_layout)))
    w = tec_ctx_printf(ctx, "pw must read dw's output: n=%lld c_in=%lld h=%lld w=%lld in %s "
                            "(got n=%lld c_in=%lld h=%lld w=%lld in %s)",
                       (long long)p->dw.n, (long long)p->dw.c_out, (long long)oh, (long long)ow,
                       topi_layout_str(ctx, p->dw.out_layout), (long long)p->pw.n,
                       (long long)p->pw.c_in, (long long)p->pw.h, (long long)p->pw.w,
                       topi_layout_str(ctx, p->pw.in_layout));
  if (why) *why = w;
  return w == NULL;
}

/* Prefixes the names of t and what it reads with pre (once: a name that has it is left), except
 * the non-constant placeholders (data, residual) and `keep`. Both templates name their tensors
 * alike (kernel, kernel_p, bias_p, out); the function's arguments and packed buffers (the AOT
 * header's names) must differ. */
static void prefix_names(tec_ctx *ctx, te_tensor *t, const char *pre, const te_tensor *keep) {
  if ((t->op == TE_PLACEHOLDER && !t->is_const) || !strncmp(t->name, pre, strlen(pre)) ||
      !strncmp(t->name, "dw_", 3))
    return;
  if (t != keep) t->name = tec_ctx_printf(ctx, "%s%s", pre, t->name);
  for (int i = 0; i < t->ninputs; i++) prefix_names(ctx, (te_tensor *)t->inputs[i], pre, keep);
}

static int dp_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_dw_pw *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, WHO ": problem and decl are required");
  if (topi_refuse(ctx, &topi_tmpl_dw_pw_fused, p)) return -1;
  dp_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  topi_dw_pw *copy = tec_ctx_alloc(ctx, sizeof *copy);
  te_tensor **args = tec_ctx_alloc(ctx, 7 * sizeof *args);
  if (!d || !copy || !args) return -1;
  d->p = *copy = *p;
  if (topi_tmpl_depthwise_nchwc.declare(ctx, &p->dw, &d->dw) ||
      topi_conv2d_nchwc_declare_on(ctx, &p->pw, d->dw.out, &d->pw))
    return -1;
  prefix_names(ctx, d->dw.out, "dw_", NULL);
  prefix_names(ctx, d->pw.out, "pw_", d->pw.out);
  /* data, dw kernel, [dw bias] | pw kernel, [pw bias], [residual], out */
  int n = 0;
  for (int i = 0; i < d->dw.nargs - 1; i++) args[n++] = d->dw.args[i];
  for (int i = 1; i < d->pw.nargs; i++) args[n++] = d->pw.args[i];
  *out = (topi_decl){&topi_tmpl_dw_pw_fused, ctx, copy, n, args, d->pw.out, d};
  return 0;
}

static int dp_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_dw_pw_fused_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_dw_pw_fused, dc, cfg, target) || topi_op_begin(dc, op))
    return -1;
  const dp_decl *d = dc->priv;
  topi_conv2d_nchwc_config pc = {.ow_tile = cfg->ow_tile, .oc_tiles = cfg->oc_tiles,
                                 .ic_split = cfg->ic_split, .ic_unroll = cfg->ic_unroll,
                                 .oh_tile = 1, .pad_copy = 0, .parallel = cfg->parallel,
                                 .oh_reg = 1};
  topi_depthwise_nchwc_config dwc = {.ow_tile = cfg->dw_ow_tile, .oh_tile = cfg->dw_oh_tile,
                                     .parallel = cfg->fused ? 0 : cfg->parallel};
  sch_iter *rows = NULL;
  if (topi_conv2d_nchwc_schedule_in(&d->pw, &pc, op->sched, cfg->fused, &rows) ||
      topi_depthwise_nchwc_schedule_in(&d->dw, &dwc, op->sched, 0, NULL))
    return -1;
  if (!cfg->fused) return 0;
  sch_stage *sm = sch_stage_of(op->sched, d->dw.out), *so = sch_stage_of(op->sched, dc->out);
  if (!sm || !so || !rows) return -1;
  return sch_compute_at(sm, so, rows);
}

/* The bytes of R rows of dw's output (all channel blocks): the tile kept in cache. */
static int64_t tile_bytes(const topi_dw_pw *p, int64_t r) {
  int64_t b = p->dw.out_layout.block;
  return r * p->pw.w * topi_ceil_div(p->dw.c_out, b) * b * (int64_t)sizeof(float);
}

/* The default row tile (0: not fused). Fusing saves the intermediate's trip through the cache
 * hierarchy but re-reads the pointwise's whole kernel once per row tile. Fused where the whole
 * intermediate does not fit a 1 MiB L2 and the kernel fits a quarter of it (256 KiB), in the
 * smallest tile of at least 48 KiB (at most 128 KiB: L1-sized tiles measured slower, e.g.
 * 112x112x32 at R = 1, 2, 4: 1.01, 1.02, 1.06x the two layers); measured (bench/README.md,
 * "fused"): elsewhere the two passes are as fast or faster. */
static int64_t default_rows(const topi_dw_pw *p, const int64_t *rows, int nrows) {
  int64_t bi = p->pw.in_layout.block, bo = p->pw.out_layout.block;
  int64_t wbytes = topi_ceil_div(p->pw.c_in, bi) * bi * topi_ceil_div(p->pw.c_out, bo) * bo *
                   (int64_t)sizeof(float);
  if (tile_bytes(p, p->pw.h) <= 1024 * 1024 || wbytes > 256 * 1024) return 0;
  for (int i = 0; i < nrows; i++)
    if (tile_bytes(p, rows[i]) >= 48 * 1024)
      return tile_bytes(p, rows[i]) <= 128 * 1024 ? rows[i] : 0;
  return 0;
}

/* The space's rule: the pointwise's (conv2d_nchwc's) and the depthwise's, on their knobs. */
typedef struct dp_rule {
  tune_space pw, dw;
} dp_rule;

static int dp_rule_ok(const void *data, const void *config) {
  const dp_rule *r = data;
  const topi_dw_pw_fused_config *c = config;
  topi_conv2d_nchwc_config pc;
  topi_depthwise_nchwc_config dc;
  memcpy(&pc, r->pw.default_config, sizeof pc);
  memcpy(&dc, r->dw.default_config, sizeof dc);
  pc.ow_tile = c->ow_tile, pc.oc_tiles = c->oc_tiles, pc.ic_split = c->ic_split;
  pc.ic_unroll = c->ic_unroll, dc.ow_tile = c->dw_ow_tile, dc.oh_tile = c->dw_oh_tile;
  return tune_space_allows_config(&r->pw, &pc) && tune_space_allows_config(&r->dw, &dc);
}

static int dp_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_dw_pw *p = p_arg;
  if (!ctx) return -1;
  if (topi_refuse(ctx, &topi_tmpl_dw_pw_fused, p)) return -1;
  tune_space dsp, psp, tsp;
  if (topi_tmpl_depthwise_nchwc.space(ctx, &p->dw, target, &dsp) ||
      topi_tmpl_conv2d_nchwc.space(ctx, &p->pw, target, &psp))
    return -1;
  int64_t rows[65], b01[] = {0, 1};
  rows[0] = 0;
  int nrows = 1 + topi_divisors(p->pw.h, p->pw.h, rows + 1, 64);
  int64_t r = default_rows(p, rows + 1, nrows - 1);
  const topi_conv2d_nchwc_config *pd = psp.default_config;
  if (r) { /* the pointwise's default tile for a problem of r rows: the fused tile's GEMM */
    topi_conv2d tp = p->pw;
    tp.h = r;
    if (topi_tmpl_conv2d_nchwc.space(ctx, &tp, target, &tsp)) return -1;
    pd = tsp.default_config;
  }
  const topi_depthwise_nchwc_config *dd = dsp.default_config;
  /* the knobs of the two spaces: conv2d_nchwc's 0-3 (ow_tile oc_tiles ic_split ic_unroll),
   * depthwise_nchwc's 0-1 (ow_tile oh_tile) */
  const tune_knob *pk = psp.knobs, *dk = dsp.knobs;
  if (tune_space_init(ctx, sp, topi_tmpl_dw_pw_fused.name, topi_tmpl_dw_pw_fused.config_size) ||
      tune_define_field(sp, "fused",
                        "0: the depthwise's output computed whole first (two passes); R: per tile "
                        "of R output rows, inside the pointwise's loop",
                        offsetof(topi_dw_pw_fused_config, fused), nrows, rows, r) < 0 ||
      tune_define_field(sp, "ow_tile", "pointwise: output positions per register tile",
                        offsetof(topi_dw_pw_fused_config, ow_tile), pk[0].nvalues, pk[0].values,
                        pd->ow_tile) < 0 ||
      tune_define_field(sp, "oc_tiles", "pointwise: output-channel blocks per register tile",
                        offsetof(topi_dw_pw_fused_config, oc_tiles), pk[1].nvalues, pk[1].values,
                        pd->oc_tiles) < 0 ||
      tune_define_field(sp, "ic_split", "pointwise: input-channel blocks per unrolled step",
                        offsetof(topi_dw_pw_fused_config, ic_split), pk[2].nvalues, pk[2].values,
                        pd->ic_split) < 0 ||
      tune_define_field(sp, "ic_unroll", "pointwise: 1 those blocks unrolled, 0 a loop",
                        offsetof(topi_dw_pw_fused_config, ic_unroll), pk[3].nvalues, pk[3].values,
                        pd->ic_unroll) < 0 ||
      tune_define_field(sp, "dw_ow_tile", "depthwise: output columns per register tile",
                        offsetof(topi_dw_pw_fused_config, dw_ow_tile), dk[0].nvalues, dk[0].values,
                        dd->ow_tile) < 0 ||
      tune_define_field(sp, "dw_oh_tile", "depthwise: output rows per register tile",
                        offsetof(topi_dw_pw_fused_config, dw_oh_tile), dk[1].nvalues, dk[1].values,
                        dd->oh_tile) < 0 ||
      tune_define_field(sp, "parallel",
                        "1: parallel (fused: over the row tiles; else both passes)",
                        offsetof(topi_dw_pw_fused_config, parallel), 2, b01, 1) < 0)
    return -1;
  dp_rule *rr = tec_ctx_alloc(ctx, sizeof *rr);
  if (!rr) return -1;
  rr->pw = psp, rr->dw = dsp;
  const char *doc = tec_ctx_printf(ctx, "pointwise %s; depthwise (dw_) %s",
                                   psp.rule_doc ? psp.rule_doc : "-", dsp.rule_doc ? dsp.rule_doc : "-");
  return doc ? tune_space_set_rule(sp, 0x7eu, dp_rule_ok, rr, doc) : -1;
}

const topi_template topi_tmpl_dw_pw_fused = {
    WHO, "depthwise + pointwise (MobileNet block) NCHW[x]c, one loop nest, dw tile in cache",
    TOPI_PROBLEM_DW_PW, sizeof(topi_dw_pw_fused_config), dp_applies, dp_declare, dp_schedule,
    dp_space, "topi_dw_pw_fused_config"};
