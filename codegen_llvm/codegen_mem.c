/* codegen_mem.c — LOAD, STORE and ALLOCATE.
 *
 *   load(A, ramp(i*8, 1, 8))        -> one <8 x float> load at &A[i*8], align 32
 *   load(A, ramp(i, 2, 8))          -> <8 x float> loads at &A[i] and &A[i + 7], one shuffle
 *   load(A, ramp(i, 9, 8))          -> eight scalar loads (a gather), lanes inserted
 *   store(B, x, j) if p             -> if (p) B[j] = x   (vector predicates: per lane)
 *   allocate T[64] float32 { ... }  -> alloca [64 x float] align 64 in the entry block
 *   allocate T[n]  float32 { ... }  -> tec_rt_alloc(n * 4) ... tec_rt_free
 *
 * Buffers are TEC_ALIGN-aligned (entry checks, allocas, the runtime allocator), so a vector
 * access is as aligned as the largest power of two known to divide its first element's byte
 * offset (cg_align); otherwise one element's alignment. Bool is one byte in memory.
 *
 * Under `attr stream_store` (lower/stream_store.c) a whole, aligned vector store gets LLVM's
 * !nontemporal (vmovntps, AArch64 stnp); a function that made one ends with cg_stream_fence.
 *
 * On a target whose multiply-add takes a lane (cg_arch.lane_fma, AArch64):
 *   x4(A[g*4 + 1])                  -> v = <4 x float> load at &A[g*4]; splat lane 1 of v
 * so the four broadcasts of A[g*4 .. g*4+3] share one load (LLVM merges the equal loads) and
 * each multiply-add reads its lane (`fmla v0.4s, v1.4s, v2.s[1]`). The group is in bounds when
 * the element is: tec's own buffers are readable to their TEC_ALIGN-rounded end (the runtime
 * allocator's contract; stack allocations are rounded up here) and an argument's element count
 * must be a known multiple of the group.
 */
#include <stdlib.h>
#include <string.h>
#include "arith/arith.h"
#include "codegen_llvm/codegen.h"

#define CG_STACK_MAX_BYTES (64 << 10) /* larger or symbolic allocations go to the heap */
#define CG_KM_CAP ((int64_t)1 << 20) /* known multiples are kept to divisors of this */

/* Alignment of an access of `lanes` elements of `ebytes` starting at element index idx. */
static unsigned cg_align(const ir_expr *idx, int ebytes, int lanes) {
  if (lanes <= 1) return (unsigned)ebytes;
  int64_t bytes = arith_known_multiple(idx) * ebytes;
  unsigned a = (unsigned)ebytes;
  while (a < TEC_ALIGN && bytes % (2 * a) == 0) a *= 2;
  return a;
}

/* 1 if every group of g elements (g * ebytes dividing TEC_ALIGN) that holds an element of buf
 * lies inside buf: an allocation (readable to its rounded end), or an argument whose buffer's
 * element count (its extents: with any margin) is a known multiple of g. */
static int cg_groups_in_bounds(cg_func *f, const ir_expr *buf, int64_t g, int ebytes) {
  if (TEC_ALIGN % (g * ebytes)) return 0;
  for (int i = 0; i < f->lf->nargs; i++) {
    const tec_ir_arg *arg = &f->lf->args[i];
    if (arg->buf != buf) continue;
    int64_t m = 1;
    for (int d = 0; d < arg->ndim && m % g; d++) {
      m *= arith_known_multiple(arg->extents[d]); /* the buffer, margin included */
      if (m > CG_KM_CAP) m = arith_gcd(m, CG_KM_CAP);
    }
    return m % g == 0;
  }
  return 1;
}

static tec_dtype cg_mem_dtype(tec_dtype t) {
  return t.code == TEC_BOOL ? TEC_DTYPE(TEC_UINT, 8, t.lanes) : t;
}

