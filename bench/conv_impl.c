/* conv_impl.c — one convolution layer three ways, for bench/conv.c: tec's template from the
 * registry, oneDNN's convolution primitive and XNNPACK's convolution operator, each given the
 * same seeded data in its own layout, plus the naive reference all three are checked against.
 *
 *   impl     layout in -> out          weights                    what the timed call is
 *   tec      NCHW16c -> NCHW16c        OIHW, packed in prepare    tec_module_run (not the 1st)
 *   oneDNN   its choice ("any")        its choice, reordered once dnnl_primitive_execute
 *   XNNPACK  NHWC -> NHWC              OHWI, packed at creation   xnn_run_operator
 *
 * Layout transforms (NCHW -> each one's input layout, each output -> NCHW for the check) are
 * done here, once, never inside a timed call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "conv.h"

const char *const conv_impl_name[NIMPL] = {"tec", "onednn", "xnnpack"};

static dnnl_engine_t engine;
static dnnl_stream_t stream;

int conv_libs_init(void) {
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success) {
    fprintf(stderr, "conv: oneDNN: cannot create the CPU engine and stream\n");
    return -1;
  }
  enum xnn_status st = xnn_initialize(NULL);
  if (st != xnn_status_success) {
    fprintf(stderr, "conv: xnn_initialize failed: status %d\n", (int)st);
    return -1;
  }
  return 0;
}

void conv_libs_free(void) {
  if (stream) dnnl_stream_destroy(stream);
  if (engine) dnnl_engine_destroy(engine);
  stream = NULL, engine = NULL;
  xnn_deinitialize();
}

/* ---------------- data, reference, layouts ---------------- */

static float *alloc_floats(size_t n) { return aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64); }

static void fill_random(float *p, size_t n, unsigned *seed) {
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    p[i] = (float)((*seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
}

/* out[co][oy][ox] = relu(b[co] + sum x * w) with double accumulation, one output plane at a time
 * (the loops over ox run over the columns whose input is inside the image: no padding test). */
static int reference(conv_case *c) {
  const conv_layer *L = c->L;
  int64_t cg = L->c_in / L->groups, kg = L->c_out / L->groups, k = L->k, s = L->stride;
  int64_t plane = c->oh * c->ow;
  double *acc = malloc(sizeof(double) * (size_t)plane), *mag = malloc(sizeof(double) * (size_t)plane);
  if (!acc || !mag) {
    free(acc), free(mag);
    return -1;
  }
  for (int64_t co = 0; co < L->c_out; co++) {
    int64_t g = co / kg;
    for (int64_t i = 0; i < plane; i++) acc[i] = c->b[co], mag[i] = fabs(c->b[co]);
    for (int64_t ci = 0; ci < cg; ci++) {
      const float *xp = c->x + (g * cg + ci) * L->h * L->w;
      for (int64_t ky = 0; ky < k; ky++)
        for (int64_t kx = 0; kx < k; kx++) {
          double wv = c->w[((co * cg + ci) * k + ky) * k + kx];
          /* ox with 0 <= ox*s - pad + kx < w */
          int64_t lo = 0, hi = c->ow;
          while (lo < hi && lo * s - L->pad + kx < 0) lo++;
          while (hi > lo && (hi - 1) * s - L->pad + kx >= L->w) hi--;
          for (int64_t oy = 0; oy < c->oh; oy++) {
            int64_t iy = oy * s - L->pad + ky;
            if (iy < 0 || iy >= L->h) continue;
            const float *row = xp + iy * L->w - L->pad + kx;
            double *a = acc + oy * c->ow, *m = mag + oy * c->ow;
            for (int64_t ox = lo; ox < hi; ox++) {
              double t = row[ox * s] * wv;
              a[ox] += t;
              m[ox] += fabs(t);
            }
          }
        }
    }
    for (int64_t i = 0; i < plane; i++) {
      c->ref[co * plane + i] = (float)(acc[i] > 0 ? acc[i] : 0);
      c->mag[co * plane + i] = (float)mag[i];
    }
  }
  free(acc), free(mag);
  return 0;
}

/* The flat offset of logical (ch, y, x) (batch 1) in layout l for a c x h x w tensor. */
static int64_t layout_offset(topi_layout l, int64_t c, int64_t h, int64_t w, int64_t ch,
                             int64_t y, int64_t x) {
  switch (l.kind) {
  case TOPI_NHWC: return (y * w + x) * c + ch;
  case TOPI_NCHWC: return ((ch / l.block * h + y) * w + x) * l.block + ch % l.block;
  default: return (ch * h + y) * w + x;
  }
}

/* NCHW src -> dst in layout l (dst's channels past c, in the last block, set to zero first) */
static void to_layout(const float *src, topi_layout l, int64_t c, int64_t h, int64_t w, float *dst,
                      int64_t dst_len) {
  memset(dst, 0, sizeof(float) * (size_t)dst_len);
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++)
        dst[layout_offset(l, c, h, w, ch, y, x)] = src[(ch * h + y) * w + x];
}

static void from_layout(const float *src, topi_layout l, int64_t c, int64_t h, int64_t w,
                        float *dst) {
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++)
        dst[(ch * h + y) * w + x] = src[layout_offset(l, c, h, w, ch, y, x)];
}

