/* codegen_parallel.c — a PARALLEL loop becomes a function that the runtime's thread pool
 * calls on chunks of its iteration range (tec_rt_parallel_for, runtime/parallel.c).
 *
 *   for (i.outer, 0, 16) parallel { ... A, B, n, j0 ... }          in f_raw, becomes
 *
 *   %closure = alloca { float*, float*, i64, i64 }      ; the body's free variables
 *   store A, B, n, j0 into %closure
 *   %rc = call i32 @tec_rt_parallel_for(i64 16, @f_par0, %closure)
 *   if (%rc != 0) { free live heap temporaries; ret %rc }          ; a chunk failed
 *
 *   define internal i32 @f_par0(i64 %begin, i64 %end, i8* %closure)       ; trampoline
 *     load A, B (!align 64, !nonnull), n, j0 from %closure
 *     ret call @f_par0_body(%begin, %end, A, B, n, j0)
 *   define internal i32 @f_par0_body(i64 %begin, i64 %end,
 *                                    float* noalias align 64 %A, ..., i64 %n, i64 %j0)
 *     for (i.outer = begin; i.outer < end; i.outer++) { ... }  ret 0
 *
 * Free variables are the variables the body reads that are bound outside it (buffers, sizes,
 * outer loop variables, LET values); the loop variable is not one: each chunk runs its own
 * range. The body is a function of its own so its buffer parameters carry `noalias` and
 * `align 64` as the raw kernel's do: the body is inlined into the trampoline (alwaysinline)
 * and LLVM's inliner turns those into alias scopes, so the loops inside still vectorize
 * without runtime overlap checks. Temporaries allocated inside the loop are per call of the
 * body (per thread); an allocation failure inside returns -1 from the chunk and the runtime
 * hands that code and its message to the caller.
 *
 * ATTR "pragma_parallel_launch_point" (sch_pragma) is an annotation only: every parallel loop
 * launches its own job on the pool where it stands.
 */
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

/* ---- free variables of the body ---- */
typedef struct cg_free_vars {
  cg_func *f;
  const ir_expr *loop_var;
  const ir_expr **vars;
  int n, cap, oom;
} cg_free_vars;

static void cg_fv_add(cg_free_vars *c, const ir_expr *v) {
  if (!v || v->kind != IR_VAR || v == c->loop_var) return;
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == v) return;
  if (!cg_lookup(c->f, v)) return; /* bound inside the body */
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    const ir_expr **nv = realloc(c->vars, (size_t)cap * sizeof *nv);
    if (!nv) {
      c->oom = 1;
      return;
    }
    c->vars = nv;
    c->cap = cap;
  }
  c->vars[c->n++] = v;
}

static void cg_fv_var(ir_visitor *v, const ir_expr *e) { cg_fv_add(v->user, e); }

static void cg_fv_store(ir_visitor *v, const ir_stmt *s) { /* the buffer is not a child */
  cg_fv_add(v->user, s->var);
  ir_visit_stmt_default(v, s);
}

/* ---- the outlined functions ---- */
static void cg_fn_attr(cg_func *f, LLVMValueRef fn, LLVMAttributeIndex idx, const char *name,
                       uint64_t val) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (kind) LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(f->llctx, kind, val));
}

static void cg_md(cg_func *f, LLVMValueRef inst, const char *kind, LLVMValueRef operand) {
  LLVMMetadataRef ops[1];
  unsigned n = 0;
  if (operand) ops[n++] = LLVMValueAsMetadata(operand);
  LLVMValueRef node =
      LLVMMetadataAsValue(f->llctx, LLVMMDNodeInContext2(f->llctx, ops, n));
  LLVMSetMetadata(inst, LLVMGetMDKindIDInContext(f->llctx, kind, (unsigned)strlen(kind)), node);
}

/* What the outlining of one loop needs on both sides. */
typedef struct cg_outline {
  const ir_stmt *loop;
  cg_free_vars fv;
  LLVMValueRef *vals;     /* caller: the free variables' values (then lo, when captured) */
  LLVMTypeRef *types;     /* their types */
  LLVMTypeRef *elems;     /* buffers: element type, else NULL */
  int nfields;
  int lo_field;           /* index of the loop's min in the closure, or -1 (a constant) */
  int64_t lo_const;
} cg_outline;

/* The body function: begin, end, then every field as a parameter. Builds the loop over
 * [lo + begin, lo + end) with f's state switched to the new function. */
