/* codegen_extern.c — an extern stage's call (extern_call, lower/extern_call.c's operands) as a
 * call of the runtime's tec_rt_extern_call, which builds the tec_extern_buffer views and calls
 * the user's function:
 *
 *   data[b] = &buf_b[first index]            (addresses; nothing is loaded)
 *   desc    = {ndim, code, bits, lanes, extents..., strides..., mins...} per buffer
 *   rc = tec_rt_extern_call(fn, "E", nbuf, data, desc, names);  if (rc != 0) return -1
 *
 * The function: the JIT calls the pointer the declaration gave (te_extern_decl.fn), else the
 * symbol's address in the process (dlsym, at build time: a constant in the code, so no
 * relocation has to reach from the JIT's memory to the executable's, which AArch64's
 * PC-relative addressing cannot over 4 GB); an object file references the symbol (the AOT
 * header declares it). An object file for a declaration with a pointer only is refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

/* The address of a scalar load's element (its buffer + index), as i8*. */
static LLVMValueRef address_of(cg_func *f, const ir_expr *load) {
  if (!load || load->kind != IR_LOAD || load->type.lanes != 1)
    return cg_internal(f, "an extern call's region is not a scalar load");
  const cg_binding *bd = cg_lookup(f, load->a);
  LLVMTypeRef mt = cg_mem_type(f, load->type);
  if (!bd || !bd->elem || !mt)
    return cg_internal(f, "an extern call's buffer '%s' is not bound", load->a->name);
  LLVMValueRef idx = cg_expr(f, load->b);
  if (!idx) return NULL;
  if (load->b->type.bits != 64) idx = cg_cast(f, idx, load->b->type, TEC_I64);
  LLVMValueRef p = LLVMBuildPointerCast(f->b, bd->value, cg_ptr_to(mt), "");
  return LLVMBuildPointerCast(f->b, LLVMBuildGEP2(f->b, mt, p, &idx, 1, ""), f->ptr8, "");
}

/* An array of n values of type ty in the entry block (constant size), filled here. */
static LLVMValueRef stack_array(cg_func *f, LLVMTypeRef ty, int n, const char *name) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, f->entry);
  LLVMValueRef a = LLVMBuildAlloca(f->b, LLVMArrayType(ty, (unsigned)n), name);
  LLVMPositionBuilderAtEnd(f->b, cur);
  return a;
}

static void put(cg_func *f, LLVMTypeRef ty, LLVMValueRef arr, int n, int i, LLVMValueRef v) {
  LLVMValueRef idx[2] = {LLVMConstInt(f->i64, 0, 0), LLVMConstInt(f->i64, (unsigned)i, 0)};
  LLVMBuildStore(f->b, v, LLVMBuildGEP2(f->b, LLVMArrayType(ty, (unsigned)n), arr, idx, 2, ""));
}

/* The function to call, as i8*. */
static LLVMValueRef callee(cg_func *f, const te_tensor *t) {
  const te_extern_decl *d = t->ext;
  int jit = strcmp(f->who, "tec_emit") != 0;
  void *addr = (void *)d->fn;
  if (jit && !addr && d->symbol && !(addr = dlsym(RTLD_DEFAULT, d->symbol))) {
    tec_ctx_set_error(f->ctx, "%s: extern stage '%s': no function '%s' in this process; export "
                              "it (a shared library's, or the executable's when linked with "
                              "-rdynamic) or give its pointer (te_extern_decl.fn)",
                      f->who, t->name, d->symbol);
    f->failed = 1;
    return NULL;
  }
  if (jit)
    return LLVMConstIntToPtr(LLVMConstInt(f->i64, (unsigned long long)(uintptr_t)addr, 0),
                             f->ptr8);
  if (!d->symbol) {
    tec_ctx_set_error(f->ctx, "%s: extern stage '%s' was given its function as a pointer only; "
                              "an object file references functions by name: set "
                              "te_extern_decl.symbol", f->who, t->name);
    f->failed = 1;
    return NULL;
  }
  LLVMTypeRef ty, params[2] = {f->ptr8, f->i32};
  LLVMValueRef fn = cg_declare(f, d->symbol, f->i32, params, 2, &ty);
  return LLVMBuildPointerCast(f->b, fn, f->ptr8, "");
}

