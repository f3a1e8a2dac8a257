/* rule_inline.c — inline injective stages (element-wise, padding, broadcast, shifts) into
 * their readers unless recomputation costs more than it saves:
 *   kept  when a reduction reads it without one of its output axes in the index (each element
 *         is reused across that axis: conv's padded input, attention's probabilities), since
 *         inlining would recompute it in the innermost loop;
 *   kept  when its readers read more than one distinct element of it per element they compute
 *         (a stencil's input, softmax's exp read by the sum and the division) and one element
 *         costs more than one arithmetic operation;
 *   kept  when an element-wise reader loops over axes the read does not index (unsharp's
 *         output over 3 channels reading ratio[y, x]) and one element costs more than one
 *         operation: inlined, it would be recomputed once per value of those axes;
 *   kept  when it depends on constants alone and a reader does not (it runs once, in prepare);
 *   else  inlined.
 * Outputs are never inlined. */
#include "autosched/internal.h"

void as_decide_inline(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    if (s->is_input || !s->understood || s->ch.kind || s->is_output) continue;
    if (s->t->body && s->t->body->kind == IR_REDUCE) continue;
    int64_t at = AS_TUNED(p, s, at); /* the tuned mode's level (space.c) */
    if (at == AS_AT_ROOT || at == AS_AT_ATTACH) {
      s->why = "kept: the tuned config computes it at a loop of its own";
      continue;
    }
    if (at == AS_AT_INLINE) {
      s->ch.kind = TEC_AS_INLINE;
      s->rule = "inline";
      s->why = "inlined: the tuned config";
      continue;
    }
    if (s->reused_by_reduction) {
      s->why =
          "kept: a reduction reads each element for many outputs (inlined, it would be "
          "recomputed in the innermost loop)";
      continue;
    }
    int const_reader = 1;
    for (int c = 0; c < s->nconsumers && c < 32; c++)
      const_reader &= p->st[s->consumers[c]].const_only;
    if (s->const_only && !const_reader) {
      s->why = "kept: computed from constants alone, once, in prepare";
      continue;
    }
    if (s->bcast > 1 && s->cost > 1) {
      s->why = as_fmt(p,
                      "kept: a reader over %lld times its elements (axes its index does not "
                      "use) would recompute its %.1f ops that often",
                      (long long)s->bcast, s->cost);
      continue;
    }
    if (s->reads_total > 1 && s->cost > 1) {
      s->why = as_fmt(p,
                      "kept: %d reads per element of its readers, %.1f ops each: a buffer "
                      "costs less than recomputing",
                      s->reads_total, s->cost);
      continue;
    }
    s->ch.kind = TEC_AS_INLINE;
    s->rule = "inline";
    s->why = s->reads_total <= 1
                 ? "injective, read once per element of its reader"
                 : as_fmt(p,
                          "injective and cheap (%.0f op%s per element): recomputing it for "
                          "its %d reads costs less than a buffer",
                          s->cost, s->cost == 1 ? "" : "s", s->reads_total);
  }
}
