/* legality.c — the schedule checks tec_lower makes, in one place. A primitive checks what it
 * can see when it is called (schedule/); what depends on the schedule as a whole (later
 * primitives can undo an attach point, make a loop parallel around an attached stage, ...)
 * or on loop ranges is checked here, by two passes of the pipeline (pipeline.c):
 *
 *   check_schedule  (before infer_bounds, which walks the attach structure it checks)
 *     compute_at: the consumer is inlined; the loop is no longer one of the consumer's; a
 *       reader of the stage is not computed inside the loop, or at an outer loop of it
 *     store_at: the store loop is no longer the consumer's, or inside the compute loop; the
 *       stage is an argument
 *     compute_inline: an inlined tensor passed as an argument; a split, fuse or reorder of an
 *       inlined stage is a note (its loops are never made)
 *     parallel: a stage computed at a loop that its own parallel loop would nest in another
 *     pragma: parallel_dynamic on a loop that is not parallel; parallel_launch_point inside a
 *       parallel loop
 *     prefetch: at a loop that is vectorized or inside a vectorized one
 *     extern stages: inside a vectorized loop; inside a parallel one unless thread-safe
 *   legality        (right after infer_bounds: needs the loop ranges)
 *     vectorize, unroll: a loop whose extent is not a constant
 *     a loop whose range depends on a loop inside it (a triangular reduce axis)
 *
 * Stages are checked in the order bound inference and schedule_ops visit them (consumers
 * first), so the first error a schedule reports is the one it reported before the checks
 * moved here. Neither pass writes anything but errors and notes. */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/pragma.h"
#include "schedule/internal.h"

sch_attach_kind lower_attach_of(const lower_state *ls, const sch_stage *st) {
  int i = ls->attach ? sch_stage_index(ls->s, st) : -1;
  return i >= 0 ? ls->attach[i] : st->attach;
}

/* The loop of the given kind that is loop `pos` of st or around it, following the compute_at
 * chain outward (pos -1: only loops around the stage's nest), or NULL. */
static const sch_iter *loop_around(const lower_state *ls, const sch_stage *st, int pos,
                                   ir_for_kind kind) {
  for (int depth = 0; st && depth < 1000; depth++) {
    for (int i = 0; i <= pos && i < st->nleaf; i++)
      if (st->leaf[i]->for_kind == kind) return st->leaf[i];
    if (lower_attach_of(ls, st) != SCH_ATTACH_SCOPE) return NULL;
    const sch_stage *c = st->attach_stage;
    pos = -1;
    for (int i = 0; i < c->nleaf; i++)
      if (c->leaf[i] == st->attach_iter) pos = i;
    st = c;
  }
  return NULL;
}

/* ---- check_schedule ---- */

/* An extern stage (te_extern) is called from the loops around it: a parallel one runs it on
 * several threads at once (allowed when its function is declared thread-safe), a vectorized
 * one cannot call a C function per lane. */
static int check_extern_loops(const lower_state *ls, const sch_stage *st) {
  const te_extern_decl *d = st->tensor->ext;
  const char *fn = d->symbol ? d->symbol : "(given by pointer)";
  const sch_iter *v = loop_around(ls, st, -1, IR_FOR_VECTORIZED);
  if (v)
    return tec_ctx_set_error(ls->ctx, "tec_lower '%s': extern stage '%s' is computed inside loop "
                                      "'%s' of '%s', which is vectorized; a C function (%s) "
                                      "cannot be called per vector lane: compute it at a loop "
                                      "outside the vectorized one",
                             ls->fname ? ls->fname : "?", st->tensor->name, v->name,
                             v->stage->tensor->name, fn);
  const sch_iter *p = loop_around(ls, st, -1, IR_FOR_PARALLEL);
  if (p && !d->thread_safe)
    return tec_ctx_set_error(ls->ctx, "tec_lower '%s': extern stage '%s' is computed inside "
                                      "parallel loop '%s' of '%s', so its function %s would run "
                                      "on several threads at once, but it is not declared "
                                      "thread-safe; set te_extern_decl.thread_safe = 1 if it "
                                      "may (each call writes its own output region), or compute "
                                      "'%s' outside the parallel loop (compute_root, or "
                                      "compute_at a loop around it)",
                             ls->fname ? ls->fname : "?", st->tensor->name, p->name,
                             p->stage->tensor->name, fn, st->tensor->name);
  return 0;
}

/* store_at: the store loop is still a loop of the consumer, at or outside the compute loop
 * (leaf pos), and the buffer is tec's to place (not an argument). */
