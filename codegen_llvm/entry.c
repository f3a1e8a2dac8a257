/* entry.c — the checked entry `int32_t name(DLTensor *const *args, int32_t nargs)`.
 *
 * It checks, in this order, and on the first failure calls tec_rt_check_fail with a message
 * naming the function, the argument and what was found and expected, then returns -1:
 *   1. nargs, the argument array;
 *   2. per argument: non-NULL, kDLCPU, ndim, dtype (bool is {kDLUInt, 8}), lanes;
 *   3. size variables: each is bound from its first plain occurrence as an extent (argument
 *      order, then dimension order) and must be >= 0;
 *   4. per argument: every other extent against its value under the bound sizes, strides
 *      (NULL or compact row-major; extent-1 dimensions may have any stride), data non-NULL,
 *      data + byte_offset TEC_ALIGN-aligned (the kernel is compiled assuming it);
 * then calls name_raw(data + byte_offset ..., sizes ...).
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

/* DLPack (code, bits) of a tec dtype as arguments carry it. */
static void cg_dl_expect(tec_dtype t, int *code, int *bits) {
  if (t.code == TEC_BOOL) {
    *code = kDLUInt;
    *bits = 8;
  } else {
    *code = t.code;
    *bits = t.bits;
  }
}

static const char *cg_dl_name(tec_ctx *ctx, int code, int bits) {
  static const char *names[] = {"int", "uint", "float", "handle", "bfloat"};
  if (code >= 0 && code < 5) return tec_ctx_printf(ctx, "%s%d", names[code], bits);
  return tec_ctx_printf(ctx, "(code %d, bits %d)", code, bits);
}

/* The dtype check: on mismatch a switch names the common dtypes in the message. */
static void cg_check_dtype(cg_func *f, const char *pre, tec_dtype want, LLVMValueRef code,
                           LLVMValueRef bits) {
  int ec, eb;
  cg_dl_expect(want, &ec, &eb);
  const char *wname = want.code == TEC_BOOL ? "bool (uint8)" : cg_dl_name(f->ctx, ec, eb);
  LLVMValueRef ok = LLVMBuildAnd(f->b,
                                 LLVMBuildICmp(f->b, LLVMIntEQ, code, LLVMConstInt(f->i8, (unsigned)ec, 0), ""),
                                 LLVMBuildICmp(f->b, LLVMIntEQ, bits, LLVMConstInt(f->i8, (unsigned)eb, 0), ""), "");
  if (want.code == TEC_BOOL) /* a newer DLPack's kDLBool (6) byte is fine too */
    ok = LLVMBuildOr(f->b, ok,
                     LLVMBuildAnd(f->b,
                                  LLVMBuildICmp(f->b, LLVMIntEQ, code, LLVMConstInt(f->i8, 6, 0), ""),
                                  LLVMBuildICmp(f->b, LLVMIntEQ, bits, LLVMConstInt(f->i8, 8, 0), ""), ""),
                     "");
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "dtype_fail");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "dtype_ok");
  LLVMBuildCondBr(f->b, ok, cont, fail);
  LLVMPositionBuilderAtEnd(f->b, fail);
  static const int known[][2] = {{0, 8},  {0, 16}, {0, 32}, {0, 64}, {1, 8},  {1, 16},
                                 {1, 32}, {1, 64}, {2, 16}, {2, 32}, {2, 64}, {4, 16}};
  int nk = (int)(sizeof known / sizeof known[0]);
  LLVMValueRef key = LLVMBuildOr(f->b, LLVMBuildZExt(f->b, code, f->i32, ""),
                                 LLVMBuildShl(f->b, LLVMBuildZExt(f->b, bits, f->i32, ""),
                                              LLVMConstInt(f->i32, 8, 0), ""), "");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "dtype_other");
  LLVMValueRef sw = LLVMBuildSwitch(f->b, key, other, (unsigned)nk);
  for (int k = 0; k < nk; k++) {
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "dtype_named");
    LLVMAddCase(sw, LLVMConstInt(f->i32, (unsigned)(known[k][0] | known[k][1] << 8), 0), bb);
    LLVMPositionBuilderAtEnd(f->b, bb);
    cg_emit_fail_return(f, tec_ctx_printf(f->ctx, "%s has dtype %s, expected %s", pre,
                                          cg_dl_name(f->ctx, known[k][0], known[k][1]), wname),
                        NULL, NULL);
  }
  LLVMPositionBuilderAtEnd(f->b, other);
  cg_emit_fail_return(f, tec_ctx_printf(f->ctx, "%s has dtype (code %%lld, bits %%lld), expected %s",
                                        pre, wname),
                      cg_i64(f, code), cg_i64(f, bits));
  LLVMPositionBuilderAtEnd(f->b, cont);
}

