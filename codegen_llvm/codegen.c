/* codegen.c — lowered functions to one LLVM module: the driver, types and scopes.
 *
 * For each IR function `f` (module/backend.h: lowered for the target) the module gets
 *
 *   define i32 @f_raw(float* noalias nocapture align 64 %A, ..., i64 %n, ...)   ; the kernel
 *   define i32 @f(%DLTensor** %args, i32 %nargs)                              ; entry.c
 *
 * The kernel body is cg_stmt (codegen_stmt.c) over the loop program; expressions are in
 * codegen_expr.c, memory (load, store, allocate) in codegen_mem.c. Variables map to LLVM
 * values through a binding stack (cg_bind / cg_unbind_to) that scopes follow.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

LLVMTypeRef cg_ptr_to(LLVMTypeRef elem) { return LLVMPointerType(elem, 0); }

static LLVMTypeRef cg_scalar_type(cg_func *f, tec_dtype t, int in_memory) {
  switch (t.code) {
  case TEC_BOOL: return in_memory ? f->i8 : f->i1;
  case TEC_INT:
  case TEC_UINT: return LLVMIntTypeInContext(f->llctx, t.bits ? t.bits : 32);
  case TEC_FLOAT:
    if (t.bits == 16) return LLVMHalfTypeInContext(f->llctx);
    if (t.bits == 64) return LLVMDoubleTypeInContext(f->llctx);
    return LLVMFloatTypeInContext(f->llctx);
  case TEC_HANDLE: return f->ptr8;
  default: return NULL;
  }
}

LLVMTypeRef cg_type(cg_func *f, tec_dtype t) {
  LLVMTypeRef s = cg_scalar_type(f, t, 0);
  if (!s) return NULL;
  return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

LLVMTypeRef cg_mem_type(cg_func *f, tec_dtype t) { return cg_scalar_type(f, t, 1); }

int cg_bind(cg_func *f, const ir_expr *var, LLVMValueRef v, LLVMTypeRef elem) {
  if (f->nbind == f->capbind) {
    int cap = f->capbind ? 2 * f->capbind : 32;
    cg_binding *nb = realloc(f->binds, (size_t)cap * sizeof *nb);
    if (!nb) {
      cg_oom(f);
      return -1;
    }
    f->binds = nb;
    f->capbind = cap;
  }
  f->binds[f->nbind++] = (cg_binding){var, v, elem};
  return 0;
}

void cg_unbind_to(cg_func *f, int mark) {
  if (mark < f->nbind) f->nbind = mark;
}

const cg_binding *cg_lookup(cg_func *f, const ir_expr *var) {
  for (int i = f->nbind - 1; i >= 0; i--) /* innermost first: shadowing works */
    if (f->binds[i].var == var) return &f->binds[i];
  return NULL;
}

LLVMValueRef cg_declare(cg_func *f, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        unsigned nparams, LLVMTypeRef *ty) {
  *ty = LLVMFunctionType(ret, params, nparams, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(f->mod, name);
  if (!fn) fn = LLVMAddFunction(f->mod, name, *ty);
  return fn;
}

LLVMValueRef cg_internal(cg_func *f, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!f->failed)
    tec_ctx_set_error_kind(f->ctx, TEC_ERR_INTERNAL, "%s: internal error generating '%s': %s",
                           f->who, f->lf && f->lf->name ? f->lf->name : "?", msg);
  f->failed = 1;
  return NULL;
}

LLVMValueRef cg_oom(cg_func *f) {
  if (!f->failed)
    tec_ctx_set_error_kind(f->ctx, TEC_ERR_OOM, "%s: out of memory generating '%s'", f->who,
                           f->lf && f->lf->name ? f->lf->name : "?");
  f->failed = 1;
  return NULL;
}

void cg_emit_fail_return(cg_func *f, const char *msg, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef ty, params[3] = {f->ptr8, f->i64, f->i64};
  LLVMValueRef fail = cg_declare(f, "tec_rt_check_fail", f->i32, params, 3, &ty);
  LLVMValueRef fmt = LLVMBuildGlobalStringPtr(f->b, msg, "msg");
  LLVMValueRef args[3] = {fmt, a ? a : LLVMConstInt(f->i64, 0, 0),
                          b ? b : LLVMConstInt(f->i64, 0, 0)};
  LLVMBuildCall2(f->b, ty, fail, args, 3, "");
  cg_emit_return(f, LLVMConstInt(f->i32, (unsigned long long)-1, 1));
}