int conv_case_init(conv_case *c, const conv_layer *L, unsigned seed) {
  memset(c, 0, sizeof *c);
  c->L = L;
  c->oh = (L->h + 2 * L->pad - L->k) / L->stride + 1;
  c->ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
  size_t nx = (size_t)(L->c_in * L->h * L->w), nout = (size_t)(L->c_out * c->oh * c->ow);
  size_t nw = (size_t)(L->c_out * (L->c_in / L->groups) * L->k * L->k);
  c->flops = 2.0 * (double)nout * (double)(L->c_in / L->groups) * (double)(L->k * L->k);
  c->x = alloc_floats(nx), c->w = alloc_floats(nw), c->b = alloc_floats((size_t)L->c_out);
  c->ref = alloc_floats(nout), c->mag = alloc_floats(nout), c->nchw = alloc_floats(nout);
  if (!c->x || !c->w || !c->b || !c->ref || !c->mag || !c->nchw) return -1;
  fill_random(c->x, nx, &seed);
  fill_random(c->w, nw, &seed);
  fill_random(c->b, (size_t)L->c_out, &seed);
  return reference(c);
}

/* ---------------- tec ---------------- */

static int tec_fail(conv_case *c, const char *what, const char *why) {
  snprintf(c->tec_desc, sizeof c->tec_desc, "%s %s: %s", c->tec_template, what,
           why ? why : "(no message)");
  if (!c->tec_quiet) printf("tec: %s: template %s\n", c->L->name, c->tec_desc);
  return -1;
}

int conv_tec_variant(conv_case *v, const conv_case *base, const char *name) {
  memset(v, 0, sizeof *v);
  v->L = base->L, v->oh = base->oh, v->ow = base->ow, v->flops = base->flops;
  v->x = base->x, v->w = base->w, v->b = base->b;
  v->ref = base->ref, v->mag = base->mag, v->nchw = base->nchw;
  v->borrowed = 1, v->tec_quiet = 1;
  return conv_tec_setup(v, name, NULL);
}

