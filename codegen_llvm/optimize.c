/* optimize.c — verify the module, tell every function its CPU, run default<O3> (or the
 * target's -O<n>: default<O0> runs no optimization, for a fast build).
 *
 * The target-cpu / target-features attributes are what make the vectorizers and instruction
 * selection use AVX-512 or NEON; the TargetMachine handed to LLVMRunPasses supplies the cost
 * model. A module that fails verification is a codegen bug: it is reported as an internal
 * error with LLVM's reason, never printed or aborted on.
 */
#include <string.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "codegen_llvm/codegen.h"

/* Function attributes implied by a feature. LLVM tunes many AVX-512 CPUs (Ice Lake, Skylake-X)
 * to prefer 256-bit vectors; tec's schedules are written for the full register width (the
 * GEMM ceiling in docs/architecture.md is measured with zmm), so it asks for 512 bits. */
static const struct {
  tec_feature feature;
  const char *key, *value;
} cg_feature_attrs[] = {
    {TEC_FEATURE_AVX512F, "prefer-vector-width", "512"},
    {TEC_FEATURE_AVX512F, "min-legal-vector-width", "512"},
};

static void cg_set_target_attrs(LLVMModuleRef mod, const cg_target *t) {
  LLVMContextRef llctx = LLVMGetModuleContext(mod);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    if (t->cpu && *t->cpu)
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(llctx, "target-cpu", 10, t->cpu,
                                                        (unsigned)strlen(t->cpu)));
    if (t->features && *t->features)
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(llctx, "target-features", 15,
                                                        t->features,
                                                        (unsigned)strlen(t->features)));
    for (size_t i = 0; i < sizeof cg_feature_attrs / sizeof cg_feature_attrs[0]; i++)
      if (tec_target_has(t->t, cg_feature_attrs[i].feature))
        LLVMAddAttributeAtIndex(
            fn, LLVMAttributeFunctionIndex,
            LLVMCreateStringAttribute(llctx, cg_feature_attrs[i].key,
                                      (unsigned)strlen(cg_feature_attrs[i].key),
                                      cg_feature_attrs[i].value,
                                      (unsigned)strlen(cg_feature_attrs[i].value)));
  }
}

int cg_optimize(tec_ctx *ctx, LLVMModuleRef mod, LLVMTargetMachineRef tm, const cg_target *t,
                const char *who) {
  char *why = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &why)) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                           "%s: internal error: generated LLVM IR is invalid: %s", who,
                           why ? why : "(no reason given)");
    LLVMDisposeMessage(why);
    return -1;
  }
  LLVMDisposeMessage(why);
  cg_set_target_attrs(mod, t);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
  static const char *const pipelines[] = {"default<O0>", "default<O1>", "default<O2>",
                                          "default<O3>"};
  LLVMErrorRef err = LLVMRunPasses(mod, pipelines[t->opt_level], tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                           "%s: internal error: LLVM optimization failed: %s", who, msg);
    LLVMDisposeErrorMessage(msg);
    return -1;
  }
  return 0;
}