void cg_emit_return(cg_func *f, LLVMValueRef rc) {
  if (f->nheap > 0) {
    LLVMTypeRef fty, fp[1] = {f->ptr8};
    LLVMValueRef rfree = cg_declare(f, "tec_rt_free", LLVMVoidTypeInContext(f->llctx), fp, 1,
                                    &fty);
    for (int i = f->nheap - 1; i >= 0; i--) {
      LLVMValueRef p = LLVMBuildPointerCast(f->b, f->heap[i], f->ptr8, "");
      LLVMBuildCall2(f->b, fty, rfree, &p, 1, "");
    }
  }
  LLVMBuildRet(f->b, rc);
}

void cg_add_attr(cg_func *f, LLVMValueRef fn, LLVMAttributeIndex idx, const char *name,
                 uint64_t val) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (kind) LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(f->llctx, kind, val));
}

/* 1 if the module has no global called name. An earlier function's outlined parallel body
 * (internal: "f_par0") gives the name up to a user function of that name. */
static int cg_name_free(cg_func *f, const char *name) {
  LLVMValueRef g = LLVMGetNamedFunction(f->mod, name);
  if (!g) return 1;
  if (LLVMGetLinkage(g) != LLVMInternalLinkage) return 0;
  const char *other = tec_ctx_printf(f->ctx, "%s.outlined", name);
  if (!other) return 0;
  LLVMSetValueName2(g, other, strlen(other));
  return 1;
}

