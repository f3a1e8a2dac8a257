/* pragma.c — the pragma table: every key sch_pragma accepts, the kind of value it takes, the
 * pass that consumes it, and one line of doc. sch_pragma validates against it; consumers look
 * keys up by id (pragma.h), so a key's name is written here and nowhere else.
 *
 *   key                    value                 consumed by
 *   auto_unroll_max_step   count (required)      lower/unroll.c
 *   debug_skip_region      none                  lower/schedule_ops.c
 *   parallel_dynamic       count or none         lower/legality.c, launch_regions.c (which hands
 *                                                codegen `attr parallel_dynamic`)
 *   parallel_launch_point  none                  lower/legality.c, launch_regions.c
 *   sched_pressure         none                  launch_regions.c (which hands codegen
 *                                                `attr sched_pressure`: codegen_llvm/optimize.c)
 *   stream_store           none                  lower/stream_store.c (codegen: nontemporal
 *                                                stores, codegen_mem.c)
 *   tensorize              intrinsic (count)     lower/tensorize.c (sch_tensorize)
 *   transpose_block        none                  lower/transpose_block.c
 *   unroll                 none                  lower/unroll.c
 *   user_<name>            any constant or none  (kept in the IR as an annotation)
 */
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/pragma.h"

#define USER_PREFIX "user_"
#define ATTR_PREFIX "pragma_"

static const sch_pragma_desc table[SCH_PRAGMA_COUNT] = {
  [SCH_PRAGMA_AUTO_UNROLL_MAX_STEP] =
    {"auto_unroll_max_step", SCH_PRAGMA_VALUE_COUNT, "unroll",
     "unroll every serial constant loop inside whose total steps are at most the value"},
  [SCH_PRAGMA_DEBUG_SKIP_REGION] =
    {"debug_skip_region", SCH_PRAGMA_VALUE_NONE, "schedule_ops",
     "drop the loop and its body (wrong output by design: for timing experiments)"},
  [SCH_PRAGMA_PARALLEL_DYNAMIC] =
    {"parallel_dynamic", SCH_PRAGMA_VALUE_COUNT_OR_NONE, "launch_regions",
     "a parallel loop's threads take chunks of value iterations in turn (none or 0: automatic)"},
  [SCH_PRAGMA_PARALLEL_LAUNCH_POINT] =
    {"parallel_launch_point", SCH_PRAGMA_VALUE_NONE, "launch_regions",
     "enter the thread pool once, at this loop; parallel loops inside take static shares"},
  [SCH_PRAGMA_SCHED_PRESSURE] =
    {"sched_pressure", SCH_PRAGMA_VALUE_NONE, "launch_regions",
     "schedule the function holding the loop for register pressure where LLVM's backend has a "
     "choice (ARMv7: its MachineScheduler); no effect elsewhere"},
  [SCH_PRAGMA_STREAM_STORE] =
    {"stream_store", SCH_PRAGMA_VALUE_NONE, "stream_store",
     "the stage's whole-vector stores to an output the function never reads go around the caches "
     "(non-temporal: vmovntps on x86, stnp on AArch64): for outputs far larger than the last-level "
     "cache, which then are not read for ownership first"},
  [SCH_PRAGMA_TENSORIZE] =
    {"tensorize", SCH_PRAGMA_VALUE_COUNT, "tensorize",
     "replace the loop nest inside with the intrinsic the value names (sch_intrin: 0 = dot4, 1 = mmla)"},
  [SCH_PRAGMA_TRANSPOSE_BLOCK] =
    {"transpose_block", SCH_PRAGMA_VALUE_NONE, "transpose_block",
     "the loop's L steps each copy a vector of L lanes read at a stride: load the L source rows "
     "whole and transpose them in registers (zip shuffles) instead of gathering"},
  [SCH_PRAGMA_UNROLL] =
    {"unroll", SCH_PRAGMA_VALUE_NONE, "unroll", "unroll the loop, as sch_unroll"},
  [SCH_PRAGMA_USER] =
    {"user_<name>", SCH_PRAGMA_VALUE_ANY, NULL,
     "kept in the lowered IR as an annotation (attr pragma_user_<name>), with no effect"},
};

const sch_pragma_desc *sch_pragma_desc_at(int i) {
  return i >= 0 && i < SCH_PRAGMA_COUNT ? &table[i] : NULL;
}

