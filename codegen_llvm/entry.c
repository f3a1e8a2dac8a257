/* entry.c — the checked entry `int32_t name(DLTensor *const *args, int32_t nargs)`.
 *
 * What it checks, in which order and with which messages, is lowering's decision: the
 * program lower/entry_checks.c builds (asserts over dl_arg reads of the arguments, the size
 * variables bound by lets, then `attr entry_call`). Here that program is translated: a
 * dl_arg is a load from the DLTensor struct, an ASSERT a branch to tec_rt_check_fail and
 * `return -1`, entry_call 0 the call name_raw(data + byte_offset ..., sizes ...) and
 * entry_call 1 the general path, tec_rt_call_strided (runtime/strided.c) with a thunk that
 * calls name_raw on its pointers; dl_arg compact is tec_rt_dl_compact's test, inline.
 *
 *   DLTensor (DLPack v0.6), built here as an LLVM struct:
 *   { i8* data; {i32 device_type, i32 device_id}; i32 ndim; {i8 code, i8 bits, i16 lanes};
 *     i64* shape; i64* strides; i64 byte_offset }
 */
#include <string.h>
#include "codegen_llvm/codegen.h"

enum { DL_DATA, DL_DEVICE, DL_NDIM, DL_DTYPE, DL_SHAPE, DL_STRIDES, DL_OFFSET };

static LLVMTypeRef cg_dltensor_type(cg_func *f) {
  LLVMTypeRef t = LLVMGetTypeByName2(f->llctx, "struct.DLTensor");
  if (t) return t;
  t = LLVMStructCreateNamed(f->llctx, "struct.DLTensor");
  LLVMTypeRef dev[2] = {f->i32, f->i32}, dt[3] = {f->i8, f->i8, f->i16};
  LLVMTypeRef fields[7] = {f->ptr8,
                           LLVMStructTypeInContext(f->llctx, dev, 2, 0),
                           f->i32,
                           LLVMStructTypeInContext(f->llctx, dt, 3, 0),
                           cg_ptr_to(f->i64),
                           cg_ptr_to(f->i64),
                           f->i64};
  LLVMStructSetBody(t, fields, 7, 0);
  return t;
}

/* Branch to a failure exit unless ok. */
static void cg_check(cg_func *f, LLVMValueRef ok, const char *msg, LLVMValueRef a,
                     LLVMValueRef b) {
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "check_fail");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "check_ok");
  LLVMBuildCondBr(f->b, ok, cont, fail);
  LLVMPositionBuilderAtEnd(f->b, fail);
  cg_emit_fail_return(f, msg, a, b);
  LLVMPositionBuilderAtEnd(f->b, cont);
}

static LLVMValueRef cg_i64(cg_func *f, LLVMValueRef v) {
  return LLVMBuildIntCast2(f->b, v, f->i64, 0, "");
}

/* Loads field `field` (and sub-field sub >= 0) of the DLTensor at t. */
static LLVMValueRef cg_field(cg_func *f, LLVMTypeRef dl, LLVMValueRef t, int field, int sub,
                             LLVMTypeRef ty) {
  LLVMValueRef p = LLVMBuildStructGEP2(f->b, dl, t, (unsigned)field, "");
  if (sub >= 0) {
    LLVMTypeRef ft = LLVMStructGetTypeAtIndex(dl, (unsigned)field);
    p = LLVMBuildStructGEP2(f->b, ft, p, (unsigned)sub, "");
  }
  return LLVMBuildLoad2(f->b, ty, p, "");
}

static LLVMValueRef cg_elem_i64(cg_func *f, LLVMValueRef arr, int i) {
  LLVMValueRef idx = LLVMConstInt(f->i64, (unsigned)i, 0);
  return LLVMBuildLoad2(f->b, f->i64, LLVMBuildInBoundsGEP2(f->b, f->i64, arr, &idx, 1, ""), "");
}

