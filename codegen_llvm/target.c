/* target.c — target strings.
 *
 *   "llvm" or NULL                       the host: its triple, CPU name and real features
 *   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
 *   "rasp4b"                             a preset (target_table.c), options may follow
 *   "llvm -O0"                           any of them with an optimization level -O0 .. -O3
 *                                        (default -O3): -O0 builds fast, runs slow
 *
 * Options are a table (cg_options); each writes one field of the parsed target. CPUs,
 * features, presets and vector widths are data in target_table.c; this file only reads it.
 * LLVM 14 names CPUs it does not know by an older one or "generic" (Zen 5: "generic", an
 * Emerald Rapids Xeon: "icelake-client"), so the host always gets LLVMGetHostCPUFeatures():
 * without it the code would be SSE2 only, or miss the newer CPU's features.
 */
#include <llvm-c/Support.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

static pthread_once_t cg_init_once = PTHREAD_ONCE_INIT;

/* LLVM's machine scheduler, with its cyclic critical path analysis on (the default), hoists a
 * loop body's loads ahead to shorten the loop-carried path; in a register tile of 31 live
 * AVX-512 vectors (conv2d_nchwc's 14 x 2: 28 accumulators, 2 weights, 1 broadcast) that
 * spills accumulators inside the hot loop (46-54 stack accesses per 448 multiply-adds, LLVM 14
 * and 19), and the tile runs slower than a smaller one. Off, the same tile has no spill and
 * ResNet-18's 128x28x28 -> 256 stride-2 layer runs 162 -> 180 GFLOP/s (1 thread, Xeon family 6
 * model 167); the templates' default tiles elsewhere move within noise (winograd, depthwise,
 * pointwise). The option is LLVM's process-wide state: it is parsed once, on tec's first LLVM
 * use; TEC_LLVM_SCHED_DEFAULT=1 leaves LLVM's defaults alone (for a program that parses LLVM
 * options itself: LLVM refuses an option given twice). */
static void cg_llvm_options(void) {
  const char *keep = getenv("TEC_LLVM_SCHED_DEFAULT");
  if (keep && strcmp(keep, "1") == 0) return;
  const char *const argv[] = {"tec", "-misched-cyclicpath=false"};
  LLVMParseCommandLineOptions(2, argv, NULL);
}

static void cg_llvm_init_all(void) {
  /* All targets, not the Native macros: those are fixed by the build machine's llvm-config.h,
   * which is wrong when tec itself is cross-built. */
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers();
  cg_llvm_options();
}

void cg_llvm_init(void) { pthread_once(&cg_init_once, cg_llvm_init_all); }

/* The host's CPU name and features, asked once: LLVM reads cpuid (or /proc/cpuinfo) each
 * time, a few hundred microseconds of every build. Kept in static buffers (nothing allocated
 * for the process); one that does not fit is asked each time. A copy (malloc'd), or NULL. */
static pthread_mutex_t cg_host_lock = PTHREAD_MUTEX_INITIALIZER;
static char cg_host_cpu[128], cg_host_features[8192];

static char *cg_host_copy(int features) {
  char *buf = features ? cg_host_features : cg_host_cpu;
  size_t cap = features ? sizeof cg_host_features : sizeof cg_host_cpu;
  pthread_mutex_lock(&cg_host_lock);
  char *r = NULL;
  if (*buf) {
    r = cg_strndup(buf, strlen(buf));
  } else {
    char *s = features ? LLVMGetHostCPUFeatures() : LLVMGetHostCPUName();
    if (s && *s && strlen(s) < cap) memcpy(buf, s, strlen(s) + 1);
    r = cg_take_llvm_string(s);
  }
  pthread_mutex_unlock(&cg_host_lock);
  return r;
}

/* A parsed but not yet resolved target: each option's value or NULL. */
typedef struct cg_target_opts {
  const char *triple, *cpu, *attr;
  const char *opt; /* the "-O<n>" word */
} cg_target_opts;

typedef struct cg_option {
  const char *name; /* "-mtriple" */
  size_t offset;    /* field of cg_target_opts */
  const char *what; /* for messages */
} cg_option;

static const cg_option cg_options[] = {
    {"-mtriple", offsetof(cg_target_opts, triple), "target triple"},
    {"-mcpu", offsetof(cg_target_opts, cpu), "CPU name"},
    {"-mattr", offsetof(cg_target_opts, attr), "feature list"},
};
#define CG_NOPTIONS ((int)(sizeof cg_options / sizeof cg_options[0]))

char *cg_strndup(const char *s, size_t n) {
  char *r = malloc(n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = '\0';
  }
  return r;
}

