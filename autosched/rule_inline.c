/* rule_inline.c — inline injective stages (element-wise, padding, broadcast, shifts) into
 * their readers unless recomputation costs more than it saves:
 *   kept  when a reduction reads it without one of its output axes in the index (each element
 *         is reused across that axis: conv's padded input, attention's probabilities), since
 *         inlining would recompute it in the innermost loop;
 *   kept  when its readers read more than one distinct element of it per element they compute
 *         (a stencil's input, softmax's exp read by the sum and the division) and one element
 *         costs more than one arithmetic operation, unless the reads become one: readers that
 *         each read it at their own element and are inlined into one common reader;
 *   kept  when an element-wise reader loops over axes the read does not index (unsharp's
 *         output over 3 channels reading ratio[y, x]) or reads it upsampled (f[y / 2][x / 2]:
 *         each element read 4 times; analyze.c) and one element costs more than one
 *         operation: inlined, it would be recomputed that many times;
 *   kept  when it depends on constants alone and a reader does not (it runs once, in prepare);
 *   else  inlined.
 * Outputs are never inlined. */
#include "autosched/internal.h"

/* 1 if every reader of s reads it once, at its own element (index = its axes), is itself
 * read once per element (so it will be inlined) and has the same single reader: inlined, the
 * reads become one expression at one index (Harris' Sxx, read by det and trace, both inlined
 * into the output), which the compiler computes once */
static int reads_merge(const as_prog *p, const as_stage *s) {
  int common = -1;
  for (int c = 0; c < s->nconsumers; c++) {
    if (c >= 32) return 0;
    const as_stage *r = &p->st[s->consumers[c]];
    const ir_expr *reads[2];
    if (r->is_output || !r->understood || r->nconsumers != 1 || r->reads_total > 1 ||
        r->bcast > 1 || (r->t->body && r->t->body->kind == IR_REDUCE) ||
        as_reads_of(r->t->body, s->t, reads, 2) != 1 || reads[0]->nargs != r->t->ndim)
      return 0;
    for (int d = 0; d < r->t->ndim; d++)
      if (reads[0]->args[d] != r->t->axis[d]) return 0;
    if (common >= 0 && r->consumers[0] != common) return 0;
    common = r->consumers[0];
  }
  return common >= 0;
}

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
                      "use, or divides) would recompute its %.1f ops that often",
                      (long long)s->bcast, s->cost);
      continue;
    }
    if (s->reads_total > 1 && s->cost > 1 && !reads_merge(p, s)) {
      s->why = as_fmt(p,
                      "kept: %d reads per element of its readers, %.1f ops each: a buffer "
                      "costs less than recomputing",
                      s->reads_total, s->cost);
      continue;
    }
    s->ch.kind = TEC_AS_INLINE;
    s->rule = "inline";
    s->why = s->reads_total <= 1 ? "injective, read once per element of its reader"
             : s->cost > 1
                 ? "injective, read at one index by readers inlined into one stage: computed "
                   "once there"
                 : as_fmt(p,
                          "injective and cheap (%.0f op%s per element): recomputing it for "
                          "its %d reads costs less than a buffer",
                          s->cost, s->cost == 1 ? "" : "s", s->reads_total);
  }
}