/* args[i] (a DLTensor *). */
static LLVMValueRef cg_tensor(cg_func *f, int i) {
  LLVMValueRef idx = LLVMConstInt(f->i64, (unsigned)i, 0);
  LLVMValueRef slot = LLVMBuildInBoundsGEP2(f->b, cg_ptr_to(f->dl_type), f->dl_args, &idx, 1, "");
  return LLVMBuildLoad2(f->b, cg_ptr_to(f->dl_type), slot, "");
}

/* What tec_rt_dl_compact says of args[i], inline (an AOT object may be linked without the
 * runtime): data + byte_offset TEC_ALIGN-aligned and strides NULL or compact (extent-1
 * dimensions any), as i64 0 or 1. The strides are read only when the pointer is not NULL. */
static LLVMValueRef cg_dl_compact(cg_func *f, int i) {
  LLVMTypeRef dl = f->dl_type;
  int nd = f->lf->args[i].ndim;
  LLVMValueRef t = cg_tensor(f, i);
  LLVMValueRef data = LLVMBuildPtrToInt(f->b, cg_field(f, dl, t, DL_DATA, -1, f->ptr8), f->i64, "");
  LLVMValueRef start = LLVMBuildAdd(f->b, data, cg_field(f, dl, t, DL_OFFSET, -1, f->i64), "");
  LLVMValueRef aligned = LLVMBuildICmp(f->b, LLVMIntEQ, LLVMBuildAnd(f->b, start, LLVMConstInt(f->i64, TEC_ALIGN - 1, 0), ""),
                                       LLVMConstInt(f->i64, 0, 0), "aligned");
  LLVMValueRef strides = cg_field(f, dl, t, DL_STRIDES, -1, cg_ptr_to(f->i64));
  LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
  LLVMBasicBlockRef read = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "strides");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "strides_done");
  LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, strides, ""), done, read);
  LLVMPositionBuilderAtEnd(f->b, read);
  LLVMValueRef shape = cg_field(f, dl, t, DL_SHAPE, -1, cg_ptr_to(f->i64));
  LLVMValueRef ok = LLVMConstInt(f->i1, 1, 0), expect = LLVMConstInt(f->i64, 1, 0);
  for (int d = nd - 1; d >= 0; d--) {
    LLVMValueRef ext = cg_elem_i64(f, shape, d), st = cg_elem_i64(f, strides, d);
    LLVMValueRef good = LLVMBuildOr(f->b, LLVMBuildICmp(f->b, LLVMIntEQ, st, expect, ""),
                                    LLVMBuildICmp(f->b, LLVMIntEQ, ext, LLVMConstInt(f->i64, 1, 0), ""), "");
    ok = LLVMBuildAnd(f->b, ok, good, "");
    expect = LLVMBuildMul(f->b, expect, ext, "");
  }
  LLVMBasicBlockRef read_end = LLVMGetInsertBlock(f->b);
  LLVMBuildBr(f->b, done);
  LLVMPositionBuilderAtEnd(f->b, done);
  LLVMValueRef phi = LLVMBuildPhi(f->b, f->i1, "compact_strides");
  LLVMValueRef vals[2] = {LLVMConstInt(f->i1, 1, 0), ok};
  LLVMBasicBlockRef bbs[2] = {from, read_end};
  LLVMAddIncoming(phi, vals, bbs, 2);
  return LLVMBuildZExt(f->b, LLVMBuildAnd(f->b, phi, aligned, ""), f->i64, "");
}