char *cg_take_llvm_string(char *s) {
  char *r = cg_strndup(s ? s : "", s ? strlen(s) : 0);
  if (s) LLVMDisposeMessage(s);
  return r;
}

/* Length of the architecture part of a triple ("x86_64" of "x86_64-pc-linux-gnu"). */
static size_t cg_arch_len(const char *triple) {
  const char *dash = strchr(triple, '-');
  return dash ? (size_t)(dash - triple) : strlen(triple);
}

void cg_target_dispose(cg_target *t) {
  if (!t) return;
  free(t->triple);
  free(t->cpu);
  free(t->features);
  memset(t, 0, sizeof *t);
}

/* "a, b, c" of a list of names (arena). */
static const char *cg_join(tec_ctx *ctx, const char *const *names, size_t stride) {
  const char *r = "";
  for (const char *const *p = names; *p; p = (const char *const *)((const char *)p + stride))
    r = tec_ctx_printf(ctx, "%s%s%s", r ? r : "", *r ? ", " : "", *p);
  return r ? r : "?";
}

static const char *cg_known_presets(tec_ctx *ctx) {
  return cg_join(ctx, &cg_presets[0].name, sizeof cg_presets[0]);
}

static const char *cg_known_arches(tec_ctx *ctx) {
  const char *r = "";
  for (const cg_arch *a = cg_arches; a->name && r; a++)
    r = tec_ctx_printf(ctx, "%s%s%s (%s)", r, *r ? ", " : "", a->name, cg_join(ctx, a->aliases + 1, sizeof(char *)));
  return r ? r : "?";
}

/* Splits str into words and fills opts; the words stay in the arena. The first word is
 * "llvm" or a preset, whose fields fill what the options leave unset. */
static int cg_parse_words(tec_ctx *ctx, const char *str, cg_target_opts *opts) {
  const char *p = str;
  const cg_preset *preset = NULL;
  int nword = 0;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    const char *w = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    size_t len = (size_t)(p - w);
    const char *word = tec_ctx_printf(ctx, "%.*s", (int)len, w);
    if (!word) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "target: out of memory");
    if (nword++ == 0) {
      if (strcmp(word, "llvm") != 0 && !(preset = cg_preset_find(word)))
        return tec_ctx_set_error(ctx,
                                 "target '%s': unknown target kind '%s' (expected 'llvm', "
                                 "optionally followed by -mtriple=, -mcpu=, -mattr=; or a "
                                 "preset: %s)",
                                 str, word, cg_known_presets(ctx));
      continue;
    }
    if (strncmp(word, "-O", 2) == 0) { /* -O0 .. -O3: no '=' as in a compiler's */
      if (!(word[2] >= '0' && word[2] <= '3' && word[3] == '\0'))
        return tec_ctx_set_error(ctx,
                                 "target '%s': unknown optimization level '%s' (known: -O0, "
                                 "-O1, -O2, -O3; the default is -O3)",
                                 str, word);
      if (opts->opt)
        return tec_ctx_set_error(ctx, "target '%s': the optimization level is given twice (%s, "
                                 "%s)", str, opts->opt, word);
      opts->opt = word;
      continue;
    }
    const char *eq = strchr(word, '=');
    size_t keylen = eq ? (size_t)(eq - word) : len;
    const cg_option *opt = NULL;
    for (int i = 0; i < CG_NOPTIONS; i++)
      if (strlen(cg_options[i].name) == keylen && strncmp(cg_options[i].name, word, keylen) == 0)
        opt = &cg_options[i];
    if (!opt)
      return tec_ctx_set_error(ctx,
                               "target '%s': unknown option '%s' (known: -mtriple=, -mcpu=, "
                               "-mattr=, -O0 .. -O3)",
                               str, word);
    if (!eq || !eq[1])
      return tec_ctx_set_error(ctx, "target '%s': option '%s' needs a value (%s=<%s>)", str,
                               word, opt->name, opt->what);
    const char **field = (const char **)((char *)opts + opt->offset);
    if (*field)
      return tec_ctx_set_error(ctx, "target '%s': option %s is given twice", str, opt->name);
    *field = eq + 1;
  }
  if (nword == 0) return tec_ctx_set_error(ctx, "target '%s': empty target string", str);
  if (preset) {
    if (!opts->triple) opts->triple = preset->triple;
    if (!opts->cpu) opts->cpu = preset->cpu;
    if (!opts->attr) opts->attr = preset->attr;
  }
  return 0;
}

