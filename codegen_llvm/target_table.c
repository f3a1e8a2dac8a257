/* target_table.c — what tec knows about each architecture, as data.
 *
 * LLVM's C API cannot list the CPUs or features of a target, and LLVM itself only warns on
 * stderr ("'+foo' is not a recognized feature") and carries on. So tec keeps, per
 * architecture, the -mcpu names and -mattr features it accepts (all of them known to LLVM 14
 * and every later version), the features implied by a CPU (as clang adds them: LLVM's ARM
 * backend does not turn NEON on for -mcpu=cortex-a9 alone), and how features decide the
 * native vector width. Named presets (boards) are rows of a second table.
 *
 * To support a new CPU or board, add a row; target.c has no per-target `if`.
 */
#include <string.h>
#include "codegen_llvm/codegen.h"

/* ---- AArch64 ---- */
static const char *const aarch64_aliases[] = {"aarch64", "arm64", NULL};
static const cg_cpu aarch64_cpus[] = {
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
static const cg_width_rule aarch64_widths[] = {{"neon", 128, 32}, {NULL, 0, 0}};

/* ---- ARMv7-A (32-bit, hard float) ---- */
static const char *const armv7_aliases[] = {"armv7a", "armv7", "armv7l", "armv7-a", NULL};
static const cg_cpu armv7_cpus[] = {
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
static const cg_width_rule armv7_widths[] = {{"neon", 128, 32}, {NULL, 0, 0}};
static const char *const armv7_vector_fma[] = {"neon", "vfp4|fp-armv8", NULL};

/* ---- x86-64 ---- */
static const char *const x86_64_aliases[] = {"x86_64", "amd64", NULL};
static const cg_cpu x86_64_cpus[] = {
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
    "avx512vl", "avx512vnni", "avx512bf16", "avx512fp16", "prefer-256-bit", NULL,
};
static const cg_width_rule x86_64_widths[] = {
    {"avx", 256, 128}, {"avx2", 256, 256}, {"avx512f", 512, 256}, {NULL, 0, 0}};

const cg_arch cg_arches[] = {
    {"aarch64", aarch64_aliases, aarch64_cpus, aarch64_features, "+neon", 128, aarch64_widths, NULL, 1},
    {"armv7a", armv7_aliases, armv7_cpus, armv7_features, "", 32, armv7_widths, armv7_vector_fma, 0},
    {"x86_64", x86_64_aliases, x86_64_cpus, x86_64_features, "", 128, x86_64_widths, NULL, 0},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0},
};

/* Boards and servers by name. A preset may be followed by options that replace its own. */
const cg_preset cg_presets[] = {
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

const cg_arch *cg_arch_find(const char *triple) {
  size_t n = strcspn(triple, "-");
  for (const cg_arch *a = cg_arches; a->name; a++)
    for (const char *const *al = a->aliases; *al; al++)
      if (strlen(*al) == n && strncmp(*al, triple, n) == 0) return a;
  return NULL;
}

const cg_preset *cg_preset_find(const char *name) {
  for (const cg_preset *p = cg_presets; p->name; p++)
    if (strcmp(p->name, name) == 0) return p;
  return NULL;
}

const cg_cpu *cg_cpu_find(const cg_arch *a, const char *cpu) {
  for (const cg_cpu *c = a->cpus; c->name; c++)
    if (strcmp(c->name, cpu) == 0) return c;
  return NULL;
}

int cg_feature_known(const cg_arch *a, const char *name, size_t len) {
  for (const char *const *f = a->features; *f; f++)
    if (strlen(*f) == len && strncmp(*f, name, len) == 0) return 1;
  return 0;
}