LLVMValueRef cg_dl_arg(cg_func *f, const ir_expr *e) {
  int64_t fd, i, d;
  if (!f->dl_args || !ir_is_const_int(e->args[0], &fd) || !ir_is_const_int(e->args[1], &i) ||
      !ir_is_const_int(e->args[2], &d))
    return cg_internal(f, "dl_arg outside the checked entry, or not constant");
  LLVMTypeRef dl = f->dl_type;
  switch ((ir_dl_field)fd) {
  case IR_DL_NARGS: return LLVMBuildSExt(f->b, f->dl_nargs, f->i64, "");
  case IR_DL_ARGS: return LLVMBuildPtrToInt(f->b, f->dl_args, f->i64, "");
  case IR_DL_TENSOR: return LLVMBuildPtrToInt(f->b, cg_tensor(f, (int)i), f->i64, "");
  case IR_DL_DEVICE:
    return LLVMBuildSExt(f->b, cg_field(f, dl, cg_tensor(f, (int)i), DL_DEVICE, 0, f->i32), f->i64, "");
  case IR_DL_NDIM:
    return LLVMBuildSExt(f->b, cg_field(f, dl, cg_tensor(f, (int)i), DL_NDIM, -1, f->i32), f->i64, "");
  case IR_DL_CODE: return cg_i64(f, cg_field(f, dl, cg_tensor(f, (int)i), DL_DTYPE, 0, f->i8));
  case IR_DL_BITS: return cg_i64(f, cg_field(f, dl, cg_tensor(f, (int)i), DL_DTYPE, 1, f->i8));
  case IR_DL_LANES: return cg_i64(f, cg_field(f, dl, cg_tensor(f, (int)i), DL_DTYPE, 2, f->i16));
  case IR_DL_SHAPE_PTR:
  case IR_DL_STRIDES_PTR:
  case IR_DL_DATA: {
    int field = fd == IR_DL_SHAPE_PTR ? DL_SHAPE : fd == IR_DL_STRIDES_PTR ? DL_STRIDES : DL_DATA;
    LLVMTypeRef ty = field == DL_DATA ? f->ptr8 : cg_ptr_to(f->i64);
    return LLVMBuildPtrToInt(f->b, cg_field(f, dl, cg_tensor(f, (int)i), field, -1, ty), f->i64, "");
  }
  case IR_DL_SHAPE:
  case IR_DL_STRIDE: {
    int field = fd == IR_DL_SHAPE ? DL_SHAPE : DL_STRIDES;
    LLVMValueRef arr = cg_field(f, dl, cg_tensor(f, (int)i), field, -1, cg_ptr_to(f->i64));
    return cg_elem_i64(f, arr, (int)d);
  }
  case IR_DL_OFFSET: return cg_field(f, dl, cg_tensor(f, (int)i), DL_OFFSET, -1, f->i64);
  case IR_DL_COMPACT: return cg_dl_compact(f, (int)i);
  default: break;
  }
  return cg_internal(f, "dl_arg of unknown field %lld", (long long)fd);
}

int cg_assert(cg_func *f, const ir_stmt *s) {
  LLVMValueRef ok = cg_expr(f, s->a);
  if (!ok) return -1;
  if (s->a->type.lanes != 1) return cg_internal(f, "an assert condition is a vector"), -1;
  if (s->a->type.code != TEC_BOOL) ok = cg_cast(f, ok, s->a->type, TEC_BOOLT);
  LLVMValueRef v[2] = {NULL, NULL};
  const ir_expr *x[2] = {s->b, s->c};
  for (int k = 0; k < 2; k++)
    if (x[k]) {
      if (!(v[k] = cg_expr(f, x[k]))) return -1;
      if (!tec_dtype_is_int(x[k]->type) || x[k]->type.lanes != 1)
        return cg_internal(f, "an assert value is not a scalar integer"), -1;
      if (x[k]->type.bits != 64) v[k] = cg_cast(f, v[k], x[k]->type, TEC_I64);
    }
  cg_check(f, ok, s->name, v[0], v[1]);
  return f->failed ? -1 : 0;
}

