/* target_table.c — what tec knows about each architecture, as data: the facts of tec_target.
 *
 * LLVM's C API cannot list the CPUs or features of a target, and LLVM itself only warns on
 * stderr ("'+foo' is not a recognized feature") and carries on. So tec keeps, per
 * architecture, the -mcpu names and -mattr features it accepts (all of them known to LLVM 14
 * and every later version), the features implied by a CPU (as clang adds them: LLVM's ARM
 * backend does not turn NEON on for -mcpu=cortex-a9 alone), and how features decide the
 * native vector width, its vector registers and data caches (a CPU's row may name its own
 * caches). Named presets (boards) are rows of a second table; tec's feature bits (tec_feature)
 * a third; the templates' default register tiles by architecture and width a fourth.
 *
 * To support a new CPU or board, add a row; target.c has no per-target `if`.
 */
#include <string.h>
#include "target/internal.h"

/* ---- AArch64 ---- */
static const char *const aarch64_aliases[] = {"aarch64", "arm64", NULL};
static const tgt_cpu aarch64_cpus[] = {
    /* every AArch64 CPU has NEON; LLVM derives the rest from the name */
    {"generic", ""},      {"cortex-a35", ""},  {"cortex-a53", ""},  {"cortex-a55", ""},
    {"cortex-a57", ""},   {"cortex-a72", ""},  {"cortex-a73", ""},  {"cortex-a75", ""},
    {"cortex-a76", ""},   {"cortex-a77", ""},  {"cortex-a78", ""},  {"cortex-a510", ""},
    {"cortex-a710", ""},  {"cortex-x1", ""},   {"cortex-x2", ""},   {"neoverse-n1", ""},
    {"neoverse-n2", ""},  {"neoverse-v1", ""}, {"neoverse-e1", ""}, {"apple-m1", ""},
    {"carmel", ""},       {"kryo", ""},        {"thunderx2t99", ""}, {"tsv110", ""},
    {"a64fx", ""},        {"ampere1", ""},     {NULL, NULL},
};
static const char *const aarch64_features[] = {
    "neon", "fp-armv8", "crc",  "crypto", "aes",  "sha2",   "sha3",  "sm4",  "dotprod",
    "fullfp16", "fp16fml", "rcpc", "lse",  "rdm",  "sve",    "sve2",  "i8mm", "bf16",
    "v8a",  "v8.1a", "v8.2a", "v8.3a", "v8.4a", "v8.5a", "v8.6a", "strict-align", NULL,
};
static const tgt_width_rule aarch64_widths[] = {{"neon", 128, 32}, {NULL, 0, 0}};

/* ---- ARMv7-A (32-bit, hard float) ---- */
static const char *const armv7_aliases[] = {"armv7a", "armv7", "armv7l", "armv7-a", NULL};
static const tgt_cpu armv7_cpus[] = {
    /* features as gcc/clang enable them by default for the core (the FPU it ships with) */
    {"generic", ""},
    {"cortex-a5", "+vfp4,+neon"},  /* NEON is optional on A5; boards that ship it */
    {"cortex-a7", "+vfp4,+neon"},  {"cortex-a8", "+vfp3,+neon"},
    {"cortex-a9", "+vfp3,+neon,+fp16"},
    {"cortex-a12", "+vfp4,+neon"}, {"cortex-a15", "+vfp4,+neon"},
    {"cortex-a17", "+vfp4,+neon"}, {"krait", "+vfp4,+neon"},
    /* ARMv8 cores in AArch32 state (Raspberry Pi 3/4 running a 32-bit OS) */
    {"cortex-a32", "+neon,+fp-armv8"}, {"cortex-a35", "+neon,+fp-armv8"},
    {"cortex-a53", "+neon,+fp-armv8"}, {"cortex-a55", "+neon,+fp-armv8"},
    {"cortex-a57", "+neon,+fp-armv8"}, {"cortex-a72", "+neon,+fp-armv8"},
    {"cortex-a73", "+neon,+fp-armv8"}, {NULL, NULL},
};
static const char *const armv7_features[] = {
    "neon", "vfp2", "vfp3", "vfp4", "vfp3d16", "vfp4d16", "d32", "fp16", "fullfp16",
    "fp-armv8", "thumb-mode", "hwdiv", "hwdiv-arm", "mp", "crc", "crypto", "aes", "sha2",
    "dotprod", "strict-align", NULL,
};
static const tgt_width_rule armv7_widths[] = {{"neon", 128, 32}, {NULL, 0, 0}};
static const char *const armv7_vector_fma[] = {"neon", "vfp4|fp-armv8", NULL};

