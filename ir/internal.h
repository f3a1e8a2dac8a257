/* internal.h — helpers shared by the ir/ and te/ implementation files (not public). */
#ifndef TEC_IR_INTERNAL_H
#define TEC_IR_INTERNAL_H

#include "tec/te.h"

int tec_ctx_next_id(tec_ctx *ctx);
void tec_ctx_forget_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg);

/* Internal invariant check: records an "internal error" with file and line in the ctx. */
#define TEC_INTERNAL(ctx, msg)                                                          \
  tec_ctx_set_error_kind((ctx), TEC_ERR_INTERNAL, "internal error at %s:%d: %s", __FILE__, \
                         __LINE__, (msg))

/* ---- errors that belong to one call (the rule is in te.h) ----
 * A piece of work decides whether it failed from what it reported, never from what the ctx
 * holds (an earlier, ignored call may have left an error there):
 *   unsigned long n0 = tec_ctx_error_count(ctx);  ...work...
 *   if (tec_ctx_error_count(ctx) != n0) -> this work reported an error */
unsigned long tec_ctx_error_count(const tec_ctx *ctx);
/* Forgets the errors reported since mark (a count): for a tentative attempt that has a
 * fallback. The slot's error goes if it was reported after mark. */
void tec_ctx_error_rollback(tec_ctx *ctx, unsigned long mark);

/* The scope of a compile call (tec_lower, tec_build, tec_emit): its first error is recorded
 * even when an older one is, and replaces it if the call fails.
 *   tec_err_scope sc;  tec_err_begin(ctx, &sc);
 *   r = work(...);
 *   return tec_err_end(ctx, &sc, r != NULL, "tec_lower") ? r : NULL;
 * tec_err_end says whether the call succeeded: ok and no error reported inside. A failure
 * that reported nothing keeps the older error (an argument came from an earlier failure) or,
 * without one, records an internal error naming `who`. Scopes nest; the outermost decides. */
typedef struct tec_err_scope {
  unsigned long start; /* tec_ctx_error_count at entry */
} tec_err_scope;
void tec_err_begin(tec_ctx *ctx, tec_err_scope *sc);
int tec_err_end(tec_ctx *ctx, tec_err_scope *sc, int ok, const char *who);

/* ---- notes: what a compile call did other than asked, without failing ----
 * (a vectorize kept serial, a compute_at'd constant stage moved into prepare). A pass calls
 * tec_ctx_note (an identical note is kept once); tec_lower takes the notes made since its
 * mark into the lowered function (lower_func.notes), or fails with the first one in strict
 * mode (tec_ctx_strict, te.h). */
int tec_ctx_note(tec_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tec_ctx_note_mark(const tec_ctx *ctx);
/* The notes made since mark (arena array in *out), removed from the ctx; their count, or -1
 * when out of memory. */
int tec_ctx_notes_take(tec_ctx *ctx, int mark, const char *const **out);
/* Memory scopes: between tec_mem_scope_begin and tec_mem_scope_end, tec_ctx_alloc takes
 * memory from the scope's own blocks, which tec_mem_scope_free releases at once (the ctx
 * frees scopes still alive). Nothing outside what the scope's owner holds may point into it.
 * tec_lower allocates its lowered function in one (tec_lower_free), tec_build its module's
 * memory (tec_module_free). NULL with an out-of-memory error. */
typedef struct tec_mem_scope tec_mem_scope;
tec_mem_scope *tec_mem_scope_begin(tec_ctx *ctx);
void tec_mem_scope_end(tec_mem_scope *sc);   /* allocations go back where they went before */
void tec_mem_scope_free(tec_mem_scope *sc);  /* ends it if needed; NULL is a no-op */

/* Growable arena arrays: *arr has *n items of `size` bytes and room for *cap. */
int tec_grow(tec_ctx *ctx, void **arr, int *cap, int need, size_t size);

/* The binary node of kind k (ADD .. OR; DIV and MOD as the IR means them: float division,
 * truncating integer ones) over a, b; NULL for another kind (lower/vectorize.c and
 * lower/bound_checkers.c rebuild nodes lane by lane with it). */
const ir_expr *ir_binary(ir_expr_kind k, const ir_expr *a, const ir_expr *b);

/* s with every '%' doubled, to put a user's name inside a message format ("?" for NULL; s
 * itself when it has no '%'). In the ctx's arena. */
const char *tec_ctx_fmt_escape(tec_ctx *ctx, const char *s);

#endif
