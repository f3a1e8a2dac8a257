/* internal.h — helpers shared by the schedule primitives (not public). */
#ifndef TEC_SCHEDULE_INTERNAL_H
#define TEC_SCHEDULE_INTERNAL_H

#include "tec/schedule.h"

sch_iter *sch_iter_new(sch_stage *st, const char *name, sch_iter_kind kind);
int sch_leaf_index(const sch_stage *st, const sch_iter *it);
int sch_check_leaf(const char *who, sch_stage *st, sch_iter *it);
int sch_add_relation(sch_stage *st, sch_relation r);
sch_stage *sch_stage_new(sch_schedule *s, te_tensor *t);
int sch_replace_leaf(sch_stage *st, int pos, int n, sch_iter *const *its);
/* The name cache_read/cache_write give a cache of base in scope: "<base>.<scope>", with 1, 2,
 * ... appended while a stage has that name (in the arena; difftest predicts names with it). */
const char *sch_cache_name(sch_schedule *s, const char *base, const char *scope);

/* relayout.c: extents of iters from the domains; index maps between roots and leaves. */
const ir_expr *sch_iter_extent(const sch_stage *st, const sch_iter *it);
int sch_root_to_leaf(const sch_stage *st, const ir_expr *const *root_vals,
                     const ir_expr **leaf_vals);
int sch_leaf_to_root(const sch_stage *st, const ir_expr *const *leaf_vals,
                     const ir_expr **root_vals, const ir_expr **guard);

#endif
