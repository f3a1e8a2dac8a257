/* pragma_tvm.c — TVM's pragma keys a port meets, as data: for each, tec's meaning (accepted:
 * what the key asks is what tec always does, so nothing is recorded) or a refusal naming the
 * tec equivalent. sch_pragma_check consults it for a key the pragma table (pragma.c) does not
 * know. The keys TVM and tec share (auto_unroll_max_step, debug_skip_region,
 * parallel_launch_point) are the table's own rows and never reach here.
 */
#include <string.h>
#include "ir/internal.h"
#include "schedule/pragma.h"

typedef struct tvm_key {
  const char *key;
  int accepted;       /* 1: tec's behaviour already (value: none, or the one in `value`) */
  int64_t value;      /* the value accepted (-1: none only) */
  const char *tec;    /* accepted: why it holds; refused: tec's equivalent */
} tvm_key;

static const tvm_key keys[] = {
    {"unroll_explicit", 1, 1,
     "tec's unrolling is always explicit in the IR (auto_unroll_max_step, sch_unroll, pragma "
     "unroll); there is no LLVM unroll hint to emit instead, so unroll_explicit = 0 has no tec "
     "equivalent: drop it, or leave the loop rolled"},
    {"parallel_barrier_when_finish", 1, -1,
     "every parallel loop in tec ends with a barrier (inside a parallel_launch_point region and "
     "out of one)"},
    {"parallel_stride_pattern", 0, -1,
     "tec shares a parallel loop out in one contiguous static range per thread, or with pragma "
     "parallel_dynamic in chunks the threads take in turn (parallel_dynamic 1: one iteration at "
     "a time); it has no static strided pattern: use parallel_dynamic, or split the loop by the "
     "thread count and make the outer part parallel"},
    {"import_llvm", 0, -1,
     "tec embeds no foreign LLVM IR in a loop: write the body as a tec stage (te_compute), or "
     "call your code around the generated function"},
    {"import_c", 0, -1,
     "tec embeds no foreign C in a loop: write the body as a tec stage (te_compute), or call "
     "your code around the generated function"},
    {"loop_partition_hint", 0, -1,
     "tec partitions a loop by itself where a condition in its body is marked ir_likely() "
     "(lower/partition): mark the condition instead"},
};
#define NKEYS ((int)(sizeof keys / sizeof keys[0]))

int sch_pragma_tvm_count(void) { return NKEYS; }
const char *sch_pragma_tvm_key(int i) { return i >= 0 && i < NKEYS ? keys[i].key : NULL; }

int sch_pragma_tvm(tec_ctx *ctx, const char *loop, const char *stage, const char *key,
                   const ir_expr *value) {
  for (int i = 0; i < NKEYS; i++) {
    const tvm_key *k = &keys[i];
    if (strcmp(key, k->key)) continue;
    int64_t v = -1;
    int ok = k->accepted &&
             (!value || (k->value >= 0 && value->type.lanes == 1 && tec_dtype_is_int(value->type) &&
                         ir_is_const_int(value, &v) && v == k->value));
    if (ok) return 1;
    if (k->accepted)
      return tec_ctx_set_error(ctx, "pragma: TVM's %s%s%s on loop '%s' of stage '%s': %s", key,
                               value ? " = " : "", value ? ir_expr_str(value) : "", loop, stage,
                               k->tec);
    return tec_ctx_set_error(ctx, "pragma: TVM's %s on loop '%s' of stage '%s' has no tec "
                                  "meaning: %s", key, loop, stage, k->tec);
  }
  return 0;
}