/* ---- x86-64 ---- */
static const char *const x86_64_aliases[] = {"x86_64", "amd64", NULL};
static const tgt_cpu x86_64_cpus[] = {
    {"generic", ""},         {"x86-64", ""},         {"x86-64-v2", ""},
    {"x86-64-v3", "+avx2,+fma"}, {"x86-64-v4", "+avx512f"}, {"nehalem", ""},
    {"sandybridge", "+avx"}, {"ivybridge", "+avx"},  {"haswell", "+avx2,+fma"},
    {"broadwell", "+avx2,+fma"}, {"skylake", "+avx2,+fma"},
    {"skylake-avx512", "+avx512f"}, {"skx", "+avx512f"}, {"cascadelake", "+avx512f"},
    {"cooperlake", "+avx512f"}, {"icelake-client", "+avx512f"},
    {"icelake-server", "+avx512f"}, {"tigerlake", "+avx512f"},
    {"sapphirerapids", "+avx512f"}, {"alderlake", "+avx2,+fma"},
    {"znver1", "+avx2,+fma"}, {"znver2", "+avx2,+fma"}, {"znver3", "+avx2,+fma"},
    {NULL, NULL},
};
static const char *const x86_64_features[] = {
    "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c",
    "bmi", "bmi2", "lzcnt", "movbe", "avx512f", "avx512cd", "avx512bw", "avx512dq",
    "avx512vl", "avx512vnni", "avxvnni", "avx512bf16", "avx512fp16", "prefer-256-bit", NULL,
};
static const tgt_width_rule x86_64_widths[] = {
    {"avx", 256, 128}, {"avx2", 256, 256}, {"avx512f", 512, 256}, {NULL, 0, 0}};

/* regs: vector registers (16 q on ARMv7 NEON, 32 on AArch64; x86: 16 xmm/ymm, 32 zmm from
 * 512 bits). Caches: a common core of the architecture, when neither the CPU's row nor the
 * host (sysconf) says better. */
const tgt_arch tgt_arches[] = {
    {TEC_ARCH_AARCH64, "aarch64", aarch64_aliases, aarch64_cpus, aarch64_features, "+neon", 128,
     aarch64_widths, NULL, 1, 32, 32, 0, 32 << 10, 1 << 20, 0},
    {TEC_ARCH_ARMV7, "armv7a", armv7_aliases, armv7_cpus, armv7_features, "", 32, armv7_widths,
     armv7_vector_fma, 0, 16, 16, 0, 32 << 10, 512 << 10, 0},
    {TEC_ARCH_X86_64, "x86_64", x86_64_aliases, x86_64_cpus, x86_64_features, "", 128,
     x86_64_widths, NULL, 0, 16, 32, 512, 32 << 10, 1 << 20, 32 << 20},
    {TEC_ARCH_OTHER, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0, 0, 0, 0, 0, 0, 0},
};

/* Data caches of CPUs whose own differ from their architecture's defaults (bytes: L1d, L2 per
 * core or cluster, L3 shared; 0: none). */