/* The thunk tec_rt_call_strided calls: name_raw(ptrs[0], ..., sizes[0], ...). */
static LLVMValueRef cg_strided_thunk(cg_func *f) {
  const tec_ir_func *lf = f->lf;
  LLVMTypeRef pt[2] = {cg_ptr_to(f->ptr8), cg_ptr_to(f->i64)};
  LLVMTypeRef ty = LLVMFunctionType(f->i32, pt, 2, 0);
  const char *name = tec_ctx_printf(f->ctx, "%s_strided", lf->name);
  if (!name) return cg_oom(f);
  LLVMValueRef fn = LLVMAddFunction(f->mod, name, ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  LLVMBasicBlockRef saved = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->llctx, fn, "entry"));
  int n = lf->nargs, np = n + lf->nsize;
  LLVMValueRef *a = tec_ctx_alloc(f->ctx, sizeof *a * (size_t)(np + 1));
  if (!a) return cg_oom(f);
  for (int i = 0; i < np; i++) {
    LLVMValueRef idx = LLVMConstInt(f->i64, (unsigned)(i < n ? i : i - n), 0);
    LLVMTypeRef et = i < n ? f->ptr8 : f->i64;
    LLVMValueRef v = LLVMBuildLoad2(f->b, et, LLVMBuildInBoundsGEP2(f->b, et, LLVMGetParam(fn, i < n ? 0 : 1), &idx, 1, ""), "");
    a[i] = i < n ? LLVMBuildPointerCast(f->b, v, LLVMTypeOf(LLVMGetParam(f->raw, (unsigned)i)), "") : v;
  }
  LLVMValueRef call = LLVMBuildCall2(f->b, f->raw_ty, f->raw, a, (unsigned)np, "");
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8); /* one copy of the kernel */
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(f->llctx, noinline, 0));
  LLVMBuildRet(f->b, call);
  LLVMPositionBuilderAtEnd(f->b, saved);
  return fn;
}

/* strided 0: name_raw(data + byte_offset ..., sizes ...); 1: tec_rt_call_strided(args, nargs,
 * written, sizes, name_strided, "name"): compact copies of the arguments that are not. The
 * result goes to the entry's rc slot. */
int cg_entry_call(cg_func *f, int strided) {
  const tec_ir_func *lf = f->lf;
  if (!f->raw || !f->entry_rc) return cg_internal(f, "entry_call outside the checked entry"), -1;
  int n = lf->nargs, np = n + lf->nsize;
  LLVMValueRef *callargs = tec_ctx_alloc(f->ctx, sizeof *callargs * (size_t)(np + 1));
  if (!callargs) return cg_oom(f), -1;
  for (int k = 0; k < lf->nsize; k++) {
    const cg_binding *b = cg_lookup(f, lf->size_vars[k]);
    if (!b) return cg_internal(f, "size variable '%s' unbound at entry_call",
                               lf->size_vars[k]->name), -1;
    callargs[n + k] = b->value;
  }
  if (strided) {
    LLVMValueRef sizes = LLVMBuildArrayAlloca(f->b, f->i64, LLVMConstInt(f->i32, (unsigned)(lf->nsize + 1), 0), "sizes");
    for (int k = 0; k < lf->nsize; k++) {
      LLVMValueRef idx = LLVMConstInt(f->i64, (unsigned)k, 0);
      LLVMBuildStore(f->b, callargs[n + k], LLVMBuildInBoundsGEP2(f->b, f->i64, sizes, &idx, 1, ""));
    }
    LLVMValueRef *w = tec_ctx_alloc(f->ctx, sizeof *w * (size_t)(n + 1));
    if (!w) return cg_oom(f), -1;
    for (int i = 0; i < n; i++) w[i] = LLVMConstInt(f->i8, lf->args[i].written ? 1 : 0, 0);
    LLVMValueRef wa = LLVMConstArray(f->i8, w, (unsigned)n);
    LLVMValueRef wg = LLVMAddGlobal(f->mod, LLVMTypeOf(wa), "written");
    LLVMSetInitializer(wg, wa);
    LLVMSetGlobalConstant(wg, 1);
    LLVMSetLinkage(wg, LLVMPrivateLinkage);
    LLVMValueRef thunk = cg_strided_thunk(f);
    if (!thunk) return -1;
    LLVMValueRef name = LLVMBuildGlobalStringPtr(f->b, lf->name, "fname");
    LLVMTypeRef pt[6] = {LLVMTypeOf(f->dl_args), f->i32, f->ptr8, cg_ptr_to(f->i64), f->ptr8, f->ptr8}, ty;
    /* in an object a weak reference: one linked without libtec_runtime.a still links, and
     * refuses strided arguments saying what to link (a JIT module's is an ordinary one: the
     * AArch64 JIT mislinks a weak external) */
    LLVMValueRef fn = cg_declare(f, "tec_rt_call_strided", f->i32, pt, 6, &ty);
    if (f->object) LLVMSetLinkage(fn, LLVMExternalWeakLinkage); /* the JIT's table has it */
    LLVMBasicBlockRef none = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "no_runtime");
    LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "strided_call");
    LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, fn, ""), none, have);
    LLVMPositionBuilderAtEnd(f->b, none);
    LLVMValueRef rcm = f->entry_rc;
    cg_emit_fail_return(f, tec_ctx_printf(f->ctx, "%s: an argument is not compact and %d-byte aligned (strides, "
                                                  "byte_offset or data); calling with it needs tec_rt_call_strided: link "
                                                  "libtec_runtime.a", lf->name, TEC_ALIGN), NULL, NULL);
    LLVMPositionBuilderAtEnd(f->b, have);
    LLVMValueRef a[6] = {f->dl_args, f->dl_nargs, LLVMBuildPointerCast(f->b, wg, f->ptr8, ""), sizes,
                         LLVMBuildPointerCast(f->b, thunk, f->ptr8, ""), name};
    LLVMBuildStore(f->b, LLVMBuildCall2(f->b, ty, fn, a, 6, ""), rcm);
    f->entry_calls++;
    return 0;
  }
  for (int i = 0; i < n; i++) {
    LLVMValueRef t = cg_tensor(f, i);
    LLVMValueRef data = cg_field(f, f->dl_type, t, DL_DATA, -1, f->ptr8);
    LLVMValueRef off = cg_field(f, f->dl_type, t, DL_OFFSET, -1, f->i64);
    LLVMValueRef p = LLVMBuildGEP2(f->b, f->i8, data, &off, 1, "");
    callargs[i] = LLVMBuildPointerCast(f->b, p, LLVMTypeOf(LLVMGetParam(f->raw, (unsigned)i)), "");
  }
  LLVMBuildStore(f->b, LLVMBuildCall2(f->b, f->raw_ty, f->raw, callargs, (unsigned)np, ""), f->entry_rc);
  f->entry_calls++;
  return 0;
}

