/* build.h — code generation: JIT-compiled modules and ahead-of-time files.
 *
 * Every generated function `name` comes in two forms:
 *   int32_t name(DLTensor *const *args, int32_t nargs);
 *       checks nargs, each tensor's dtype, ndim, shape (binding symbolic sizes from the first
 *       tensor that has them and checking the others agree; a byte count past 2^63 - 1 is
 *       refused), data pointer, and that the reads whose bounds
 *       the sizes decide stay inside their tensors ("tensor 'A' is accessed at 16 in dimension
 *       0, which is beyond the max (15) for the sizes passed": lower/read_bounds.c; reads
 *       provably outside are refused by tec_lower), then runs. Any buffer a user holds is
 *       accepted: when every tensor is compact (strides NULL or row-major; extent-1
 *       dimensions any) and data + byte_offset TEC_ALIGN-aligned, the kernel runs on them as
 *       they are, after a check that no tensor the function writes overlaps another
 *       argument's bytes; otherwise (strides of any sign, zero strides of inputs, padded
 *       rows, sliced views, any byte_offset and alignment) tec_rt_call_strided
 *       (runtime.h, in libtec_runtime.a) gives the kernel compact aligned copies of the
 *       tensors that are not and writes the written ones back (a written tensor with a zero
 *       stride, or one passed as it is overlapping another, is refused). Inputs may share
 *       memory with each other (they are only read). Returns 0, or -1 with
 *       tec_rt_last_error() saying what was wrong; it never reads out of bounds. With
 *       tec_lower_options.check_bounds (TEC_CHECK_BOUNDS=1), a debug option, every load and
 *       store of both forms is also checked as it runs (-1: "'A' is loaded at flat index 16,
 *       outside its 16 elements"), in JIT modules and tec_emit's objects alike.
 *   int32_t name_raw(T0 *a0, T1 *a1, ..., int64_t size0, ...);
 *       no checks: the buffers in argument order, then the symbolic sizes in the order of
 *       lower_func.size_vars. The caller guarantees what the checked form verifies: each
 *       buffer TEC_ALIGN (64)-byte aligned and compact, and no buffer it writes overlapping
 *       another (they are declared noalias). An argument with a margin (te_tensor_set_margin) is its whole
 *       buffer, of extents shape + before + after, in both forms: the checked form expects
 *       those extents in the DLTensor ("expected 30 (28 + margin 1 + 1)"), the raw form the
 *       buffer's first element; the function reads or writes the window only. It returns -1 only if a heap temporary cannot be allocated.
 * Function names must be C identifiers and not name a runtime or libm symbol ("fma").
 *
 * Parallel loops (sch_parallel) run on the runtime's thread pool: each becomes an internal
 * function (name_par0, name_par1, ...) that generated code hands to tec_rt_parallel_for (a
 * loop marked parallel_launch_point: name_launch0, ... run once by tec_rt_parallel_launch), and
 * the number of threads is tec_rt_set_num_threads / TEC_NUM_THREADS (runtime.h). Objects from
 * tec_emit therefore need the runtime library: link them with libtec_runtime.a and -lpthread
 * (built for the object's target).
 *
 * Targets are values (tec/target.h: tec_target_parse, once) or, in tec_build and tec_emit, their
 * text, parsed once per call: "llvm" (or NULL) is the host CPU with its real features;
 *   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"          AArch64 + NEON
 *   "llvm -mtriple=armv7a-linux-gnueabihf -mcpu=cortex-a7 -mattr=+neon,+vfp4" ARMv7-A + NEON
 *   "rasp4b", "rasp4b32", "rasp3b", "rk3399", "armv7-neon", "neoverse-n1"      presets
 * (a preset may be followed by options that replace its own: "rk3399 -mcpu=cortex-a53").
 * Any target may add an optimization level, -O0 .. -O3 ("llvm -O0", "rasp4b -O1"); the
 * default is -O3. -O0 runs no optimization pass and LLVM's fast instruction selection: a
 * build several times faster (about 5 ms instead of 35-80 ms for a small function) of code
 * that runs several times slower, for programs built to run once (tests, fuzzing). Another
 * level ("-O7", "-Ofast") is an error naming the known ones.
 * Architectures: aarch64, armv7a, x86_64. An unknown triple, CPU or feature is an error that
 * lists the known ones. Other targets only with tec_emit; tec_build needs the host's arch.
 */
#ifndef TEC_BUILD_H
#define TEC_BUILD_H

