/* target_machine.c — codegen's view of a parsed target: LLVM's target for its triple and a
 * target machine at its optimization level. The text was read once by tec_target_parse
 * (target/); nothing here reads it again.
 */
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

char *cg_strndup(const char *s, size_t n) {
  char *r = malloc(n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = '\0';
  }
  return r;
}

char *cg_take_llvm_string(char *s) {
  char *r = cg_strndup(s ? s : "", s ? strlen(s) : 0);
  if (s) LLVMDisposeMessage(s);
  return r;
}

int cg_target_of(tec_ctx *ctx, const tec_target *t, cg_target *out) {
  memset(out, 0, sizeof *out);
  tgt_llvm_init();
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &out->target, &err)) {
    tec_ctx_set_error(ctx, "target '%s': LLVM has no target for triple '%s' (%s)", t->str,
                      t->triple, err ? err : "no such target");
    LLVMDisposeMessage(err);
    return -1;
  }
  if (err) LLVMDisposeMessage(err);
  out->t = t;
  out->triple = t->triple, out->cpu = t->cpu, out->features = t->features;
  out->is_host = t->is_host, out->vector_bits = t->vector_bits;
  out->vector_fma = t->vector_fma, out->lane_fma = t->lane_fma, out->opt_level = t->opt_level;
  return 0;
}

LLVMTargetMachineRef cg_target_machine(tec_ctx *ctx, const cg_target *t, const char *who) {
  /* -O0 is LLVM's fast instruction selection, no register allocation tuning */
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                               LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t->target, t->triple, t->cpu, t->features, levels[t->opt_level],
                              LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    tec_ctx_set_error(ctx, "%s: LLVM cannot make a target machine for %s (cpu '%s')", who,
                      t->triple, t->cpu);
  return tm;
}
