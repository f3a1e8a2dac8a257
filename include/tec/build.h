/* build.h — code generation: JIT-compiled modules and ahead-of-time files.
 *
 * Every generated function `name` comes in two forms:
 *   int32_t name(DLTensor *const *args, int32_t nargs);
 *       checks nargs, each tensor's dtype, ndim, shape (binding symbolic sizes from the first
 *       tensor that has them and checking the others agree), strides (compact or NULL) and
 *       data pointer, then runs. Returns 0, or -1 with tec_rt_last_error() saying what was
 *       wrong; it never reads out of bounds.
 *   int32_t name_raw(T0 *a0, T1 *a1, ..., int64_t size0, ...);
 *       no checks: the buffers in argument order, then the symbolic sizes in the order of
 *       lower_func.size_vars. The caller guarantees what the checked form verifies: each
 *       buffer TEC_ALIGN (64)-byte aligned and compact, and no two buffers overlapping (they
 *       are declared noalias). It returns -1 only if a heap temporary cannot be allocated.
 * Function names must be C identifiers and not name a runtime or libm symbol ("fma").
 *
 * Targets are strings: "llvm" (or NULL) is the host CPU with its real features.
 */
#ifndef TEC_BUILD_H
#define TEC_BUILD_H

#include <dlpack/dlpack.h>
#include "tec/lower.h"

typedef struct tec_module tec_module;
typedef int32_t (*tec_packed_fn)(DLTensor *const *args, int32_t nargs);

/* JIT-compiles the functions for target (NULL: host). The module belongs to the ctx (freed
 * with it at the latest). NULL with an error in the ctx. */
tec_module *tec_build(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target);
tec_packed_fn tec_module_get(tec_module *m, const char *name);
void *tec_module_get_raw(tec_module *m, const char *name);
/* The optimized LLVM IR / the assembly of the module, as text in the ctx's arena. */
const char *tec_module_llvm_ir(tec_module *m);
const char *tec_module_asm(tec_module *m);
void tec_module_free(tec_module *m);

/* Convenience: call with a list of tensors. */
int32_t tec_call(tec_packed_fn fn, int32_t nargs, DLTensor *const *args);

typedef enum tec_emit_kind {
  TEC_EMIT_OBJECT,  /* relocatable object file */
  TEC_EMIT_ASM,     /* assembly text */
  TEC_EMIT_LLVM_IR, /* optimized LLVM IR text */
  TEC_EMIT_HEADER   /* C header declaring the functions */
} tec_emit_kind;
/* Ahead of time: writes the functions for target into path. 0, or -1 with an error. */
int tec_emit(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target,
             tec_emit_kind kind, const char *path);

#endif