/* The buffer's pointer as a pointer to elements of type mt. */
static LLVMValueRef cg_buffer(cg_func *f, const ir_expr *buf, LLVMTypeRef mt) {
  if (!buf || buf->kind != IR_VAR) return cg_internal(f, "a load or store names no buffer variable");
  const cg_binding *bd = cg_lookup(f, buf);
  if (!bd || !bd->elem)
    return cg_internal(f, "buffer '%s' is not an argument or an enclosing allocation",
                       buf->name ? buf->name : "?");
  return LLVMBuildPointerCast(f->b, bd->value, cg_ptr_to(mt), "");
}

/* Index value as i64 (lowering uses int64; narrower integers are widened). */
static LLVMValueRef cg_index(cg_func *f, const ir_expr *idx) {
  LLVMValueRef v = cg_expr(f, idx);
  if (!v) return NULL;
  if (!tec_dtype_is_int(idx->type)) return cg_internal(f, "a buffer index is not an integer");
  if (idx->type.bits != 64)
    v = cg_cast(f, v, idx->type, TEC_DTYPE(TEC_INT, 64, idx->type.lanes));
  return v;
}

/* Is idx a stride-1 ramp? Then *base is its base. */
static int cg_dense_ramp(const ir_expr *idx, const ir_expr **base) {
  int64_t stride;
  if (idx->kind == IR_RAMP && ir_is_const_int(idx->b, &stride) && stride == 1) {
    *base = idx->a;
    return 1;
  }
  return 0;
}

static LLVMValueRef cg_gep(cg_func *f, LLVMTypeRef mt, LLVMValueRef ptr, LLVMValueRef i) {
  return LLVMBuildInBoundsGEP2(f->b, mt, ptr, &i, 1, "");
}

static LLVMValueRef cg_lane(cg_func *f, LLVMValueRef v, int lanes, int l) {
  return lanes > 1 ? LLVMBuildExtractElement(f->b, v, LLVMConstInt(f->i32, (unsigned)l, 0), "")
                   : v;
}

/* Element l's index: lane l of a vector index, or base + l for a dense access. */
static LLVMValueRef cg_lane_index(cg_func *f, LLVMValueRef idx, int idx_lanes, int l) {
  if (idx_lanes > 1) return cg_lane(f, idx, idx_lanes, l);
  return l ? LLVMBuildAdd(f->b, idx, LLVMConstInt(f->i64, (unsigned)l, 0), "") : idx;
}

/* A predicate that is a constant true (all lanes) needs no branches. */
static int cg_pred_always(const ir_expr *p) {
  int64_t v;
  return !p || (ir_is_const_int(p, &v) && v != 0);
}

/* A ramp with a constant stride of 2 to CG_STRIDED_MAX (a stride-2 window, in[2x + rx]), loaded
 * as whole vectors and shuffled, as LLVM's interleaved groups would: the span it reads,
 * s (n - 1) + 1 elements, in s loads of n elements, the last one ending at the ramp's last
 * element so nothing past it is read, then one two-source shuffle per load after the first:
 *   ramp(i, 2, 8):  a = A[i .. i+7], b = A[i+7 .. i+14];  shuffle(a, b, {0,2,4,6, 9,11,13,15})
 * Lane by lane, a 16-lane stride-2 load was 16 scalar loads and inserts, which LLVM may turn
 * into a gather (vgatherqps: a 3x3/2 max pool 1.5-2x slower than these shuffles). */
enum { CG_STRIDED_MAX = 8 };

static int cg_strided_ramp(const ir_expr *idx, int lanes, int64_t *stride) {
  return lanes > 1 && idx->kind == IR_RAMP && ir_is_const_int(idx->b, stride) && *stride >= 2 &&
         *stride <= CG_STRIDED_MAX;
}