#include <dlpack/dlpack.h>
#include "tec/lower.h"
#include "tec/target.h"

typedef struct tec_module tec_module;
typedef int32_t (*tec_packed_fn)(DLTensor *const *args, int32_t nargs);

/* JIT-compiles the functions for target (NULL: host). The module belongs to the ctx (freed
 * with it at the latest). NULL with an error in the ctx. The tec_module * is a handle, not an
 * address: after tec_module_free every call on it fails with "the module was freed" (a second
 * free is a no-op), and building and freeing modules over and over holds constant memory. */
tec_module *tec_build(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target);
/* The same for a parsed target (NULL: the host, parsed here): builds parse no text. */
tec_module *tec_build_for(tec_ctx *ctx, int nfuncs, lower_func *const *funcs,
                          const tec_target *target);
tec_packed_fn tec_module_get(tec_module *m, const char *name);
void *tec_module_get_raw(tec_module *m, const char *name);
/* The optimized LLVM IR / the assembly of the module, as text the module owns (valid until
 * tec_module_free). The assembly is made on the first request; so is the IR of a -O0 build. */
const char *tec_module_llvm_ir(tec_module *m);
const char *tec_module_asm(tec_module *m);
void tec_module_free(tec_module *m);

/* Calls function `name` (the name given to tec_lower) with the argument list given to
 * tec_lower. For a function with a prepare/run split (constant placeholders feeding computed
 * stages: lower.h), the constants are packed by <name>_prepare on the first call into buffers
 * the module owns, and every call runs <name>_run: constant arguments are read once (pass the
 * same tensors, or NULL after the first call). Functions without a split are called directly.
 * 0, or -1 with tec_rt_last_error() (a NULL module too: "the module is NULL"). */
int32_t tec_module_run(tec_module *m, const char *name, int32_t nargs, DLTensor *const *args);
/* Runs prepare now with the constants found in args (the tec_lower argument list; the other
 * entries are ignored and may be NULL): to pack new weights. */
int32_t tec_module_bind_constants(tec_module *m, const char *name, int32_t nargs,
                                  DLTensor *const *args);
/* How many times prepare ran for `name` (-1 if unknown). */
int64_t tec_module_prepare_count(tec_module *m, const char *name);

/* Convenience: call with a list of tensors. */
int32_t tec_call(tec_packed_fn fn, int32_t nargs, DLTensor *const *args);
/* The same with the tensors listed: TEC_CALL(fn, &a, &b, &c); TEC_RUN(m, "conv", &x, &w, &y). */
#define TEC_CALL(fn, ...)                                                                 \
  tec_call((fn), (int32_t)(sizeof((DLTensor *[]){__VA_ARGS__}) / sizeof(DLTensor *)),      \
           (DLTensor *const[]){__VA_ARGS__})
#define TEC_RUN(m, name, ...)                                                             \
  tec_module_run((m), (name),                                                             \
                 (int32_t)(sizeof((DLTensor *[]){__VA_ARGS__}) / sizeof(DLTensor *)),      \
                 (DLTensor *const[]){__VA_ARGS__})

/* The target's facts (vector width, lane FMA, registers, caches, features) and its canonical
 * text: tec/target.h (tec_target_parse once, then read the value; tec_target_vector_bits,
 * tec_target_lane_fma and tec_target_str are the string-taking forms). */

typedef enum tec_emit_kind {
  TEC_EMIT_OBJECT,  /* relocatable object file */
  TEC_EMIT_ASM,     /* assembly text */
  TEC_EMIT_LLVM_IR, /* optimized LLVM IR text */
  TEC_EMIT_HEADER   /* C header declaring the functions */
} tec_emit_kind;
/* Ahead of time: writes the functions for target into path. 0, or -1 with an error. */
int tec_emit(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target,
             tec_emit_kind kind, const char *path);
/* One HTML page (self-contained, no network) to look at f as built for target (NULL: the
 * host): the printed program with each loop foldable and tagged with what made it (split,
 * fuse, parallel, vectorize, unroll), the optimized LLVM IR and the assembly beside it, each
 * loop linked to the IR and assembly made from it (debug locations codegen attaches per loop:
 * a loop's instructions carry its printed line), the hot loop's vector instructions
 * highlighted. `tec print OP --html FILE` writes it. 0, or -1 with an error. */
int tec_html(tec_ctx *ctx, lower_func *f, const char *target, const char *path);

/* The same for a parsed target (NULL: the host). */
int tec_emit_for(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const tec_target *target,
                 tec_emit_kind kind, const char *path);

#endif