/* Where each size variable is bound: the first argument dimension whose extent it is. */
typedef struct cg_site {
  int arg, dim;
} cg_site;

static int cg_size_index(const lower_func *lf, const ir_expr *e) {
  for (int k = 0; k < lf->nsize; k++)
    if (lf->size_vars[k] == e) return k;
  return -1;
}

int cg_entry_build(cg_func *f, LLVMValueRef raw, LLVMTypeRef raw_ty) {
  const lower_func *lf = f->lf;
  tec_ctx *ctx = f->ctx;
  const char *fname = lf->name;
  LLVMTypeRef dl = cg_dltensor_type(f);
  LLVMTypeRef params[2] = {cg_ptr_to(cg_ptr_to(dl)), f->i32};
  LLVMTypeRef ety = LLVMFunctionType(f->i32, params, 2, 0);
  LLVMValueRef fn = LLVMAddFunction(f->mod, fname, ety);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  f->fn = fn;
  f->nbind = 0;
  f->nheap = 0;
  LLVMValueRef args = LLVMGetParam(fn, 0), nargs = LLVMGetParam(fn, 1);
  LLVMSetValueName2(args, "args", 4);
  LLVMSetValueName2(nargs, "nargs", 5);
  f->entry = LLVMAppendBasicBlockInContext(f->llctx, fn, "entry");
  LLVMPositionBuilderAtEnd(f->b, f->entry);

  int n = lf->nargs;
  cg_site *site = tec_ctx_alloc(ctx, sizeof(cg_site) * (size_t)(lf->nsize + 1));
  LLVMValueRef *tens = tec_ctx_alloc(ctx, sizeof(LLVMValueRef) * (size_t)(n + 1));
  LLVMValueRef *shape = tec_ctx_alloc(ctx, sizeof(LLVMValueRef) * (size_t)(n + 1));
  LLVMValueRef *sizes = tec_ctx_alloc(ctx, sizeof(LLVMValueRef) * (size_t)(lf->nsize + 1));
  const char **pre = tec_ctx_alloc(ctx, sizeof(char *) * (size_t)(n + 1));
  if (!site || !tens || !shape || !sizes || !pre)
    return cg_oom(f), -1;
  for (int k = 0; k < lf->nsize; k++) site[k].arg = -1;
  for (int i = 0; i < n; i++)
    for (int d = 0; d < lf->args[i]->ndim; d++) {
      int k = cg_size_index(lf, lf->args[i]->shape[d]);
      if (k >= 0 && site[k].arg < 0) site[k] = (cg_site){i, d};
    }
  for (int k = 0; k < lf->nsize; k++)
    if (site[k].arg < 0)
      return tec_ctx_set_error(ctx,
                               "%s: size variable '%s' of '%s' is not the extent of any "
                               "argument's dimension, so the arguments cannot bind it",
                               f->who, lf->size_vars[k]->name ? lf->size_vars[k]->name : "?",
                               fname);

  /* 1. the argument list */
  cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, nargs, LLVMConstInt(f->i32, (unsigned)n, 0), ""),
           tec_ctx_printf(ctx, "%s: expected %d argument%s, got %%lld", fname, n, n == 1 ? "" : "s"),
           LLVMBuildSExt(f->b, nargs, f->i64, ""), NULL);
  if (n > 0)
    cg_check(f, LLVMBuildIsNotNull(f->b, args, ""),
             tec_ctx_printf(ctx, "%s: the argument array is NULL", fname), NULL, NULL);

  /* 2. each tensor's header */
  for (int i = 0; i < n; i++) {
    const te_tensor *t = lf->args[i];
    pre[i] = tec_ctx_printf(ctx, "%s: argument %d ('%s')", fname, i, cg_fmt_escape(ctx, t->name));
    LLVMValueRef idx = LLVMConstInt(f->i64, (unsigned)i, 0);
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(f->b, cg_ptr_to(dl), args, &idx, 1, "");
    tens[i] = LLVMBuildLoad2(f->b, cg_ptr_to(dl), slot, t->name ? t->name : "t");
    cg_check(f, LLVMBuildIsNotNull(f->b, tens[i], ""), tec_ctx_printf(ctx, "%s is NULL", pre[i]),
             NULL, NULL);
    LLVMValueRef dev = cg_field(f, dl, tens[i], DL_DEVICE, 0, f->i32);
    cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, dev, LLVMConstInt(f->i32, kDLCPU, 0), ""),
             tec_ctx_printf(ctx, "%s is on device type %%lld, expected kDLCPU (%d)", pre[i], kDLCPU),
             LLVMBuildSExt(f->b, dev, f->i64, ""), NULL);
    LLVMValueRef nd = cg_field(f, dl, tens[i], DL_NDIM, -1, f->i32);
    cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, nd, LLVMConstInt(f->i32, (unsigned)t->ndim, 0), ""),
             tec_ctx_printf(ctx, "%s has ndim %%lld, expected %d", pre[i], t->ndim),
             LLVMBuildSExt(f->b, nd, f->i64, ""), NULL);
    cg_check_dtype(f, pre[i], t->type, cg_field(f, dl, tens[i], DL_DTYPE, 0, f->i8),
                   cg_field(f, dl, tens[i], DL_DTYPE, 1, f->i8));
    LLVMValueRef lanes = cg_field(f, dl, tens[i], DL_DTYPE, 2, f->i16);
    int want_lanes = t->type.lanes ? t->type.lanes : 1;
    cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, lanes, LLVMConstInt(f->i16, (unsigned)want_lanes, 0), ""),
             tec_ctx_printf(ctx, "%s has %%lld lanes per element, expected %d", pre[i], want_lanes),
             LLVMBuildZExt(f->b, lanes, f->i64, ""), NULL);
    if (t->ndim > 0) {
      shape[i] = cg_field(f, dl, tens[i], DL_SHAPE, -1, cg_ptr_to(f->i64));
      cg_check(f, LLVMBuildIsNotNull(f->b, shape[i], ""),
               tec_ctx_printf(ctx, "%s has a NULL shape", pre[i]), NULL, NULL);
    }
  }

  /* 3. bind the size variables */
  for (int k = 0; k < lf->nsize; k++) {
    int i = site[k].arg, d = site[k].dim;
    const char *vn = cg_fmt_escape(ctx, lf->size_vars[k]->name);
    sizes[k] = cg_elem_i64(f, shape[i], d);
    LLVMSetValueName2(sizes[k], lf->size_vars[k]->name ? lf->size_vars[k]->name : "n",
                      strlen(lf->size_vars[k]->name ? lf->size_vars[k]->name : "n"));
    cg_check(f, LLVMBuildICmp(f->b, LLVMIntSGE, sizes[k], LLVMConstInt(f->i64, 0, 0), ""),
             tec_ctx_printf(ctx, "%s shape[%d] is %%lld, expected a size >= 0 (%s)", pre[i], d, vn),
             sizes[k], NULL);
    if (cg_bind(f, lf->size_vars[k], sizes[k], NULL) != 0) return -1;
  }

  /* 4. extents, strides, data */
  LLVMValueRef *callargs = tec_ctx_alloc(ctx, sizeof(LLVMValueRef) * (size_t)(n + lf->nsize + 1));
  if (!callargs) return cg_oom(f), -1;
  for (int i = 0; i < n; i++) {
    const te_tensor *t = lf->args[i];
    LLVMValueRef *act = tec_ctx_alloc(ctx, sizeof(LLVMValueRef) * (size_t)(t->ndim + 1));
    if (!act) return cg_oom(f), -1;
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *e = t->shape[d];
      int k = cg_size_index(lf, e);
      if (k >= 0 && site[k].arg == i && site[k].dim == d) {
        act[d] = sizes[k];
        continue;
      }
      act[d] = cg_elem_i64(f, shape[i], d);
      LLVMValueRef want = cg_expr(f, e);
      if (!want) return -1;
      if (e->type.bits != 64) want = cg_cast(f, want, e->type, TEC_I64);
      const char *why;
      int64_t cv;
      if (ir_is_const_int(e, &cv))
        why = "";
      else if (k >= 0)
        why = tec_ctx_printf(ctx, " (%s, bound by argument %d '%s')",
                             cg_fmt_escape(ctx, lf->size_vars[k]->name), site[k].arg,
                             cg_fmt_escape(ctx, lf->args[site[k].arg]->name));
      else
        why = tec_ctx_printf(ctx, " (%s)", cg_fmt_escape(ctx, ir_expr_str(e)));
      cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, act[d], want, ""),
               tec_ctx_printf(ctx, "%s shape[%d] is %%lld, expected %%lld%s", pre[i], d, why),
               act[d], want);
    }
    /* strides: NULL, or row-major compact */
    if (t->ndim > 0) {
      LLVMValueRef strides = cg_field(f, dl, tens[i], DL_STRIDES, -1, cg_ptr_to(f->i64));
      LLVMBasicBlockRef chk = LLVMAppendBasicBlockInContext(f->llctx, fn, "strides");
      LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->llctx, fn, "strides_ok");
      LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, strides, ""), done, chk);
      LLVMPositionBuilderAtEnd(f->b, chk);
      LLVMValueRef expect = LLVMConstInt(f->i64, 1, 0);
      for (int d = t->ndim - 1; d >= 0; d--) {
        LLVMValueRef s = cg_elem_i64(f, strides, d);
        LLVMValueRef ok = LLVMBuildOr(
            f->b, LLVMBuildICmp(f->b, LLVMIntEQ, s, expect, ""),
            LLVMBuildICmp(f->b, LLVMIntEQ, act[d], LLVMConstInt(f->i64, 1, 0), ""), "");
        cg_check(f, ok,
                 tec_ctx_printf(ctx, "%s is not compact row-major: strides[%d] is %%lld, expected "
                                "%%lld (pass strides = NULL or compact strides)", pre[i], d),
                 s, expect);
        expect = LLVMBuildMul(f->b, expect, act[d], "");
      }
      LLVMBuildBr(f->b, done);
      LLVMPositionBuilderAtEnd(f->b, done);
    }
    LLVMValueRef data = cg_field(f, dl, tens[i], DL_DATA, -1, f->ptr8);
    cg_check(f, LLVMBuildIsNotNull(f->b, data, ""), tec_ctx_printf(ctx, "%s has NULL data", pre[i]),
             NULL, NULL);
    LLVMValueRef off = cg_field(f, dl, tens[i], DL_OFFSET, -1, f->i64);
    LLVMValueRef addr = LLVMBuildAdd(f->b, LLVMBuildPtrToInt(f->b, data, f->i64, ""), off, "");
    LLVMValueRef mis = LLVMBuildAnd(f->b, addr, LLVMConstInt(f->i64, TEC_ALIGN - 1, 0), "");
    cg_check(f, LLVMBuildICmp(f->b, LLVMIntEQ, mis, LLVMConstInt(f->i64, 0, 0), ""),
             tec_ctx_printf(ctx,
                            "%s: data + byte_offset is not %d-byte aligned (address %%%% %d = "
                            "%%lld); allocate with tec_dl_alloc or aligned_alloc(%d, ...)",
                            pre[i], TEC_ALIGN, TEC_ALIGN, TEC_ALIGN),
             mis, NULL);
    LLVMValueRef p = LLVMBuildGEP2(f->b, f->i8, data, &off, 1, "");
    callargs[i] = LLVMBuildPointerCast(f->b, p, LLVMTypeOf(LLVMGetParam(raw, (unsigned)i)), "");
  }
  for (int k = 0; k < lf->nsize; k++) callargs[n + k] = sizes[k];
  LLVMValueRef rc = LLVMBuildCall2(f->b, raw_ty, raw, callargs, (unsigned)(n + lf->nsize), "");
  LLVMBuildRet(f->b, rc);
  cg_unbind_to(f, 0);
  return f->failed ? -1 : 0;
}