static LLVMValueRef cg_load_strided(cg_func *f, const ir_expr *base, int64_t s, int n,
                                    LLVMValueRef ptr, LLVMTypeRef mt, int ebytes) {
  if (n > 64) return cg_internal(f, "a strided load of %d lanes", n);
  LLVMValueRef bi = cg_index(f, base);
  if (!bi) return NULL;
  LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)n);
  int64_t last = s * (n - 1) + 1 - n; /* the offset of a load ending at the last element */
  LLVMValueRef acc = NULL, m[64];
  int have[64] = {0}; /* the lanes acc holds */
  for (int first = 0; first < n;) {
    /* the next load starts at the first lane still missing (or ends at the last element) */
    int64_t off = s * first < last ? s * first : last;
    LLVMValueRef o = LLVMConstInt(f->i64, (unsigned long long)off, 1);
    LLVMValueRef p = LLVMBuildPointerCast(
        f->b, cg_gep(f, mt, ptr, off ? LLVMBuildAdd(f->b, bi, o, "") : bi), cg_ptr_to(vt), "");
    LLVMValueRef v = LLVMBuildLoad2(f->b, vt, p, "");
    LLVMSetAlignment(v, off ? (unsigned)ebytes : cg_align(base, ebytes, n));
    /* acc's lanes stay; the lanes this load holds come from it (two-source index n + e) */
    for (int l = 0; l < n; l++) {
      int64_t e = s * l - off;
      if (have[l]) {
        m[l] = LLVMConstInt(f->i32, (unsigned long long)l, 0);
      } else if (e >= 0 && e < n) {
        m[l] = LLVMConstInt(f->i32, (unsigned long long)(acc ? n + e : e), 0), have[l] = 1;
      } else {
        m[l] = LLVMGetUndef(f->i32);
      }
    }
    acc = LLVMBuildShuffleVector(f->b, acc ? acc : v, acc ? v : LLVMGetUndef(vt),
                                 LLVMConstVector(m, (unsigned)n), "");
    while (first < n && have[first]) first++;
  }
  return acc;
}

/* Lane by lane, under the predicate when there is one (gathers, masked loads). */
static LLVMValueRef cg_load_lanes(cg_func *f, const ir_expr *e, LLVMValueRef ptr, LLVMTypeRef mt,
                                  LLVMValueRef idx, int idx_lanes, LLVMValueRef pred) {
  int n = e->type.lanes;
  unsigned ealign = (unsigned)tec_dtype_bytes(e->type);
  LLVMValueRef out = n > 1 ? LLVMGetUndef(LLVMVectorType(mt, (unsigned)n)) : NULL;
  int pl = e->c ? e->c->type.lanes : 1;
  for (int l = 0; l < n; l++) {
    LLVMValueRef il = cg_lane_index(f, idx, idx_lanes, l), v;
    if (pred) {
      LLVMBasicBlockRef cur = LLVMGetInsertBlock(f->b);
      LLVMBasicBlockRef ld = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "pload");
      LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "pjoin");
      LLVMBuildCondBr(f->b, cg_lane(f, pred, pl, l), ld, join);
      LLVMPositionBuilderAtEnd(f->b, ld);
      LLVMValueRef x = LLVMBuildLoad2(f->b, mt, cg_gep(f, mt, ptr, il), "");
      LLVMSetAlignment(x, ealign);
      LLVMBuildBr(f->b, join);
      LLVMPositionBuilderAtEnd(f->b, join);
      v = LLVMBuildPhi(f->b, mt, "");
      LLVMValueRef vals[2] = {x, LLVMConstNull(mt)};
      LLVMBasicBlockRef from[2] = {ld, cur};
      LLVMAddIncoming(v, vals, from, 2);
    } else {
      v = LLVMBuildLoad2(f->b, mt, cg_gep(f, mt, ptr, il), "");
      LLVMSetAlignment(v, ealign);
    }
    if (n == 1) return v;
    out = LLVMBuildInsertElement(f->b, out, v, LLVMConstInt(f->i32, (unsigned)l, 0), "");
  }
  return out;
}

