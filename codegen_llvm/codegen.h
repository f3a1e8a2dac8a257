/* codegen.h — internal interface of the LLVM backend (codegen_llvm/). Not installed.
 *
 * The backend implements module/backend.h (backend.c: the table). The module runtime
 * (module/) hands it IR functions (tec_ir_func: lowered for the target, entry checks made);
 * here they are only translated and emitted:
 *   cg_target_of        the parsed tec_target (target/) -> LLVM's target  (target_machine.c)
 *   cg_module_build     IR functions -> one LLVM module: per function the
 *                       raw kernel (codegen*.c) and its checked entry     (codegen.c, entry.c)
 *   cg_optimize         verify, target attributes, default<O3>            (optimize.c)
 *   then JIT (jit.c) or write a file (emit.c).
 *
 * The raw kernel's ABI (build.h):
 *
 *   int32_t name_raw(T0 *noalias align 64 a0, ..., Tk *noalias align 64 ak,
 *                    int64_t size0, ..., int64_t sizem);      returns 0, or -1 (out of memory)
 *   int32_t name(DLTensor *const *args, int32_t nargs);      checks, then calls name_raw
 *
 * Every LLVM object made here is owned by a module, a context or a cg_* struct whose
 * dispose function says so; errors go to the tec_ctx, never to stderr or abort().
 */
#ifndef TEC_CODEGEN_LLVM_CODEGEN_H
#define TEC_CODEGEN_LLVM_CODEGEN_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "tec/runtime.h"
#include "ir/internal.h"
#include "module/backend.h"

/* ---- the target, as codegen needs it ---- */
typedef struct cg_target {
  const tec_target *t;   /* the parsed value (tec/target.h): triple, cpu, features, facts */
  const char *triple, *cpu, *features; /* t's */
  int is_host, vector_bits, vector_fma, lane_fma, opt_level; /* t's */
  LLVMTargetRef target;  /* LLVM's target of the triple */
} cg_target;

/* Initializes every LLVM target once (thread safe; target/llvm_init.c). */
void tgt_llvm_init(void);
/* Codegen's view of a parsed target (nothing to free); -1 with an error if LLVM has no target
 * for its triple. */
int cg_target_of(tec_ctx *ctx, const tec_target *t, cg_target *out);
/* A target machine for t (PIC, code generation at t->opt_level); NULL with an error in ctx. */
LLVMTargetMachineRef cg_target_machine(tec_ctx *ctx, const cg_target *t, const char *who);

/* ---- codegen.c (+ codegen_expr.c, codegen_mem.c, codegen_stmt.c, entry.c) ---- */
/* Builds every function of funcs into a new module in llctx; object: for an object file
 * (tec_emit), else a JIT module. NULL with an error in ctx. */
LLVMModuleRef cg_module_build(tec_ctx *ctx, LLVMContextRef llctx, int nfuncs,
                              const tec_ir_func *funcs, const cg_target *t,
                              LLVMTargetMachineRef tm, const char *who, int object);

/* State while generating one function (the raw kernel or its entry). */
typedef struct cg_binding {
  const ir_expr *var;  /* by pointer */
  LLVMValueRef value;  /* its value; buffers: the data pointer */
  LLVMTypeRef elem;    /* buffers: memory type of one element, else NULL */
} cg_binding;

/* Inside a launch region's function <fn>_launch<k> (codegen_parallel.c). */
typedef struct cg_launch {
  LLVMValueRef task, ntask;    /* i32: this task, the number of tasks */
} cg_launch;