int conv_tec_setup(conv_case *c, const char *forced, const char *config) {
  const conv_layer *L = c->L;
  int depthwise = L->groups == L->c_in && L->c_in == L->c_out && L->groups > 1;
  int pick = forced && !strcmp(forced, "pick"); /* topi_conv2d_pick's rule table per layer */
  c->tec_template = forced && !pick ? forced : depthwise ? "depthwise_nchwc" : "conv2d_nchwc";
  const topi_template *t = topi_template_find(c->tec_template);
  if (t && t->problem_kind != TOPI_PROBLEM_CONV2D)
    return tec_fail(c, "not available", "not a conv2d template (its problem is not topi_conv2d)");
  if (!t) {
    char names[256] = "";
    size_t n = 0;
    for (int i = 0; i < topi_template_count() && n < sizeof names - 40; i++)
      n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                            topi_template_at(i)->name);
    char why[320];
    snprintf(why, sizeof why, "not in the registry (registered: %s)", names);
    return tec_fail(c, "not available", why);
  }
  if (!(c->ctx = tec_ctx_new())) return tec_fail(c, "not available", "out of memory");
  int bits = tec_target_vector_bits(c->ctx, NULL);
  if (bits < 32) return tec_fail(c, "not available", tec_ctx_error(c->ctx));
  topi_layout blocked = {.kind = TOPI_NCHWC, .block = bits / 32};
  topi_layout nchw = {.kind = TOPI_NCHW}, nhwc = {.kind = TOPI_NHWC};
  /* the layout pairs tried, in order: the brief's NCHW16c, then what other templates read; a
   * layer with fewer input channels than a block (the networks' first convolution, 3 channels)
   * reads NCHW first, as the previous layer (the image) has no blocked layout to give */
  topi_layout pairs[4][2] = {{blocked, blocked}, {nchw, blocked}, {nchw, nchw}, {nhwc, nhwc}};
  if (L->c_in < blocked.block) pairs[0][0] = nchw, pairs[1][0] = blocked;
  topi_conv2d p = {.n = 1, .c_in = L->c_in, .h = L->h, .w = L->w, .c_out = L->c_out, .kh = L->k,
                   .kw = L->k, .stride_h = L->stride, .stride_w = L->stride, .pad_h = L->pad,
                   .pad_w = L->pad, .groups = L->groups,
                   .epi = {.bias = 1, .residual = 0, .act = TOPI_ACT_RELU}};
  const char *first_why = NULL;
  int found = 0;
  for (int i = 0; i < 4 && !found; i++) {
    p.in_layout = pairs[i][0], p.out_layout = pairs[i][1];
    const char *why = NULL;
    const topi_template *picked = NULL;
    if (pick && topi_conv2d_pick(c->ctx, &p, NULL, &picked, NULL) == 0)
      t = picked, c->tec_template = picked->name;
    found = t->applies(c->ctx, &p, &why);
    if (!found && !first_why) first_why = tec_ctx_strdup(c->ctx, why ? why : "(no reason)");
    tec_ctx_clear_error(c->ctx);
  }
  if (!found) return tec_fail(c, "does not apply", first_why);
  c->in_l = p.in_layout, c->out_l = p.out_layout;
  topi_op op;
  tune_space sp;
  topi_decl *decl = tec_ctx_alloc(c->ctx, sizeof *decl);
  void *cfg = NULL;
  if (!decl || t->space(c->ctx, &p, NULL, &sp) || !(cfg = tec_ctx_alloc(c->ctx, sp.config_size)))
    return tec_fail(c, "failed", tec_ctx_error(c->ctx));
  if (tune_config_parse(c->ctx, &sp, config, cfg))
    return tec_fail(c, "refused --tec-config", tec_ctx_error(c->ctx));
  if (t->declare(c->ctx, &p, decl) || t->schedule(decl, cfg, NULL, &op))
    return tec_fail(c, "failed", tec_ctx_error(c->ctx));
  if (op.nargs != 4)
    return tec_fail(c, "failed", "expected 4 arguments (data, kernel, bias, out)");
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  if (!f || !(c->mod = tec_build(c->ctx, 1, &f, NULL)))
    return tec_fail(c, "failed to compile", tec_ctx_error(c->ctx));
  snprintf(c->tec_desc, sizeof c->tec_desc, "%s %s->%s %s", t->name,
           topi_layout_str(c->ctx, c->in_l), topi_layout_str(c->ctx, c->out_l),
           tune_config_str(c->ctx, &sp, cfg));
  /* arguments: data, kernel [c_out][c_in/groups][k][k], bias [c_out], out */
  int64_t xs[5], ys[5], ws[4] = {L->c_out, L->c_in / L->groups, L->k, L->k}, bs[1] = {L->c_out};
  int xd, yd;
  topi_layout ls[2] = {c->in_l, c->out_l};
  int64_t chans[2] = {L->c_in, L->c_out}, hs[2] = {L->h, c->oh}, wss[2] = {L->w, c->ow};
  for (int k = 0; k < 2; k++) {
    int64_t *s = k ? ys : xs;
    int *nd = k ? &yd : &xd;
    if (ls[k].kind == TOPI_NCHWC) {
      int64_t cb = (chans[k] + ls[k].block - 1) / ls[k].block;
      s[0] = 1, s[1] = cb, s[2] = hs[k], s[3] = wss[k], s[4] = ls[k].block, *nd = 5;
    } else if (ls[k].kind == TOPI_NHWC) {
      s[0] = 1, s[1] = hs[k], s[2] = wss[k], s[3] = chans[k], *nd = 4;
    } else {
      s[0] = 1, s[1] = chans[k], s[2] = hs[k], s[3] = wss[k], *nd = 4;
    }
  }
  if (tec_dl_alloc(&c->tx, TEC_F32, xd, xs) || tec_dl_alloc(&c->tw, TEC_F32, 4, ws) ||
      tec_dl_alloc(&c->tb, TEC_F32, 1, bs) || tec_dl_alloc(&c->ty, TEC_F32, yd, ys))
    return tec_fail(c, "failed", tec_rt_last_error());
  to_layout(c->x, c->in_l, L->c_in, L->h, L->w, c->tx.data, tec_dl_numel(&c->tx));
  memcpy(c->tw.data, c->w, sizeof(float) * (size_t)tec_dl_numel(&c->tw));
  memcpy(c->tb.data, c->b, sizeof(float) * (size_t)L->c_out);
  c->tec_ok = 1;
  return 0;
}

