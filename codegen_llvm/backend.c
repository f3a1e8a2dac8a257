/* backend.c — the LLVM backend's table (module/backend.h): what the module runtime calls.
 *
 *   check_target   LLVM has a target for the triple; to load, it must be this machine's
 *   load, symbol, text, release                                    (jit.c: ORC LLJIT)
 *   emit           an object file, assembly or LLVM IR                (emit.c)
 */
#include "codegen_llvm/codegen.h"

static int check_target(tec_ctx *ctx, const tec_target *target, const char *text, int load,
                        const char *who) {
  cg_target t;
  if (cg_target_of(ctx, target, &t) != 0) return -1;
  if (load && !t.is_host) {
    char *host = LLVMGetDefaultTargetTriple();
    tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                           "%s: target '%s' (triple %s) cannot run on this host (%s); "
                           "use tec_emit to write an object file for it",
                           who, text ? text : target->str, t.triple, host);
    LLVMDisposeMessage(host);
    return -1;
  }
  return 0;
}

const tec_backend tec_backend_llvm = {
    .name = "llvm",
    .check_target = check_target,
    .load = cg_jit_load,
    .symbol = cg_jit_symbol,
    .text = cg_jit_text,
    .release = cg_jit_release,
    .emit = cg_emit_file,
};