/* Each feature of a user's -mattr list: +name or -name, and known for the arch. */
static int cg_check_features(tec_ctx *ctx, const char *str, const cg_arch *arch, const char *attr) {
  for (const char *f = attr; f && *f;) {
    size_t n = strcspn(f, ",");
    if (*f != '+' && *f != '-')
      return tec_ctx_set_error(ctx, "target '%s': feature '%.*s' must start with '+' or '-' (e.g. "
                               "-mattr=+neon,+fp-armv8)", str, (int)n, f);
    if (arch && !cg_feature_known(arch, f + 1, n - 1))
      return tec_ctx_set_error(ctx, "target '%s': unknown feature '%.*s' for %s (known: %s)", str,
                               (int)n, f, arch->name, cg_join(ctx, arch->features, sizeof(char *)));
    f += n;
    if (*f == ',') f++;
  }
  return 0;
}

/* The native vector width that the ordered feature list gives: each feature in turn raises
 * or caps it, so "skylake-avx512 -mattr=-avx512f" is AVX2's 256. */
static int cg_vector_bits(const cg_arch *arch, const char *features) {
  if (!arch) return 128;
  int bits = arch->base_bits;
  for (const char *f = features; f && *f;) {
    size_t n = strcspn(f, ",");
    for (const cg_width_rule *r = arch->widths; r->feature; r++)
      if (n > 1 && strlen(r->feature) == n - 1 && strncmp(r->feature, f + 1, n - 1) == 0) {
        if (*f == '+' && bits < r->on_bits) bits = r->on_bits;
        if (*f == '-' && bits > r->off_bits) bits = r->off_bits;
      }
    f += n;
    if (*f == ',') f++;
  }
  return bits;
}

/* Whether the ordered feature list ends with name on ("+name" last). */
static int cg_feature_on(const char *features, const char *name, size_t len) {
  int on = 0;
  for (const char *f = features; f && *f;) {
    size_t n = strcspn(f, ",");
    if (n == len + 1 && strncmp(f + 1, name, len) == 0) on = *f == '+';
    f += n;
    if (*f == ',') f++;
  }
  return on;
}

/* Every requirement of arch->vector_fma holds (one of its '|' alternatives is on). */
static int cg_vector_fma(const cg_arch *arch, const char *features) {
  if (!arch || !arch->vector_fma) return 0;
  for (const char *const *req = arch->vector_fma; *req; req++) {
    int any = 0;
    for (const char *alt = *req; *alt && !any;) {
      size_t n = strcspn(alt, "|");
      any = cg_feature_on(features, alt, n);
      alt += n;
      if (*alt == '|') alt++;
    }
    if (!any) return 0;
  }
  return 1;
}

