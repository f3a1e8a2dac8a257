/* emit.c — tec_emit: ahead-of-time output for any target.
 *
 *   TEC_EMIT_OBJECT   relocatable object (link with libtec_runtime.a)   } the backend
 *   TEC_EMIT_ASM      assembly text                                      } (backend.h:
 *   TEC_EMIT_LLVM_IR  optimized LLVM IR                                  }  emit)
 *   TEC_EMIT_HEADER   a C header declaring both forms of every function (header.c)
 */
#include "module/module.h"

static int emit(tec_ctx *ctx, int nfuncs, lower_func *const *user_funcs, const tec_target *target,
                tec_emit_kind kind, const char *path) {
  lower_func **funcs = NULL; /* with the prepare half of each split function */
  if (!path || !*path) return tec_ctx_set_error(ctx, "tec_emit: no output path");
  if (kind != TEC_EMIT_OBJECT && kind != TEC_EMIT_ASM && kind != TEC_EMIT_LLVM_IR &&
      kind != TEC_EMIT_HEADER)
    return tec_ctx_set_error(ctx, "tec_emit: unknown output kind %d", (int)kind);
  if (mod_check_funcs(ctx, nfuncs, user_funcs, "tec_emit") != 0 ||
      mod_expand_funcs(ctx, nfuncs, user_funcs, &nfuncs, &funcs) != 0 ||
      mod_check_funcs(ctx, nfuncs, funcs, "tec_emit") != 0)
    return -1;
  const tec_backend *be = target ? mod_backend_for(target) : NULL;
  if (!be || be->check_target(ctx, target, NULL, 0, "tec_emit") != 0) return -1;
  if (kind == TEC_EMIT_HEADER) return mod_write_header(ctx, nfuncs, funcs, target->triple, path);
  tec_ir_func *ir = mod_lower_funcs(ctx, nfuncs, funcs, target, "tec_emit");
  if (!ir) return -1;
  tec_backend_file file = kind == TEC_EMIT_OBJECT ? TEC_BACKEND_OBJECT
                          : kind == TEC_EMIT_ASM  ? TEC_BACKEND_ASM
                                                  : TEC_BACKEND_IR;
  return be->emit(ctx, nfuncs, ir, target, file, path);
}

int tec_emit(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target,
             tec_emit_kind kind, const char *path) {
  if (!ctx) return -1;
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  int rc = emit(ctx, nfuncs, funcs, tec_target_parse(ctx, target), kind, path);
  return tec_err_end(ctx, &sc, rc == 0, "tec_emit") ? 0 : -1;
}

int tec_emit_for(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const tec_target *target,
                 tec_emit_kind kind, const char *path) {
  if (!ctx) return -1;
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  int rc = emit(ctx, nfuncs, funcs, target ? target : tec_target_parse(ctx, NULL), kind, path);
  return tec_err_end(ctx, &sc, rc == 0, "tec_emit") ? 0 : -1;
}