LLVMValueRef cg_load(cg_func *f, const ir_expr *e) {
  tec_dtype t = e->type, md = cg_mem_dtype(t);
  LLVMTypeRef mt = cg_mem_type(f, tec_dtype_scalar(t));
  if (!mt || !e->b) return cg_internal(f, "malformed load");
  LLVMValueRef ptr = cg_buffer(f, e->a, mt);
  if (!ptr) return NULL;
  const ir_expr *base = NULL;
  int dense = t.lanes > 1 && (e->b->type.lanes == 1 || cg_dense_ramp(e->b, &base));
  if (dense && !base) base = e->b;
  LLVMValueRef pred = NULL, v;
  if (!cg_pred_always(e->c) && !(pred = cg_expr(f, e->c))) return NULL;
  /* One predicate for every lane (the padding idiom in a vectorized loop): one branch around
   * the whole load rather than one per lane, zero where it is false. A 16-lane tap of a 7x7
   * depthwise border was 16 diamonds on the same condition, and JumpThreading's SSA updates
   * over thousands of them took minutes (issue #38 item 3). */
  LLVMBasicBlockRef cur = NULL, ld = NULL, join = NULL;
  if (pred && t.lanes > 1 && e->c->type.lanes == 1) {
    cur = LLVMGetInsertBlock(f->b);
    ld = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "vload");
    join = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "vjoin");
    LLVMBuildCondBr(f->b, pred, ld, join);
    LLVMPositionBuilderAtEnd(f->b, ld);
    pred = NULL;
  }
  int64_t stride = 0;
  if (!dense && !pred && cg_strided_ramp(e->b, t.lanes, &stride)) {
    v = cg_load_strided(f, e->b->a, stride, t.lanes, ptr, mt, tec_dtype_bytes(t));
    if (!v) return NULL;
  } else if (dense && !pred) {
    LLVMValueRef bi = cg_index(f, base);
    if (!bi) return NULL;
    LLVMTypeRef vt = LLVMVectorType(mt, t.lanes);
    LLVMValueRef p = LLVMBuildPointerCast(f->b, cg_gep(f, mt, ptr, bi), cg_ptr_to(vt), "");
    v = LLVMBuildLoad2(f->b, vt, p, "");
    LLVMSetAlignment(v, cg_align(base, tec_dtype_bytes(t), t.lanes));
  } else {
    const ir_expr *ie = dense ? base : e->b;
    LLVMValueRef idx = cg_index(f, ie);
    if (!idx) return NULL;
    if (ie->type.lanes != 1 && ie->type.lanes != t.lanes)
      return cg_internal(f, "a load of %d lanes has an index of %d lanes", t.lanes,
                         ie->type.lanes);
    v = cg_load_lanes(f, e, ptr, mt, idx, ie->type.lanes, pred);
  }
  if (join) {
    LLVMBasicBlockRef end = LLVMGetInsertBlock(f->b); /* lane loads end in their own block */
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMValueRef phi = LLVMBuildPhi(f->b, LLVMTypeOf(v), "");
    LLVMValueRef vals[2] = {v, LLVMConstNull(LLVMTypeOf(v))};
    LLVMBasicBlockRef from[2] = {end, cur};
    LLVMAddIncoming(phi, vals, from, 2);
    v = phi;
  }
  return cg_cast(f, v, md, t);
}

/* broadcast(load(B, i)) as a lane of B's aligned group of native-vector width when the target
 * has multiply-add by lane (see the top of the file), else the element splatted. */
