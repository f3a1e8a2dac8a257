/* backend.h — what a code generator gives the module runtime (module/): a table of functions.
 *
 * The module runtime owns everything a user holds after tec_build: the tec_module handle, the
 * function table, the prepare/run records with their packed constants, the module's memory.
 * It checks the lowered functions, adds each one's prepare half, runs the lowering's
 * build-time passes for the target (lower_for_target) and hands the backend IR functions only:
 * names, argument types and buffers, the loop program and the checked entry's program. A
 * backend translates those and either loads the code into this process (tec_build) or writes
 * a file (tec_emit; the C header is the runtime's, module/header.c). It never sees a te tensor
 * or a lower_func.
 *
 *   tec_build:  check_target(load = 1) -> [lowering per function] -> load -> symbol per name
 *               ... text (tec_module_llvm_ir / tec_module_asm) ... release (tec_module_free)
 *   tec_emit:   check_target(load = 0) -> [lowering per function] -> emit
 *
 * Every function reports its errors in ctx (never on stderr) and returns NULL or -1; memory it
 * takes from ctx while the module runtime's memory scope is current belongs to the module.
 * One backend today: LLVM (codegen_llvm/backend.c).
 */
#ifndef TEC_MODULE_BACKEND_H
#define TEC_MODULE_BACKEND_H

#include "tec/ir.h"
#include "tec/target.h"

/* One argument of an IR function: a buffer. */
typedef struct tec_ir_arg {
  const char *name;               /* the tensor's name (value names, messages) */
  tec_dtype type;                 /* element type */
  const ir_expr *buf;             /* the buffer VAR the programs name it by */
  int ndim;
  const ir_expr *const *extents;  /* the caller's whole buffer (with any margin), ndim of them */
  int written;                    /* the function writes it (a computed tensor): the strided
                                     entry path copies it back */
} tec_ir_arg;

/* Where the loops of a function stand in its printed program (tec_html): with it the backend
 * gives every instruction a debug location, the line of the innermost loop it was made in
 * (the function's header line outside loops), so the assembly's `.loc` lines link each
 * instruction to its loop. */
typedef struct tec_ir_lines {
  const char *file;               /* the printed program's name, for the debug information */
  int func_line;                  /* the function's header line */
  int n;
  const ir_expr *const *vars;     /* loop variables ... */
  const int *lines;               /* ... and the line each loop starts on */
} tec_ir_lines;

/* One function to generate:
 *   int32_t name_raw(T0 *a0, ..., Tk *ak, int64_t size0, ..., int64_t sizem);   the body
 *   int32_t name(DLTensor *const *args, int32_t nargs);                           the entry */
typedef struct tec_ir_func {
  const char *name;               /* a C identifier, checked by the module runtime */
  int nargs;
  const tec_ir_arg *args;
  int nsize;
  const ir_expr *const *size_vars; /* the raw form's trailing int64 parameters */
  const ir_stmt *body;            /* the loop program after the build-time passes */
  const ir_stmt *entry;           /* the checked entry: asserts over dl_arg reads, lets of
                                     the sizes, `attr entry_call` (lower/entry_checks.c) */
  const tec_ir_lines *lines;      /* NULL: no debug locations (every build but tec_html's) */
} tec_ir_func;

typedef enum tec_backend_file {
  TEC_BACKEND_OBJECT,             /* relocatable object */
  TEC_BACKEND_ASM,                /* assembly text */
  TEC_BACKEND_IR                  /* the backend's own IR as text (LLVM IR) */
} tec_backend_file;

typedef struct tec_backend {
  const char *name;
  /* 0 if the backend generates code for t and, with load, can run it in this process;
   * -1 with an error for `who` ("tec_build: target 'text' ... cannot run on this host"),
   * naming the target by `text` as the user wrote it (NULL: t->str). */
  int (*check_target)(tec_ctx *ctx, const tec_target *t, const char *text, int load,
                      const char *who);
  /* Compiles funcs for t and loads the code into this process: the backend's handle to it,
   * or NULL with an error (after which release(NULL)-like cleanup is the backend's). */
  void *(*load)(tec_ctx *ctx, int n, const tec_ir_func *funcs, const tec_target *t);
  /* The address of a symbol of the loaded code (a function's entry `name`, its body
   * `name_raw`), or NULL with an error in ctx. */
  void *(*symbol)(void *code, tec_ctx *ctx, const char *name);
  /* The loaded code as text, its IR (assembly 0) or its assembly (1): made on the first
   * request and kept by code until release. NULL with an error for `who`. */
  const char *(*text)(void *code, tec_ctx *ctx, int assembly, const char *who);
  /* Gives back everything the loaded code holds outside ctx's memory. NULL is a no-op. */
  void (*release)(void *code);
  /* Compiles funcs for t into a file at path. 0 or -1 with an error. */
  int (*emit)(tec_ctx *ctx, int n, const tec_ir_func *funcs, const tec_target *t,
              tec_backend_file kind, const char *path);
} tec_backend;

/* The LLVM backend (codegen_llvm/backend.c). The module runtime reaches it only through the
 * table of backends (module/backends.c: mod_backend_for), never by this name elsewhere. */
extern const tec_backend tec_backend_llvm;

#endif
