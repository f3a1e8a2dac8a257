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
 * ATTR "parallel_dynamic" (lower/launch_regions.c's marker for pragma parallel_dynamic, value:
 * the chunk size, 0 for automatic) calls
 * tec_rt_parallel_for_dynamic(ext, chunk, @f_par0, %closure) instead: the threads take chunks
 * in turn. ATTR "launch_region" (lower/launch_regions.c, from pragma parallel_launch_point)
 * is outlined whole and run once on every thread by tec_rt_parallel_launch: see "launch
 * regions" below; its parallel loops are cut statically.
 */
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"
#include "ir/internal.h"

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
  if (tec_grow(c->f->ctx, (void **)&c->vars, &c->cap, c->n + 1, sizeof *c->vars)) {
    c->oom = 1;
    return;
  }
  c->vars[c->n++] = v;
}

static void cg_fv_var(ir_visitor *v, const ir_expr *e) { cg_fv_add(v->user, e); }

static void cg_fv_store(ir_visitor *v, const ir_stmt *s) { /* the buffer is not a child */
  cg_fv_add(v->user, s->var);
  ir_visit_stmt_default(v, s);
}

/* ---- the outlined functions ---- */
static void cg_md(cg_func *f, LLVMValueRef inst, const char *kind, LLVMValueRef operand) {
  LLVMMetadataRef ops[1];
  unsigned n = 0;
  if (operand) ops[n++] = LLVMValueAsMetadata(operand);
  LLVMValueRef node =
      LLVMMetadataAsValue(f->llctx, LLVMMDNodeInContext2(f->llctx, ops, n));
  LLVMSetMetadata(inst, LLVMGetMDKindIDInContext(f->llctx, kind, (unsigned)strlen(kind)), node);
}

/* f's per-function state, saved while an outlined function is generated. */
typedef struct cg_fn_state {
  LLVMBasicBlockRef block, entry;
  LLVMValueRef fn;
  cg_binding *binds;
  int nbind, capbind;
  LLVMValueRef *heap;
  int nheap, capheap;
  cg_launch *launch;
  LLVMMetadataRef dscope;
  int dline;
  int nt_stores;
} cg_fn_state;

/* Switches f to fn (fresh bindings and heap list, entry and start blocks; the builder at
 * start). Nothing inside is in a launch region until the caller says so. */
static void cg_fn_enter(cg_func *f, LLVMValueRef fn, cg_fn_state *st) {
  st->block = LLVMGetInsertBlock(f->b);
  st->fn = f->fn, st->entry = f->entry;
  st->binds = f->binds, st->nbind = f->nbind, st->capbind = f->capbind;
  st->heap = f->heap, st->nheap = f->nheap, st->capheap = f->capheap;
  st->launch = f->launch;
  st->dscope = f->dscope, st->dline = f->dline;
  st->nt_stores = f->nt_stores;
  f->nt_stores = 0;
  f->fn = fn;
  f->binds = NULL, f->nbind = f->capbind = 0;
  f->heap = NULL, f->nheap = f->capheap = 0;
  f->launch = NULL;
  f->entry = LLVMAppendBasicBlockInContext(f->llctx, fn, "entry");
  LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->llctx, fn, "start"));
  cg_dbg_fn(f, fn);
}