const tgt_cpu_caches tgt_cpu_cache_rows[] = {
    {TEC_ARCH_AARCH64, "cortex-a72", 32 << 10, 1 << 20, 0},
    {TEC_ARCH_AARCH64, "neoverse-n1", 64 << 10, 1 << 20, 32 << 20},
    {TEC_ARCH_ARMV7, "cortex-a53", 32 << 10, 512 << 10, 0},
    {TEC_ARCH_ARMV7, "cortex-a72", 32 << 10, 1 << 20, 0},
    {TEC_ARCH_X86_64, "haswell", 32 << 10, 256 << 10, 0},
    {TEC_ARCH_X86_64, "skylake-avx512", 32 << 10, 1 << 20, 0},
    {TEC_ARCH_X86_64, "cascadelake", 32 << 10, 1 << 20, 0},
    {TEC_ARCH_X86_64, "icelake-server", 48 << 10, 1280 << 10, 0},
    {TEC_ARCH_X86_64, "sapphirerapids", 48 << 10, 2 << 20, 0},
    {TEC_ARCH_X86_64, "znver3", 32 << 10, 512 << 10, 32 << 20},
    {TEC_ARCH_OTHER, NULL, 0, 0, 0},
};

/* tec's feature bits: the LLVM feature each one reads (indexed by tec_feature). */
const char *const tgt_feature_names[TEC_FEATURE_COUNT] = {
    [TEC_FEATURE_SSE2] = "sse2",           [TEC_FEATURE_SSE41] = "sse4.1",
    [TEC_FEATURE_AVX] = "avx",             [TEC_FEATURE_AVX2] = "avx2",
    [TEC_FEATURE_FMA] = "fma",             [TEC_FEATURE_AVX512F] = "avx512f",
    [TEC_FEATURE_AVX512BW] = "avx512bw",   [TEC_FEATURE_AVX512VL] = "avx512vl",
    [TEC_FEATURE_AVX512VNNI] = "avx512vnni",
    [TEC_FEATURE_AVX512BF16] = "avx512bf16", [TEC_FEATURE_AVX512FP16] = "avx512fp16",
    [TEC_FEATURE_AVXVNNI] = "avxvnni",     [TEC_FEATURE_NEON] = "neon",
    [TEC_FEATURE_VFP4] = "vfp4",           [TEC_FEATURE_DOTPROD] = "dotprod",
    [TEC_FEATURE_I8MM] = "i8mm",           [TEC_FEATURE_FULLFP16] = "fullfp16",
    [TEC_FEATURE_BF16] = "bf16",           [TEC_FEATURE_SVE] = "sve",
    [TEC_FEATURE_FP16FML] = "fp16fml",
};

/* The default register tile of a GEMM (topi dense), first match by arch and width:
 * {mr, nr_vecs, mr_max, ku, l2_budget}. */
const tgt_gemm_row tgt_gemm_rows[] = {
    /* AVX-512: 6 x 64, 24 zmm accumulators (bench/gemm.c, bench/README.md) */
    {TEC_ARCH_OTHER, 512, {6, 4, 12, 8, 512 << 10}},
    /* AVX2: 6 x 16, 12 of the 16 ymm registers */
    {TEC_ARCH_OTHER, 256, {6, 2, 8, 8, 256 << 10}},
    /* ARMv7 NEON, 16 q registers: 4 x 8, 8 accumulators (examples/aot_arm, test_neon); the k
     * loop of such a tile is not unrolled (topi/dense.c: it would spill) */
    {TEC_ARCH_ARMV7, 128, {4, 2, 8, 8, 256 << 10}},
    /* SSE, 16 xmm registers: as ARMv7 NEON */
    {TEC_ARCH_X86_64, 128, {4, 2, 8, 8, 256 << 10}},
    /* AArch64 NEON, 32 q registers: 4 x 16, 16 accumulators (examples/aot_arm/arm_kernels.c) */
    {TEC_ARCH_OTHER, 128, {4, 4, 8, 8, 256 << 10}},
    /* no SIMD (the last row matches every target) */
    {TEC_ARCH_OTHER, 0, {4, 4, 8, 4, 256 << 10}},
};