static int check_store(const lower_state *ls, const sch_stage *p, int pos) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *c = p->attach_stage;
  int spos = p->store_iter ? sch_leaf_index(c, p->store_iter) : -1;
  if (p->store_root && lower_attach_of(ls, c) != SCH_ATTACH_ROOT)
    return tec_ctx_set_error(ctx, "store_root: '%s' is stored at the top level, but its consumer "
                                  "'%s' is itself computed inside a loop of another stage, so "
                                  "what it reads is known only per iteration of that loop; store "
                                  "'%s' at a loop of '%s' (store_at: one of %s)",
                             p->tensor->name, c->tensor->name, p->tensor->name, c->tensor->name,
                             sch_leaves_upto(ctx, c, pos));
  if (p->store_root) spos = 0; /* (outside every loop: nothing to check) */
  else if (spos < 0)
    return tec_ctx_set_error(ctx, "store_at: loop '%s' is no longer a loop of '%s' (it was "
                                  "split or fused away after store_at); store '%s' at one of: %s",
                             p->store_iter->name, c->tensor->name, p->tensor->name,
                             sch_leaves_upto(ctx, c, pos));
  if (spos > pos)
    return tec_ctx_set_error(ctx, "store_at: '%s' is stored at loop '%s' of '%s', which is now "
                                  "inside its compute loop '%s' (a reorder moved it); store it "
                                  "at one of: %s",
                             p->tensor->name, p->store_iter->name, c->tensor->name,
                             p->attach_iter->name, sch_leaves_upto(ctx, c, pos));
  for (int i = 0; i < ls->nargs; i++)
    if (ls->args[i] == p->tensor)
      return tec_ctx_set_error(ctx, "tec_lower '%s': '%s' is stored apart from its compute "
                                    "loop (store_at or store_root), but it is an argument of the "
                                    "function, so its buffer is the caller's; drop the store_at "
                                    "or do not pass '%s'",
                               ls->fname ? ls->fname : "?", p->tensor->name, p->tensor->name);
  return 0;
}

/* Every reader of attached stage pi must be computed inside its loop (bound inference bounds
 * the region they read per iteration of it). */
static int check_attach(const lower_state *ls, int pi) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  const te_tensor *t = p->tensor;
  if (lower_attach_of(ls, c) == SCH_ATTACH_INLINE)
    return tec_ctx_set_error(ctx, "compute_at: '%s' is computed at a loop of '%s', which is "
                                  "inlined and has no loops", t->name, c->tensor->name);
  int pos = -1;
  for (int i = 0; i < c->nleaf; i++)
    if (c->leaf[i] == p->attach_iter) pos = i;
  if (pos < 0)
    return tec_ctx_set_error(ctx, "compute_at: loop '%s' is no longer a loop of '%s' (it was "
                                  "split or fused after compute_at); attach to one of: %s",
                             p->attach_iter->name, c->tensor->name, sch_stage_str(c));
  if ((p->store_iter || p->store_root) && check_store(ls, p, pos)) return -1;
  for (int j = pi + 1; j < ls->s->nstage; j++) {
    const sch_stage *rs = ls->s->stages[j];
    if (lower_attach_of(ls, rs) == SCH_ATTACH_INLINE || !ls->body[j]) continue;
    lower_reads probe = {t, 0, 0, NULL, ctx};
    if (!lower_collect_reads(&probe, ls->body[j], NULL)) continue;
    int depth = 0;
    /* a reader whose loops are fused with c's (compute_with), or computed inside such a
     * reader's: not inside c's loop for bound inference (fw: the first such stage from rs
     * out to x, kept as the walk goes out) */
    const sch_stage *fw = NULL;
    for (const sch_stage *x = rs; x != c; x = x->attach_stage, depth++) {
      if (!fw && (x->with_stage == c || c->with_stage == x)) fw = x;
      if (fw && (lower_attach_of(ls, x) != SCH_ATTACH_SCOPE || depth >= 64))
        return tec_ctx_set_error(ctx, "compute_at: '%s' is computed at loop '%s' of '%s', but "
                                      "'%s', whose loops are fused with '%s' (compute_with), "
                                      "reads it too; a stage computed inside fused loops may be "
                                      "read only by the stage whose loop it is at: compute '%s' "
                                      "where both are (compute_root, or the loop the pair is "
                                      "computed at), or drop the compute_with",
                                 t->name, p->attach_iter->name, c->tensor->name,
                                 rs->tensor->name, c->tensor->name, t->name);
      if (lower_attach_of(ls, x) != SCH_ATTACH_SCOPE || depth >= 64)
        return tec_ctx_set_error(ctx, "compute_at: '%s' is computed at loop '%s' of '%s', but "
                                      "the stage that reads it ('%s') is not computed inside "
                                      "that loop; attach '%s' to a loop of '%s' or of a stage "
                                      "around it",
                                 t->name, p->attach_iter->name, c->tensor->name,
                                 rs->tensor->name, t->name, rs->tensor->name);
      if (x->attach_stage != c) continue;
      int at = -1;
      for (int i = 0; i < c->nleaf; i++)
        if (c->leaf[i] == x->attach_iter) at = i;
      if (at < pos)
        return tec_ctx_set_error(ctx, "compute_at: '%s' is computed at loop '%s' of '%s', but "
                                      "its reader '%s' is computed at the outer loop '%s'; "
                                      "attach '%s' at '%s' or outside it",
                                 t->name, p->attach_iter->name, c->tensor->name,
                                 rs->tensor->name, x->attach_iter->name, t->name,
                                 x->attach_iter->name);
    }
  }
  return 0;
}

