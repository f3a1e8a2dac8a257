/* jit.c — tec_build: compile lowered functions in-process with ORC LLJIT.
 *
 *   cg_target_of -> cg_module_build -> cg_optimize -> LLJIT (JITTargetMachineBuilder made
 *   from our host TargetMachine, so the JIT sees the real CPU features) -> look up every
 *   function once, so link errors surface here rather than at the first call.
 *
 * Generated code calls the runtime (tec_rt_*) and libm. Those are defined in the JIT as
 * absolute symbols taken from this process (no -rdynamic needed, even when tec is linked
 * statically), and a process-symbol generator resolves anything else (memset, ...).
 * A module (cg_module) lives in a memory scope of its ctx, with everything its build made;
 * tec_ctx_on_free disposes the JIT and the scope when the ctx goes, and tec_module_free does
 * it earlier. The user holds a handle from handles.c, not the module's address: a recycled
 * slot with a generation, so a freed module's handle still says "the module was freed" and
 * repeated build/free cycles hold O(1) memory. Every public entry resolves the handle first.
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
#include "tec/runtime.h"

typedef struct cg_jit_fn {
  const char *name;
  tec_packed_fn entry;
  void *raw;
} cg_jit_fn;

typedef struct cg_module {
  tec_ctx *ctx;
  tec_module *handle;       /* the user's (handles.c); NULL until made */
  LLVMOrcLLJITRef jit;
  LLVMTargetMachineRef tm;  /* host machine: tec_module_asm */
  char *ir;                 /* the optimized IR text (malloc'd) */
  LLVMMemoryBufferRef bitcode; /* at -O0 the module as bitcode instead, ir made on request */
  char *asm_text;           /* made on first request (malloc'd) */
  int nfn;
  cg_jit_fn *fns;
  int nprep;                /* one record per function given to tec_build (prepare.c) */
  cg_prepared *prep;
  int hooked;               /* its tec_ctx_on_free hook is registered */
  tec_mem_scope *scope;     /* everything tec_build allocated, this struct included */
} cg_module;

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
      {"tec_rt_parallel_barrier", (void *)tec_rt_parallel_barrier},
      {"expf", (void *)expf}, {"exp", (void *)exp}, {"logf", (void *)logf}, {"log", (void *)log},
      {"tanhf", (void *)tanhf}, {"tanh", (void *)tanh}, {"powf", (void *)powf},
      {"pow", (void *)pow}, {"sqrtf", (void *)sqrtf}, {"sqrt", (void *)sqrt},
      {"floorf", (void *)floorf}, {"floor", (void *)floor}, {"ceilf", (void *)ceilf},
      {"ceil", (void *)ceil}, {"fmaf", (void *)fmaf}, {"fma", (void *)fma},
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

/* Disposes everything of a module, its own memory last; the handle is freed first, so a
 * later call on it says the module was freed. */
static void cg_module_release(void *arg) {
  cg_module *m = arg;
  if (!m) return;
  if (m->handle) cg_handle_release(m->handle);
  if (m->hooked) tec_ctx_forget_on_free(m->ctx, cg_module_release, m);
  cg_prepared_release(m->prep, m->nprep);
  if (m->jit) LLVMOrcDisposeLLJIT(m->jit);
  if (m->tm) LLVMDisposeTargetMachine(m->tm);
  if (m->bitcode) LLVMDisposeMemoryBuffer(m->bitcode);
  free(m->ir);
  free(m->asm_text);
  tec_mem_scope_free(m->scope); /* m with it */
}

/* The live module of a handle; NULL (with "the module was freed" for a freed one's handle,
 * in its ctx and as the runtime's error) otherwise. */
static cg_module *cg_live(const tec_module *h, const char *who) {
  tec_ctx *ctx = NULL;
  cg_module *m = h ? cg_handle_get(h, &ctx) : NULL;
  if (!h) /* no ctx to tell: the run-time error says it (tec_rt_last_error) */
    tec_rt_set_error("%s: the module is NULL (did tec_build fail? its error is in its ctx)", who);
  if (!m && h) {
    if (ctx) tec_ctx_set_error(ctx, "%s: the module was freed", who);
    tec_rt_set_error("%s: the module was freed", who);
  }
  return m;
}