/* ---------------- XNNPACK ---------------- */

int conv_xnn_setup(conv_case *c, int yield) {
  const conv_layer *L = c->L;
  int64_t cg = L->c_in / L->groups, kg = L->c_out / L->groups, k = L->k;
  size_t nx = (size_t)(L->c_in * L->h * L->w), nout = (size_t)(L->c_out * c->oh * c->ow);
  /* XNNPACK may read XNN_EXTRA_BYTES past the end of its input */
  c->xin = alloc_floats(nx + XNN_EXTRA_BYTES / sizeof(float) + 16);
  c->xout = alloc_floats(nout + 16);
  c->xw = alloc_floats((size_t)(L->c_out * cg * k * k));
  if (!c->xin || !c->xout || !c->xw) return -1;
  topi_layout nhwc = {.kind = TOPI_NHWC, .block = 0};
  to_layout(c->x, nhwc, L->c_in, L->h, L->w, c->xin, (int64_t)nx);
  /* weights [groups][kg][k][k][cg] from OIHW */
  for (int64_t o = 0; o < L->c_out; o++)
    for (int64_t i = 0; i < cg; i++)
      for (int64_t y = 0; y < k; y++)
        for (int64_t x = 0; x < k; x++)
          c->xw[((o * k + y) * k + x) * cg + i] = c->w[((o * cg + i) * k + y) * k + x];
  enum xnn_status st = xnn_create_convolution2d_nhwc_f32(
      (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)k,
      (uint32_t)k, (uint32_t)L->stride, (uint32_t)L->stride, 1, 1, (uint32_t)L->groups,
      (size_t)cg, (size_t)kg, (size_t)L->c_in, (size_t)L->c_out, c->xw, c->b, 0.0f, INFINITY,
      yield ? XNN_FLAG_YIELD_WORKERS : 0, &c->xop);
  if (st != xnn_status_success) {
    printf("xnnpack: %s: xnn_create_convolution2d_nhwc_f32 failed: status %d\n", L->name, (int)st);
    return -1;
  }
  c->xnn_ok = 1;
  return 0;
}

/* (re)binds the operator to pool: xnn_setup splits the work for the pool's thread count */
static int xnn_bind(conv_case *c, pthreadpool_t pool) {
  if (c->xnn_pool == pool && pool) return 0;
  enum xnn_status st = xnn_setup_convolution2d_nhwc_f32(c->xop, 1, (size_t)c->L->h,
                                                        (size_t)c->L->w, c->xin, c->xout, pool);
  if (st != xnn_status_success) {
    printf("xnnpack: %s: xnn_setup_convolution2d_nhwc_f32 failed: status %d\n", c->L->name, (int)st);
    return -1;
  }
  c->xnn_pool = pool;
  return 0;
}