/* The loops of stage si as schedule_ops nests them: kinds, pragmas and prefetches. */
static int check_loops(const lower_state *ls, int si) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *st = ls->s->stages[si];
  const char *fname = ls->fname ? ls->fname : "?";
  for (int pos = st->nleaf - 1; pos >= 0; pos--) {
    const sch_iter *it = st->leaf[pos];
    /* stages computed at this loop are placed in its body: a parallel loop of theirs would
     * nest in a parallel loop of st or around it */
    for (int k = si - 1; k >= 0; k--) {
      const sch_stage *p = ls->s->stages[k];
      if (lower_attach_of(ls, p) != SCH_ATTACH_SCOPE || p->attach_iter != it) continue;
      for (int i = 0; i < p->nleaf; i++)
        if (p->leaf[i]->for_kind == IR_FOR_PARALLEL && loop_around(ls, st, pos, IR_FOR_PARALLEL))
          return tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                                        "parallel: loop '%s' of stage '%s' would run inside "
                                        "parallel loops of '%s' (it is computed at '%s'); nested "
                                        "parallel loops are not supported",
                                        p->leaf[i]->name, p->tensor->name, st->tensor->name,
                                        it->name);
    }
    if (it->nprefetch) {
      const sch_iter *vec = loop_around(ls, st, pos, IR_FOR_VECTORIZED);
      if (vec)
        return tec_ctx_set_error(ctx, "prefetch at loop '%s' of stage '%s': %s vectorized; put "
                                      "the prefetch on a loop outside the vectorized one",
                                 it->name, st->tensor->name,
                                 vec == it ? "the loop is"
                                           : tec_ctx_printf(ctx, "it is inside '%s', which is",
                                                            vec->name));
    }
    for (int p = 0; p < it->npragma; p++) {
      int id = sch_pragma_id_of(it->pragma_keys[p]);
      if (id == SCH_PRAGMA_PARALLEL_DYNAMIC && it->for_kind != IR_FOR_PARALLEL)
        return tec_ctx_set_error(ctx, "tec_lower '%s': pragma parallel_dynamic on loop '%s' of "
                                      "stage '%s': the loop is %s, not parallel; it chooses how "
                                      "a parallel loop's iterations are shared out, so call "
                                      "sch_parallel on the loop or drop the pragma",
                                 fname, it->name, st->tensor->name,
                                 ir_for_kind_name(it->for_kind));
      /* the pool is entered once, at the marked loop: inside a parallel loop every thread
       * already runs */
      const sch_iter *par = id == SCH_PRAGMA_PARALLEL_LAUNCH_POINT
                                ? loop_around(ls, st, pos - 1, IR_FOR_PARALLEL)
                                : NULL;
      if (par)
        return tec_ctx_set_error(ctx, "tec_lower '%s': pragma parallel_launch_point: loop '%s' "
                                      "is inside parallel loop '%s', where every thread already "
                                      "runs; put the pragma on '%s' or on a loop outside it",
                                 fname, it->name, par->name, par->name);
    }
  }
  return 0;
}

/* An inlined stage has no loops: its splits, fuses and reorders have no effect. Not an error
 * (compute_root would honour them again, and TVM accepts them), but not silent: a note. */
static int note_inlined_loops(const lower_state *ls, const sch_stage *st) {
  int reordered = st->nleaf != st->nroot;
  for (int i = 0; i < st->nleaf && !reordered; i++) reordered = st->leaf[i] != st->root[i];
  if (!st->nrel && !reordered) return 0;
  int rc = tec_ctx_note(ls->ctx, "compute_inline: stage '%s' is inlined, so its loops as "
                                 "scheduled (%s) are never made: its %s no effect (schedule the "
                                 "loops of its readers, or compute_root '%s')",
                        st->tensor->name, sch_stage_str(st),
                        st->nrel ? "splits and fuses have" : "reorder has", st->tensor->name);
  if (rc < 0) return -1;
  return 0;
}

