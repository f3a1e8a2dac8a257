/* codegen_stmt.c — statements to control flow.
 *
 *   for (i, m, n) body   ->   head: i = phi [m, pre], [i+1, latch]
 *                                   br (i < m+n), body, end
 * Loop kinds: serial loops are emitted as above; unrolled loops never get here (lowering
 * unrolls them or makes them serial, lower_for_target included for hand-built programs);
 * vectorized loops (which the vectorize pass turned into ramps or serial loops) are serial;
 * a parallel loop's body is
 * outlined into a function that tec_rt_parallel_for runs on the thread pool
 * (codegen_parallel.c).
 * ATTR and PRODUCE only annotate: their bodies are emitted as they are, except the markers
 * lower/launch_regions.c leaves ("launch_region": outlined and run on every thread;
 * "launch_task0", "launch_sync"; "parallel_dynamic", from the pragma of that name, whose
 * parallel loop is shared out in dynamic chunks: codegen_parallel.c; "sched_pressure": every
 * function made for the tec function is scheduled for register pressure, optimize.c).
 * Codegen reads those markers only, never a schedule's pragma keys.
 * A loop whose body is one block of more than CG_VECTORIZE_BODY_MAX scalar instructions (a
 * deep compute_inline chain: thousands of bound values in one straight line) is marked for
 * LLVM's loop vectorizer to leave alone (llvm.loop.vectorize.enable false): its plans cost
 * time quadratic in the uses of one value (LLVM 14: 0.76 of 1.3 CPU s building a 100-layer
 * chain). tec's schedules vectorize explicitly (a loop of vector code is never the loop
 * vectorizer's), and the templates' scalar straight-line loops are under 30 instructions:
 * every other loop is emitted as before.
 */
#include <string.h>
#include <llvm-c/DebugInfo.h>
#include "codegen_llvm/codegen.h"

enum { CG_VECTORIZE_BODY_MAX = 2048 };

/* The instructions of a loop's body block, counted up to limit + 1; 0 when one of them is a
 * vector (explicitly vectorized code: not the loop vectorizer's). */
static int cg_scalar_size(LLVMBasicBlockRef bb, int limit) {
  int n = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in && n <= limit;
       in = LLVMGetNextInstruction(in), n++)
    if (LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMVectorTypeKind) return 0;
  return n;
}

/* br, the loop's back edge, gets the loop ID !{self, !{"llvm.loop.vectorize.enable", false}}. */
static void cg_no_loop_vectorize(cg_func *f, LLVMValueRef br) {
  static const char key[] = "llvm.loop.vectorize.enable";
  LLVMMetadataRef hint[2] = {LLVMMDStringInContext2(f->llctx, key, sizeof key - 1),
                             LLVMValueAsMetadata(LLVMConstInt(f->i1, 0, 0))};
  LLVMMetadataRef self = LLVMTemporaryMDNode(f->llctx, NULL, 0);
  LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(f->llctx, hint, 2)};
  LLVMMetadataRef id = LLVMMDNodeInContext2(f->llctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, id); /* (disposes the temporary) */
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(f->llctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(f->llctx, id));
}


/* On a target whose pointers are narrower than the loop variable (ARMv7: 32 bits) a counter
 * with constant bounds that fit the pointer width counts in that width: a 64-bit counter
 * takes two registers and an add/adc pair on such a target, and the register tiles of the
 * templates run out of general registers for their addresses. The body still reads the
 * variable at its own type (sign-extended). */
static int narrow_counter(cg_func *f, LLVMValueRef lo, LLVMValueRef end) {
  unsigned pw = LLVMGetIntTypeWidth(f->intptr), w = LLVMGetIntTypeWidth(LLVMTypeOf(lo));
  if (pw >= w || !LLVMIsAConstantInt(lo) || !LLVMIsAConstantInt(end)) return 0;
  long long lim = (1LL << (pw - 1)) - 1, a = LLVMConstIntGetSExtValue(lo),
            b = LLVMConstIntGetSExtValue(end);
  return a >= -lim && a <= lim && b >= -lim && b < lim;
}

int cg_emit_loop(cg_func *f, const ir_expr *var, LLVMValueRef lo, LLVMValueRef end,
                 const ir_stmt *body_s) {
  int outer_line = cg_dbg_loop(f, var); /* the loop's instructions: its printed line */
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "for.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "for.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "for.end");
  LLVMBuildBr(f->b, head);
  LLVMPositionBuilderAtEnd(f->b, head);
  LLVMTypeRef wide = LLVMTypeOf(lo);
  LLVMTypeRef ct = narrow_counter(f, lo, end) ? f->intptr : wide;
  if (ct != wide) {
    lo = LLVMConstTrunc(lo, ct);
    end = LLVMConstTrunc(end, ct);
  }
  LLVMValueRef i = LLVMBuildPhi(f->b, ct, var->name ? var->name : "i");
  LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, i, end, ""), body, done);
  LLVMPositionBuilderAtEnd(f->b, body);
  int mark = f->nbind;
  LLVMValueRef iv = ct == wide ? i : LLVMBuildSExt(f->b, i, wide, "");
  if (cg_bind(f, var, iv, NULL) != 0) return -1;
  int rc = cg_stmt(f, body_s);
  cg_unbind_to(f, mark);
  if (rc != 0) return -1;
  LLVMValueRef next = LLVMBuildNSWAdd(f->b, i, LLVMConstInt(LLVMTypeOf(i), 1, 0), "next");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(f->b);
  LLVMValueRef back = LLVMBuildBr(f->b, head);
  /* a straight-line body (no inner loop, no branch) of scalar code, too large */
  if (latch == body && cg_scalar_size(body, CG_VECTORIZE_BODY_MAX) > CG_VECTORIZE_BODY_MAX)
    cg_no_loop_vectorize(f, back);
  LLVMValueRef vals[2] = {lo, next};
  LLVMBasicBlockRef from[2] = {pre, latch};
  LLVMAddIncoming(i, vals, from, 2);
  LLVMPositionBuilderAtEnd(f->b, done);
  cg_dbg_set(f, outer_line);
  return 0;
}

