/* target.c — target text -> tec_target (tec_target_parse), the only place a target text is read.
 *
 *   "llvm" or NULL                       the host: its triple, CPU name and real features
 *   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
 *   "rasp4b"                             a preset (target_table.c), options may follow
 *   "llvm -O0"                           any of them with an optimization level -O0 .. -O3
 *                                        (default -O3): -O0 builds fast, runs slow
 *
 * Options are a table (tgt_options); each writes one field of the parsed words. CPUs,
 * features, presets, widths, registers, caches and tiles are data in target_table.c; this file
 * only reads it. LLVM 14 names CPUs it does not know by an older one or "generic" (Zen 5:
 * "generic", an Emerald Rapids Xeon: "icelake-client"), so the host always gets
 * LLVMGetHostCPUFeatures(): without it the code would be SSE2 only, or miss the newer CPU's
 * features. Everything the value holds is in the ctx's arena.
 */
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target/internal.h"

static atomic_llong tgt_parses;
void tgt_count_parse(void) { atomic_fetch_add(&tgt_parses, 1); }
int64_t tec_target_parse_count(void) { return (int64_t)atomic_load(&tgt_parses); }

/* An LLVM string copied into the arena and disposed (NULL on OOM or no string). */
static const char *tgt_take(tec_ctx *ctx, char *s) {
  const char *r = s ? tec_ctx_strdup(ctx, s) : NULL;
  if (s) LLVMDisposeMessage(s);
  return r;
}

/* The host's CPU name and features, asked once: LLVM reads cpuid (or /proc/cpuinfo) each
 * time, a few hundred microseconds of every parse. Kept in static buffers (nothing allocated
 * for the process); one that does not fit is asked each time. A copy in the arena, or NULL. */
static pthread_mutex_t tgt_host_lock = PTHREAD_MUTEX_INITIALIZER;
static char tgt_host_cpu[128], tgt_host_features[8192];

static const char *tgt_host_copy(tec_ctx *ctx, int features) {
  char *buf = features ? tgt_host_features : tgt_host_cpu;
  size_t cap = features ? sizeof tgt_host_features : sizeof tgt_host_cpu;
  pthread_mutex_lock(&tgt_host_lock);
  const char *r = NULL;
  if (*buf) {
    r = tec_ctx_strdup(ctx, buf);
  } else {
    char *s = features ? LLVMGetHostCPUFeatures() : LLVMGetHostCPUName();
    if (s && *s && strlen(s) < cap) memcpy(buf, s, strlen(s) + 1);
    r = s ? tgt_take(ctx, s) : tec_ctx_strdup(ctx, "");
  }
  pthread_mutex_unlock(&tgt_host_lock);
  return r;
}

/* The parsed words: each option's value or NULL. */
typedef struct tgt_opts {
  const char *triple, *cpu, *attr;
  const char *opt; /* the "-O<n>" word */
} tgt_opts;

typedef struct tgt_option {
  const char *name; /* "-mtriple" */
  size_t offset;    /* field of tgt_opts */
  const char *what; /* for messages */
} tgt_option;

static const tgt_option tgt_options[] = {
    {"-mtriple", offsetof(tgt_opts, triple), "target triple"},
    {"-mcpu", offsetof(tgt_opts, cpu), "CPU name"},
    {"-mattr", offsetof(tgt_opts, attr), "feature list"},
};
#define TGT_NOPTIONS ((int)(sizeof tgt_options / sizeof tgt_options[0]))

/* Length of the architecture part of a triple ("x86_64" of "x86_64-pc-linux-gnu"). */
static size_t tgt_arch_len(const char *triple) {
  const char *dash = strchr(triple, '-');
  return dash ? (size_t)(dash - triple) : strlen(triple);
}

/* "a, b, c" of a list of names (arena). */
static const char *tgt_join(tec_ctx *ctx, const char *const *names, size_t stride) {
  const char *r = "";
  for (const char *const *p = names; *p && r; p = (const char *const *)((const char *)p + stride))
    r = tec_ctx_printf(ctx, "%s%s%s", r, *r ? ", " : "", *p);
  return r ? r : "?";
}

static const char *tgt_known_presets(tec_ctx *ctx) {
  return tgt_join(ctx, &tgt_presets[0].name, sizeof tgt_presets[0]);
}

const char *tec_target_arches(tec_ctx *ctx) {
  const char *r = "";
  for (const tgt_arch *a = tgt_arches; a->name && r; a++)
    r = tec_ctx_printf(ctx, "%s%s%s (%s)", r, *r ? ", " : "", a->name,
                       tgt_join(ctx, a->aliases + 1, sizeof(char *)));
  return r ? r : "?";
}

/* Splits str into words and fills opts; the words stay in the arena. The first word is
 * "llvm" or a preset, whose fields fill what the options leave unset. */
