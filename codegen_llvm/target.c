/* target.c — target strings.
 *
 *   "llvm" or NULL                       the host: its triple, CPU name and real features
 *   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
 *
 * Options are a table (cg_options); each writes one field of the parsed target. LLVM 14 names
 * some CPUs it does not know (Zen 5) "generic", so the host always gets
 * LLVMGetHostCPUFeatures(): without it the code would be SSE2 only.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen_llvm/codegen.h"

static pthread_once_t cg_init_once = PTHREAD_ONCE_INIT;

static void cg_llvm_init_all(void) {
  /* All targets, not the Native macros: those are fixed by the build machine's llvm-config.h,
   * which is wrong when tec itself is cross-built. */
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers();
}

void cg_llvm_init(void) { pthread_once(&cg_init_once, cg_llvm_init_all); }

/* A parsed but not yet resolved target: each option's value or NULL. */
typedef struct cg_target_opts {
  const char *triple, *cpu, *attr;
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

static char *cg_strndup(const char *s, size_t n) {
  char *r = malloc(n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = '\0';
  }
  return r;
}

static char *cg_take_llvm_string(char *s) { /* copy an LLVM message into malloc memory */
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

/* Splits str into words and fills opts; the words stay in the arena. */
static int cg_parse_words(tec_ctx *ctx, const char *str, cg_target_opts *opts) {
  const char *p = str;
  int nword = 0;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    const char *w = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    size_t len = (size_t)(p - w);
    const char *word = tec_ctx_printf(ctx, "%.*s", (int)len, w);
    if (!word) return tec_ctx_set_error(ctx, "target: out of memory");
    if (nword++ == 0) {
      if (strcmp(word, "llvm") != 0)
        return tec_ctx_set_error(ctx,
                                 "target '%s': unknown target kind '%s' (expected 'llvm', "
                                 "optionally followed by -mtriple=, -mcpu=, -mattr=)",
                                 str, word);
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
                               "-mattr=)",
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
  return 0;
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
  if (!host_norm) return tec_ctx_set_error(ctx, "target: out of memory");
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
    tec_ctx_set_error(ctx, "target '%s': unknown triple '%s' (%s)", str,
                      opts.triple ? opts.triple : out->triple, err ? err : "no such target");
    LLVMDisposeMessage(err);
    cg_target_dispose(out);
    return -1;
  }
  if (err) LLVMDisposeMessage(err);

  /* CPU and features: the host's real ones unless the string names a triple or a CPU. */
  int host_cpu = !opts.triple && !opts.cpu;
  if (opts.cpu)
    out->cpu = cg_strndup(opts.cpu, strlen(opts.cpu));
  else if (host_cpu)
    out->cpu = cg_take_llvm_string(LLVMGetHostCPUName());
  else
    out->cpu = cg_strndup("", 0);
  if (host_cpu) {
    char *hf = cg_take_llvm_string(LLVMGetHostCPUFeatures());
    if (hf && opts.attr) {
      size_t n = strlen(hf) + strlen(opts.attr) + 2;
      out->features = malloc(n);
      if (out->features) snprintf(out->features, n, "%s%s%s", hf, *hf ? "," : "", opts.attr);
      free(hf);
    } else {
      out->features = hf;
    }
  } else {
    out->features = cg_strndup(opts.attr ? opts.attr : "", opts.attr ? strlen(opts.attr) : 0);
  }
  if (!out->cpu || !out->features) goto oom;
  for (const char *f = out->features; *f;) { /* each feature must be +name or -name */
    if (*f != '+' && *f != '-') {
      size_t n = strcspn(f, ",");
      tec_ctx_set_error(ctx, "target '%s': feature '%.*s' must start with '+' or '-' (e.g. "
                        "-mattr=+neon,+fp-armv8)", str, (int)n, f);
      cg_target_dispose(out);
      return -1;
    }
    f += strcspn(f, ",");
    if (*f == ',') f++;
  }
  return 0;
oom:
  free(host_norm);
  cg_target_dispose(out);
  return tec_ctx_set_error(ctx, "target: out of memory");
}

LLVMTargetMachineRef cg_target_machine(tec_ctx *ctx, const cg_target *t, const char *who) {
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t->target, t->triple, t->cpu, t->features,
                              LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm)
    tec_ctx_set_error(ctx, "%s: LLVM cannot make a target machine for %s (cpu '%s')", who,
                      t->triple, t->cpu);
  return tm;
}