static int cg_for_serial(cg_func *f, const ir_stmt *s) {
  tec_dtype vt = s->var->type;
  LLVMValueRef lo = cg_expr(f, s->a), ext = cg_expr(f, s->b);
  if (!lo || !ext) return -1;
  if (!tec_dtype_is_int(vt) || vt.lanes != 1)
    return cg_internal(f, "loop variable '%s' is not a scalar integer", s->var->name), -1;
  lo = cg_cast(f, lo, s->a->type, vt);
  ext = cg_cast(f, ext, s->b->type, vt);
  LLVMValueRef end = LLVMBuildNSWAdd(f->b, lo, ext, "end");
  return cg_emit_loop(f, s->var, lo, end, s->body);
}

/* The body becomes a function the runtime's thread pool runs (codegen_parallel.c). */
static int cg_for_parallel(cg_func *f, const ir_stmt *s) { return cg_parallel_outline(f, s); }

static int cg_for(cg_func *f, const ir_stmt *s) {
  if (!s->var || s->var->kind != IR_VAR || !s->a || !s->b)
    return cg_internal(f, "malformed for loop"), -1;
  switch (s->for_kind) {
  case IR_FOR_PARALLEL: return cg_for_parallel(f, s);
  case IR_FOR_UNROLLED: /* lower_for_target's unroll_rest leaves none */
    return cg_internal(f, "an unrolled loop '%s' reached codegen", s->var->name), -1;
  case IR_FOR_VECTORIZED:
  case IR_FOR_SERIAL:
  default: return cg_for_serial(f, s);
  }
}

static int cg_if(cg_func *f, const ir_stmt *s) {
  LLVMValueRef c = cg_expr(f, s->a);
  if (!c) return -1;
  if (s->a->type.lanes != 1) return cg_internal(f, "an if condition is a vector"), -1;
  if (s->a->type.code != TEC_BOOL) c = cg_cast(f, c, s->a->type, TEC_BOOLT);
  LLVMBasicBlockRef then_b = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "then");
  LLVMBasicBlockRef else_b =
      s->else_body ? LLVMAppendBasicBlockInContext(f->llctx, f->fn, "else") : NULL;
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "endif");
  LLVMBuildCondBr(f->b, c, then_b, else_b ? else_b : join);
  LLVMPositionBuilderAtEnd(f->b, then_b);
  if (cg_stmt(f, s->body) != 0) return -1;
  LLVMBuildBr(f->b, join);
  if (else_b) {
    LLVMPositionBuilderAtEnd(f->b, else_b);
    if (cg_stmt(f, s->else_body) != 0) return -1;
    LLVMBuildBr(f->b, join);
  }
  LLVMPositionBuilderAtEnd(f->b, join);
  return 0;
}

int cg_stmt(cg_func *f, const ir_stmt *s) {
  if (f->failed) return -1;
  if (!s) return 0; /* an empty body */
  switch (s->kind) {
  case IR_S_FOR: return cg_for(f, s);
  case IR_S_STORE: return cg_store(f, s);
  case IR_S_ALLOCATE: return cg_allocate(f, s);
  case IR_S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (cg_stmt(f, s->seq[i]) != 0) return -1;
    return 0;
  case IR_S_IF: return cg_if(f, s);
  case IR_S_LET_STMT: {
    LLVMValueRef v = cg_expr(f, s->a);
    if (!v) return -1;
    int mark = f->nbind;
    if (cg_bind(f, s->var, v, NULL) != 0) return -1;
    int rc = cg_stmt(f, s->body);
    cg_unbind_to(f, mark);
    return rc;
  }
  case IR_S_ATTR:
    if (s->name && strcmp(s->name, "entry_call") == 0) {
      int64_t strided = 0;
      if (s->a && !ir_is_const_int(s->a, &strided)) return cg_internal(f, "entry_call's value is not a constant"), -1;
      return cg_entry_call(f, strided != 0);
    }
    if (s->name && strcmp(s->name, "launch_region") == 0) return cg_launch_point(f, s);
    if (s->name && strcmp(s->name, "launch_task0") == 0) return cg_launch_task0(f, s);
    if (s->name && strcmp(s->name, "launch_sync") == 0) return cg_launch_sync(f, s);
    if (s->name && strcmp(s->name, "parallel_dynamic") == 0) return cg_parallel_dynamic(f, s);
    if (s->name && strcmp(s->name, "sched_pressure") == 0) f->sched_pressure = 1;
    if (s->name && strcmp(s->name, "stream_store") == 0) { /* lower/stream_store.c */
      int was = f->stream;
      f->stream = 1;
      int rc = cg_stmt(f, s->body);
      f->stream = was;
      return rc;
    }
    return cg_stmt(f, s->body);
  case IR_S_PRODUCE: return cg_stmt(f, s->body);
  case IR_S_EVALUATE: return s->a && !cg_expr(f, s->a) ? -1 : 0;
  case IR_S_ASSERT: return cg_assert(f, s);
  case IR_S_PROVIDE:
  case IR_S_REALIZE:
    return cg_internal(f, "a %s of tensor '%s' reached codegen (storage flattening should have "
                       "removed it)", ir_stmt_kind_name(s->kind),
                       s->tensor && s->tensor->name ? s->tensor->name : "?"), -1;
  default: break;
  }
  return cg_internal(f, "unknown statement kind %d", (int)s->kind), -1;
}
