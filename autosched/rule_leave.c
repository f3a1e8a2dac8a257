/* rule_leave.c — stages the rules do not understand are left as declared: an op with several
 * outputs (one nest writes them all; caches, inlining and rfactor refuse it) and a reduction
 * with a user reducer (rfactor and cache_write of its tuple are refused), a reduction over a
 * domain that depends on other axes (a triangular sum: its extent is not a number), an extern
 * stage (te_extern: no loops to schedule), a scan (te_scan) and its update's stages (the steps
 * run in order; the update's stages stay at the scan's step loop). Their readers
 * and producers are still scheduled; nothing is attached at their loops. */
#include "autosched/internal.h"

void as_decide_leave(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    if (s->is_input || s->understood) continue;
    s->ch.kind = TEC_AS_LEAVE;
    s->rule = "leave";
    const te_tensor *sc = as_scan_of(p, s->t);
    s->why = s->t->ext       ? "an extern stage (a C function computes it): left at root, as declared"
             : sc == s->t    ? "a scan (te_scan): its steps run in order, at root, as declared"
             : sc            ? "a stage of a scan's update: computed one step at a time at the "
                               "scan's step loop, as declared"
             : s->t->nout > 1  ? "an op with several outputs: scheduled as declared"
             : s->odd_domain ? "a reduce axis whose extent uses other axes: scheduled as declared"
                             : "a user reducer: scheduled as declared";
  }
}