/* The raw kernel of lf: buffers, then sizes. */
static int cg_func_build(cg_func *f) {
  const tec_ir_func *lf = f->lf;
  int np = lf->nargs + lf->nsize;
  LLVMTypeRef *pt = calloc((size_t)(np ? np : 1), sizeof *pt);
  if (!pt) return cg_oom(f), -1;
  for (int i = 0; i < lf->nargs; i++) {
    LLVMTypeRef et = cg_mem_type(f, tec_dtype_scalar(lf->args[i].type));
    if (!et || lf->args[i].type.code == TEC_HANDLE) {
      free(pt);
      return tec_ctx_set_error(f->ctx, "%s: '%s' argument %d ('%s') has no memory type", f->who,
                               lf->name, i, lf->args[i].name);
    }
    pt[i] = cg_ptr_to(et);
  }
  for (int i = 0; i < lf->nsize; i++) pt[lf->nargs + i] = f->i64;
  LLVMTypeRef raw_ty = LLVMFunctionType(f->i32, pt, (unsigned)np, 0);
  const char *raw_name = tec_ctx_printf(f->ctx, "%s_raw", lf->name);
  if (!raw_name || !cg_name_free(f, raw_name) || !cg_name_free(f, lf->name)) {
    free(pt);
    return tec_ctx_set_error(f->ctx, "%s: function '%s' clashes with a runtime symbol", f->who,
                             lf->name);
  }
  LLVMValueRef raw = LLVMAddFunction(f->mod, raw_name, raw_ty);
  f->fn = raw;
  f->dscope = NULL;
  cg_dbg_fn(f, raw);
  cg_add_attr(f, raw, LLVMAttributeFunctionIndex, "nounwind", 0);
  for (int i = 0; i < lf->nargs; i++) {
    LLVMValueRef p = LLVMGetParam(raw, (unsigned)i);
    const char *nm = lf->args[i].name ? lf->args[i].name : "arg";
    LLVMSetValueName2(p, nm, strlen(nm));
    /* the entry checks make these true; raw callers are told so in build.h */
    cg_add_attr(f, raw, (LLVMAttributeIndex)(i + 1), "noalias", 0);
    cg_add_attr(f, raw, (LLVMAttributeIndex)(i + 1), "nocapture", 0);
    cg_add_attr(f, raw, (LLVMAttributeIndex)(i + 1), "align", TEC_ALIGN);
    if (cg_bind(f, lf->args[i].buf, p, cg_mem_type(f, tec_dtype_scalar(lf->args[i].type))))
      break;
  }
  for (int i = 0; i < lf->nsize; i++) {
    LLVMValueRef p = LLVMGetParam(raw, (unsigned)(lf->nargs + i));
    const char *nm = lf->size_vars[i] && lf->size_vars[i]->name ? lf->size_vars[i]->name : "n";
    LLVMSetValueName2(p, nm, strlen(nm));
    cg_bind(f, lf->size_vars[i], p, NULL);
  }
  free(pt);
  if (f->failed) return -1;

  f->entry = LLVMAppendBasicBlockInContext(f->llctx, raw, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(f->llctx, raw, "start");
  LLVMPositionBuilderAtEnd(f->b, start);
  if (!lf->body || !lf->entry || cg_stmt(f, lf->body) != 0) return -1;
  cg_stream_fence(f);
  LLVMBuildRet(f->b, LLVMConstInt(f->i32, 0, 0));
  LLVMPositionBuilderAtEnd(f->b, f->entry); /* allocas are in; now fall into the body */
  LLVMBuildBr(f->b, start);
  cg_unbind_to(f, 0);
  cg_dbg_clear(f);
  return cg_entry_build(f, raw, raw_ty, lf->entry);
}

LLVMModuleRef cg_module_build(tec_ctx *ctx, LLVMContextRef llctx, int nfuncs,
                              const tec_ir_func *funcs, const cg_target *t,
                              LLVMTargetMachineRef tm, const char *who, int object) {
  unsigned long errors_before = tec_ctx_error_count(ctx);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("tec", llctx);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetTarget(mod, t->triple);
  LLVMSetModuleDataLayout(mod, td);
  cg_func f;
  memset(&f, 0, sizeof f);
  f.ctx = ctx;
  f.who = who;
  f.object = object;
  f.vector_fma = t->vector_fma;
  f.vector_bits = t->vector_bits;
  f.lane_fma = t->lane_fma;
  f.target = t->t;
  f.llctx = llctx;
  f.mod = mod;
  f.i1 = LLVMInt1TypeInContext(llctx);
  f.i8 = LLVMInt8TypeInContext(llctx);
  f.i16 = LLVMInt16TypeInContext(llctx);
  f.i32 = LLVMInt32TypeInContext(llctx);
  f.i64 = LLVMInt64TypeInContext(llctx);
  f.intptr = LLVMIntPtrTypeInContext(llctx, td);
  f.ptr8 = cg_ptr_to(f.i8);
  f.ret_type = f.i32;
  LLVMDisposeTargetData(td);
  f.b = LLVMCreateBuilderInContext(llctx);
  cg_dbg_module_begin(&f, nfuncs, funcs);
  int rc = 0;
  for (int i = 0; i < nfuncs && rc == 0; i++) {
    f.lf = &funcs[i];
    f.nbind = 0;
    f.nheap = 0;
    f.npar = 0;
    f.nlaunch = 0;
    f.launch = NULL;
    f.sched_pressure = 0;
    LLVMValueRef before = LLVMGetLastFunction(mod);
    f.stream = f.nt_stores = 0;
    rc = cg_func_build(&f);
    if (f.failed) rc = -1;
    /* the functions made for funcs[i] (its entry, raw body, outlined loops) alike: a feature
     * set that differs between caller and callee would keep LLVM from inlining */
    for (LLVMValueRef fn = before ? LLVMGetNextFunction(before) : LLVMGetFirstFunction(mod);
         fn && rc == 0 && f.sched_pressure; fn = LLVMGetNextFunction(fn))
      if (!LLVMIsDeclaration(fn))
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(llctx, CG_SCHED_PRESSURE_ATTR,
                                                          strlen(CG_SCHED_PRESSURE_ATTR), "", 0));
  }
  cg_dbg_module_end(&f);
  LLVMDisposeBuilder(f.b);
  free(f.binds);
  free(f.heap);
  if (rc != 0) {
    if (tec_ctx_error_count(ctx) == errors_before)
      tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL, "%s: code generation failed without a reason",
                             who);
    LLVMDisposeModule(mod);
    return NULL;
  }
  return mod;
}