LLVMValueRef cg_broadcast(cg_func *f, const ir_expr *e) {
  const ir_expr *ld = e->a, *rest = NULL;
  int64_t c = 0, g = 0;
  int eb = tec_dtype_bytes(e->type);
  if (f->lane_fma && ld && ld->kind == IR_LOAD && ld->type.lanes == 1 &&
      ld->type.code == TEC_FLOAT && ld->b && ld->b->type.lanes == 1 && cg_pred_always(ld->c)) {
    g = f->vector_bits / (8 * eb);
    rest = ld->b;
    if (rest->kind == IR_ADD && ir_is_const_int(rest->b, &c)) rest = rest->a;
    else if (ir_is_const_int(rest, &c)) rest = NULL;
  }
  if (g < 2 || (rest && arith_known_multiple(rest) % g) ||
      !cg_groups_in_bounds(f, ld->a, g, eb)) {
    LLVMValueRef a = cg_expr(f, e->a);
    return a ? cg_splat(f, a, e->type.lanes) : NULL;
  }
  int64_t lane = ((c % g) + g) % g, off = c - lane;
  LLVMTypeRef mt = cg_mem_type(f, ld->type), vt = LLVMVectorType(mt, (unsigned)g);
  LLVMValueRef ptr = cg_buffer(f, ld->a, mt), bi = rest ? cg_index(f, rest) : NULL;
  if (!ptr || (rest && !bi)) return NULL;
  LLVMValueRef o = LLVMConstInt(f->i64, (unsigned long long)off, 1);
  bi = !bi ? o : off ? LLVMBuildAdd(f->b, bi, o, "") : bi;
  LLVMValueRef v = LLVMBuildLoad2(
      f->b, vt, LLVMBuildPointerCast(f->b, cg_gep(f, mt, ptr, bi), cg_ptr_to(vt), ""), "");
  LLVMSetAlignment(v, (unsigned)(g * eb)); /* groups start at multiples of g elements */
  /* the lane splatted: instcombine makes it one shuffle of the group, which the AArch64
   * backend folds into fmla by element */
  LLVMValueRef x = LLVMBuildExtractElement(f->b, v, LLVMConstInt(f->i32, (unsigned)lane, 0), "");
  return cg_splat(f, x, e->type.lanes);
}

/* prefetch(load(B, i)): llvm.prefetch(&B[i], read, high locality, data). The address is
 * computed without `inbounds`: a prefetch past the buffer's end is legal and harmless. */
LLVMValueRef cg_prefetch(cg_func *f, const ir_expr *load) {
  if (!load || load->kind != IR_LOAD || load->type.lanes != 1 || !load->b ||
      load->b->type.lanes != 1)
    return cg_internal(f, "prefetch of something other than a scalar load");
  LLVMTypeRef mt = cg_mem_type(f, load->type);
  LLVMValueRef ptr = mt ? cg_buffer(f, load->a, mt) : NULL, idx = ptr ? cg_index(f, load->b) : NULL;
  if (!idx) return NULL;
  LLVMValueRef p = LLVMBuildPointerCast(f->b, LLVMBuildGEP2(f->b, mt, ptr, &idx, 1, ""), f->ptr8,
                                        "");
  LLVMValueRef args[4] = {p, LLVMConstInt(f->i32, 0, 0), LLVMConstInt(f->i32, 3, 0),
                          LLVMConstInt(f->i32, 1, 0)};
  return cg_intrinsic(f, "llvm.prefetch", f->ptr8, args, 4);
}

/* Non-temporal stores on x86 are weakly ordered: neither a later store of this thread nor
 * the lock of a parallel join is guaranteed to order them on every x86 implementation, and
 * LLVM's fences do not emit one. An sfence before each return of a function that made them
 * (the kernel, each parallel task's body) puts them in memory first, as hand-written
 * streaming kernels do. AArch64's stnp is ordered as a plain store (the join's barriers
 * suffice); elsewhere LLVM makes plain stores. */
void cg_stream_fence(cg_func *f) {
  if (!f->nt_stores || !f->target || f->target->arch != TEC_ARCH_X86_64) return;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(f->llctx), NULL, 0, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(f->mod, "llvm.x86.sse.sfence");
  if (!fn) fn = LLVMAddFunction(f->mod, "llvm.x86.sse.sfence", fty);
  LLVMBuildCall2(f->b, fty, fn, NULL, 0, "");
}

