/* optimize.c — verify the module, tell every function its CPU, run default<O3> (or the
 * target's -O<n>: default<O0> runs no optimization, for a fast build).
 *
 * The target-cpu / target-features attributes are what make the vectorizers and instruction
 * selection use AVX-512 or NEON; the TargetMachine handed to LLVMRunPasses supplies the cost
 * model. A module that fails verification is a codegen bug: it is reported as an internal
 * error with LLVM's reason, never printed or aborted on.
 */
#include <stdio.h>
#include <stdlib.h>
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

/* Subtarget features that schedule a function for register pressure, by architecture, for
 * the functions a schedule marked (pragma sched_pressure: CG_SCHED_PRESSURE_ATTR). ARMv7:
 * LLVM's ARM backend orders each block by SelectionDAG's "hybrid" list scheduler, latency
 * first, which does not count the registers values live into the block hold (a loop's
 * invariants): depthwise_nchwc's 1x1 tile on rasp4b32 kept 5 input loads in flight beside 9
 * kernel taps, the bias, ReLU's zero and the accumulator, 17 q registers, and LLVM 19 reloaded
 * a tap from the stack every iteration. "+use-misched" orders the DAG by source and schedules
 * with the MachineScheduler, which tracks the pressure across the block (docs/arm.md). Not for
 * every ARMv7 function: the pointwise and conv0 tiles spill or grow under it. Other
 * architectures: nothing (AArch64 and x86 always use the MachineScheduler). */
static const struct {
  tec_arch arch;
  const char *features;
} cg_pressure_features[] = {
    {TEC_ARCH_ARMV7, "+use-misched"},
};

/* target-features of fn: the target's, and the pressure features if fn is marked */
static void cg_set_features(LLVMContextRef llctx, LLVMValueRef fn, const cg_target *t) {
  const char *extra = NULL;
  if (LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, CG_SCHED_PRESSURE_ATTR,
                                    (unsigned)strlen(CG_SCHED_PRESSURE_ATTR)))
    for (size_t i = 0; i < sizeof cg_pressure_features / sizeof cg_pressure_features[0]; i++)
      if (t->t && t->t->arch == cg_pressure_features[i].arch) extra = cg_pressure_features[i].features;
  const char *base = t->features ? t->features : "";
  char *all = NULL;
  if (extra && (all = malloc(strlen(base) + strlen(extra) + 2)))
    sprintf(all, "%s%s%s", base, *base ? "," : "", extra);
  const char *fs = all ? all : base; /* no memory: the target's own (a tuning left out) */
  if (*fs)
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(llctx, "target-features", 15, fs,
                                                      (unsigned)strlen(fs)));
  free(all);
}

static void cg_set_target_attrs(LLVMModuleRef mod, const cg_target *t) {
  LLVMContextRef llctx = LLVMGetModuleContext(mod);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    if (t->cpu && *t->cpu)
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(llctx, "target-cpu", 10, t->cpu,
                                                        (unsigned)strlen(t->cpu)));
    cg_set_features(llctx, fn, t);
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