/* ---------------- oneDNN ---------------- */

/* A blocked format as oneDNN's tags spell it: dims outer to inner by stride, a blocked dim in
 * capitals, then the inner blocks ("aBcd16b" = nChw16c). */
static void format_str(const dnnl_memory_desc_t *md, char *buf, size_t size) {
  if (md->format_kind != dnnl_blocked) {
    snprintf(buf, size, "(kind %d)", (int)md->format_kind);
    return;
  }
  const dnnl_blocking_desc_t *bd = &md->format_desc.blocking;
  int order[DNNL_MAX_NDIMS], nd = md->ndims;
  for (int i = 0; i < nd; i++) order[i] = i;
  for (int i = 1; i < nd; i++) /* insertion sort, strides descending, stable */
    for (int j = i; j > 0 && bd->strides[order[j]] > bd->strides[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  size_t n = 0;
  for (int i = 0; i < nd && n + 1 < size; i++) {
    int blocked = 0;
    for (int b = 0; b < bd->inner_nblks; b++) blocked |= bd->inner_idxs[b] == order[i];
    buf[n++] = (char)((blocked ? 'A' : 'a') + order[i]);
  }
  buf[n] = 0;
  for (int b = 0; b < bd->inner_nblks && n < size; b++)
    n += (size_t)snprintf(buf + n, size - n, "%lld%c", (long long)bd->inner_blks[b],
                          'a' + (int)bd->inner_idxs[b]);
}

static int dnnl_fail(conv_case *c, const char *what, dnnl_status_t st) {
  printf("onednn: %s: %s failed: status %d\n", c->L->name, what, (int)st);
  return -1;
}

#define DNNL_TRY(c, call)                                                                          \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) return dnnl_fail(c, #call, st_);                                      \
  } while (0)

/* src -> dst by a reorder primitive, once */
static int reorder(conv_case *c, dnnl_memory_t src, dnnl_memory_t dst, dnnl_primitive_t *keep) {
  const dnnl_memory_desc_t *smd, *dmd;
  DNNL_TRY(c, dnnl_memory_get_memory_desc(src, &smd));
  DNNL_TRY(c, dnnl_memory_get_memory_desc(dst, &dmd));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t r;
  DNNL_TRY(c, dnnl_reorder_primitive_desc_create(&pd, smd, engine, dmd, engine, NULL));
  dnnl_status_t st = dnnl_primitive_create(&r, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st != dnnl_success) return dnnl_fail(c, "dnnl_primitive_create(reorder)", st);
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  st = dnnl_primitive_execute(r, stream, 2, args);
  if (st == dnnl_success) st = dnnl_stream_wait(stream);
  if (keep && st == dnnl_success) *keep = r;
  else dnnl_primitive_destroy(r);
  return st == dnnl_success ? 0 : dnnl_fail(c, "reorder", st);
}

/* oneDNN's primitive for c by algorithm alg into d (memory made, src and weights reordered).
 * 0, or -1 (printed unless quiet: an algorithm oneDNN does not implement for this layer). */
static int dnnl_make(conv_case *c, dnnl_alg_kind_t alg, int quiet, conv_dnnl *d) {
  const conv_layer *L = c->L;
  int dw = L->groups > 1;
  dnnl_dims_t src_dims = {1, L->c_in, L->h, L->w}, dst_dims = {1, L->c_out, c->oh, c->ow};
  dnnl_dims_t bias_dims = {L->c_out}, strides = {L->stride, L->stride}, pad = {L->pad, L->pad};
  dnnl_dims_t wdims = {L->c_out, L->c_in, L->k, L->k}; /* oihw */
  dnnl_dims_t gwdims = {L->groups, L->c_out / L->groups, L->c_in / L->groups, L->k, L->k};
  dnnl_memory_desc_t src_any, wei_any, dst_any, bias_md, src_user, wei_user, dst_user;
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&src_any, 4, src_dims, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&dst_any, 4, dst_dims, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&wei_any, dw ? 5 : 4, dw ? gwdims : wdims, dnnl_f32,
                                           dnnl_format_tag_any));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&bias_md, 1, bias_dims, dnnl_f32, dnnl_x));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&src_user, 4, src_dims, dnnl_f32, dnnl_nchw));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&dst_user, 4, dst_dims, dnnl_f32, dnnl_nchw));
  DNNL_TRY(c, dnnl_memory_desc_init_by_tag(&wei_user, dw ? 5 : 4, dw ? gwdims : wdims, dnnl_f32,
                                           dw ? dnnl_goihw : dnnl_oihw));
  dnnl_convolution_desc_t cd;
  dnnl_status_t st0 = dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg,
                                                         &src_any, &wei_any, &bias_md, &dst_any,
                                                         strides, pad, pad);
  if (st0 != dnnl_success) return quiet ? -1 : dnnl_fail(c, "convolution_forward_desc_init", st0);
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_post_ops_create(&po); /* the ReLU, fused as an eltwise post-op */
  if (st == dnnl_success) st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
  if (st == dnnl_success) st = dnnl_primitive_attr_create(&attr);
  if (st == dnnl_success) st = dnnl_primitive_attr_set_post_ops(attr, po);
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (po) dnnl_post_ops_destroy(po);
  if (st != dnnl_success)
    return quiet ? -1 : dnnl_fail(c, "creating the convolution (bias, ReLU post-op)", st);
  const char *impl = NULL;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(d->impl, sizeof d->impl, "%s", impl ? impl : "?");
  const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  char fs[32], fw[32], fd[32];
  format_str(src_md, fs, sizeof fs), format_str(wei_md, fw, sizeof fw), format_str(dst_md, fd, sizeof fd);
  snprintf(d->formats, sizeof d->formats, "src %s wei %s dst %s", fs, fw, fd);
  dnnl_memory_t src_u = NULL, wei_u = NULL;
  st = dnnl_primitive_create(&d->conv, pd);
  if (st == dnnl_success) st = dnnl_memory_create(&d->src, src_md, engine, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success) st = dnnl_memory_create(&d->wei, wei_md, engine, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success) st = dnnl_memory_create(&d->dst, dst_md, engine, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  if (st != dnnl_success) return dnnl_fail(c, "creating the primitive and its memory", st);
  /* the user's buffers: bias as it is, src/weights to reorder from, dst to reorder into */
  st = dnnl_memory_create(&d->bias, &bias_md, engine, c->b);
  if (st == dnnl_success) st = dnnl_memory_create(&src_u, &src_user, engine, c->x);
  if (st == dnnl_success) st = dnnl_memory_create(&wei_u, &wei_user, engine, c->w);
  if (st == dnnl_success) st = dnnl_memory_create(&d->user_dst, &dst_user, engine, c->nchw);
  int rc = -1;
  if (st != dnnl_success) dnnl_fail(c, "dnnl_memory_create", st);
  else if (!reorder(c, src_u, d->src, NULL) && !reorder(c, wei_u, d->wei, NULL) &&
           !reorder(c, d->dst, d->user_dst, &d->dst_reorder))
    rc = 0;
  if (src_u) dnnl_memory_destroy(src_u);
  if (wei_u) dnnl_memory_destroy(wei_u);
  if (rc) return -1;
  d->ok = 1;
  return 0;
}

