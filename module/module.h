/* module.h — internals of the module runtime (module/), shared by its files. Not installed.
 *
 *   module.c     tec_build: the module (handle, function table, prepare records, memory) over
 *                a backend (backend.h); lookups, text, free
 *   functions.c  the lowered functions checked, their prepare halves added, and each one's
 *                build-time lowering for the target: the IR functions a backend takes
 *   emit.c       tec_emit: the header here (header.c), the rest through the backend
 *   prepare.c    the prepare/run split: packed constants, prepare once, run
 *   handles.c    the tec_module handles: recycled slots with generations
 *   html.c       tec_html: the printed program's loop lines, the module built with them as
 *                debug locations, its IR and assembly (html_page.c writes the page)
 * The calls go one way: module.c and emit.c call the others, which call none of module/.
 */
#ifndef TEC_MODULE_MODULE_H
#define TEC_MODULE_MODULE_H

#include "tec/build.h"
#include "tec/runtime.h"
#include "ir/internal.h"
#include "module/backend.h"

/* ---- functions.c ---- */
/* Checks what the caller may pass (NULL list, names that are not C identifiers, reserved or
 * duplicate names). 0 or -1 with an error. */
int mod_check_funcs(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *who);
/* backends.c: the code generator for target t, from the one table of backends. */
const tec_backend *mod_backend_for(const tec_target *t);
/* The list with each function's prepare half after it (arena). */
int mod_expand_funcs(tec_ctx *ctx, int n, lower_func *const *in, int *nout, lower_func ***out);
/* The expanded funcs ready for a backend: each lowered for t by the build-time passes
 * (lower_for_target). n IR functions (arena), or NULL with an error for `who`. */
tec_ir_func *mod_lower_funcs(tec_ctx *ctx, int n, lower_func *const *funcs, const tec_target *t,
                             const char *who);

/* ---- header.c ---- */
/* The C header declaring funcs (expanded) for tec_emit. 0 or -1 with an error. */
int mod_write_header(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *triple,
                     const char *path);
/* The C type of one element of t in generated C ("float", "int8_t", float16 as
 * "uint16_t"). */
const char *mod_c_type_name(tec_dtype t);
/* header_extern.c: declarations of the functions extern stages call (none: nothing). */
void mod_header_externs(FILE *out, tec_ctx *ctx, int nfuncs, lower_func *const *funcs);

/* ---- prepare.c: one record per function given to tec_build ---- */
typedef struct mod_prepared mod_prepared;
int mod_prepared_init(tec_ctx *ctx, int n, lower_func *const *funcs, mod_prepared **out,
                      int *nout);
void mod_prepared_release(mod_prepared *p, int n);
/* The record of the function tec_lower named `name`, or NULL. */
mod_prepared *mod_prepared_find(mod_prepared *p, int n, const char *name);
const lower_func *mod_prepared_func(const mod_prepared *p);
/* Runs prepare (entry prep) on the constants among args (tec_lower's order) now. */
int32_t mod_prepared_bind(mod_prepared *p, tec_packed_fn prep, int32_t nargs,
                          DLTensor *const *args);
/* Calls run (the function's entry) with args, running prep first if the constants are not
 * bound yet (prep NULL: a function without a split, called directly). */
int32_t mod_prepared_run(mod_prepared *p, tec_packed_fn run, tec_packed_fn prep, int32_t nargs,
                         DLTensor *const *args);
int64_t mod_prepared_count(const mod_prepared *p);

/* ---- handles.c ---- */
/* A handle for module obj in ctx; NULL with an out-of-memory error. */
tec_module *mod_handle_new(tec_ctx *ctx, void *obj);
/* The live module of h, or NULL (h freed; *ctx: its ctx while that lives, else NULL). */
void *mod_handle_get(const tec_module *h, tec_ctx **ctx);
/* Marks h freed (its slot serves a later module; h stays "freed"); a freed h is a no-op. */
void mod_handle_release(const tec_module *h);

#endif