int cg_store(cg_func *f, const ir_stmt *s) {
  const ir_expr *val = s->b, *ie = s->a;
  if (!val || !ie) return cg_internal(f, "malformed store"), -1;
  tec_dtype t = val->type, md = cg_mem_dtype(t);
  LLVMTypeRef mt = cg_mem_type(f, tec_dtype_scalar(t));
  if (!mt) return cg_internal(f, "store of unknown type"), -1;
  LLVMValueRef ptr = cg_buffer(f, s->var, mt);
  LLVMValueRef v = cg_expr(f, val);
  if (!ptr || !v) return -1;
  v = cg_cast(f, v, t, md);
  const ir_expr *base = NULL;
  int dense = t.lanes > 1 && (ie->type.lanes == 1 || cg_dense_ramp(ie, &base));
  if (dense && !base) base = ie;
  LLVMValueRef pred = NULL;
  if (!cg_pred_always(s->c) && !(pred = cg_expr(f, s->c))) return -1;
  if (dense && !pred) {
    LLVMValueRef bi = cg_index(f, base);
    if (!bi) return -1;
    LLVMTypeRef vt = LLVMVectorType(mt, t.lanes);
    LLVMValueRef p = LLVMBuildPointerCast(f->b, cg_gep(f, mt, ptr, bi), cg_ptr_to(vt), "");
    LLVMValueRef st = LLVMBuildStore(f->b, v, p);
    unsigned align = cg_align(base, tec_dtype_bytes(t), t.lanes);
    LLVMSetAlignment(st, align);
    if (f->stream && align >= (unsigned)(tec_dtype_bytes(t) * t.lanes)) { /* whole and aligned */
      LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(f->i32, 1, 0));
      LLVMSetMetadata(st, LLVMGetMDKindIDInContext(f->llctx, "nontemporal", 11),
                      LLVMMetadataAsValue(f->llctx, LLVMMDNodeInContext2(f->llctx, &one, 1)));
      f->nt_stores++;
    }
    return 0;
  }
  if (dense) ie = base;
  LLVMValueRef idx = cg_index(f, ie);
  if (!idx) return -1;
  int il = ie->type.lanes, pl = s->c ? s->c->type.lanes : 1;
  if (il != 1 && il != t.lanes)
    return cg_internal(f, "a store of %d lanes has an index of %d lanes", t.lanes, il), -1;
  for (int l = 0; l < t.lanes; l++) { /* scatter, or a predicated store, lane by lane */
    LLVMBasicBlockRef join = NULL;
    if (pred) {
      LLVMBasicBlockRef st = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "pstore");
      join = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "pjoin");
      LLVMBuildCondBr(f->b, cg_lane(f, pred, pl, l), st, join);
      LLVMPositionBuilderAtEnd(f->b, st);
    }
    LLVMValueRef x = cg_lane(f, v, t.lanes, l);
    LLVMValueRef sp = cg_gep(f, mt, ptr, cg_lane_index(f, idx, il, l));
    LLVMSetAlignment(LLVMBuildStore(f->b, x, sp), (unsigned)tec_dtype_bytes(t));
    if (join) {
      LLVMBuildBr(f->b, join);
      LLVMPositionBuilderAtEnd(f->b, join);
    }
  }
  return 0;
}

static int cg_push_heap(cg_func *f, LLVMValueRef p) {
  if (f->nheap == f->capheap) {
    int cap = f->capheap ? 2 * f->capheap : 8;
    LLVMValueRef *nh = realloc(f->heap, (size_t)cap * sizeof *nh);
    if (!nh) return cg_oom(f), -1;
    f->heap = nh;
    f->capheap = cap;
  }
  f->heap[f->nheap++] = p;
  return 0;
}