void tec_module_free(tec_module *h) {
  tec_ctx *ctx;
  cg_module *m = h ? cg_handle_get(h, &ctx) : NULL; /* a second free is a no-op */
  cg_module_release(m);
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

/* Fills m (in its scope, current now); -1 with an error leaves what was made in m for
 * cg_module_release. */
static int build(tec_ctx *ctx, int nfuncs, lower_func *const *user_funcs,
                 const tec_target *target, const char *text, cg_module *m) {
  int nuser = nfuncs;
  lower_func **funcs = NULL; /* with the prepare half of each split function */
  if (cg_check_funcs(ctx, nfuncs, user_funcs, "tec_build") != 0 ||
      cg_expand_funcs(ctx, nuser, user_funcs, &nfuncs, &funcs) != 0 ||
      cg_check_funcs(ctx, nfuncs, funcs, "tec_build") != 0)
    return -1;
  cg_target t;
  if (!target) target = tec_target_parse(ctx, text); /* in the module's scope: freed with it */
  if (!target || cg_target_of(ctx, target, &t) != 0) return -1;
  if (!t.is_host) {
    char *host = LLVMGetDefaultTargetTriple();
    tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                           "tec_build: target '%s' (triple %s) cannot run on this host (%s); "
                           "use tec_emit to write an object file for it",
                           text ? text : target->str, t.triple, host);
    LLVMDisposeMessage(host);
    return -1;
  }
  cg_jit_fn *fns = tec_ctx_alloc(ctx, sizeof *fns * (size_t)nfuncs);
  LLVMTargetMachineRef tm = fns ? cg_target_machine(ctx, &t, "tec_build") : NULL;
  if (!tm) {
    if (!fns) tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory");
    return -1;
  }
  LLVMOrcThreadSafeContextRef tsctx = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef llctx = LLVMOrcThreadSafeContextGetContext(tsctx);
  LLVMModuleRef mod = cg_module_build(ctx, llctx, nfuncs, funcs, &t, tm, "tec_build");
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
  m->fns = fns;
  if (cg_prepared_init(ctx, nuser, user_funcs, &m->prep, &m->nprep) != 0) return -1;
  if (!(m->handle = cg_handle_new(ctx, m))) return -1;
  if (tec_ctx_on_free(ctx, cg_module_release, m) != 0)
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory");
  m->hooked = 1;
  for (int i = 0; i < nfuncs; i++) {
    const char *raw = tec_ctx_printf(ctx, "%s_raw", funcs[i]->name);
    fns[i].name = tec_ctx_strdup(ctx, funcs[i]->name);
    fns[i].entry = (tec_packed_fn)cg_lookup_symbol(ctx, jit, funcs[i]->name);
    fns[i].raw = fns[i].entry && raw ? cg_lookup_symbol(ctx, jit, raw) : NULL;
    if (!fns[i].entry || !fns[i].raw) return -1;
    m->nfn = i + 1;
  }
  return 0;
}

static tec_module *build_module(tec_ctx *ctx, int nfuncs, lower_func *const *funcs,
                                const tec_target *target, const char *text) {
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  /* the module and all its build made in one scope, which tec_module_free gives back */
  tec_mem_scope *ms = tec_mem_scope_begin(ctx);
  cg_module *m = ms ? tec_ctx_alloc(ctx, sizeof *m) : NULL;
  if (m) {
    m->ctx = ctx;
    m->scope = ms;
  }
  int rc = m ? build(ctx, nfuncs, funcs, target, text, m) : -1;
  tec_mem_scope_end(ms);
  if (!m) tec_mem_scope_free(ms);
  if (tec_err_end(ctx, &sc, rc == 0, "tec_build")) return m->handle;
  cg_module_release(m); /* failed, or built while something on the way reported an error */
  return NULL;
}

