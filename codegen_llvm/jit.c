/* jit.c — the LLVM backend's in-process half (backend.h: load, symbol, text, release):
 * compile IR functions with ORC LLJIT.
 *
 *   cg_target_of -> cg_module_build -> cg_optimize -> LLJIT (JITTargetMachineBuilder made
 *   from our host TargetMachine, so the JIT sees the real CPU features)
 *
 * Generated code calls the runtime (tec_rt_*) and libm. Those are defined in the JIT as
 * absolute symbols taken from this process (no -rdynamic needed, even when tec is linked
 * statically), and a process-symbol generator resolves anything else (memset, ...).
 * The loaded code (cg_jit) is allocated in the ctx's current memory scope, the module's
 * (module/module.c owns the module: handle, function table, prepare records); release
 * disposes what LLVM and malloc hold.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm/Config/llvm-config.h>
#include "codegen_llvm/codegen.h"

typedef struct cg_jit {
  tec_ctx *ctx;
  LLVMOrcLLJITRef jit;
  LLVMTargetMachineRef tm;  /* host machine: tec_module_asm */
  char *ir;                 /* the optimized IR text (malloc'd) */
  LLVMMemoryBufferRef bitcode; /* at -O0 the module as bitcode instead, ir made on request */
  char *asm_text;           /* made on first request (malloc'd) */
} cg_jit;

/* What generated code may call, by address in this process. */
typedef struct cg_symbol {
  const char *name;
  void *addr;
} cg_symbol;

static void cg_runtime_symbols(cg_symbol *out, int *n) {
  cg_symbol syms[] = {
      {"tec_rt_check_fail", (void *)tec_rt_check_fail},
      {"tec_rt_set_error", (void *)tec_rt_set_error},
      {"tec_rt_last_error", (void *)tec_rt_last_error},
      {"tec_rt_alloc", (void *)tec_rt_alloc},
      {"tec_rt_free", (void *)tec_rt_free},
      {"tec_rt_parallel_for", (void *)tec_rt_parallel_for},
      {"tec_rt_parallel_for_dynamic", (void *)tec_rt_parallel_for_dynamic},
      {"tec_rt_parallel_launch", (void *)tec_rt_parallel_launch},
      {"tec_rt_call_strided", (void *)tec_rt_call_strided},
      {"tec_rt_parallel_barrier", (void *)tec_rt_parallel_barrier},
      {"tec_rt_extern_call", (void *)tec_rt_extern_call},
      {"expf", (void *)expf}, {"exp", (void *)exp}, {"logf", (void *)logf}, {"log", (void *)log},
      {"tanhf", (void *)tanhf}, {"tanh", (void *)tanh}, {"powf", (void *)powf},
      {"pow", (void *)pow}, {"sqrtf", (void *)sqrtf}, {"sqrt", (void *)sqrt},
      {"floorf", (void *)floorf}, {"floor", (void *)floor}, {"ceilf", (void *)ceilf},
      {"ceil", (void *)ceil}, {"fmaf", (void *)fmaf}, {"fma", (void *)fma},
      {"roundevenf", (void *)roundevenf}, {"roundeven", (void *)roundeven},
      {"memset", (void *)memset}, {"memcpy", (void *)memcpy}, {"memmove", (void *)memmove},
  };
  *n = (int)(sizeof syms / sizeof syms[0]);
  memcpy(out, syms, sizeof syms);
}
#define CG_MAX_SYMBOLS 64

/* LLVM 15 renamed the C API's symbol-map pair; the layout is unchanged. */
#if LLVM_VERSION_MAJOR >= 15
typedef LLVMOrcCSymbolMapPair cg_symbol_pair;
#else
typedef LLVMJITCSymbolMapPair cg_symbol_pair;
#endif

static int cg_llvm_error(tec_ctx *ctx, LLVMErrorRef err, const char *what) {
  char *msg = LLVMGetErrorMessage(err);
  tec_ctx_set_error(ctx, "%s: %s", what, msg ? msg : "(unknown LLVM error)");
  LLVMDisposeErrorMessage(msg);
  return -1;
}

/* ORC reports asynchronous failures (a symbol no one defines) here instead of stderr. */
static void cg_report_error(void *arg, LLVMErrorRef err) {
  cg_llvm_error((tec_ctx *)arg, err, "tec JIT");
}

