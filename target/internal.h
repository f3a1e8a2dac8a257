/* target/internal.h — the target module's tables and helpers (not installed).
 *
 *   target_table.c  per architecture: CPUs, features, widths, registers, caches; presets;
 *                   tec's feature bits; the default register tiles  (data only)
 *   target.c        text -> tec_target (tec_target_parse)
 *   target_key.c    the canonical text, record matching, the string-taking forms
 *   llvm_init.c     LLVM's targets initialized once, tec's LLVM options
 */
#ifndef TEC_TARGET_INTERNAL_H
#define TEC_TARGET_INTERNAL_H

#include <stddef.h>
#include "tec/target.h"
#include "tec/te.h"

typedef struct tgt_cpu {
  const char *name;     /* an -mcpu value */
  const char *features; /* implied, added before -mattr ("+vfp4,+neon"), may be "" */
} tgt_cpu;
typedef struct tgt_width_rule {
  const char *feature;  /* without sign: "neon" */
  int on_bits;          /* "+feature": width at least this */
  int off_bits;         /* "-feature": width at most this */
} tgt_width_rule;
typedef struct tgt_arch {
  tec_arch arch;                 /* its enum */
  const char *name;              /* canonical triple arch: "aarch64" */
  const char *const *aliases;    /* spellings of the triple's arch part (name first), NULL-ended */
  const tgt_cpu *cpus;           /* accepted -mcpu names, {NULL} ended */
  const char *const *features;   /* accepted -mattr names without sign, NULL-ended */
  const char *base_features;     /* always on ("+neon" on aarch64), before the CPU's */
  int base_bits;                 /* native vector width with the base features */
  const tgt_width_rule *widths;  /* features that change the width, {NULL} ended */
  /* Features that must all be on (each "a|b": either) for a vector multiply-add to become
   * llvm.fma rather than llvm.fmuladd: LLVM's ARM backend never fuses a v4f32 fmuladd on
   * NEON (vfma.f32 q needs the explicit intrinsic) and splits it into vmul + vadd on the
   * cores it tunes against vmla (Cortex-A7, A9). NULL-ended; NULL: fmuladd is right. */
  const char *const *vector_fma;
  /* 1: a vector multiply-add takes one lane of a register as its scalar operand (AArch64
   * `fmla v0.4s, v1.4s, v2.s[3]`), so a broadcast of a loaded element is better done as one
   * native-vector load of its aligned group and a lane splat: neighbouring elements then share
   * the load (codegen_mem.c cg_broadcast). 0: broadcast the element (x86 folds it into the
   * FMA's memory operand). */
  int lane_fma;
  int regs;                      /* vector registers (q, ymm) at base width */
  int regs_wide;                 /* ... at wide_bits and above (zmm: 32) */
  int wide_bits;                 /* the width that gives regs_wide (0: none) */
  int64_t l1d, l2, l3;           /* default data caches in bytes */
} tgt_arch;
/* A CPU's data caches (bytes), where they differ from its architecture's. */
typedef struct tgt_cpu_caches {
  tec_arch arch;
  const char *cpu;
  int64_t l1d, l2, l3;
} tgt_cpu_caches;
/* A default GEMM register tile: the first row whose arch and vector width match. */
typedef struct tgt_gemm_row {
  tec_arch arch;    /* TEC_ARCH_OTHER: any */
  int vector_bits;  /* 0: any */
  tec_target_gemm gemm;
} tgt_gemm_row;

extern const tgt_arch tgt_arches[];              /* {0} ended */
extern const tec_target_preset tgt_presets[];    /* {NULL} ended */
extern const char *const tgt_feature_names[];    /* indexed by tec_feature */
extern const tgt_gemm_row tgt_gemm_rows[];       /* the last row matches everything */
extern const tgt_cpu_caches tgt_cpu_cache_rows[]; /* {.cpu = NULL} ended */
const tgt_arch *tgt_arch_find(const char *triple); /* by the triple's arch part; NULL if unknown */
const tec_target_preset *tgt_preset_find(const char *name);
const tgt_cpu *tgt_cpu_find(const tgt_arch *a, const char *cpu);
int tgt_feature_known(const tgt_arch *a, const char *name, size_t len);
const tec_target_gemm *tgt_gemm_find(tec_arch arch, int vector_bits);
const tgt_cpu_caches *tgt_caches_find(tec_arch arch, const char *cpu); /* NULL: none */

/* llvm_init.c: every LLVM target initialized once and tec's LLVM options set (thread safe). */
void tgt_llvm_init(void);
/* target.c: tec_target_parse; lenient 1 takes CPUs and features unknown to target_table.c
 * (a text tec wrote: a host's canonical text, a record's). */
const tec_target *tgt_parse(tec_ctx *ctx, const char *text, int lenient);
/* target.c: counts one parse (tec_target_parse_count). */
void tgt_count_parse(void);
/* target_key.c: the canonical text of t (arena), NULL on OOM. */
const char *tgt_canonical(tec_ctx *ctx, const tec_target *t);

#endif
