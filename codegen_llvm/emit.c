/* emit.c — the LLVM backend's file half (backend.h: emit): IR functions compiled for any
 * target into an object file, assembly or the optimized LLVM IR. The header beside them is
 * the module runtime's (module/header.c).
 */
#include "codegen_llvm/codegen.h"

int cg_emit_file(tec_ctx *ctx, int nfuncs, const tec_ir_func *funcs, const tec_target *target,
                 tec_backend_file kind, const char *path) {
  cg_target t;
  if (cg_target_of(ctx, target, &t) != 0) return -1;
  LLVMTargetMachineRef tm = cg_target_machine(ctx, &t, "tec_emit");
  if (!tm) return -1;
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef mod = cg_module_build(ctx, llctx, nfuncs, funcs, &t, tm, "tec_emit", 1);
  int rc = -1;
  if (mod && cg_optimize(ctx, mod, tm, &t, "tec_emit") == 0) {
    char *err = NULL;
    char *p = (char *)tec_ctx_strdup(ctx, path);
    LLVMBool bad;
    if (!p)
      bad = 1;
    else if (kind == TEC_BACKEND_IR)
      bad = LLVMPrintModuleToFile(mod, p, &err);
    else
      bad = LLVMTargetMachineEmitToFile(tm, mod, p,
                                        kind == TEC_BACKEND_OBJECT ? LLVMObjectFile
                                                                   : LLVMAssemblyFile,
                                        &err);
    if (bad)
      tec_ctx_set_error(ctx, "tec_emit: cannot write '%s': %s", path, err ? err : "out of memory");
    else
      rc = 0;
    if (err) LLVMDisposeMessage(err);
  }
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(llctx);
  LLVMDisposeTargetMachine(tm);
  return rc;
}
