/* extern.c — extern stages: a tensor whose values a C function computes (te_extern, TVM's
 * te.extern, Halide's define_extern).
 *
 * The tensor is a TE_COMPUTE op with its declaration in `ext` and, as its body, the
 * placeholder extern_call(A[0, 0], B[0]) that reads each input once: the passes that ask
 * "which tensors does this stage read" (topological order, inlining, the prepare/run split)
 * see its inputs through it. What it reads where is the region function's business
 * (te_extern_input_region): bound inference (lower/bound.c) and the call itself
 * (lower/extern_nest.c) ask it. The region function is tried once here, on the whole output,
 * so a function that fails or asks outside an input's shape is refused at declaration. */
#include <ctype.h>
#include <string.h>
#include "tec/te.h"
#include "tec/runtime.h" /* TEC_EXTERN_MAX_BUF */
#include "ir/internal.h"
#include "te/internal.h"
#include "ir/eval.h"

static int c_identifier(const char *s) {
  if (!s || !*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

int te_extern_input_region(tec_ctx *ctx, const te_tensor *t, int k,
                           const ir_expr *const *out_min, const ir_expr *const *out_extent,
                           const ir_expr **in_min, const ir_expr **in_extent) {
  const te_extern_decl *d = t ? t->ext : NULL;
  if (!d || k < 0 || k >= d->ninputs) return TEC_INTERNAL(ctx, "extern region of a non-input");
  const te_tensor *in = d->inputs[k];
  if (!d->region) { /* all of it */
    for (int j = 0; j < in->ndim; j++) {
      in_min[j] = ir_int(ctx, 0);
      in_extent[j] = in->shape[j];
    }
    return 0;
  }
  for (int j = 0; j < in->ndim; j++) in_min[j] = in_extent[j] = NULL;
  unsigned long n0 = tec_ctx_error_count(ctx);
  int rc = d->region(ctx, k, out_min, out_extent, in_min, in_extent, d->user);
  for (int j = 0; rc == 0 && j < in->ndim; j++)
    if (!in_min[j] || !in_extent[j] || !tec_dtype_is_int(in_min[j]->type) ||
        !tec_dtype_is_int(in_extent[j]->type) || in_min[j]->type.lanes != 1 ||
        in_extent[j]->type.lanes != 1)
      rc = -1;
  if (rc == 0) {
    for (int j = 0; j < in->ndim; j++) {
      if (in_min[j]->type.bits != 64) in_min[j] = ir_cast(TEC_INDEX, in_min[j]);
      if (in_extent[j]->type.bits != 64) in_extent[j] = ir_cast(TEC_INDEX, in_extent[j]);
    }
    return 0;
  }
  if (tec_ctx_error_count(ctx) == n0)
    tec_ctx_set_error(ctx, "te_extern '%s': the region function failed for input %d ('%s') or "
                           "left a dimension without a scalar integer min and extent; it must "
                           "fill in_min[0..%d) and in_extent[0..%d) and return 0",
                      t->name, k, in->name, in->ndim, in->ndim);
  return -1;
}

/* Refuses a region of input k, for the whole output, that is provably outside its shape. */
static int check_whole_region(tec_ctx *ctx, const te_tensor *t, int k) {
  const te_tensor *in = t->ext->inputs[k];
  const ir_expr **zero = tec_ctx_alloc(ctx, sizeof *zero * (size_t)(t->ndim + 1));
  const ir_expr **mn = tec_ctx_alloc(ctx, sizeof *mn * (size_t)(2 * in->ndim + 1));
  if (!zero || !mn) return -1;
  for (int d = 0; d < t->ndim; d++) zero[d] = ir_int(ctx, 0);
  const ir_expr **ex = mn + in->ndim;
  if (te_extern_input_region(ctx, t, k, zero, t->shape, mn, ex)) return -1;
  for (int j = 0; j < in->ndim; j++) {
    ir_eval_env env = {0};
    int64_t lo = ir_eval_int(mn[j], &env), e = ir_eval_int(ex[j], &env),
            sh = ir_eval_int(in->shape[j], &env);
    if (env.bad) continue; /* symbolic: the lowering proves it or the call checks it */
    if (lo < 0 || e < 0 || lo + e > sh)
      return tec_ctx_set_error(ctx, "te_extern '%s': for the whole output the region function "
                                    "asks input %d ('%s') for [%lld, %lld) in dimension %d, "
                                    "outside its shape [0, %lld); a region must lie in the "
                                    "input (clamp it with ir_max/ir_min)",
                               t->name, k, in->name, (long long)lo, (long long)(lo + e), j,
                               (long long)sh);
  }
  return 0;
}

te_tensor *te_extern(tec_ctx *ctx, const te_extern_decl *d) {
  if (!ctx) return NULL;
  if (!d) {
    tec_ctx_set_error(ctx, "te_extern: the declaration is NULL");
    return NULL;
  }
  if (te_check_name(ctx, "te_extern", d->name)) return NULL;
  if (!d->fn && !d->symbol) {
    tec_ctx_set_error(ctx, "te_extern '%s': no function: give symbol (the C function's name, "
                           "which AOT objects reference and the JIT resolves) or fn (a pointer, "
                           "JIT only)", d->name);
    return NULL;
  }
  if (d->symbol && !c_identifier(d->symbol)) {
    tec_ctx_set_error(ctx, "te_extern '%s': symbol \"%s\" is not a C identifier", d->name,
                      d->symbol);
    return NULL;
  }
  if (d->ndim < 1) {
    tec_ctx_set_error(ctx, "te_extern '%s': ndim is %d; an extern stage has 1 to 16 dimensions",
                      d->name, d->ndim);
    return NULL;
  }
  if (d->type.lanes != 1 || d->type.code == TEC_HANDLE) {
    tec_ctx_set_error(ctx, "te_extern '%s': element type must be a scalar number or bool",
                      d->name);
    return NULL;
  }
  if (d->ninputs < 0 || d->ninputs > TEC_EXTERN_MAX_BUF - 1 || (d->ninputs && !d->inputs)) {
    tec_ctx_set_error(ctx, "te_extern '%s': %d inputs%s; an extern stage reads 0 to %d tensors",
                      d->name, d->ninputs, d->ninputs > 0 && !d->inputs ? " but inputs is NULL" : "",
                      TEC_EXTERN_MAX_BUF - 1);
    return NULL;
  }
  for (int k = 0; k < d->ninputs; k++) {
    if (!d->inputs[k]) {
      if (!tec_ctx_error(ctx))
        tec_ctx_set_error(ctx, "te_extern '%s': input %d is NULL", d->name, k);
      return NULL;
    }
    if (d->inputs[k]->ctx != ctx) {
      tec_ctx_set_error(ctx, "te_extern '%s': input %d ('%s') belongs to another ctx", d->name,
                        k, d->inputs[k]->name);
      return NULL;
    }
  }
  const ir_expr *const *shape = te_copy_shape(ctx, "te_extern", d->name, d->ndim, d->shape);
  const ir_expr *const *axis = shape ? te_new_axes(ctx, d->ndim, shape, d->axis_names) : NULL;
  te_tensor *t = axis ? tec_ctx_alloc(ctx, sizeof *t) : NULL;
  te_extern_decl *copy = t ? tec_ctx_alloc(ctx, sizeof *copy) : NULL;
  const te_tensor **ins = copy ? tec_ctx_alloc(ctx, sizeof *ins * (size_t)(d->ninputs + 1)) : NULL;
  te_tensor **dins = ins ? tec_ctx_alloc(ctx, sizeof *dins * (size_t)(d->ninputs + 1)) : NULL;
  const ir_expr **reads = dins ? tec_ctx_alloc(ctx, sizeof *reads * (size_t)(d->ninputs + 1)) : NULL;
  if (!reads) return NULL;
  *copy = *d;
  copy->name = tec_ctx_strdup(ctx, d->name);
  copy->symbol = d->symbol ? tec_ctx_strdup(ctx, d->symbol) : NULL;
  copy->shape = shape;
  copy->axis_names = NULL;
  int nin = 0;
  for (int k = 0; k < d->ninputs; k++) {
    te_tensor *in = d->inputs[k];
    dins[k] = in;
    const ir_expr **zero = tec_ctx_alloc(ctx, sizeof *zero * (size_t)(in->ndim + 1));
    if (!zero) return NULL;
    for (int j = 0; j < in->ndim; j++) zero[j] = ir_int(ctx, 0);
    if (!(reads[k] = ir_read(ctx, in, in->ndim, zero))) return NULL;
    int seen = 0;
    for (int j = 0; j < nin; j++) seen |= ins[j] == in;
    if (!seen) ins[nin++] = in;
  }
  copy->inputs = dins;
  t->op = TE_COMPUTE;
  t->ctx = ctx;
  t->name = copy->name;
  t->type = d->type;
  t->ndim = d->ndim;
  t->shape = shape;
  t->axis = axis;
  t->body = ir_extern_call(ctx, t, d->type, d->ninputs, reads);
  t->ninputs = nin;
  t->inputs = ins;
  t->tag = "extern";
  t->nout = 1;
  t->id = tec_ctx_next_id(ctx);
  t->ext = copy;
  if (!t->body) return NULL;
  for (int k = 0; k < d->ninputs; k++)
    if (check_whole_region(ctx, t, k)) return NULL;
  return t;
}