const char *sch_pragma_value_kind_name(sch_pragma_value_kind k) {
  switch (k) {
  case SCH_PRAGMA_VALUE_NONE: return "no value";
  case SCH_PRAGMA_VALUE_COUNT: return "a constant integer >= 0";
  case SCH_PRAGMA_VALUE_COUNT_OR_NONE: return "a constant integer >= 0, or no value";
  case SCH_PRAGMA_VALUE_ANY: return "any value, or none";
  }
  return "?";
}

int sch_pragma_id_of(const char *key) {
  if (!key) return -1;
  if (strncmp(key, USER_PREFIX, strlen(USER_PREFIX)) == 0)
    return key[strlen(USER_PREFIX)] ? SCH_PRAGMA_USER : -1;
  for (int i = 0; i < SCH_PRAGMA_COUNT; i++)
    if (i != SCH_PRAGMA_USER && strcmp(key, table[i].key) == 0) return i;
  return -1;
}

int sch_pragma_id_of_attr(const char *attr_name) {
  if (!attr_name || strncmp(attr_name, ATTR_PREFIX, strlen(ATTR_PREFIX)) != 0) return -1;
  return sch_pragma_id_of(attr_name + strlen(ATTR_PREFIX));
}

const char *sch_pragma_attr_name(tec_ctx *ctx, const char *key) {
  return tec_ctx_printf(ctx, ATTR_PREFIX "%s", key);
}

/* "a, b, ..., or user_<name> (...)": the legal keys, from the table */
static const char *known_keys(tec_ctx *ctx) {
  const char *list = "";
  for (int i = 0; i < SCH_PRAGMA_COUNT; i++)
    list = i == SCH_PRAGMA_USER
               ? tec_ctx_printf(ctx, "%s, or %s (kept in the lowered IR as an annotation, with "
                                     "no effect)", list, table[i].key)
               : tec_ctx_printf(ctx, "%s%s%s", list, i ? ", " : "", table[i].key);
  return list;
}

/* A scalar integer constant >= 0. */
static int is_count(const ir_expr *value) {
  int64_t v;
  return value && value->type.lanes == 1 && tec_dtype_is_int(value->type) &&
         ir_is_const_int(value, &v) && v >= 0;
}

int sch_pragma_check(tec_ctx *ctx, const char *loop, const char *stage, const char *key,
                     const ir_expr *value) {
  if (!key || !*key)
    return tec_ctx_set_error(ctx, "pragma: loop '%s' of stage '%s': the key is empty; known "
                                  "keys: %s", loop, stage, known_keys(ctx));
  for (const char *c = key; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return tec_ctx_set_error(ctx, "pragma: key '%s' on loop '%s' of stage '%s' must use "
                                    "lower-case letters, digits and '_'", key, loop, stage);
  int id = sch_pragma_id_of(key);
  int tvm = id < 0 ? sch_pragma_tvm(ctx, loop, stage, key, value) : 0;
  if (tvm) return tvm;
  if (id < 0)
    return tec_ctx_set_error(ctx, "pragma: key '%s' on loop '%s' of stage '%s' has no effect in "
                                  "tec; known keys: %s", key, loop, stage, known_keys(ctx));
  switch (table[id].value) {
  case SCH_PRAGMA_VALUE_COUNT:
    if (is_count(value)) return 0;
    return tec_ctx_set_error(ctx, "pragma: %s on loop '%s' of stage '%s' needs a constant "
                                  "integer value >= 0", key, loop, stage);
  case SCH_PRAGMA_VALUE_COUNT_OR_NONE:
    if (!value || is_count(value)) return 0;
    /* the one such key: its message says what the value means */
    return tec_ctx_set_error(ctx, "pragma: %s on loop '%s' of stage '%s' takes the chunk size, "
                                  "a constant integer >= 0 (0 or NULL: about four chunks per "
                                  "thread), not %s", key, loop, stage, ir_expr_str(value));
  case SCH_PRAGMA_VALUE_NONE:
    if (!value) return 0;
    return tec_ctx_set_error(ctx, "pragma: %s on loop '%s' of stage '%s' takes no value (pass "
                                  "NULL), not %s", key, loop, stage, ir_expr_str(value));
  case SCH_PRAGMA_VALUE_ANY:
    return 0;
  }
  return 0;
}