void cg_jit_release(void *code) {
  cg_jit *m = code;
  if (!m) return;
  if (m->jit) LLVMOrcDisposeLLJIT(m->jit);
  if (m->tm) LLVMDisposeTargetMachine(m->tm);
  if (m->bitcode) LLVMDisposeMemoryBuffer(m->bitcode);
  free(m->ir);
  free(m->asm_text);
  memset(m, 0, sizeof *m); /* its memory is the module's scope */
}

static int cg_define_symbols(tec_ctx *ctx, LLVMOrcLLJITRef jit, LLVMOrcJITDylibRef jd) {
  cg_symbol syms[CG_MAX_SYMBOLS];
  cg_symbol_pair pairs[CG_MAX_SYMBOLS];
  int n;
  cg_runtime_symbols(syms, &n);
  for (int i = 0; i < n; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, syms[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, (size_t)n);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, mu);
  if (err) {
    LLVMOrcDisposeMaterializationUnit(mu);
    return cg_llvm_error(ctx, err, "tec_build: defining runtime symbols in the JIT");
  }
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit),
                                                             NULL, NULL);
  if (err) return cg_llvm_error(ctx, err, "tec_build: process symbol search");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return 0;
}

/* Makes the LLJIT for target t; the module is handed over (even on failure). */
static LLVMOrcLLJITRef cg_make_jit(tec_ctx *ctx, const cg_target *t, LLVMOrcThreadSafeModuleRef tsm) {
  LLVMTargetMachineRef jtm = cg_target_machine(ctx, t, "tec_build");
  if (!jtm) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    return NULL;
  }
  LLVMOrcJITTargetMachineBuilderRef jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm);
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);
  LLVMOrcLLJITRef jit = NULL;
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit, builder);
  if (err) {
    cg_llvm_error(ctx, err, "tec_build: cannot create the JIT");
    LLVMOrcDisposeThreadSafeModule(tsm);
    return NULL;
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit), cg_report_error, ctx);
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  if (cg_define_symbols(ctx, jit, jd) != 0) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    LLVMOrcDisposeLLJIT(jit);
    return NULL;
  }
  err = LLVMOrcLLJITAddLLVMIRModule(jit, jd, tsm); /* takes tsm, even on failure */
  if (err) {
    cg_llvm_error(ctx, err, "tec_build: adding the module to the JIT");
    LLVMOrcDisposeLLJIT(jit);
    return NULL;
  }
  return jit;
}

static void *cg_lookup_symbol(tec_ctx *ctx, LLVMOrcLLJITRef jit, const char *name) {
  LLVMOrcExecutorAddress addr = 0;
  LLVMErrorRef err = LLVMOrcLLJITLookup(jit, &addr, name);
  if (err) {
    cg_llvm_error(ctx, err, tec_ctx_printf(ctx, "tec_build: cannot link '%s'", name));
    return NULL;
  }
  return (void *)(uintptr_t)addr;
}

/* Fills m; -1 with an error leaves what was made in m for cg_jit_release. */
static int load(tec_ctx *ctx, int nfuncs, const tec_ir_func *funcs, const tec_target *target,
                cg_jit *m) {
  cg_target t;
  if (cg_target_of(ctx, target, &t) != 0) return -1;
  LLVMTargetMachineRef tm = cg_target_machine(ctx, &t, "tec_build");
  if (!tm) return -1;
  LLVMOrcThreadSafeContextRef tsctx = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef llctx = LLVMOrcThreadSafeContextGetContext(tsctx);
  LLVMModuleRef mod = cg_module_build(ctx, llctx, nfuncs, funcs, &t, tm, "tec_build", 0);
  if (!mod || cg_optimize(ctx, mod, tm, &t, "tec_build") != 0) {
    if (mod) LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsctx);
    LLVMDisposeTargetMachine(tm);
    return -1;
  }
  /* the IR text; at -O0, the fast build, bitcode (a third of the time to write: only a caller
   * of tec_module_llvm_ir pays for the text, whose use-list comments may then differ) */
  if (t.opt_level == 0) {
    m->bitcode = LLVMWriteBitcodeToMemoryBuffer(mod);
  } else {
    char *ir = LLVMPrintModuleToString(mod);
    m->ir = ir ? cg_take_llvm_string(ir) : NULL;
  }
  if (!m->bitcode && !m->ir) {
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsctx);
    LLVMDisposeTargetMachine(tm);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory (the IR text)");
  }
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsctx);
  LLVMOrcDisposeThreadSafeContext(tsctx); /* the module keeps the context alive */
  LLVMOrcLLJITRef jit = cg_make_jit(ctx, &t, tsm);
  if (!jit) {
    LLVMDisposeTargetMachine(tm);
    return -1;
  }
  m->jit = jit;
  m->tm = tm;
  return 0;
}