int lower_check_schedule(lower_state *ls) {
  const sch_schedule *s = ls->s;
  for (int si = 0; si < s->nstage; si++)
    for (int a = 0; lower_attach_of(ls, s->stages[si]) == SCH_ATTACH_INLINE && a < ls->nargs; a++)
      if (ls->args[a] == s->stages[si]->tensor)
        return tec_ctx_set_error(ls->ctx, "compute_inline: '%s' is inlined but also passed "
                                          "as an argument; an inlined tensor has no buffer",
                                 s->stages[si]->tensor->name);
  /* a split, fuse or reorder of a stage the user inlined shapes loops that are never made */
  for (int si = 0; si < s->nstage; si++)
    if (s->stages[si]->attach == SCH_ATTACH_INLINE && note_inlined_loops(ls, s->stages[si])) return -1;
  /* recurrences: the scan's t loops serial and outside, its update's stages inside them */
  if (sch_scan_check(s, tec_ctx_printf(ls->ctx, "tec_lower '%s'", ls->fname ? ls->fname : "?"),
                     ls->attach))
    return -1;
  /* bound inference's order: the attach structure of every stage it bounds */
  for (int si = s->nstage - 1; si >= 0; si--) {
    const sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || lower_attach_of(ls, st) != SCH_ATTACH_SCOPE) continue;
    if (check_attach(ls, si)) return -1;
  }
  /* the loops of the stages this function computes */
  for (int si = s->nstage - 1; si >= 0; si--) {
    const sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || lower_attach_of(ls, st) == SCH_ATTACH_INLINE) continue;
    if (ls->skip && ls->skip[si]) continue;
    if (st->tensor->ext && check_extern_loops(ls, st)) return -1;
    if (check_loops(ls, si)) return -1;
  }
  return 0;
}

/* ---- legality: checks over the ranges infer_bounds found ---- */

int lower_check_bounds(lower_state *ls) {
  tec_ctx *ctx = ls->ctx;
  const sch_schedule *s = ls->s;
  const char *fname = ls->fname ? ls->fname : "?";
  for (int si = s->nstage - 1; si >= 0; si--) {
    const sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || lower_attach_of(ls, st) == SCH_ATTACH_INLINE) continue;
    for (int p = 0; p < st->nleaf; p++) {
      const lower_range *r = lower_bounds_get(&ls->b, st->leaf[p]);
      if (!r) return TEC_INTERNAL(ctx, "leaf without a range");
      /* a loop's range may use only loops outside it */
      for (int q = p; q < st->nleaf; q++)
        if (ir_uses_var(r->min, st->leaf[q]->var) || ir_uses_var(r->extent, st->leaf[q]->var))
          return tec_ctx_set_error(ctx, "tec_lower '%s': loop '%s' of stage '%s' runs from %s "
                                        "for %s iterations, which depends on loop '%s' inside "
                                        "it; reorder so that '%s' is outside '%s'",
                                   fname, st->leaf[p]->name, st->tensor->name,
                                   ir_expr_str(r->min), ir_expr_str(r->extent),
                                   st->leaf[q]->name, st->leaf[q]->name, st->leaf[p]->name);
    }
  }
  /* the stages this function computes: their vectorized and unrolled loops */
  for (int si = s->nstage - 1; si >= 0; si--) {
    const sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || lower_attach_of(ls, st) == SCH_ATTACH_INLINE) continue;
    if (ls->skip && ls->skip[si]) continue;
    for (int p = st->nleaf - 1; p >= 0; p--) {
      const sch_iter *it = st->leaf[p];
      if (it->for_kind != IR_FOR_VECTORIZED && it->for_kind != IR_FOR_UNROLLED) continue;
      const lower_range *r = lower_bounds_get(&ls->b, it);
      if (!r) return TEC_INTERNAL(ctx, "leaf without a range");
      if (ir_is_const_int(arith_simplify(r->extent, NULL), NULL)) continue;
      const char *what = it->for_kind == IR_FOR_VECTORIZED ? "vectorize" : "unroll";
      return tec_ctx_set_error(ctx, "%s: loop '%s' of stage '%s' has extent %s, which is not a "
                                    "constant; split it by a constant factor and %s the inner "
                                    "loop", what, it->name, st->tensor->name,
                               ir_expr_str(r->extent), what);
    }
  }
  return 0;
}