tec_module *tec_build(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target) {
  return ctx ? build_module(ctx, nfuncs, funcs, NULL, target) : NULL;
}

tec_module *tec_build_for(tec_ctx *ctx, int nfuncs, lower_func *const *funcs,
                          const tec_target *target) {
  return ctx ? build_module(ctx, nfuncs, funcs, target, NULL) : NULL;
}

static const cg_jit_fn *cg_find(const tec_module *h, const char *name, const char *who) {
  cg_module *m = cg_live(h, who);
  if (!m) return NULL;
  for (int i = 0; i < m->nfn; i++)
    if (name && strcmp(m->fns[i].name, name) == 0) return &m->fns[i];
  const char *have = "";
  for (int i = 0; i < m->nfn; i++)
    have = tec_ctx_printf(m->ctx, "%s%s%s", have, i ? ", " : "", m->fns[i].name);
  const char *hint = "";
  for (int i = 0; name && i < m->nfn; i++) {
    size_t n = strlen(name);
    if (strncmp(m->fns[i].name, name, n) == 0 && strcmp(m->fns[i].name + n, "_run") == 0)
      hint = tec_ctx_printf(m->ctx, "; '%s' was split into %s_prepare and %s_run (constant "
                                    "precompute): call it with tec_module_run", name, name, name);
  }
  tec_ctx_set_error(m->ctx, "%s: the module has no function '%s' (it has: %s)%s", who,
                    name ? name : "(null)", have ? have : "?", hint);
  return NULL;
}

tec_ctx *cg_module_prepared(tec_module *h, cg_prepared **p, int *n, const char *who) {
  cg_module *m = cg_live(h, who);
  if (!m) return NULL;
  *p = m->prep;
  *n = m->nprep;
  return m->ctx;
}

tec_packed_fn cg_module_entry(tec_module *h, const char *name) {
  tec_ctx *ctx;
  cg_module *m = h ? cg_handle_get(h, &ctx) : NULL;
  for (int i = 0; m && i < m->nfn; i++)
    if (strcmp(m->fns[i].name, name) == 0) return m->fns[i].entry;
  return NULL;
}

tec_packed_fn tec_module_get(tec_module *m, const char *name) {
  const cg_jit_fn *fn = cg_find(m, name, "tec_module_get");
  return fn ? fn->entry : NULL;
}

void *tec_module_get_raw(tec_module *h, const char *name) {
  size_t n = name ? strlen(name) : 0;
  tec_ctx *ctx;
  cg_module *m = h ? cg_handle_get(h, &ctx) : NULL;
  if (m && n > 4 && strcmp(name + n - 4, "_raw") == 0) { /* "f_raw" is accepted too */
    for (int i = 0; i < m->nfn; i++)
      if (strlen(m->fns[i].name) == n - 4 && strncmp(m->fns[i].name, name, n - 4) == 0)
        return m->fns[i].raw;
  }
  const cg_jit_fn *fn = cg_find(h, name, "tec_module_get_raw");
  return fn ? fn->raw : NULL;
}

/* The module again, from its bitcode or IR text, in llctx; NULL with an error. */
static LLVMModuleRef cg_reload(cg_module *m, LLVMContextRef llctx, const char *who) {
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
static char *cg_text(cg_module *m, LLVMTargetMachineRef tm, const char *who) {
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

const char *tec_module_llvm_ir(tec_module *h) {
  cg_module *m = cg_live(h, "tec_module_llvm_ir");
  if (m && !m->ir) m->ir = cg_text(m, NULL, "tec_module_llvm_ir");
  return m ? m->ir : NULL;
}

const char *tec_module_asm(tec_module *h) {
  cg_module *m = cg_live(h, "tec_module_asm");
  if (m && !m->asm_text) m->asm_text = cg_text(m, m->tm, "tec_module_asm");
  return m ? m->asm_text : NULL;
}

int32_t tec_call(tec_packed_fn fn, int32_t nargs, DLTensor *const *args) {
  if (!fn) return tec_rt_set_error("tec_call: the function is NULL (did tec_module_get fail?)");
  return fn(args, nargs);
}