void *cg_jit_load(tec_ctx *ctx, int nfuncs, const tec_ir_func *funcs, const tec_target *t) {
  cg_jit *m = tec_ctx_alloc(ctx, sizeof *m);
  if (!m) return NULL;
  memset(m, 0, sizeof *m);
  m->ctx = ctx;
  if (load(ctx, nfuncs, funcs, t, m) == 0) return m;
  cg_jit_release(m);
  return NULL;
}

void *cg_jit_symbol(void *code, tec_ctx *ctx, const char *name) {
  return cg_lookup_symbol(ctx, ((cg_jit *)code)->jit, name);
}

/* The module again, from its bitcode or IR text, in llctx; NULL with an error. */
static LLVMModuleRef cg_reload(cg_jit *m, LLVMContextRef llctx, const char *who) {
  LLVMMemoryBufferRef buf =
      m->bitcode ? LLVMCreateMemoryBufferWithMemoryRangeCopy(LLVMGetBufferStart(m->bitcode),
                                                             LLVMGetBufferSize(m->bitcode), "tec")
                 : LLVMCreateMemoryBufferWithMemoryRangeCopy(m->ir, strlen(m->ir), "tec.ll");
  LLVMModuleRef mod = NULL;
  char *err = NULL;
  if (!buf || LLVMParseIRInContext(llctx, buf, &mod, &err)) { /* takes buf */
    tec_ctx_set_error_kind(m->ctx, TEC_ERR_INTERNAL,
                           "%s: internal error: cannot re-read the module: %s", who,
                           err ? err : "?");
    LLVMDisposeMessage(err);
    return NULL;
  }
  return mod;
}

/* Text made on demand from the module kept, in a context of its own: the IR, or (tm) the
 * assembly. */
static char *cg_text(cg_jit *m, LLVMTargetMachineRef tm, const char *who) {
  LLVMContextRef llctx = LLVMContextCreate();
  LLVMModuleRef mod = llctx ? cg_reload(m, llctx, who) : NULL;
  char *text = NULL, *err = NULL;
  if (mod && !tm) {
    char *ir = LLVMPrintModuleToString(mod);
    text = ir ? cg_take_llvm_string(ir) : NULL; /* (malloc'd: it goes with the module) */
    if (!text) tec_ctx_set_error_kind(m->ctx, TEC_ERR_OOM, "%s: out of memory", who);
  }
  LLVMMemoryBufferRef out = NULL;
  if (mod && tm && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &out)) {
    tec_ctx_set_error(m->ctx, "%s: %s", who, err ? err : "code generation failed");
    LLVMDisposeMessage(err);
  } else if (mod && tm) {
    size_t size = LLVMGetBufferSize(out);
    text = malloc(size + 1);
    if (text) {
      memcpy(text, LLVMGetBufferStart(out), size);
      text[size] = '\0';
    } else {
      tec_ctx_set_error_kind(m->ctx, TEC_ERR_OOM, "%s: out of memory", who);
    }
    LLVMDisposeMemoryBuffer(out);
  }
  if (mod) LLVMDisposeModule(mod);
  if (llctx) LLVMContextDispose(llctx);
  return text;
}

const char *cg_jit_text(void *code, tec_ctx *ctx, int assembly, const char *who) {
  cg_jit *m = code;
  (void)ctx; /* errors go to the ctx that built it, the module's */
  if (!assembly && !m->ir) m->ir = cg_text(m, NULL, who);
  if (assembly && !m->asm_text) m->asm_text = cg_text(m, m->tm, who);
  return assembly ? m->asm_text : m->ir;
}
