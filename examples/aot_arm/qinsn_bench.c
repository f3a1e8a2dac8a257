/* qinsn_bench.c — tec's int8 templates on the int8 rows of scripts/arm_insn.sh (TEC_ARM_FP=i8),
 * for counting executed AArch64 instructions per call under qemu-aarch64 + the qemu-insn plugin.
 *
 *   qinsn_bench LAYER [CALLS]     LAYER: a name of qlayers_gen's table (qlayers_table.h)
 *
 * The layer's prepare runs once (the weights packed: not counted), then one warm-up run, then
 * INSN_MARK() and CALLS runs each followed by INSN_MARK() (qlayers.c), as XNNPACK's
 * xnn_qconv_bench does. The output is checked bit for bit (its FNV-1a hash) against the same
 * layer JIT-compiled on the machine that generated it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qlayers_table.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "mbv1_pw_mid";
  int calls = argc > 2 ? atoi(argv[2]) : 3;
  const ql_layer *l = NULL;
  for (int i = 0; i < QL_NLAYERS; i++)
    if (!strcmp(ql_layers[i].name, name)) l = &ql_layers[i];
  if (!l) return fprintf(stderr, "qinsn_bench: no layer %s in qlayers_table.h\n", name), 2;
  uint32_t hash = 0;
  if (l->run(calls, &hash)) return fprintf(stderr, "qinsn_bench: %s failed\n", name), 1;
  int ok = hash == l->expect;
  printf("%s: %s %s, %d calls, check %s (output hash 0x%08x, host JIT 0x%08x) macs=%.0f\n", name,
         l->tmpl, l->config, calls, ok ? "OK" : "FAILED", (unsigned)hash, (unsigned)l->expect,
         l->macs);
  return ok ? 0 : 1;
}