static void dnnl_free_state(conv_dnnl *d) {
  if (d->chain_src) dnnl_memory_destroy(d->chain_src);
  if (d->conv) dnnl_primitive_destroy(d->conv);
  if (d->dst_reorder) dnnl_primitive_destroy(d->dst_reorder);
  dnnl_memory_t m[5] = {d->src, d->wei, d->bias, d->dst, d->user_dst};
  for (int i = 0; i < 5; i++)
    if (m[i]) dnnl_memory_destroy(m[i]);
  memset(d, 0, sizeof *d);
}

/* oneDNN's algorithms: direct (what the bench gave it until issue #39), its own choice, and
 * winograd (where it implements one for this CPU and layer: f32 3x3 stride 1 on AVX-512) */
static const struct {
  dnnl_alg_kind_t alg;
  const char *name;
} dnnl_algs[] = {{dnnl_convolution_direct, "direct"},
                 {dnnl_convolution_auto, "auto"},
                 {dnnl_convolution_winograd, "winograd"}};
#define NALG ((int)(sizeof dnnl_algs / sizeof dnnl_algs[0]))
#define PICK_RUNS 7 /* timed calls per algorithm when picking (after 2 warm-up calls) */

/* Every algorithm oneDNN has for the layer is made and timed (median of PICK_RUNS calls, the
 * thread count already set); the fastest is kept as the layer's oneDNN, its implementation
 * string suffixed with the algorithm ("jit:avx512_core (auto)"), and d->algs lists them all
 * ("direct jit:avx512_core 0.212 ms, auto ..., winograd none"). A pick, not the comparison:
 * tec is then measured against the kept one in bench/conv.c's interleaved rounds. */