/* Ends fn (ret 0 when ok, the entry block branching to start) and switches back. */
static void cg_fn_leave(cg_func *f, cg_fn_state *st, int ok) {
  if (ok) {
    cg_stream_fence(f);
    LLVMBuildRet(f->b, LLVMConstInt(f->i32, 0, 0));
    LLVMPositionBuilderAtEnd(f->b, f->entry);
    LLVMBuildBr(f->b, LLVMGetNextBasicBlock(f->entry));
  }
  free(f->binds);
  free(f->heap);
  f->fn = st->fn, f->entry = st->entry;
  f->binds = st->binds, f->nbind = st->nbind, f->capbind = st->capbind;
  f->heap = st->heap, f->nheap = st->nheap, f->capheap = st->capheap;
  f->launch = st->launch;
  f->nt_stores = st->nt_stores;
  LLVMPositionBuilderAtEnd(f->b, st->block);
  f->dscope = st->dscope;
  cg_dbg_set(f, st->dline);
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

/* ---- closure plumbing shared by parallel loops and launch regions ---- */

/* An internal i32 fn(x, y, i8 *closure) that reads its closure only. */
static LLVMValueRef cg_closure_fn(cg_func *f, const char *name, LLVMTypeRef fty) {
  LLVMValueRef fn = LLVMAddFunction(f->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  cg_add_attr(f, fn, 3, "nocapture", 0);
  cg_add_attr(f, fn, 3, "readonly", 0);
  return fn;
}

/* Field i of the closure cl (of type cl_ty) at the builder: a buffer pointer keeps its
 * alignment through the trip through memory. */
static LLVMValueRef cg_closure_load(cg_func *f, const cg_outline *o, LLVMTypeRef cl_ty,
                                    LLVMValueRef cl, int i, const char *name) {
  LLVMValueRef p = LLVMBuildStructGEP2(f->b, cl_ty, cl, (unsigned)i, "");
  LLVMValueRef v = LLVMBuildLoad2(f->b, o->types[i], p, name);
  if (o->elems[i]) {
    cg_md(f, v, "align", LLVMConstInt(f->i64, TEC_ALIGN, 0));
    cg_md(f, v, "nonnull", NULL);
    cg_md(f, v, "noundef", NULL);
  }
  return v;
}

/* The caller's side: a closure on f's stack (alloca in the entry block) holding o's values,
 * as an i8 pointer. */
static LLVMValueRef cg_closure_fill(cg_func *f, const cg_outline *o, LLVMTypeRef cl_ty,
                                    const char *name) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, f->entry);
  LLVMValueRef cl = LLVMBuildAlloca(f->b, cl_ty, name);
  LLVMPositionBuilderAtEnd(f->b, cur);
  for (int i = 0; i < o->nfields; i++)
    LLVMBuildStore(f->b, o->vals[i], LLVMBuildStructGEP2(f->b, cl_ty, cl, (unsigned)i, ""));
  return LLVMBuildPointerCast(f->b, cl, f->ptr8, "");
}

/* The free variables of body (o->fv set up by the caller) and their current values: the
 * fields of the closure an outlined function receives (arrays in the ctx arena). -1 (error
 * recorded) on failure. */
static int cg_capture(cg_func *f, const ir_stmt *body, cg_outline *o) {
  ir_visitor v;
  ir_visitor_init(&v, &o->fv);
  v.expr[IR_VAR] = cg_fv_var;
  v.stmt[IR_S_STORE] = cg_fv_store;
  ir_visit_stmt(&v, body);
  int cap = o->fv.n + 1;
  o->vals = tec_ctx_alloc(f->ctx, sizeof *o->vals * (size_t)cap);
  o->types = tec_ctx_alloc(f->ctx, sizeof *o->types * (size_t)cap);
  o->elems = tec_ctx_alloc(f->ctx, sizeof *o->elems * (size_t)cap);
  if (o->fv.oom || !o->vals || !o->types || !o->elems) {
    cg_oom(f);
    return -1;
  }
  for (int i = 0; i < o->fv.n; i++) {
    const cg_binding *bd = cg_lookup(f, o->fv.vars[i]);
    o->vals[i] = bd->value;
    o->types[i] = LLVMTypeOf(bd->value);
    o->elems[i] = bd->elem;
  }
  o->nfields = o->fv.n;
  return 0;
}

/* The body function: begin, end, then every field as a parameter. Builds the loop over
 * [lo + begin, lo + end) with f's state switched to the new function. */