int cg_entry_build(cg_func *f, LLVMValueRef raw, LLVMTypeRef raw_ty, const ir_stmt *prog) {
  const tec_ir_func *lf = f->lf;
  LLVMTypeRef dl = cg_dltensor_type(f);
  LLVMTypeRef params[2] = {cg_ptr_to(cg_ptr_to(dl)), f->i32};
  LLVMTypeRef ety = LLVMFunctionType(f->i32, params, 2, 0);
  LLVMValueRef fn = LLVMAddFunction(f->mod, lf->name, ety);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  f->fn = fn;
  f->nbind = 0;
  f->nheap = 0;
  LLVMValueRef args = LLVMGetParam(fn, 0), nargs = LLVMGetParam(fn, 1);
  LLVMSetValueName2(args, "args", 4);
  LLVMSetValueName2(nargs, "nargs", 5);
  f->entry = LLVMAppendBasicBlockInContext(f->llctx, fn, "entry");
  LLVMPositionBuilderAtEnd(f->b, f->entry);
  f->dl_args = args, f->dl_nargs = nargs, f->dl_type = dl;
  f->raw = raw, f->raw_ty = raw_ty, f->entry_calls = 0;
  f->entry_rc = LLVMBuildAlloca(f->b, f->i32, "rc"); /* what the call on either path returned */
  int rc = cg_stmt(f, prog);
  if (rc == 0 && !f->entry_calls) rc = -1, cg_internal(f, "the entry program has no entry_call");
  if (rc == 0) LLVMBuildRet(f->b, LLVMBuildLoad2(f->b, f->i32, f->entry_rc, ""));
  f->dl_args = f->dl_nargs = f->raw = f->entry_rc = NULL;
  cg_unbind_to(f, 0);
  return rc != 0 || f->failed ? -1 : 0;
}
