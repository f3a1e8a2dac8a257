/* rule_stream.c — non-temporal output stores (pragma stream_store, lower/stream_store.c): an
 * output stage with its own loops, written in whole aligned vectors, whose bytes exceed what
 * the last-level cache holds for one core streams its stores past the caches (no read for
 * ownership of each line it overwrites: a third less memory traffic).
 *
 * The cache it must exceed: the target's L3, but at most 8 x its L2 (one core's share of a
 * large shared L3; this Xeon's 2 MiB L2 and 300 MiB L3 give 16 MiB, Halide's default LLC
 * too); the L2 where there is no L3; nothing known: no streaming. Measured on blur 3x3 (1
 * thread, loaded machine): streamed/plain 0.93x at 1 MB, a tie at 2-8 MB, 1.16-1.54x at
 * 16-33 MB; when the caller reads the output right after: 0.47x at 1 MB, 0.90x at 8 MB,
 * 1.09-1.21x at 16-33 MB.
 *
 * Whole aligned vectors: the stage is an injective (no reduction: its update would read the
 * output back) output no other stage reads, at constant sizes, vectorized along its innermost
 * axis by a vector of 16, 32 or 64 bytes that divides that axis (and the column tiles, when
 * producers attach per tile): every row starts a vector and no shift_inwards tail overlaps.
 * The tuned mode's `stream` knob (no | yes) exists for such stages where the rule may stream
 * (a known cache on x86), its default this rule.
 *
 * x86 only: there each line a plain store misses is read for ownership. Arm cores detect a
 * stream of whole-line writes and stop allocating on their own, and LLVM 14 writes a 128-bit
 * non-temporal store as `stnp` of its two 64-bit halves (one more instruction per vector);
 * with no Arm machine to measure, the pragma stays available there but the rule does not ask. */
#include "autosched/internal.h"

int64_t as_stream_llc(const tec_target *t) {
  if (!t || t->arch != TEC_ARCH_X86_64) return 0; /* see above: measured on x86 only */
  int64_t l2 = t->l2_bytes, l3 = t->l3_bytes;
  if (l3 > 0) return l2 > 0 && l3 > 8 * l2 ? 8 * l2 : l3;
  return l2 > 0 ? l2 : 0;
}

int as_stream_can(const as_prog *p, const as_stage *s) {
  const te_tensor *t = s->t;
  int nd = t->ndim;
  int64_t V = s->ch.vector, bytes = tec_dtype_bytes(t->type), e = nd ? s->ext[nd - 1] : 0;
  return p->llc > 0 && s->ch.kind == TEC_AS_LOOPS && s->is_output && !s->nconsumers && s->const_ext &&
         !s->ch.rfactor && !(t->body && t->body->kind == IR_REDUCE) && nd >= 1 && t->nout <= 1 &&
         V > 1 && (V * bytes == 16 || V * bytes == 32 || V * bytes == 64) && e % V == 0 &&
         !s->fold[nd - 1] && (!s->has_attached || s->ch.cols <= 0 || e % s->ch.cols == 0);
}

void as_decide_stream(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    s->ch.stream = 0;
    if (s->is_input || !as_stream_can(p, s)) continue;
    int64_t bytes = tec_dtype_bytes(s->t->type), v;
    for (int d = 0; d < s->t->ndim; d++) bytes *= s->ext[d];
    s->ch.stream = bytes > p->llc;
    if ((v = AS_TUNED(p, s, stream)) != AS_UNSET) s->ch.stream = v != 0;
    if (!s->ch.stream) continue;
    s->rule = as_fmt(p, "%s, streamed stores", s->rule);
    s->why = bytes > p->llc
                 ? as_fmt(p, "%s; its %.1f MB pass the %.1f MB a core's caches hold: stored "
                             "around them (non-temporal)", s->why, bytes / 1e6, p->llc / 1e6)
                 : as_fmt(p, "%s; stored around the caches (non-temporal: the tuned knob)", s->why);
  }
}

int as_apply_stream(as_prog *p, sch_schedule *s, int i) {
  sch_stage *st = as_stage_named(s, p->st[i].t->name);
  return st ? sch_pragma(st, sch_stage_leaf(st, 0), "stream_store", NULL) : -1;
}