static int tgt_parse_words(tec_ctx *ctx, const char *str, tgt_opts *opts) {
  const char *p = str;
  const tec_target_preset *preset = NULL;
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
      if (strcmp(word, "llvm") != 0 && !(preset = tgt_preset_find(word)))
        return tec_ctx_set_error(ctx,
                                 "target '%s': unknown target kind '%s' (expected 'llvm', "
                                 "optionally followed by -mtriple=, -mcpu=, -mattr=; or a "
                                 "preset: %s)",
                                 str, word, tgt_known_presets(ctx));
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
    const tgt_option *opt = NULL;
    for (int i = 0; i < TGT_NOPTIONS; i++)
      if (strlen(tgt_options[i].name) == keylen && strncmp(tgt_options[i].name, word, keylen) == 0)
        opt = &tgt_options[i];
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

/* Whether the name (n bytes) is one of the comma-separated features in list, either sign. */
static int tgt_in_list(const char *list, const char *name, size_t n) {
  for (const char *g = list; g && *g;) {
    size_t m = strcspn(g, ",");
    if (m == n + 1 && (*g == '+' || *g == '-') && strncmp(g + 1, name, n) == 0) return 1;
    g += m;
    if (*g == ',') g++;
  }
  return 0;
}

/* Each feature of a user's -mattr list: +name or -name, and known for the arch, or (host:
 * the host's list) one LLVM named for this machine, so the host's canonical text parses. */
static int tgt_check_features(tec_ctx *ctx, const char *str, const tgt_arch *arch,
                              const char *attr, const char *host) {
  for (const char *f = attr; f && *f;) {
    size_t n = strcspn(f, ",");
    if (*f != '+' && *f != '-')
      return tec_ctx_set_error(ctx, "target '%s': feature '%.*s' must start with '+' or '-' (e.g. "
                               "-mattr=+neon,+fp-armv8)", str, (int)n, f);
    if (arch && !tgt_feature_known(arch, f + 1, n - 1) && !tgt_in_list(host, f + 1, n - 1))
      return tec_ctx_set_error(ctx, "target '%s': unknown feature '%.*s' for %s (known: %s)", str,
                               (int)n, f, arch->name, tgt_join(ctx, arch->features, sizeof(char *)));
    f += n;
    if (*f == ',') f++;
  }
  return 0;
}

/* The native vector width that the ordered feature list gives: each feature in turn raises
 * or caps it, so "skylake-avx512 -mattr=-avx512f" is AVX2's 256. */
static int tgt_vector_bits(const tgt_arch *arch, const char *features) {
  if (!arch) return 128;
  int bits = arch->base_bits;
  for (const char *f = features; f && *f;) {
    size_t n = strcspn(f, ",");
    for (const tgt_width_rule *r = arch->widths; r->feature; r++)
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
static int tgt_feature_on(const char *features, const char *name, size_t len) {
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
static int tgt_vector_fma(const tgt_arch *arch, const char *features) {
  if (!arch || !arch->vector_fma) return 0;
  for (const char *const *req = arch->vector_fma; *req; req++) {
    int any = 0;
    for (const char *alt = *req; *alt && !any;) {
      size_t n = strcspn(alt, "|");
      any = tgt_feature_on(features, alt, n);
      alt += n;
      if (*alt == '|') alt++;
    }
    if (!any) return 0;
  }
  return 1;
}

/* Keeps only the last mention of each feature, in place (LLVM lets the last win; "+neon,+neon"
 * and "+neon,-neon" read the same as "+neon" and "-neon"). */
static void tgt_dedupe_features(char *r) {
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

/* The host's data caches from sysconf where the C library knows them (0 where it does not). */
static void tgt_host_caches(tec_target *t) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE),
       l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l1 > 0) t->l1d_bytes = l1;
  if (l2 > 0) t->l2_bytes = l2;
  if (l3 > 0) t->l3_bytes = l3;
#else
  (void)t;
#endif
}

/* The facts that follow from arch, CPU and the final feature list. */
static void tgt_facts(tec_target *t, const tgt_arch *arch, const tgt_cpu *cpu) {
  t->vector_lanes = t->vector_bits >= 128 ? t->vector_bits / 32 : 1;
  t->vector_fma = tgt_vector_fma(arch, t->features);
  /* one rule for codegen (cg_broadcast) and templates: a group of at least two floats per
   * vector register */
  t->lane_fma = arch && arch->lane_fma && t->vector_bits >= 64;
  t->vector_regs = !arch ? 16 : arch->wide_bits && t->vector_bits >= arch->wide_bits
                                    ? arch->regs_wide : arch->regs;
  for (int f = 0; f < TEC_FEATURE_COUNT; f++)
    if (tgt_feature_on(t->features, tgt_feature_names[f], strlen(tgt_feature_names[f])))
      t->feature_bits |= (uint64_t)1 << f;
  if (arch) t->l1d_bytes = arch->l1d, t->l2_bytes = arch->l2, t->l3_bytes = arch->l3;
  const tgt_cpu_caches *c = cpu ? tgt_caches_find(t->arch, cpu->name) : NULL;
  if (c) t->l1d_bytes = c->l1d, t->l2_bytes = c->l2, t->l3_bytes = c->l3;
  if (t->is_host && !cpu) tgt_host_caches(t);
  t->gemm = *tgt_gemm_find(t->arch, t->vector_bits);
}

static const tec_target *tgt_oom(tec_ctx *ctx) {
  tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "target: out of memory");
  return NULL;
}

/* lenient: a text tec wrote itself (a record's): CPUs and features LLVM gave for a host are
 * taken without checking them against target_table.c (which lists what users may write). */
const tec_target *tgt_parse(tec_ctx *ctx, const char *str, int lenient) {
  if (!ctx) return NULL;
  tgt_count_parse();
  tgt_llvm_init();
  if (!str) str = "llvm";
  tgt_opts opts = {0};
  if (tgt_parse_words(ctx, str, &opts) != 0) return NULL;
  tec_target *t = tec_ctx_alloc(ctx, sizeof *t);
  if (!t) return tgt_oom(ctx);
  memset(t, 0, sizeof *t);

  const char *host = tgt_take(ctx, LLVMGetDefaultTargetTriple());
  host = host ? tgt_take(ctx, LLVMNormalizeTargetTriple(host)) : NULL;
  t->triple = opts.triple ? tgt_take(ctx, LLVMNormalizeTargetTriple(opts.triple)) : host;
  if (!host || !t->triple) return tgt_oom(ctx);
  size_t al = tgt_arch_len(t->triple);
  t->is_host = !opts.triple || (tgt_arch_len(host) == al && strncmp(host, t->triple, al) == 0);

  LLVMTargetRef llvm_target = NULL;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &llvm_target, &err)) {
    tec_ctx_set_error(ctx, "target '%s': unknown triple '%s' (%s; tec knows %s)", str,
                      opts.triple ? opts.triple : t->triple, err ? err : "no such target",
                      tec_target_arches(ctx));
    LLVMDisposeMessage(err);
    return NULL;
  }
  if (err) LLVMDisposeMessage(err);
  const tgt_arch *arch = tgt_arch_find(t->triple);
  if (!arch && opts.triple) { /* LLVM knows it, tec has no table for it */
    tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                           "target '%s': triple '%s' is not an architecture tec supports "
                           "(known: %s)", str, opts.triple, tec_target_arches(ctx));
    return NULL;
  }
  t->arch = arch ? arch->arch : TEC_ARCH_OTHER;
  t->arch_name = arch ? arch->name : "";

  /* CPU: the named one (checked), else the host's real one, else generic. */
  const tgt_cpu *cpu = NULL;
  /* on the host, the CPU and features LLVM names for it are legal too (they are what the
   * host's canonical text holds); elsewhere only target_table.c's */
  const char *host_cpu_name = t->is_host && !lenient && opts.cpu ? tgt_host_copy(ctx, 0) : NULL;
  const char *host_features = t->is_host && !lenient && opts.attr ? tgt_host_copy(ctx, 1) : NULL;
  if (opts.cpu && arch && !(cpu = tgt_cpu_find(arch, opts.cpu)) && !lenient &&
      !(host_cpu_name && strcmp(host_cpu_name, opts.cpu) == 0)) {
    tec_ctx_set_error(ctx, "target '%s': unknown CPU '%s' for %s (known: %s)", str, opts.cpu,
                      arch->name, tgt_join(ctx, &arch->cpus[0].name, sizeof(tgt_cpu)));
    return NULL;
  }
  if (!lenient && tgt_check_features(ctx, str, arch, opts.attr, host_features) != 0) return NULL;
  int host_cpu = !opts.triple && !opts.cpu;
  t->cpu = opts.cpu ? opts.cpu : host_cpu ? tgt_host_copy(ctx, 0) : "";
  /* Features, later ones winning: the arch's base, the host's real ones (LLVM 14 names some
   * CPUs "generic": without them the code would be SSE2 only; under qemu-user they may be
   * empty, and the base keeps NEON on) or the CPU's implied ones, then the user's. */
  const char *implied = host_cpu ? tgt_host_copy(ctx, 1) : cpu ? cpu->features : "";
  const char *base = arch ? arch->base_features : "", *user = opts.attr ? opts.attr : "";
  char *features = implied ? (char *)tec_ctx_printf(ctx, "%s,%s,%s", base, implied, user) : NULL;
  if (!t->cpu || !features) return tgt_oom(ctx);
  /* the width reads the whole list in order ("+avx512f" of a CPU then "-avx512f" of the user:
   * 256), so before the list loses its earlier mentions */
  t->vector_bits = tgt_vector_bits(arch, features);
  tgt_dedupe_features(features); /* also drops the empty parts */
  t->features = features;
  t->opt_level = opts.opt ? opts.opt[2] - '0' : 3;
  tgt_facts(t, arch, cpu);
  t->str = tgt_canonical(ctx, t);
  return t->str ? t : tgt_oom(ctx);
}

const tec_target *tec_target_parse(tec_ctx *ctx, const char *str) {
  return tgt_parse(ctx, str, 0);
}

int tec_target_has(const tec_target *t, tec_feature f) {
  return t && (int)f >= 0 && f < TEC_FEATURE_COUNT && (t->feature_bits >> f & 1);
}