/* a,b,c joined with ',' skipping empty parts (malloc'd). */
static char *cg_concat_features(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
  char *r = malloc(n);
  if (!r) return NULL;
  r[0] = '\0';
  const char *parts[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (*parts[i]) {
      if (*r) strcat(r, ",");
      strcat(r, parts[i]);
    }
  return r;
}

/* Keeps only the last mention of each feature, in place (LLVM lets the last win). */
static void cg_dedupe_features(char *r) {
  /* keep only the last mention of each feature (LLVM lets the last win; "+neon,+neon" and
   * "+neon,-neon" read the same as "+neon" and "-neon") */
  char *w = r;
  for (const char *f = r; *f;) {
    size_t n = strcspn(f, ",");
    int later = 0;
    for (const char *g = f + n; *g && !later;) {
      g += *g == ',';
      size_t m = strcspn(g, ",");
      later = m == n && n > 1 && strncmp(g + 1, f + 1, n - 1) == 0;
      g += m;
    }
    if (!later && n > 0) {
      if (w != r) *w++ = ',';
      memmove(w, f, n);
      w += n;
    }
    f += n + (f[n] == ',');
  }
  *w = '\0';
}

int cg_target_parse(tec_ctx *ctx, const char *str, cg_target *out) {
  cg_target_opts opts = {0};
  char *err = NULL;
  memset(out, 0, sizeof *out);
  cg_llvm_init();
  if (!str) str = "llvm";
  if (cg_parse_words(ctx, str, &opts) != 0) return -1;

  char *host = cg_take_llvm_string(LLVMGetDefaultTargetTriple());
  char *host_norm = NULL;
  if (host) {
    host_norm = cg_take_llvm_string(LLVMNormalizeTargetTriple(host));
    free(host);
  }
  if (!host_norm) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "target: out of memory");
  if (opts.triple) {
    out->triple = cg_take_llvm_string(LLVMNormalizeTargetTriple(opts.triple));
  } else {
    out->triple = host_norm;
    host_norm = NULL;
  }
  if (!out->triple) goto oom;
  out->is_host = !opts.triple || (host_norm && cg_arch_len(host_norm) == cg_arch_len(out->triple) &&
                                  strncmp(host_norm, out->triple, cg_arch_len(out->triple)) == 0);
  free(host_norm);
  host_norm = NULL;

  if (LLVMGetTargetFromTriple(out->triple, &out->target, &err)) {
    tec_ctx_set_error(ctx, "target '%s': unknown triple '%s' (%s; tec knows %s)", str,
                      opts.triple ? opts.triple : out->triple, err ? err : "no such target",
                      cg_known_arches(ctx));
    LLVMDisposeMessage(err);
    cg_target_dispose(out);
    return -1;
  }
  if (err) LLVMDisposeMessage(err);
  out->arch = cg_arch_find(out->triple);
  if (!out->arch && opts.triple) { /* LLVM knows it, tec has no table for it */
    tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                           "target '%s': triple '%s' is not an architecture tec supports "
                           "(known: %s)", str, opts.triple, cg_known_arches(ctx));
    cg_target_dispose(out);
    return -1;
  }

  /* CPU: the named one (checked), else the host's real one, else generic. */
  const cg_cpu *cpu = NULL;
  if (opts.cpu && out->arch && !(cpu = cg_cpu_find(out->arch, opts.cpu))) {
    tec_ctx_set_error(ctx, "target '%s': unknown CPU '%s' for %s (known: %s)", str, opts.cpu,
                      out->arch->name, cg_join(ctx, &out->arch->cpus[0].name, sizeof(cg_cpu)));
    cg_target_dispose(out);
    return -1;
  }
  if (cg_check_features(ctx, str, out->arch, opts.attr) != 0) {
    cg_target_dispose(out);
    return -1;
  }
  int host_cpu = !opts.triple && !opts.cpu;
  if (opts.cpu)
    out->cpu = cg_strndup(opts.cpu, strlen(opts.cpu));
  else if (host_cpu)
    out->cpu = cg_host_copy(0);
  else
    out->cpu = cg_strndup("", 0);
  /* Features, later ones winning: the arch's base, the host's real ones (LLVM 14 names some
   * CPUs "generic": without them the code would be SSE2 only; under qemu-user they may be
   * empty, and the base keeps NEON on) or the CPU's implied ones, then the user's. */
  char *implied = host_cpu ? cg_host_copy(1)
                           : cg_strndup(cpu ? cpu->features : "", cpu ? strlen(cpu->features) : 0);
  if (implied)
    out->features = cg_concat_features(out->arch ? out->arch->base_features : "", implied,
                                       opts.attr ? opts.attr : "");
  free(implied);
  if (!out->cpu || !out->features) goto oom;
  out->vector_bits = cg_vector_bits(out->arch, out->features);
  out->vector_fma = cg_vector_fma(out->arch, out->features);
  /* one rule for codegen (cg_broadcast) and templates (tec_target_lane_fma): a group of at
   * least two floats per vector register */
  out->lane_fma = out->arch && out->arch->lane_fma && out->vector_bits >= 64;
  cg_dedupe_features(out->features); /* after the width: "+avx512f" of a CPU then "-avx512f" */
  out->opt_level = opts.opt ? opts.opt[2] - '0' : 3;
  return 0;
oom:
  free(host_norm);
  cg_target_dispose(out);
  return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "target: out of memory");
}

int tec_target_vector_bits(tec_ctx *ctx, const char *target) {
  if (!ctx) return -1;
  cg_target t;
  if (cg_target_parse(ctx, target, &t) != 0) return -1;
  int bits = t.vector_bits;
  cg_target_dispose(&t);
  return bits;
}

int tec_target_lane_fma(tec_ctx *ctx, const char *target) {
  if (!ctx) return -1;
  cg_target t;
  if (cg_target_parse(ctx, target, &t) != 0) return -1;
  int r = t.lane_fma;
  cg_target_dispose(&t);
  return r;
}

const char *tec_target_str(tec_ctx *ctx, const char *target) {
  if (!ctx) return NULL;
  cg_target t;
  if (cg_target_parse(ctx, target, &t) != 0) return NULL;
  const char *r = tec_ctx_printf(ctx, "llvm -mtriple=%s%s%s%s%s%s", t.triple, *t.cpu ? " -mcpu=" : "",
                                 t.cpu, *t.features ? " -mattr=" : "", t.features,
                                 t.opt_level == 3 ? "" : tec_ctx_printf(ctx, " -O%d", t.opt_level));
  cg_target_dispose(&t);
  if (!r) tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "target: out of memory");
  return r;
}

LLVMTargetMachineRef cg_target_machine(tec_ctx *ctx, const cg_target *t, const char *who) {
  /* -O0 is LLVM's fast instruction selection, no register allocation tuning */
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                               LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t->target, t->triple, t->cpu, t->features, levels[t->opt_level],
                              LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    tec_ctx_set_error(ctx, "%s: LLVM cannot make a target machine for %s (cpu '%s')", who,
                      t->triple, t->cpu);
  return tm;
}