int cg_allocate(cg_func *f, const ir_stmt *s) {
  tec_dtype st = tec_dtype_scalar(s->type);
  LLVMTypeRef mt = cg_mem_type(f, st);
  const char *name = s->var && s->var->name ? s->var->name : "buf";
  if (!mt || st.code == TEC_HANDLE || !s->a)
    return cg_internal(f, "allocation '%s' has no element type or size", name), -1;
  int64_t lanes = s->type.lanes ? s->type.lanes : 1, count, ebytes = tec_dtype_bytes(st);
  LLVMValueRef mem;
  int heap = 0;
  if (ir_is_const_int(s->a, &count) && count >= 0 && count <= CG_STACK_MAX_BYTES / ebytes / lanes) {
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(f->b);
    LLVMPositionBuilderAtEnd(f->b, f->entry); /* once per function, not per iteration */
    /* rounded up to TEC_ALIGN bytes like the heap's: vector reads may go to the rounded end */
    int64_t per = TEC_ALIGN / ebytes > 0 ? TEC_ALIGN / ebytes : 1;
    int64_t n = (count * lanes + per - 1) / per * per;
    mem = LLVMBuildArrayAlloca(f->b, mt, LLVMConstInt(f->i64, (unsigned long long)n, 0), name);
    LLVMSetAlignment(mem, TEC_ALIGN);
    LLVMPositionBuilderAtEnd(f->b, cur);
  } else {
    LLVMValueRef n = cg_index(f, s->a);
    if (!n) return -1;
    /* a count computed at run time: refused when negative or when its bytes pass int64 */
    int64_t maxn = INT64_MAX / (ebytes * lanes);
    LLVMValueRef fits = LLVMBuildICmp(f->b, LLVMIntULE, n,
                                      LLVMConstInt(f->i64, (unsigned long long)maxn, 0), "fits");
    LLVMBasicBlockRef fit_ok = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "size_ok");
    LLVMBasicBlockRef fit_bad = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "size_bad");
    LLVMBuildCondBr(f->b, fits, fit_ok, fit_bad);
    LLVMPositionBuilderAtEnd(f->b, fit_bad);
    const char *bad_msg = tec_ctx_printf(f->ctx, "%s: cannot allocate %%lld elements of %lld "
                                                 "bytes for '%s': the size is negative or its "
                                                 "bytes pass 2^63 - 1",
                                         f->lf->name, (long long)(ebytes * lanes),
                                         tec_ctx_fmt_escape(f->ctx, name));
    if (!bad_msg) return cg_oom(f), -1;
    cg_emit_fail_return(f, bad_msg, n, NULL);
    LLVMPositionBuilderAtEnd(f->b, fit_ok);
    LLVMValueRef bytes = LLVMBuildMul(f->b, n, LLVMConstInt(f->i64, (unsigned long long)(ebytes * lanes), 0),
                                      "bytes");
    LLVMValueRef sz = LLVMBuildIntCast2(f->b, bytes, f->intptr, 0, "");
    LLVMTypeRef aty, fty, ap[1] = {f->intptr};
    LLVMValueRef alloc_fn = cg_declare(f, "tec_rt_alloc", f->ptr8, ap, 1, &aty);
    /* malloc-like: a fresh block no other live pointer reaches. Without this LLVM cannot tell
     * a temporary from the noalias arguments, and an accumulator in the output (k split,
     * C += A*Bp) is stored to memory on every iteration instead of kept in registers. (Adding
     * it again to an existing declaration replaces it.) */
    cg_add_attr(f, alloc_fn, LLVMAttributeReturnIndex, "noalias", 0);
    mem = LLVMBuildCall2(f->b, aty, alloc_fn, &sz, 1, name);
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "alloc_ok");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(f->llctx, f->fn, "alloc_fail");
    LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, mem, ""), bad, ok);
    LLVMPositionBuilderAtEnd(f->b, bad);
    const char *msg = tec_ctx_printf(f->ctx, "%s: out of memory allocating %%lld bytes for '%s'",
                                     f->lf->name, tec_ctx_fmt_escape(f->ctx, name));
    if (!msg) return cg_oom(f), -1;
    cg_emit_fail_return(f, msg, bytes, NULL);
    LLVMPositionBuilderAtEnd(f->b, ok);
    if (cg_push_heap(f, mem) != 0) return -1;
    heap = 1;
    (void)fty;
  }
  int mark = f->nbind;
  if (cg_bind(f, s->var, mem, mt) != 0) return -1;
  int rc = cg_stmt(f, s->body);
  cg_unbind_to(f, mark);
  if (heap) {
    f->nheap--;
    if (rc == 0) {
      LLVMTypeRef fty, fp[1] = {f->ptr8};
      LLVMValueRef rfree = cg_declare(f, "tec_rt_free", LLVMVoidTypeInContext(f->llctx), fp, 1, &fty);
      LLVMBuildCall2(f->b, fty, rfree, &mem, 1, "");
    }
  }
  return rc;
}
