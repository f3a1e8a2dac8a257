/* target.h — the target: one value, parsed once from its text, read by every layer.
 *
 *   const tec_target *t = tec_target_parse(ctx, "rasp4b");     // NULL + error on bad text
 *   t->arch == TEC_ARCH_AARCH64, t->vector_bits == 128, t->vector_regs == 32
 *   tec_target_has(t, TEC_FEATURE_NEON)                          // 1
 *   t->str  "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
 *
 * The text is "llvm" (or NULL: the host with its real CPU and features), "llvm -mtriple=T
 * -mcpu=C -mattr=+f,-g", a preset ("rasp4b", tec_target_preset_at) optionally followed by
 * options that replace its own, any of them with -O0 .. -O3 (build.h has the details). Its
 * facts come from one table (target/target_table.c): per architecture the CPUs, features,
 * vector widths, register counts, cache sizes and the default register tiles of the
 * templates. The value belongs to the ctx's arena and never changes; templates (topi.h),
 * the tuner (tune.h) and codegen (tec_build_for, tec_emit_for) take it, and none of them
 * reads the text again. `str` is the canonical text: triple, CPU, features sorted by name
 * with the last mention of each kept, and -O<n> unless -O3; it names the target in tuning
 * records, and two texts for the same machine ("rasp4b", its spelled-out form, the features
 * in another order) have the same one. Every `str` parses back to itself: on the host, the
 * CPU and the features LLVM names for it are legal beside target_table.c's.
 */
#ifndef TEC_TARGET_H
#define TEC_TARGET_H

#include <stdint.h>
#include "tec/ir.h"

typedef enum tec_arch {
  TEC_ARCH_OTHER = 0, /* a host architecture tec has no table for (JIT only, scalar code) */
  TEC_ARCH_X86_64,    /* x86-64 (triple x86_64, amd64) */
  TEC_ARCH_AARCH64,   /* 64-bit Arm (aarch64, arm64) */
  TEC_ARCH_ARMV7      /* 32-bit ARMv7-A, hard float (armv7a, armv7, armv7l) */
} tec_arch;

/* tec's own feature bits, each set when its LLVM feature is on ("+name" last mentioned) in
 * the target's feature list: for the host the list LLVM reads from the CPU, otherwise the
 * CPU's implied features and -mattr. */
typedef enum tec_feature {
  TEC_FEATURE_SSE2,       /* x86: sse2 */
  TEC_FEATURE_SSE41,      /* x86: sse4.1 */
  TEC_FEATURE_AVX,        /* x86: avx (256-bit float vectors) */
  TEC_FEATURE_AVX2,       /* x86: avx2 */
  TEC_FEATURE_FMA,        /* x86: fma (fused multiply-add) */
  TEC_FEATURE_AVX512F,    /* x86: avx512f (512-bit vectors, 32 registers) */
  TEC_FEATURE_AVX512BW,   /* x86: avx512bw (8/16-bit integer lanes) */
  TEC_FEATURE_AVX512VL,   /* x86: avx512vl (AVX-512 instructions on 128/256-bit vectors) */
  TEC_FEATURE_AVX512VNNI, /* x86: avx512vnni (int8 dot product, vpdpbusd) */
  TEC_FEATURE_AVX512BF16, /* x86: avx512bf16 (bfloat16 dot product) */
  TEC_FEATURE_AVX512FP16, /* x86: avx512fp16 (half precision arithmetic) */
  TEC_FEATURE_AVXVNNI,    /* x86: avxvnni (int8 dot product on 256-bit vectors) */
  TEC_FEATURE_NEON,       /* Arm: neon (128-bit vectors) */
  TEC_FEATURE_VFP4,       /* ARMv7: vfp4 (fused multiply-add) */
  TEC_FEATURE_DOTPROD,    /* Arm: dotprod (int8 dot product, sdot/udot) */
  TEC_FEATURE_I8MM,       /* Arm: i8mm (int8 matrix multiply, smmla) */
  TEC_FEATURE_FULLFP16,   /* Arm: fullfp16 (half precision arithmetic) */
  TEC_FEATURE_BF16,       /* Arm: bf16 (bfloat16 dot product) */
  TEC_FEATURE_FP16FML,    /* AArch64: fp16fml (float16 products accumulated in float32, fmlal) */
  TEC_FEATURE_SVE,        /* AArch64: sve (scalable vectors) */
  TEC_FEATURE_COUNT       /* number of features (not a feature) */
} tec_feature;

/* The default register tile of a GEMM (dense) on a target: the rows of target_table.c's tile
 * table whose architecture and vector width match the target (first match). */