LLVMValueRef cg_extern_call(cg_func *f, const ir_expr *e) {
  const te_tensor *t = e->tensor;
  if (!t || !t->ext || e->type.code != TEC_INT)
    return cg_internal(f, "an extern call without its stage, or before lowering");
  const te_extern_decl *d = t->ext;
  int nbuf = d->ninputs + 1, ndesc = 0;
  for (int b = 0; b < nbuf; b++) ndesc += 4 + 3 * (b < d->ninputs ? d->inputs[b]->ndim : t->ndim);
  LLVMValueRef fn = callee(f, t);
  if (!fn) return NULL;
  LLVMValueRef data = stack_array(f, f->ptr8, nbuf, "ext.data");
  LLVMValueRef desc = stack_array(f, f->i64, ndesc, "ext.desc");
  LLVMValueRef names = stack_array(f, f->ptr8, nbuf, "ext.names");
  int p = 0, q = 0;
  for (int b = 0; b < nbuf; b++) {
    const te_tensor *bt = b < d->ninputs ? d->inputs[b] : t;
    int nd = bt->ndim;
    if (p + 1 + 3 * nd > e->nargs) return cg_internal(f, "an extern call with too few operands");
    LLVMValueRef addr = address_of(f, e->args[p]);
    if (!addr) return NULL;
    put(f, f->ptr8, data, nbuf, b, addr);
    put(f, f->ptr8, names, nbuf, b, LLVMBuildGlobalStringPtr(f->b, bt->name, "ext.name"));
    tec_dtype ty = bt->type;
    int code = ty.code == TEC_BOOL ? 1 /* kDLUInt */ : ty.code, bits = ty.code == TEC_BOOL ? 8 : ty.bits;
    int64_t head[4] = {nd, code, bits, ty.lanes ? ty.lanes : 1};
    for (int k = 0; k < 4; k++) put(f, f->i64, desc, ndesc, q++, LLVMConstInt(f->i64, (unsigned long long)head[k], 0));
    /* operands: strides, extents, mins; desc: extents, strides, mins */
    static const int order[3] = {1, 0, 2};
    for (int g = 0; g < 3; g++)
      for (int j = 0; j < nd; j++) {
        const ir_expr *x = e->args[p + 1 + order[g] * nd + j];
        LLVMValueRef v = cg_expr(f, x);
        if (!v) return NULL;
        if (!tec_dtype_is_int(x->type) || x->type.lanes != 1)
          return cg_internal(f, "an extern call's region is not integer");
        if (x->type.bits != 64) v = cg_cast(f, v, x->type, TEC_I64);
        put(f, f->i64, desc, ndesc, q++, v);
      }
    p += 1 + 3 * nd;
  }
  LLVMTypeRef rty, params[6] = {f->ptr8, f->ptr8, f->i32, f->ptr8, f->ptr8, f->ptr8};
  LLVMValueRef rt = cg_declare(f, "tec_rt_extern_call", f->i32, params, 6, &rty);
  LLVMValueRef args[6] = {fn, LLVMBuildGlobalStringPtr(f->b, t->name, "ext.stage"),
                          LLVMConstInt(f->i32, (unsigned)nbuf, 0),
                          LLVMBuildPointerCast(f->b, data, f->ptr8, ""),
                          LLVMBuildPointerCast(f->b, desc, f->ptr8, ""),
                          LLVMBuildPointerCast(f->b, names, f->ptr8, "")};
  LLVMValueRef rc = LLVMBuildCall2(f->b, rty, rt, args, 6, "ext.rc");
  /* a failed call returns -1 at once (the runtime has the message) */
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "ext.fail");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "ext.ok");
  LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntNE, rc, LLVMConstInt(f->i32, 0, 0), ""), fail, ok);
  LLVMPositionBuilderAtEnd(f->b, fail);
  cg_emit_return(f, LLVMConstInt(f->i32, (unsigned long long)-1, 1));
  LLVMPositionBuilderAtEnd(f->b, ok);
  return rc;
}