/* Boards and servers by name. A preset may be followed by options that replace its own. */
const tec_target_preset tgt_presets[] = {
    {"rasp4b", "aarch64-linux-gnu", "cortex-a72", "+neon",
     "Raspberry Pi 4 Model B (BCM2711, 64-bit OS)"},
    {"rasp4b32", "armv7a-linux-gnueabihf", "cortex-a72", "+neon,+vfp4",
     "Raspberry Pi 4 Model B, 32-bit OS"},
    {"rasp3b", "armv7a-linux-gnueabihf", "cortex-a53", "+neon,+vfp4",
     "Raspberry Pi 3 Model B (BCM2837, 32-bit OS)"},
    {"rk3399", "aarch64-linux-gnu", "cortex-a72", "+neon",
     "Rockchip RK3399 boards, the Cortex-A72 (big) cluster"},
    {"armv7-neon", "armv7a-linux-gnueabihf", "cortex-a7", "+neon,+vfp4",
     "a generic ARMv7-A board with NEON and VFPv4 (Cortex-A7 class)"},
    {"neoverse-n1", "aarch64-linux-gnu", "neoverse-n1", "+neon",
     "Arm Neoverse N1 servers (AWS Graviton2, Ampere Altra)"},
    {NULL, NULL, NULL, NULL, NULL},
};

const tgt_arch *tgt_arch_find(const char *triple) {
  size_t n = strcspn(triple, "-");
  for (const tgt_arch *a = tgt_arches; a->name; a++)
    for (const char *const *al = a->aliases; *al; al++)
      if (strlen(*al) == n && strncmp(*al, triple, n) == 0) return a;
  return NULL;
}

const tec_target_preset *tgt_preset_find(const char *name) {
  for (const tec_target_preset *p = tgt_presets; p->name; p++)
    if (strcmp(p->name, name) == 0) return p;
  return NULL;
}

const tgt_cpu *tgt_cpu_find(const tgt_arch *a, const char *cpu) {
  for (const tgt_cpu *c = a->cpus; c->name; c++)
    if (strcmp(c->name, cpu) == 0) return c;
  return NULL;
}

int tgt_feature_known(const tgt_arch *a, const char *name, size_t len) {
  for (const char *const *f = a->features; *f; f++)
    if (strlen(*f) == len && strncmp(*f, name, len) == 0) return 1;
  return 0;
}

const tgt_cpu_caches *tgt_caches_find(tec_arch arch, const char *cpu) {
  for (const tgt_cpu_caches *c = tgt_cpu_cache_rows; c->cpu; c++)
    if (c->arch == arch && strcmp(c->cpu, cpu) == 0) return c;
  return NULL;
}

const tec_target_gemm *tgt_gemm_find(tec_arch arch, int vector_bits) {
  const tgt_gemm_row *r = tgt_gemm_rows;
  for (; r->vector_bits; r++)
    if ((r->arch == TEC_ARCH_OTHER || r->arch == arch) && r->vector_bits == vector_bits) break;
  return &r->gemm;
}

const tec_target_preset *tec_target_preset_at(int i) {
  int n = 0;
  while (tgt_presets[n].name) n++;
  return i >= 0 && i < n ? &tgt_presets[i] : NULL;
}

const char *tec_feature_name(tec_feature f) {
  return (int)f >= 0 && f < TEC_FEATURE_COUNT ? tgt_feature_names[f] : NULL;
}

static const tgt_arch *tgt_arch_at(int a) {
  int n = 0;
  while (tgt_arches[n].name) n++;
  return a >= 0 && a < n ? &tgt_arches[a] : NULL;
}

const char *tec_target_arch_name(int a) {
  const tgt_arch *r = tgt_arch_at(a);
  return r ? r->name : NULL;
}

const char *tec_target_arch_alias(int a, int i) {
  const tgt_arch *r = tgt_arch_at(a);
  for (int k = 0; r && r->aliases[k]; k++)
    if (k == i) return r->aliases[k];
  return NULL;
}

const char *tec_target_arch_cpu(int a, int i) {
  const tgt_arch *r = tgt_arch_at(a);
  for (int k = 0; r && r->cpus[k].name; k++)
    if (k == i) return r->cpus[k].name;
  return NULL;
}

const char *tec_target_arch_feature(int a, int i) {
  const tgt_arch *r = tgt_arch_at(a);
  for (int k = 0; r && r->features[k]; k++)
    if (k == i) return r->features[k];
  return NULL;
}