static LLVMValueRef cg_outline_body(cg_func *f, cg_outline *o, const char *name) {
  int np = 2 + o->nfields;
  LLVMTypeRef *pt = calloc((size_t)np, sizeof *pt);
  if (!pt) return cg_oom(f);
  pt[0] = pt[1] = f->i64;
  for (int i = 0; i < o->nfields; i++) pt[2 + i] = o->types[i];
  LLVMTypeRef fty = LLVMFunctionType(f->i32, pt, (unsigned)np, 0);
  free(pt);
  LLVMValueRef fn = LLVMAddFunction(f->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
  cg_add_attr(f, fn, LLVMAttributeFunctionIndex, "alwaysinline", 0);

  cg_fn_state st;
  cg_fn_enter(f, fn, &st);
  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  LLVMSetValueName2(begin, "begin", 5);
  LLVMSetValueName2(end, "end", 3);
  for (int i = 0; i < o->fv.n; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)(2 + i));
    const char *nm = o->fv.vars[i]->name ? o->fv.vars[i]->name : "v";
    LLVMSetValueName2(p, nm, strlen(nm));
    if (o->elems[i]) { /* arguments and allocations: aligned, distinct objects */
      cg_add_attr(f, fn, (LLVMAttributeIndex)(3 + i), "noalias", 0);
      cg_add_attr(f, fn, (LLVMAttributeIndex)(3 + i), "nocapture", 0);
      cg_add_attr(f, fn, (LLVMAttributeIndex)(3 + i), "align", TEC_ALIGN);
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
  cg_fn_leave(f, &st, rc == 0);
  return rc == 0 ? fn : NULL;
}

/* The trampoline the runtime calls: unpack the closure, call the body. */
static LLVMValueRef cg_outline_trampoline(cg_func *f, cg_outline *o, LLVMTypeRef cl_ty,
                                          LLVMValueRef body, const char *name,
                                          LLVMTypeRef tramp_ty) {
  LLVMValueRef fn = cg_closure_fn(f, name, tramp_ty);
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(f->b);
  LLVMMetadataRef saved_scope = f->dscope;
  int saved_line = f->dline;
  LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->llctx, fn, "entry"));
  cg_dbg_fn(f, fn);
  LLVMValueRef cl = LLVMBuildPointerCast(f->b, LLVMGetParam(fn, 2), cg_ptr_to(cl_ty), "closure");
  int na = 2 + o->nfields;
  LLVMValueRef *args = calloc((size_t)na, sizeof *args);
  if (!args) return cg_oom(f);
  args[0] = LLVMGetParam(fn, 0);
  args[1] = LLVMGetParam(fn, 1);
  for (int i = 0; i < o->nfields; i++) args[2 + i] = cg_closure_load(f, o, cl_ty, cl, i, "");
  LLVMValueRef rc = LLVMBuildCall2(f->b, LLVMGlobalGetValueType(body), body, args,
                                   (unsigned)na, "rc");
  free(args);
  LLVMBuildRet(f->b, rc);
  LLVMPositionBuilderAtEnd(f->b, saved_block);
  f->dscope = saved_scope;
  cg_dbg_set(f, saved_line);
  return fn;
}

/* if (r != 0) { free live heap temporaries; return r } */
static void cg_return_if_failed(cg_func *f, LLVMValueRef r, const char *what) {
  const char *bad_name = tec_ctx_printf(f->ctx, "%s_fail", what);
  const char *ok_name = tec_ctx_printf(f->ctx, "%s_ok", what);
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(f->llctx, f->fn, bad_name ? bad_name : "");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(f->llctx, f->fn, ok_name ? ok_name : "");
  LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntNE, r, LLVMConstInt(f->i32, 0, 0), ""), bad,
                  ok);
  LLVMPositionBuilderAtEnd(f->b, bad);
  cg_emit_return(f, r);
  LLVMPositionBuilderAtEnd(f->b, ok);
}

/* tec_rt_parallel_barrier(); a failed launch returns from this task. */
static void cg_launch_barrier(cg_func *f) {
  LLVMTypeRef ty;
  LLVMValueRef fn = cg_declare(f, "tec_rt_parallel_barrier", f->i32, NULL, 0, &ty);
  cg_return_if_failed(f, LLVMBuildCall2(f->b, ty, fn, NULL, 0, "barrier"), "barrier");
}

/* Inside a launch region, parallel loop k (extent ext) runs this task's static chunk,
 *   per = ceil(ext / ntask), [min(task * per, ext), min(task * per + per, ext)),
 * by a direct call of its body function (inlined: its noalias scopes cover the chunk alone,
 * not the barrier that the launch_sync around the loop adds). */
static int cg_launch_chunk(cg_func *f, cg_outline *o, LLVMValueRef body, LLVMValueRef ext) {
  LLVMValueRef zero = LLVMConstInt(f->i64, 0, 0), one = LLVMConstInt(f->i64, 1, 0);
  LLVMValueRef n = LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSGT, ext, zero, ""), ext,
                                   zero, "ext");
  LLVMValueRef task = LLVMBuildSExt(f->b, f->launch->task, f->i64, "task");
  LLVMValueRef ntask = LLVMBuildSExt(f->b, f->launch->ntask, f->i64, "ntask");
  LLVMValueRef per = LLVMBuildSDiv(f->b, LLVMBuildNSWSub(f->b, LLVMBuildNSWAdd(f->b, n, ntask, ""),
                                                         one, ""), ntask, "per");
  LLVMValueRef b = LLVMBuildNSWMul(f->b, task, per, "");
  b = LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, b, n, ""), b, n, "chunk.begin");
  LLVMValueRef e = LLVMBuildNSWAdd(f->b, b, per, "");
  e = LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, e, n, ""), e, n, "chunk.end");
  int na = 2 + o->nfields;
  LLVMValueRef *args = calloc((size_t)na, sizeof *args);
  if (!args) return cg_oom(f), -1;
  args[0] = b;
  args[1] = e;
  for (int i = 0; i < o->nfields; i++) args[2 + i] = o->vals[i];
  LLVMValueRef r = LLVMBuildCall2(f->b, LLVMGlobalGetValueType(body), body, args, (unsigned)na,
                                  "chunk");
  free(args);
  cg_return_if_failed(f, r, "chunk");
  return f->failed ? -1 : 0; /* the barrier: the launch_sync around the loop */
}