int conv_dnnl_setup(conv_case *c, int ti) {
  conv_dnnl *d = &c->dnnl[ti], best = {0};
  double best_t = 0;
  size_t at = 0;
  char algs[sizeof d->algs] = ""; /* d is each candidate in turn while it is timed */
  for (int a = 0; a < NALG; a++) {
    conv_dnnl cand = {0};
    /* direct is the one every layer has: its failure is printed */
    if (dnnl_make(c, dnnl_algs[a].alg, a > 0, &cand)) {
      dnnl_free_state(&cand);
      at += (size_t)snprintf(algs + at, sizeof algs - at, "%s%s none", at ? ", " : "",
                             dnnl_algs[a].name);
      if (at >= sizeof algs) at = sizeof algs - 1;
      continue;
    }
    c->dnnl[ti] = cand; /* conv_run reads c->dnnl[ti] */
    double ts[PICK_RUNS];
    int bad = 0;
    for (int r = 0; r < 2 + PICK_RUNS && !bad; r++) {
      double t0 = bench_now(CLOCK_MONOTONIC);
      bad = conv_run(c, IMPL_DNNL, ti, NULL) != 0;
      if (r >= 2) ts[r - 2] = bench_now(CLOCK_MONOTONIC) - t0;
    }
    double t = bad ? 0 : bench_median(ts, PICK_RUNS);
    at += (size_t)snprintf(algs + at, sizeof algs - at, "%s%s %s %.3f ms", at ? ", " : "",
                           dnnl_algs[a].name, cand.impl, t * 1e3);
    if (at >= sizeof algs) at = sizeof algs - 1;
    if (!bad && (!best.ok || t < best_t)) {
      if (best.ok) dnnl_free_state(&best);
      best = cand, best_t = t;
      snprintf(best.impl + strlen(best.impl), sizeof best.impl - strlen(best.impl), " (%s)",
               dnnl_algs[a].name);
    } else {
      dnnl_free_state(&cand);
    }
  }
  *d = best;
  d->tried = 1;
  memcpy(d->algs, algs, sizeof algs);
  return d->ok ? 0 : -1;
}

int conv_dnnl_chain(conv_case *from, conv_case *to, int ti) {
  conv_dnnl *a = &from->dnnl[ti], *b = &to->dnnl[ti];
  const dnnl_memory_desc_t *dmd, *smd;
  void *h = NULL;
  if (!a->ok || !b->ok || dnnl_memory_get_memory_desc(a->dst, &dmd) != dnnl_success ||
      dnnl_memory_get_memory_desc(b->src, &smd) != dnnl_success ||
      dnnl_memory_get_data_handle(a->dst, &h) != dnnl_success) {
    printf("onednn: %s -> %s: no state to chain\n", from->L->name, to->L->name);
    return -1;
  }
  if (!dnnl_memory_desc_equal(dmd, smd)) return 0;
  if (b->chain_src) dnnl_memory_destroy(b->chain_src), b->chain_src = NULL;
  dnnl_status_t st = dnnl_memory_create(&b->chain_src, smd, engine, h);
  return st == dnnl_success ? 1 : dnnl_fail(to, "dnnl_memory_create (chained src)", st);
}

/* ---------------- calls and checks ---------------- */