typedef struct cg_func {
  tec_ctx *ctx;
  const char *who;            /* API entry for messages: "tec_build", "tec_emit" */
  int object;                 /* making an object file (tec_emit), not a JIT module */
  const tec_ir_func *lf;       /* the function being generated */
  LLVMContextRef llctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  LLVMTypeRef ret_type;       /* i32 */
  LLVMBasicBlockRef entry;    /* constant-size allocas go here */
  LLVMTypeRef i1, i8, i16, i32, i64, intptr, ptr8; /* intptr: the target's size_t */
  cg_binding *binds;          /* a stack: scopes push and pop */
  int nbind, capbind;
  LLVMValueRef *heap;         /* live heap ALLOCATEs, innermost last (freed on early exit) */
  int nheap, capheap;
  int failed;                 /* an error is in ctx: stop emitting */
  int npar;                   /* parallel loops outlined so far (names <fn>_par<k>) */
  int nlaunch;                /* launch regions outlined so far (names <fn>_launch<k>) */
  int sched_pressure;         /* an `attr sched_pressure` met: its functions are marked
                               * CG_SCHED_PRESSURE_ATTR (cg_module_build; optimize.c) */
  cg_launch *launch;          /* emitting a launch region's function, else NULL */
  const ir_stmt *par_dynamic; /* the ATTR parallel_dynamic (marker) around the parallel loop
                                 being emitted (its value: the chunk size), or NULL */
  int vector_fma;             /* cg_target.vector_fma: vector x*y+z as llvm.fma */
  int vector_bits;            /* cg_target.vector_bits: wider stores are sliced to this */
  int lane_fma;               /* cg_target.lane_fma: broadcasts of loads as group load + lane */
  const tec_target *target;   /* cg_target.t: the feature bits (codegen_dot.c) */
  int stream;                 /* inside `attr stream_store` (lower/stream_store.c) */
  int nt_stores;              /* non-temporal stores made in the LLVM function being emitted */
  /* debug locations (debug_lines.c) when the function has lf->lines: the module's builder
   * and file, the subprogram being emitted and the printed line instructions get now */
  void *dib;                  /* LLVMDIBuilderRef */
  LLVMMetadataRef dfile, dscope;
  int dline;
  /* emitting the checked entry (entry.c), else NULL */
  LLVMValueRef dl_args, dl_nargs, raw, entry_rc; /* entry_rc: the i32 slot both calls store */
  int entry_calls;
  LLVMTypeRef raw_ty, dl_type;
} cg_func;


/* codegen.c: types, scopes, declarations, internal errors */
LLVMTypeRef cg_type(cg_func *f, tec_dtype t);     /* register type: bool is i1 */
LLVMTypeRef cg_mem_type(cg_func *f, tec_dtype t); /* memory type of one lane: bool is i8 */
int cg_bind(cg_func *f, const ir_expr *var, LLVMValueRef v, LLVMTypeRef elem);
void cg_unbind_to(cg_func *f, int mark);          /* pop bindings above mark (f->nbind) */
const cg_binding *cg_lookup(cg_func *f, const ir_expr *var);
/* Adds the enum attribute `name` (with val, for "align") to fn at idx (a parameter number,
 * LLVMAttributeFunctionIndex or LLVMAttributeReturnIndex). */
void cg_add_attr(cg_func *f, LLVMValueRef fn, LLVMAttributeIndex idx, const char *name,
                 uint64_t val);