static int cg_parallel_outline_loop(cg_func *f, const ir_stmt *s, const ir_stmt *dynamic);

int cg_parallel_dynamic(cg_func *f, const ir_stmt *s) {
  const ir_stmt *saved = f->par_dynamic;
  f->par_dynamic = s;
  int rc = cg_stmt(f, s->body);
  f->par_dynamic = saved;
  return rc;
}

int cg_parallel_outline(cg_func *f, const ir_stmt *s) {
  /* parallel_dynamic applies to this loop, not to parallel loops inside its body
   * (which run serially in a chunk anyway) */
  const ir_stmt *dynamic = f->par_dynamic;
  if (dynamic && f->launch) /* lower/launch_regions.c refuses it */
    return cg_internal(f, "a dynamic parallel loop '%s' in a launch region",
                       s->var->name ? s->var->name : "?"), -1;
  f->par_dynamic = NULL;
  int rc = cg_parallel_outline_loop(f, s, dynamic);
  f->par_dynamic = dynamic;
  return rc;
}

static int cg_parallel_outline_loop(cg_func *f, const ir_stmt *s, const ir_stmt *dynamic) {
  int64_t chunk = 0; /* dynamic: 0 (no value) picks the size at run time */
  if (dynamic && dynamic->a && (!ir_is_const_int(dynamic->a, &chunk) || chunk < 0))
    return cg_internal(f, "parallel_dynamic with chunk %s", ir_expr_str(dynamic->a)), -1;
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

  int rc = -1;
  if (cg_capture(f, s->body, &o)) goto out;
  if (lo) {
    o.lo_field = o.nfields++;
    o.vals[o.lo_field] = lo;
    o.types[o.lo_field] = f->i64;
  }

  int k = f->npar++;
  const char *body_name = tec_ctx_printf(f->ctx, "%s_par%d_body", f->lf->name, k);
  if (!body_name) {
    cg_oom(f);
    goto out;
  }
  LLVMValueRef body = cg_outline_body(f, &o, body_name);
  if (!body) goto out;
  if (f->launch) { /* inside a launch region: this task's chunk, called directly */
    rc = cg_launch_chunk(f, &o, body, ext);
    goto out;
  }
  const char *name = tec_ctx_printf(f->ctx, "%s_par%d", f->lf->name, k);
  if (!name) {
    cg_oom(f);
    goto out;
  }
  LLVMTypeRef cl_ty = LLVMStructTypeInContext(f->llctx, o.types, (unsigned)o.nfields, 0);
  LLVMTypeRef tp[3] = {f->i64, f->i64, f->ptr8};
  LLVMTypeRef tramp_ty = LLVMFunctionType(f->i32, tp, 3, 0);
  LLVMValueRef tramp = cg_outline_trampoline(f, &o, cl_ty, body, name, tramp_ty);
  if (!tramp) goto out;

  /* the caller: fill the closure (on this function's stack), run, propagate a failure */
  LLVMValueRef cl = cg_closure_fill(f, &o, cl_ty, "closure");
  /* (n, [chunk,] body, closure): the dynamic entry takes the chunk size second */
  LLVMTypeRef pf_ty, pp[4];
  LLVMValueRef args[4];
  unsigned na = 0;
  pp[na] = f->i64, args[na++] = ext;
  if (dynamic) pp[na] = f->i64, args[na++] = LLVMConstInt(f->i64, (unsigned long long)chunk, 1);
  pp[na] = cg_ptr_to(tramp_ty), args[na++] = tramp;
  pp[na] = f->ptr8, args[na++] = cl;
  LLVMValueRef pf = cg_declare(f, dynamic ? "tec_rt_parallel_for_dynamic" : "tec_rt_parallel_for",
                               f->i32, pp, na, &pf_ty);
  cg_return_if_failed(f, LLVMBuildCall2(f->b, pf_ty, pf, args, na, "par"), "par");
  rc = 0;
out:
  return f->failed ? -1 : rc;
}