int conv_run(conv_case *c, int impl, int ti, pthreadpool_t pool) {
  switch (impl) {
  case IMPL_TEC: {
    DLTensor *args[4] = {&c->tx, &c->tw, &c->tb, &c->ty};
    if (tec_module_run(c->mod, "conv", 4, args) != 0) {
      printf("tec: %s: %s\n", c->L->name, tec_rt_last_error());
      return -1;
    }
    return 0;
  }
  case IMPL_DNNL: {
    conv_dnnl *d = &c->dnnl[ti];
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, d->chain_src ? d->chain_src : d->src},
                               {DNNL_ARG_WEIGHTS, d->wei},
                               {DNNL_ARG_BIAS, d->bias}, {DNNL_ARG_DST, d->dst}};
    dnnl_status_t st = dnnl_primitive_execute(d->conv, stream, 4, args);
    if (st == dnnl_success) st = dnnl_stream_wait(stream);
    return st == dnnl_success ? 0 : dnnl_fail(c, "dnnl_primitive_execute", st);
  }
  case IMPL_XNN: {
    if (xnn_bind(c, pool)) return -1;
    enum xnn_status st = xnn_run_operator(c->xop, pool);
    if (st != xnn_status_success) {
      printf("xnnpack: %s: xnn_run_operator failed: status %d\n", c->L->name, (int)st);
      return -1;
    }
    return 0;
  }
  }
  return -1;
}

void conv_clear_output(conv_case *c, int impl, int ti) {
  size_t n = (size_t)(c->L->c_out * c->oh * c->ow);
  if (impl == IMPL_TEC) {
    memset(c->ty.data, 0, sizeof(float) * (size_t)tec_dl_numel(&c->ty));
  } else if (impl == IMPL_XNN) {
    memset(c->xout, 0, sizeof(float) * n);
  } else {
    void *h = NULL;
    const dnnl_memory_desc_t *md;
    if (dnnl_memory_get_data_handle(c->dnnl[ti].dst, &h) == dnnl_success && h &&
        dnnl_memory_get_memory_desc(c->dnnl[ti].dst, &md) == dnnl_success)
      memset(h, 0, dnnl_memory_desc_get_size(md));
  }
}

double conv_check(conv_case *c, int impl, int ti) {
  const conv_layer *L = c->L;
  if (impl == IMPL_TEC) {
    from_layout(c->ty.data, c->out_l, L->c_out, c->oh, c->ow, c->nchw);
  } else if (impl == IMPL_XNN) {
    topi_layout nhwc = {.kind = TOPI_NHWC, .block = 0};
    from_layout(c->xout, nhwc, L->c_out, c->oh, c->ow, c->nchw);
  } else { /* oneDNN: its dst reordered into c->nchw */
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, c->dnnl[ti].dst}, {DNNL_ARG_TO, c->dnnl[ti].user_dst}};
    if (dnnl_primitive_execute(c->dnnl[ti].dst_reorder, stream, 2, args) != dnnl_success ||
        dnnl_stream_wait(stream) != dnnl_success)
      return INFINITY;
  }
  double worst = 0;
  int64_t n = L->c_out * c->oh * c->ow;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)c->nchw[i] - c->ref[i]) / ((double)c->mag[i] + 1e-30);
    if (e != e) return e; /* NaN: wrong */
    if (e > worst) worst = e;
  }
  return worst;
}

void conv_case_free(conv_case *c) {
  for (int i = 0; i < CONV_MAX_THREADS; i++) dnnl_free_state(&c->dnnl[i]);
  if (c->xop) xnn_delete_operator(c->xop);
  tec_dl_free(&c->tx), tec_dl_free(&c->tw), tec_dl_free(&c->tb), tec_dl_free(&c->ty);
  if (c->ctx) tec_ctx_free(c->ctx);
  if (c->borrowed) { /* a conv_tec_variant: the data and reference are the base case's */
    memset(c, 0, sizeof *c);
    return;
  }
  free(c->x), free(c->w), free(c->b), free(c->ref), free(c->mag), free(c->nchw);
  free(c->xin), free(c->xout), free(c->xw);
  memset(c, 0, sizeof *c);
}