static LLVMValueRef cg_outline_body(cg_func *f, cg_outline *o, const char *name) {
  int np = 2 + o->nfields;
  LLVMTypeRef *pt = calloc((size_t)np, sizeof *pt);
  if (!pt) return cg_internal(f, "out of memory");
  pt[0] = pt[1] = f->i64;
  for (int i = 0; i < o->nfields; i++) pt[2 + i] = o->types[i];
  LLVMTypeRef fty = LLVMFunctionType(f->i32, pt, (unsigned)np, 0);
  free(pt);
  LLVMValueRef fn = LLVMAddFunction(f->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  cg_fn_attr(f, fn, LLVMAttributeFunctionIndex, "alwaysinline", 0);

  /* switch f to the new function: its own bindings, heap list, entry block */
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(f->b);
  LLVMValueRef saved_fn = f->fn;
  LLVMBasicBlockRef saved_entry = f->entry;
  cg_binding *saved_binds = f->binds;
  int saved_nbind = f->nbind, saved_capbind = f->capbind;
  LLVMValueRef *saved_heap = f->heap;
  int saved_nheap = f->nheap, saved_capheap = f->capheap;
  f->fn = fn;
  f->binds = NULL, f->nbind = f->capbind = 0;
  f->heap = NULL, f->nheap = f->capheap = 0;
  f->entry = LLVMAppendBasicBlockInContext(f->llctx, fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(f->llctx, fn, "start");
  LLVMPositionBuilderAtEnd(f->b, start);

  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  LLVMSetValueName2(begin, "begin", 5);
  LLVMSetValueName2(end, "end", 3);
  for (int i = 0; i < o->fv.n; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)(2 + i));
    const char *nm = o->fv.vars[i]->name ? o->fv.vars[i]->name : "v";
    LLVMSetValueName2(p, nm, strlen(nm));
    if (o->elems[i]) { /* arguments and allocations: aligned, distinct objects */
      cg_fn_attr(f, fn, (LLVMAttributeIndex)(3 + i), "noalias", 0);
      cg_fn_attr(f, fn, (LLVMAttributeIndex)(3 + i), "nocapture", 0);
      cg_fn_attr(f, fn, (LLVMAttributeIndex)(3 + i), "align", TEC_ALIGN);
    }
    cg_bind(f, o->fv.vars[i], p, o->elems[i]);
  }
  LLVMValueRef lo = o->lo_field >= 0 ? LLVMGetParam(fn, (unsigned)(2 + o->lo_field))
                                     : LLVMConstInt(f->i64, (unsigned long long)o->lo_const, 1);
  tec_dtype vt = o->loop->var->type;
  int rc = -1;
  if (!f->failed) {
    LLVMValueRef from = o->lo_field < 0 && o->lo_const == 0
                            ? begin : LLVMBuildNSWAdd(f->b, lo, begin, "from");
    LLVMValueRef to = o->lo_field < 0 && o->lo_const == 0
                          ? end : LLVMBuildNSWAdd(f->b, lo, end, "to");
    from = cg_cast(f, from, TEC_INDEX, vt);
    to = cg_cast(f, to, TEC_INDEX, vt);
    if (from && to) rc = cg_emit_loop(f, o->loop->var, from, to, o->loop->body);
  }
  if (rc == 0) {
    LLVMBuildRet(f->b, LLVMConstInt(f->i32, 0, 0));
    LLVMPositionBuilderAtEnd(f->b, f->entry);
    LLVMBuildBr(f->b, start);
  }

  free(f->binds);
  free(f->heap);
  f->fn = saved_fn;
  f->entry = saved_entry;
  f->binds = saved_binds, f->nbind = saved_nbind, f->capbind = saved_capbind;
  f->heap = saved_heap, f->nheap = saved_nheap, f->capheap = saved_capheap;
  LLVMPositionBuilderAtEnd(f->b, saved_block);
  return rc == 0 ? fn : NULL;
}

/* The trampoline the runtime calls: unpack the closure, call the body. */
static LLVMValueRef cg_outline_trampoline(cg_func *f, cg_outline *o, LLVMTypeRef cl_ty,
                                          LLVMValueRef body, const char *name,
                                          LLVMTypeRef tramp_ty) {
  LLVMValueRef fn = LLVMAddFunction(f->mod, name, tramp_ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  cg_fn_attr(f, fn, 3, "nocapture", 0);
  cg_fn_attr(f, fn, 3, "readonly", 0);
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->llctx, fn, "entry"));
  LLVMValueRef cl = LLVMBuildPointerCast(f->b, LLVMGetParam(fn, 2), cg_ptr_to(cl_ty), "closure");
  int na = 2 + o->nfields;
  LLVMValueRef *args = calloc((size_t)na, sizeof *args);
  if (!args) return cg_internal(f, "out of memory");
  args[0] = LLVMGetParam(fn, 0);
  args[1] = LLVMGetParam(fn, 1);
  for (int i = 0; i < o->nfields; i++) {
    LLVMValueRef p = LLVMBuildStructGEP2(f->b, cl_ty, cl, (unsigned)i, "");
    LLVMValueRef v = LLVMBuildLoad2(f->b, o->types[i], p, "");
    if (o->elems[i]) { /* the pointer's alignment survives the trip through memory */
      cg_md(f, v, "align", LLVMConstInt(f->i64, TEC_ALIGN, 0));
      cg_md(f, v, "nonnull", NULL);
      cg_md(f, v, "noundef", NULL);
    }
    args[2 + i] = v;
  }
  LLVMValueRef rc = LLVMBuildCall2(f->b, LLVMGlobalGetValueType(body), body, args,
                                   (unsigned)na, "rc");
  free(args);
  LLVMBuildRet(f->b, rc);
  LLVMPositionBuilderAtEnd(f->b, saved_block);
  return fn;
}

