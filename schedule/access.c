/* access.c — the read-only accessors of sch_iter, sch_stage and sch_schedule (schedule.h):
 * their structures are internal (schedule/internal.h), so a program cannot write a leaf list
 * or an attach point behind the primitives' checks and the trace's back. */
#include "schedule/internal.h"

const char *sch_iter_name(const sch_iter *it) { return it ? it->name : NULL; }
const ir_expr *sch_iter_var(const sch_iter *it) { return it ? it->var : NULL; }
sch_iter_kind sch_iter_type(const sch_iter *it) { return it ? it->kind : SCH_ITER_DATA; }
ir_for_kind sch_iter_loop_kind(const sch_iter *it) { return it ? it->for_kind : IR_FOR_SERIAL; }
sch_stage *sch_iter_stage(const sch_iter *it) { return it ? it->stage : NULL; }
int sch_iter_is_leaf(const sch_iter *it) { return it && !it->dead; }

te_tensor *sch_stage_tensor(const sch_stage *st) { return st ? st->tensor : NULL; }
int sch_stage_nleaf(const sch_stage *st) { return st ? st->nleaf : 0; }
sch_iter *sch_stage_leaf(const sch_stage *st, int i) {
  return st && i >= 0 && i < st->nleaf ? st->leaf[i] : NULL;
}
sch_attach_kind sch_stage_attach(const sch_stage *st, sch_stage **at_stage, sch_iter **at_iter) {
  if (at_stage) *at_stage = st && st->attach == SCH_ATTACH_SCOPE ? st->attach_stage : NULL;
  if (at_iter) *at_iter = st && st->attach == SCH_ATTACH_SCOPE ? st->attach_iter : NULL;
  return st ? st->attach : SCH_ATTACH_ROOT;
}
sch_iter *sch_stage_store_iter(const sch_stage *st) {
  return st && st->attach == SCH_ATTACH_SCOPE ? st->store_iter : NULL;
}
int sch_stage_store_root(const sch_stage *st) {
  return st && st->attach == SCH_ATTACH_SCOPE && st->store_root;
}
const char *sch_stage_scope(const sch_stage *st) { return st ? st->scope : NULL; }
sch_schedule *sch_stage_schedule(const sch_stage *st) { return st ? st->sched : NULL; }

int sch_schedule_nstage(const sch_schedule *s) { return s ? s->nstage : 0; }
sch_stage *sch_schedule_stage(const sch_schedule *s, int i) {
  return s && i >= 0 && i < s->nstage ? s->stages[i] : NULL;
}
tec_ctx *sch_schedule_ctx(const sch_schedule *s) { return s ? s->ctx : NULL; }
int sch_schedule_noutput(const sch_schedule *s) { return s ? s->nout : 0; }
te_tensor *sch_schedule_output(const sch_schedule *s, int i) {
  return s && i >= 0 && i < s->nout ? s->outputs[i] : NULL;
}