/* ================= launch regions (lower/launch_regions.c decides) =================
 *
 *   attr launch_region {                           in f_raw:
 *     for (k.outer, 0, 4) {                          %rc = call @tec_rt_parallel_launch(
 *       attr launch_sync                                     @f_launch0, %closure)
 *       for (j.outer, 0, 10) parallel { ... }      define internal i32 @f_launch0(i32 %task,
 *     }                                                    i32 %ntask, i8* %closure)
 *   }                                                for k.outer in [0, 4):
 *                                                      call @f_par0_body(chunk of [0, 10))
 *                                                      tec_rt_parallel_barrier()
 *
 * The region is outlined whole and every task runs it; a parallel loop in it runs the task's
 * static chunk; `launch_task0` runs its body in task 0 only, `launch_sync` runs its body then
 * a barrier, and allocations (`launch_per_task` or not) are each task's own, as any
 * allocation in the launch function is. Which statement gets which marker is lowering's
 * decision (lower/launch_regions.c), printed in the IR. */

/* ATTR launch_task0: if (task == 0) { body } */
int cg_launch_task0(cg_func *f, const ir_stmt *s) {
  if (!f->launch) return cg_internal(f, "launch_task0 outside a launch region"), -1;
  LLVMBasicBlockRef then_b = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "task0");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "task0.end");
  LLVMValueRef is0 = LLVMBuildICmp(f->b, LLVMIntEQ, f->launch->task,
                                   LLVMConstInt(f->i32, 0, 0), "is_task0");
  LLVMBuildCondBr(f->b, is0, then_b, join);
  LLVMPositionBuilderAtEnd(f->b, then_b);
  if (cg_stmt(f, s->body) != 0) return -1;
  LLVMBuildBr(f->b, join);
  LLVMPositionBuilderAtEnd(f->b, join);
  return 0;
}

/* ATTR launch_sync: body, then every task meets at a barrier. */
int cg_launch_sync(cg_func *f, const ir_stmt *s) {
  if (!f->launch) return cg_internal(f, "launch_sync outside a launch region"), -1;
  if (cg_stmt(f, s->body) != 0) return -1;
  cg_launch_barrier(f);
  return f->failed ? -1 : 0;
}

int cg_launch_point(cg_func *f, const ir_stmt *s) {
  if (f->launch) return cg_internal(f, "a launch region inside a launch region"), -1;
  cg_launch L;
  memset(&L, 0, sizeof L);
  cg_outline o; /* only the free variables and their values are used */
  memset(&o, 0, sizeof o);
  o.fv.f = f;
  int rc = -1;
  if (cg_capture(f, s->body, &o)) goto out;

  const char *name = tec_ctx_printf(f->ctx, "%s_launch%d", f->lf->name, f->nlaunch++);
  if (!name) {
    cg_oom(f);
    goto out;
  }
  LLVMTypeRef cl_ty = LLVMStructTypeInContext(f->llctx, o.types, (unsigned)o.nfields, 0);
  LLVMTypeRef tp[3] = {f->i32, f->i32, f->ptr8};
  LLVMTypeRef fn_ty = LLVMFunctionType(f->i32, tp, 3, 0);
  LLVMValueRef fn = cg_closure_fn(f, name, fn_ty);

  /* the launch function: unpack the closure (buffers keep align 64; no noalias here, as
   * other tasks write the same buffers between barriers), run the region */
  cg_fn_state st;
  cg_fn_enter(f, fn, &st);
  L.task = LLVMGetParam(fn, 0);
  L.ntask = LLVMGetParam(fn, 1);
  LLVMSetValueName2(L.task, "task", 4);
  LLVMSetValueName2(L.ntask, "ntask", 5);
  LLVMValueRef cl = LLVMBuildPointerCast(f->b, LLVMGetParam(fn, 2), cg_ptr_to(cl_ty), "closure");
  for (int i = 0; i < o.nfields; i++) {
    const char *nm = o.fv.vars[i]->name ? o.fv.vars[i]->name : "v";
    cg_bind(f, o.fv.vars[i], cg_closure_load(f, &o, cl_ty, cl, i, nm), o.elems[i]);
  }
  f->launch = &L;
  int brc = f->failed ? -1 : cg_stmt(f, s->body);
  cg_fn_leave(f, &st, brc == 0 && !f->failed);
  if (brc != 0 || f->failed) goto out;

  /* the caller: fill the closure, launch, propagate a failure */
  LLVMValueRef clv = cg_closure_fill(f, &o, cl_ty, "launch.closure");
  LLVMTypeRef pl_ty, pp[2] = {cg_ptr_to(fn_ty), f->ptr8};
  LLVMValueRef pl = cg_declare(f, "tec_rt_parallel_launch", f->i32, pp, 2, &pl_ty);
  LLVMValueRef args[2] = {fn, clv};
  cg_return_if_failed(f, LLVMBuildCall2(f->b, pl_ty, pl, args, 2, "launch"), "launch");
  rc = 0;
out:
  return f->failed ? -1 : rc;
}
