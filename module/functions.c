/* functions.c — the lowered functions a module or an object file is made of, ready for a
 * backend (backend.h): checked (C identifiers, no runtime or libc name, no two alike, no
 * `f` beside an `f_raw`), each split function followed by its prepare half, and each one
 * lowered for the target by the build-time passes (lower/pipeline.c: lower_for_target) into
 * a tec_ir_func, whose arguments carry what the backend reads of a te tensor (name, element
 * type, buffer variable, the whole buffer's extents with any margin).
 */
#include <string.h>
#include "lower/passes.h"
#include "module/module.h"

static int is_ident(const char *s) {
  if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

/* Names generated code (or the C library it links against) already uses. */
static const char *const reserved_names[] = {
    "exp", "expf", "log", "logf", "tanh", "tanhf", "pow", "powf", "sqrt", "sqrtf",
    "floor", "floorf", "ceil", "ceilf", "fma", "fmaf", "fabs", "fabsf", "roundeven", "roundevenf", "memset",
    "memcpy", "memmove", "malloc", "free", "main",
};

static int is_reserved(const char *name) {
  if (strncmp(name, "tec_rt_", 7) == 0 || strncmp(name, "llvm.", 5) == 0) return 1;
  for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
    if (strcmp(name, reserved_names[i]) == 0) return 1;
  return 0;
}

int mod_check_funcs(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *who) {
  if (!ctx) return -1;
  if (nfuncs < 1 || !funcs)
    return tec_ctx_set_error(ctx, "%s: expected at least one lowered function, got %d", who,
                             nfuncs);
  for (int i = 0; i < nfuncs; i++) {
    const lower_func *lf = funcs[i];
    if (!lf) {
      /* a failed tec_lower: its message is already in the ctx */
      if (tec_ctx_error(ctx)) return -1;
      return tec_ctx_set_error(ctx, "%s: function %d is NULL", who, i);
    }
    if (!is_ident(lf->name))
      return tec_ctx_set_error(ctx,
                               "%s: function name '%s' is not a C identifier (letters, digits, "
                               "'_', not starting with a digit)",
                               who, lf->name ? lf->name : "(null)");
    if (is_reserved(lf->name))
      return tec_ctx_set_error(ctx,
                               "%s: function name '%s' is reserved (the runtime or the C "
                               "library generated code calls has a symbol of that name); "
                               "choose another",
                               who, lf->name);
    if (lf->nargs < 0 || (lf->nargs > 0 && (!lf->args || !lf->arg_bufs)) ||
        (lf->nsize > 0 && !lf->size_vars) || lf->nsize < 0)
      return tec_ctx_set_error(ctx, "%s: function '%s' has an inconsistent argument list", who,
                               lf->name);
    for (int a = 0; a < lf->nargs; a++)
      if (!lf->args[a] || !lf->arg_bufs[a])
        return tec_ctx_set_error(ctx, "%s: function '%s' argument %d is NULL", who, lf->name,
                                 a);
    for (int j = 0; j < i; j++) {
      const char *o = funcs[j]->name;
      size_t n = strlen(o);
      if (strcmp(o, lf->name) == 0)
        return tec_ctx_set_error(ctx, "%s: two functions are named '%s'", who, lf->name);
      /* "f" makes "f_raw": another function must not be called that */
      if ((strncmp(lf->name, o, n) == 0 && strcmp(lf->name + n, "_raw") == 0) ||
          (strncmp(o, lf->name, strlen(lf->name)) == 0 &&
           strcmp(o + strlen(lf->name), "_raw") == 0))
        return tec_ctx_set_error(ctx, "%s: function names '%s' and '%s' clash ('%s_raw' is the "
                                 "unchecked form of '%s')",
                                 who, o, lf->name, n < strlen(lf->name) ? o : lf->name,
                                 n < strlen(lf->name) ? o : lf->name);
    }
  }
  return 0;
}

int mod_expand_funcs(tec_ctx *ctx, int n, lower_func *const *in, int *nout, lower_func ***out) {
  int total = n;
  for (int i = 0; i < n; i++)
    if (in[i] && in[i]->prepare) total++;
  lower_func **f = tec_ctx_alloc(ctx, sizeof *f * (size_t)(total ? total : 1));
  if (!f) return -1;
  int k = 0;
  for (int i = 0; i < n; i++) {
    f[k++] = in[i];
    if (in[i] && in[i]->prepare) f[k++] = in[i]->prepare;
  }
  *nout = k;
  *out = f;
  return 0;
}

tec_ir_func *mod_lower_funcs(tec_ctx *ctx, int n, lower_func *const *funcs, const tec_target *t,
                             const char *who) {
  tec_ir_func *ir = tec_ctx_alloc(ctx, sizeof *ir * (size_t)(n ? n : 1));
  if (!ir) return NULL;
  lower_target lt = {.vector_bits = t->vector_bits, .name = t->str,
                     .half_arith = tec_target_has(t, TEC_FEATURE_FULLFP16) ||
                                   tec_target_has(t, TEC_FEATURE_AVX512FP16)};
  for (int i = 0; i < n; i++) {
    const lower_func *lf = funcs[i];
    tec_ir_arg *args = tec_ctx_alloc(ctx, sizeof *args * (size_t)(lf->nargs ? lf->nargs : 1));
    if (!args) return NULL;
    for (int a = 0; a < lf->nargs; a++)
      args[a] = (tec_ir_arg){.name = lf->args[a]->name, .type = lf->args[a]->type,
                             .buf = lf->arg_bufs[a], .ndim = lf->args[a]->ndim,
                             .extents = te_buffer_shape(lf->args[a]),
                             .written = lf->args[a]->op == TE_COMPUTE};
    const ir_stmt *entry = NULL;
    const ir_stmt *body =
        lower_for_target(lf, &lt, who, &entry);
    if (!body || !entry) return NULL;
    ir[i] = (tec_ir_func){.name = lf->name, .nargs = lf->nargs, .args = args,
                          .nsize = lf->nsize, .size_vars = lf->size_vars, .body = body,
                          .entry = entry};
  }
  return ir;
}