typedef struct tec_target_gemm {
  int64_t mr;        /* rows of the register tile */
  int64_t nr_vecs;   /* columns, in vectors of float */
  int64_t mr_max;    /* the largest row count a space offers */
  int64_t ku;        /* default unrolling of the k loop */
  int64_t l2_budget; /* bytes of packed panels per pass over a */
} tec_target_gemm;

typedef struct tec_target {
  tec_arch arch;          /* the architecture */
  const char *arch_name;  /* "x86_64", "aarch64", "armv7a"; "" for TEC_ARCH_OTHER */
  const char *triple;     /* normalized LLVM triple */
  const char *cpu;        /* LLVM CPU name ("" for generic) */
  const char *features;   /* LLVM feature list as LLVM takes it ("+avx2,+fma,-avx512f") */
  uint64_t feature_bits;  /* bit TEC_FEATURE_x set: the feature is on (tec_target_has) */
  int vector_bits;        /* native SIMD width: 128 on NEON, 256 AVX2, 512 AVX-512, 32 none */
  int vector_lanes;       /* float lanes of a vector: vector_bits / 32 if >= 128, else 1 */
  int vector_regs;        /* vector registers: 32 on AArch64 and AVX-512, 16 on AVX2, ARMv7 */
  int vector_fma;         /* vector x*y+z is emitted as llvm.fma (ARMv7 NEON with VFPv4) */
  int lane_fma;           /* a vector multiply-add takes one lane as its scalar (AArch64) */
  int opt_level;          /* -O0 .. -O3 (default 3) */
  int is_host;            /* the code can run here (tec_build); else tec_emit only */
  int64_t l1d_bytes, l2_bytes, l3_bytes; /* data caches per core (L3: shared), 0 unknown */
  tec_target_gemm gemm;   /* the default GEMM register tile (topi dense) */
  const char *str;        /* canonical text (above): the key of tuning records */
} tec_target;

/* Parses text (NULL: "llvm", the host) into a value in ctx's arena. NULL with an error naming
 * the bad word and what is legal (unknown kind, option, triple, CPU, feature, -O level). */
const tec_target *tec_target_parse(tec_ctx *ctx, const char *text);
/* 1 if feature f is on for t, else 0 (also for NULL or an out-of-range f). */
int tec_target_has(const tec_target *t, tec_feature f);
/* The LLVM name of feature f ("avx512vnni"), NULL if out of range. */
const char *tec_feature_name(tec_feature f);

/* Named presets (boards): the i-th (0 ..) or NULL past the last. */
typedef struct tec_target_preset {
  const char *name;        /* "rasp4b": what tec_target_parse takes */
  const char *triple, *cpu, *attr; /* what it stands for */
  const char *what;        /* the board, for people */
} tec_target_preset;
const tec_target_preset *tec_target_preset_at(int i);
/* What tec accepts per architecture a (0 ..), item i (0 ..); NULL past the last: its name
 * ("aarch64"), the spellings of a triple's arch part (the name first), -mcpu names and
 * -mattr features (without sign). */
const char *tec_target_arch_name(int a);
const char *tec_target_arch_alias(int a, int i);
const char *tec_target_arch_cpu(int a, int i);
const char *tec_target_arch_feature(int a, int i);
/* The architectures tec knows, "aarch64 (arm64), armv7a (...), x86_64 (amd64)" (arena). */
const char *tec_target_arches(tec_ctx *ctx);

/* 1 if a and b are the same target (equal canonical texts), else 0 (also for NULL). */
int tec_target_equal(const tec_target *a, const tec_target *b);
/* Whether a target text read back (a tuning record's) names the same target as t: both
 * canonical texts equal. The last text parsed is remembered in *memo (zeroed by the caller
 * before the first use), so reading a file of records parses each distinct text once. The text
 * may name CPUs and features tec_target_parse refuses (a host's, as LLVM names them: records of
 * the host carry them). A text that does not parse matches nothing (and leaves no error). */
typedef struct tec_target_memo {
  const char *text, *key;
} tec_target_memo;
int tec_target_matches(tec_ctx *ctx, tec_target_memo *memo, const char *text, const tec_target *t);

/* How many target texts were parsed in this process (every tec_target_parse and every
 * string-taking call that parses): tests assert that a tuning candidate parses none. */
int64_t tec_target_parse_count(void);

/* String forms (each parses text once): the vector width in bits, lane_fma, the canonical
 * text (arena). -1 / NULL with an error. */
int tec_target_vector_bits(tec_ctx *ctx, const char *text);
int tec_target_lane_fma(tec_ctx *ctx, const char *text);
const char *tec_target_str(tec_ctx *ctx, const char *text);

#endif
