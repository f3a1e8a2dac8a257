/* pragma.h — the pragma keys as data (schedule/pragma.c): the one place a key's name, value
 * kind, consuming pass and meaning are written down. Every consumer (lower/, codegen_llvm/)
 * looks keys up here, by id, never by comparing names. Internal. */
#ifndef TEC_SCHEDULE_PRAGMA_H
#define TEC_SCHEDULE_PRAGMA_H

#include "tec/schedule.h"

/* One id per row of the table, in its order (pragma.c); SCH_PRAGMA_USER stands for every
 * "user_<name>" key. */
typedef enum sch_pragma_id {
  SCH_PRAGMA_AUTO_UNROLL_MAX_STEP,
  SCH_PRAGMA_DEBUG_SKIP_REGION,
  SCH_PRAGMA_PARALLEL_DYNAMIC,
  SCH_PRAGMA_PARALLEL_LAUNCH_POINT,
  SCH_PRAGMA_SCHED_PRESSURE,
  SCH_PRAGMA_STREAM_STORE,
  SCH_PRAGMA_TENSORIZE,
  SCH_PRAGMA_TRANSPOSE_BLOCK,
  SCH_PRAGMA_UNROLL,
  SCH_PRAGMA_USER,
  SCH_PRAGMA_COUNT
} sch_pragma_id;

/* The id of a pragma key ("unroll", "user_note"), or -1 when it is not one. */
int sch_pragma_id_of(const char *key);
/* The id of an IR attribute name lowering made from a pragma ("pragma_unroll": the key behind
 * the "pragma_" prefix), or -1 when name is not such an attribute (NULL: -1). */
int sch_pragma_id_of_attr(const char *attr_name);
/* The IR attribute name of a pragma key: "pragma_<key>" (arena). */
const char *sch_pragma_attr_name(tec_ctx *ctx, const char *key);
/* 0 if key and value are legal together, 1 if key is TVM's and asks what tec always does
 * (nothing to record: pragma_tvm.c), else -1 with an error naming the loop and stage and what
 * would be legal (sch_pragma's checks; a TVM key tec cannot honour: its tec equivalent). */
int sch_pragma_check(tec_ctx *ctx, const char *loop, const char *stage, const char *key,
                     const ir_expr *value);

/* TVM's pragma keys tec does not share (pragma_tvm.c): 1 if key is one that tec honours by
 * what it always does, -1 with an error naming the tec equivalent if it is one tec cannot
 * honour (or a value tec cannot), 0 if key is not one of them. The keys, for docs and tests:
 * sch_pragma_tvm_key(i), i < sch_pragma_tvm_count(). */
int sch_pragma_tvm(tec_ctx *ctx, const char *loop, const char *stage, const char *key,
                   const ir_expr *value);
int sch_pragma_tvm_count(void);
const char *sch_pragma_tvm_key(int i);

#endif