/* Declares (or finds) an external function; *ty receives its type. */
LLVMValueRef cg_declare(cg_func *f, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        unsigned nparams, LLVMTypeRef *ty);
/* Records an internal error (a lowering invariant broken) and marks f failed; NULL. */
LLVMValueRef cg_internal(cg_func *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records that an allocation failed (TEC_ERR_OOM) and marks f failed; NULL. */
LLVMValueRef cg_oom(cg_func *f);
/* A pointer to elements of type elem (typed pointers on LLVM 14, ptr on 15+). */
LLVMTypeRef cg_ptr_to(LLVMTypeRef elem);
/* Calls tec_rt_check_fail(msg, a, b), frees live heap buffers and returns -1. */
void cg_emit_fail_return(cg_func *f, const char *msg, LLVMValueRef a, LLVMValueRef b);
/* Ends a function that made non-temporal stores with the fence they need before another
 * thread or the caller reads their lines (x86: sfence; nothing elsewhere). codegen_mem.c */
void cg_stream_fence(cg_func *f);
/* Frees live heap buffers and returns rc (an i32 error code already reported). */
void cg_emit_return(cg_func *f, LLVMValueRef rc);

/* debug_lines.c: debug locations from tec_ir_func.lines (no-ops without them).
 * module_begin/end around the module; fn: fn gets a subprogram, instructions the current
 * line in it; loop: the line of the loop over var (0: not listed) made current, the previous
 * returned for cg_dbg_set; clear: no location (the checked entry has none). */
void cg_dbg_module_begin(cg_func *f, int nfuncs, const tec_ir_func *funcs);
void cg_dbg_module_end(cg_func *f);
void cg_dbg_fn(cg_func *f, LLVMValueRef fn);
int cg_dbg_loop(cg_func *f, const ir_expr *var);
void cg_dbg_set(cg_func *f, int line);
void cg_dbg_clear(cg_func *f);

/* codegen_expr.c */
LLVMValueRef cg_expr(cg_func *f, const ir_expr *e);
/* v converted from type `from` to `to` (equal lanes, or a scalar widened to a vector). */
LLVMValueRef cg_cast(cg_func *f, LLVMValueRef v, tec_dtype from, tec_dtype to);
LLVMValueRef cg_splat(cg_func *f, LLVMValueRef v, int lanes); /* scalar to lanes copies */
/* codegen_dot.c: dot4(acc, a, b) on the target's dot-product instruction */
LLVMValueRef cg_dot4(cg_func *f, const ir_expr *e);
LLVMValueRef cg_mmla(cg_func *f, const ir_expr *e); /* mmla(acc, a, b): smmla or dot4's way */
/* Calls LLVM intrinsic `name` (overloaded on over[0..nover)), converting each argument and
 * the result by bitcast to the intrinsic's own types (LLVM 14-19 differ for some). */
LLVMValueRef cg_intrinsic_cast(cg_func *f, const char *name, LLVMTypeRef *over, unsigned nover,
                               LLVMValueRef *args, unsigned n, LLVMTypeRef result);
/* int32(round_even(x)) and the int8 requantization's narrowing on x86 AVX-512, or NULL
 * (codegen_requant.c) */
LLVMValueRef cg_try_requant_x86(cg_func *f, const ir_expr *cast);
/* 1 if r is round_even of f32 lanes (what int32(...) of it converts in one instruction) */
int cg_is_round_even_f32(const ir_expr *r);
/* op applied to x's n lanes w at a time (w divides n, n <= 64), joined in lane order */
LLVMValueRef cg_by_parts(cg_func *f, LLVMValueRef x, int n, int w,
                         LLVMValueRef (*op)(cg_func *, LLVMValueRef));
/* codegen_half.c: z + float32(x) * float32(y) of float16 x, y as fmlal/fmlal2 (AArch64
 * +fp16fml); NULL without an error when that does not apply (f->failed says if it failed) */
LLVMValueRef cg_try_fmlal(cg_func *f, const ir_expr *x, const ir_expr *y, const ir_expr *z);
/* codegen_vmath.c: exp, tanh and log of float32 (and float16) vectors of 2-64 lanes inline (range
 * reduction + polynomial) instead of libm per lane; has: whether cg_vmath takes (fn, t) */
int cg_vmath_has(ir_intrinsic fn, tec_dtype t);
LLVMValueRef cg_vmath(cg_func *f, ir_intrinsic fn, LLVMValueRef x, tec_dtype t);
/* codegen_mem.c */
LLVMValueRef cg_load(cg_func *f, const ir_expr *e);
LLVMValueRef cg_broadcast(cg_func *f, const ir_expr *e); /* an IR_BROADCAST */
LLVMValueRef cg_prefetch(cg_func *f, const ir_expr *load); /* the LOAD inside a prefetch call */
/* Calls the overloaded LLVM intrinsic name ("llvm.fmuladd") on type ty. */
LLVMValueRef cg_intrinsic(cg_func *f, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                          unsigned n);
int cg_store(cg_func *f, const ir_stmt *s);
int cg_allocate(cg_func *f, const ir_stmt *s);
/* codegen_extern.c: an extern stage's call (IR_INTRIN_EXTERN); returns its i32 result after
 * the branch that returns -1 when it failed */
LLVMValueRef cg_extern_call(cg_func *f, const ir_expr *e);
/* codegen_stmt.c */
int cg_stmt(cg_func *f, const ir_stmt *s);
/* for (var = lo; var < end; var++) body, with lo and end of var's type. */
int cg_emit_loop(cg_func *f, const ir_expr *var, LLVMValueRef lo, LLVMValueRef end,
                 const ir_stmt *body);
/* codegen_parallel.c: a PARALLEL loop as an outlined function run by tec_rt_parallel_for
 * (inside a launch region: this task's chunk of it, then a barrier). */
int cg_parallel_outline(cg_func *f, const ir_stmt *s);
/* The ATTR "parallel_dynamic" s (lower/launch_regions.c's marker): the parallel loop under it through
 * tec_rt_parallel_for_dynamic (refused inside a launch region). */
int cg_parallel_dynamic(cg_func *f, const ir_stmt *s);
/* The ATTR "launch_region" s (lower/launch_regions.c): its body outlined into
 * <fn>_launch<k> and run by tec_rt_parallel_launch. */
int cg_launch_point(cg_func *f, const ir_stmt *s);
/* ATTRs "launch_task0" (body in task 0 only) and "launch_sync" (body, then a barrier). */
int cg_launch_task0(cg_func *f, const ir_stmt *s);
int cg_launch_sync(cg_func *f, const ir_stmt *s);
/* entry.c: the checked DLTensor entry that calls raw (of type raw_ty): the program
 * lower/entry_checks.c made (asserts over dl_arg reads), then the call. */
int cg_entry_build(cg_func *f, LLVMValueRef raw, LLVMTypeRef raw_ty, const ir_stmt *prog);
LLVMValueRef cg_dl_arg(cg_func *f, const ir_expr *e);   /* a dl_arg call */
int cg_assert(cg_func *f, const ir_stmt *s);             /* an ASSERT */
int cg_entry_call(cg_func *f, int strided);              /* ATTR entry_call (its value) */

/* ---- optimize.c ---- */
/* The string attribute that marks the functions of a tec function whose body holds an `attr
 * sched_pressure` (pragma sched_pressure): cg_optimize gives them the target's
 * register-pressure scheduling features (optimize.c). */
#define CG_SCHED_PRESSURE_ATTR "tec-sched-pressure"

/* Verifies the module, sets target-cpu/target-features on every function and runs
 * default<O3>. 0 or -1 with an error (an invalid module is an internal error). */
int cg_optimize(tec_ctx *ctx, LLVMModuleRef mod, LLVMTargetMachineRef tm, const cg_target *t,
                const char *who);

/* ---- target_machine.c ---- */
/* s[0..n) copied into malloc'd memory (not libc's strndup: the allocator sweep counts tec's
 * own mallocs); an LLVM message copied that way, then disposed (NULL: ""). NULL when out of
 * memory. */
char *cg_strndup(const char *s, size_t n);
char *cg_take_llvm_string(char *s);

/* ---- the backend's entries (module/backend.h) ---- */
/* jit.c */
void *cg_jit_load(tec_ctx *ctx, int nfuncs, const tec_ir_func *funcs, const tec_target *t);
void *cg_jit_symbol(void *code, tec_ctx *ctx, const char *name);
const char *cg_jit_text(void *code, tec_ctx *ctx, int assembly, const char *who);
void cg_jit_release(void *code);
/* emit.c */
int cg_emit_file(tec_ctx *ctx, int nfuncs, const tec_ir_func *funcs, const tec_target *t,
                 tec_backend_file kind, const char *path);

#endif