int cg_parallel_outline(cg_func *f, const ir_stmt *s) {
  cg_outline o;
  memset(&o, 0, sizeof o);
  o.loop = s;
  o.lo_field = -1;
  o.fv.f = f;
  o.fv.loop_var = s->var;
  if (!tec_dtype_is_int(s->var->type) || s->var->type.lanes != 1)
    return cg_internal(f, "loop variable '%s' is not a scalar integer", s->var->name), -1;
  if (s->a->type.lanes != 1 || s->b->type.lanes != 1)
    return cg_internal(f, "parallel loop '%s' has a vector bound", s->var->name), -1;
  LLVMValueRef ext = cg_expr(f, s->b), lo = NULL;
  if (ext) ext = cg_cast(f, ext, s->b->type, TEC_INDEX);
  if (!ext) return -1;
  if (!ir_is_const_int(s->a, &o.lo_const)) { /* a symbolic min travels in the closure */
    if ((lo = cg_expr(f, s->a))) lo = cg_cast(f, lo, s->a->type, TEC_INDEX);
    if (!lo) return -1;
  }

  ir_visitor v;
  ir_visitor_init(&v, &o.fv);
  v.expr[IR_VAR] = cg_fv_var;
  v.stmt[IR_S_STORE] = cg_fv_store;
  ir_visit_stmt(&v, s->body);
  int rc = -1;
  int cap = o.fv.n + 1;
  o.vals = calloc((size_t)cap, sizeof *o.vals);
  o.types = calloc((size_t)cap, sizeof *o.types);
  o.elems = calloc((size_t)cap, sizeof *o.elems);
  if (o.fv.oom || !o.vals || !o.types || !o.elems) {
    cg_internal(f, "out of memory");
    goto out;
  }
  for (int i = 0; i < o.fv.n; i++) {
    const cg_binding *bd = cg_lookup(f, o.fv.vars[i]);
    o.vals[i] = bd->value;
    o.types[i] = LLVMTypeOf(bd->value);
    o.elems[i] = bd->elem;
  }
  o.nfields = o.fv.n;
  if (lo) {
    o.lo_field = o.nfields++;
    o.vals[o.lo_field] = lo;
    o.types[o.lo_field] = f->i64;
  }

  int k = f->npar++;
  const char *name = tec_ctx_printf(f->ctx, "%s_par%d", f->lf->name, k);
  const char *body_name = tec_ctx_printf(f->ctx, "%s_par%d_body", f->lf->name, k);
  if (!name || !body_name) {
    cg_internal(f, "out of memory");
    goto out;
  }
  LLVMTypeRef cl_ty = LLVMStructTypeInContext(f->llctx, o.types, (unsigned)o.nfields, 0);
  LLVMTypeRef tp[3] = {f->i64, f->i64, f->ptr8};
  LLVMTypeRef tramp_ty = LLVMFunctionType(f->i32, tp, 3, 0);
  LLVMValueRef body = cg_outline_body(f, &o, body_name);
  if (!body) goto out;
  LLVMValueRef tramp = cg_outline_trampoline(f, &o, cl_ty, body, name, tramp_ty);
  if (!tramp) goto out;

  /* the caller: fill the closure (on this function's stack), run, propagate a failure */
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, f->entry);
  LLVMValueRef cl = LLVMBuildAlloca(f->b, cl_ty, "closure");
  LLVMPositionBuilderAtEnd(f->b, cur);
  for (int i = 0; i < o.nfields; i++)
    LLVMBuildStore(f->b, o.vals[i], LLVMBuildStructGEP2(f->b, cl_ty, cl, (unsigned)i, ""));
  LLVMTypeRef pf_ty, pp[3] = {f->i64, cg_ptr_to(tramp_ty), f->ptr8};
  LLVMValueRef pf = cg_declare(f, "tec_rt_parallel_for", f->i32, pp, 3, &pf_ty);
  LLVMValueRef args[3] = {ext, tramp, LLVMBuildPointerCast(f->b, cl, f->ptr8, "")};
  LLVMValueRef r = LLVMBuildCall2(f->b, pf_ty, pf, args, 3, "par");
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "par_fail");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "par_ok");
  LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntNE, r, LLVMConstInt(f->i32, 0, 0), ""), bad,
                  ok);
  LLVMPositionBuilderAtEnd(f->b, bad);
  cg_emit_return(f, r);
  LLVMPositionBuilderAtEnd(f->b, ok);
  rc = 0;
out:
  free(o.fv.vars);
  free(o.vals);
  free(o.types);
  free(o.elems);
  return f->failed ? -1 : rc;
}
