/* test_target.c — the target value (tec/target.h): facts of presets and spelled-out targets,
 * feature bits, the canonical text (stable, idempotent, the key of tuning records, old
 * spellings still applying), bad text, the preset accessor, one parse per tuning task and
 * none per candidate, and the source tree free of target string compares outside target/. */
#include <check.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tec/tec.h"
#include "tec/tune.h"
#include "testutil.h"

#ifndef TEC_SOURCE_DIR
#define TEC_SOURCE_DIR "."
#endif

static const tec_target *parse_ok(tec_ctx *ctx, const char *text) {
  const tec_target *t = tec_target_parse(ctx, text);
  ck_assert_msg(t != NULL, "%s: %s", text, tec_ctx_error(ctx));
  return t;
}

START_TEST(target_presets_facts) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *t = parse_ok(ctx, "rasp4b");
  ck_assert_int_eq(t->arch, TEC_ARCH_AARCH64);
  ck_assert_str_eq(t->arch_name, "aarch64");
  ck_assert_str_eq(t->triple, "aarch64-unknown-linux-gnu");
  ck_assert_str_eq(t->cpu, "cortex-a72");
  ck_assert_int_eq(t->vector_bits, 128);
  ck_assert_int_eq(t->vector_lanes, 4);
  ck_assert_int_eq(t->vector_regs, 32);
  ck_assert_int_eq(t->lane_fma, 1);
  ck_assert_int_eq(t->vector_fma, 0);
  ck_assert_int_eq(t->opt_level, 3);
  ck_assert_int_eq(t->l1d_bytes, 32 << 10);
  ck_assert_int_eq(t->l2_bytes, 1 << 20);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_NEON), 1);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_AVX2), 0);
  ck_assert_int_eq(t->gemm.mr, 4);
  ck_assert_int_eq(t->gemm.nr_vecs, 4);
  ck_assert_str_eq(t->str, "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon");

  t = parse_ok(ctx, "rasp4b32");
  ck_assert_int_eq(t->arch, TEC_ARCH_ARMV7);
  ck_assert_int_eq(t->vector_regs, 16);
  ck_assert_int_eq(t->vector_fma, 1);
  ck_assert_int_eq(t->lane_fma, 0);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_VFP4), 1);
  ck_assert_int_eq(t->gemm.mr, 4);
  ck_assert_int_eq(t->gemm.nr_vecs, 2);

  t = parse_ok(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512");
  ck_assert_int_eq(t->arch, TEC_ARCH_X86_64);
  ck_assert_int_eq(t->vector_bits, 512);
  ck_assert_int_eq(t->vector_regs, 32);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_AVX512F), 1);
  ck_assert_int_eq(t->gemm.mr, 6);
  ck_assert_int_eq(t->gemm.nr_vecs, 4);
  /* the CPU's feature turned off by the user: AVX2's width and register count */
  t = parse_ok(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f");
  ck_assert_int_eq(t->vector_bits, 256);
  ck_assert_int_eq(t->vector_regs, 16);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_AVX512F), 0);
  ck_assert_int_eq(t->gemm.mr, 6);
  ck_assert_int_eq(t->gemm.nr_vecs, 2);
  /* SSE only: 16 xmm, a tile that fits them */
  t = parse_ok(ctx, "llvm -mtriple=x86_64-linux-gnu");
  ck_assert_int_eq(t->vector_bits, 128);
  ck_assert_int_eq(t->vector_regs, 16);
  ck_assert_int_eq(t->gemm.nr_vecs, 2);
  ck_assert_int_eq(parse_ok(ctx, "llvm -O0")->opt_level, 0);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(target_feature_bits) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *t =
      parse_ok(ctx, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+dotprod,+i8mm,+fullfp16");
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_DOTPROD), 1);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_I8MM), 1);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_FULLFP16), 1);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_SVE), 0);
  t = parse_ok(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids -mattr=+avx512vnni,+avx512bf16,-avx512bf16");
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_AVX512VNNI), 1);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_AVX512BF16), 0); /* the last mention wins */
  ck_assert_int_eq(tec_target_has(NULL, TEC_FEATURE_NEON), 0);
  ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_COUNT), 0);
  ck_assert_int_eq(tec_target_has(t, (tec_feature)-1), 0);
  ck_assert_str_eq(tec_feature_name(TEC_FEATURE_AVX512VNNI), "avx512vnni");
  ck_assert_ptr_null(tec_feature_name(TEC_FEATURE_COUNT));
  /* the host: its real features set the bits (x86-64 hosts have SSE2, AArch64 hosts NEON) */
  t = parse_ok(ctx, NULL);
  ck_assert_int_eq(t->is_host, 1);
  if (t->arch == TEC_ARCH_X86_64) ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_SSE2), 1);
  if (t->arch == TEC_ARCH_AARCH64) ck_assert_int_eq(tec_target_has(t, TEC_FEATURE_NEON), 1);
  ck_assert_int_eq(t->vector_bits, tec_target_vector_bits(ctx, "llvm"));
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(target_canonical_text) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *a = parse_ok(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell -mattr=+fma,+avx2,+fma -O1");
  const tec_target *b = parse_ok(ctx, "llvm -mtriple=x86_64-unknown-linux-gnu -O1 -mcpu=haswell -mattr=+avx2");
  ck_assert_str_eq(a->str, "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell -mattr=+avx2,+fma -O1");
  ck_assert_str_eq(a->str, b->str);
  ck_assert_int_eq(tec_target_equal(a, b), 1);
  ck_assert_int_eq(tec_target_equal(a, parse_ok(ctx, "rasp4b")), 0);
  ck_assert_int_eq(tec_target_equal(a, NULL), 0);
  /* the canonical text parses to itself, for every preset and the host */
  const tec_target_preset *p;
  int npresets = 0;
  for (int i = 0; (p = tec_target_preset_at(i)); i++, npresets++) {
    const tec_target *t = parse_ok(ctx, p->name);
    ck_assert_str_eq(parse_ok(ctx, t->str)->str, t->str);
    ck_assert_int_gt(strlen(p->what), 0);
  }
  ck_assert_int_ge(npresets, 6);
  ck_assert_str_eq(tec_target_preset_at(0)->name, "rasp4b");
  ck_assert_ptr_null(tec_target_preset_at(-1));
  ck_assert_ptr_null(tec_target_preset_at(npresets));
  const tec_target *h = parse_ok(ctx, NULL);
  tec_target_memo memo = {0}; /* the host's text names features users may not write: matched */
  ck_assert_int_eq(tec_target_matches(ctx, &memo, h->str, h), 1);
  /* and parses back as it is: the host's CPU and LLVM's features for it are legal on the host */
  ck_assert_str_eq(parse_ok(ctx, h->str)->str, h->str);
  ck_assert_int_eq(tec_target_equal(parse_ok(ctx, h->str), h), 1);
  ck_assert_str_eq(tec_target_str(ctx, NULL), h->str);
  ck_assert_str_eq(tec_target_arch_name(0), "aarch64");
  ck_assert_str_eq(tec_target_arch_alias(0, 1), "arm64");
  ck_assert_ptr_null(tec_target_arch_name(3));
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(target_bad_text) {
  ck_assert_ptr_null(tec_target_parse(NULL, "llvm"));
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_ptr_null(tec_target_parse(ctx, "rasp9"));
  tu_assert_contains(tec_ctx_error(ctx), "target 'rasp9': unknown target kind 'rasp9' (expected 'llvm'");
  tu_assert_contains(tec_ctx_error(ctx), "preset: rasp4b, rasp4b32");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=pentium9"));
  tu_assert_contains(tec_ctx_error(ctx), "unknown CPU 'pentium9' for x86_64 (known: generic, x86-64");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "rasp4b -mattr=neon"));
  tu_assert_contains(tec_ctx_error(ctx), "feature 'neon' must start with '+' or '-'");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "llvm -mattr=+no-such-feature"));
  tu_assert_contains(tec_ctx_error(ctx), "unknown feature '+no-such-feature'");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "llvm -mtriple=aarch64-linux-gnu -mattr=+avx2"));
  tu_assert_contains(tec_ctx_error(ctx), "unknown feature '+avx2' for aarch64");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "llvm -O7"));
  tu_assert_contains(tec_ctx_error(ctx), "unknown optimization level '-O7'");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "llvm -mtriple=riscv64-linux-gnu"));
  tu_assert_contains(tec_ctx_error(ctx), "riscv64-linux-gnu");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "  "));
  tu_assert_contains(tec_ctx_error(ctx), "empty target string");
  tec_ctx_free(ctx);
}
END_TEST

/* A record's target text read back: the same machine in another spelling (the feature order
 * tec wrote before the canonical text) matches, each distinct text parsed once per memo; a
 * text that does not parse matches nothing and leaves no error. */
START_TEST(target_matches_old_spellings) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *h = parse_ok(ctx, NULL);
  const char *old = tec_ctx_printf(ctx, "llvm -mtriple=%s%s%s -mattr=%s", h->triple, *h->cpu ? " -mcpu=" : "",
                                   h->cpu, h->features); /* the LLVM order, as records had it */
  tec_target_memo memo = {0};
  int64_t before = tec_target_parse_count();
  ck_assert_int_eq(tec_target_matches(ctx, &memo, old, h), 1);
  ck_assert_int_eq(tec_target_matches(ctx, &memo, old, h), 1);
  ck_assert_int_eq(tec_target_parse_count() - before, 1);
  ck_assert_int_eq(tec_target_matches(ctx, &memo, "rasp4b", h), 0);
  ck_assert_int_eq(tec_target_matches(ctx, &memo, "llvm -mtriple=x86_64-linux-gnu -mcpu=no-such-cpu", h), 0);
  ck_assert_ptr_null(tec_ctx_error(ctx));
  tec_ctx_free(ctx);
}
END_TEST

/* A record written with the old spelling (features in LLVM's order: "+avx512f,+fma,+avx2"
 * as tec_target_str printed it before) still applies to the same target. */
START_TEST(target_old_record_applies) {
  tec_ctx *ctx = tec_ctx_new();
  const char *target = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=+fma,+avx2";
  topi_dense p = {.m = 64, .n = 64, .k = 64};
  tune_space sp;
  ck_assert_int_eq(topi_space_of(ctx, "dense", &p, parse_ok(ctx, target), &sp), 0);
  char path[] = "/tmp/tec_target_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"llvm -mtriple=x86_64-unknown-linux-gnu "
             "-mcpu=skylake-avx512 -mattr=+avx512f,+fma,+avx2\",\"template\":\"dense\",\"config\":"
             "\"mr=2 nr=32 ku=2 jb=1 parallel=0 pack=0\",\"status\":\"ok\",\"gflops\":50}\n");
  fclose(f);
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  const char *warning = NULL;
  ck_assert_int_eq(tune_apply_best(ctx, path, "dense", "m=64,n=64,k=64", target, &sp, cfg, &warning, 0), 1);
  ck_assert_str_eq(tune_config_str(ctx, &sp, cfg), "mr=2 nr=32 ku=2 jb=1 parallel=0 pack=0");
  /* another machine's record does not */
  ck_assert_int_eq(tune_apply_best(ctx, path, "dense", "m=64,n=64,k=64", "rasp4b", &sp, cfg, &warning, 0), 0);
  tu_assert_contains(warning, "for other targets");
  unlink(path);
  tec_ctx_free(ctx);
}
END_TEST

/* The target text is parsed once when the task is made, never for a candidate: tune_run's
 * schedules and builds (in this process: no fork) read the task's value. */
START_TEST(target_parsed_once_per_task) {
  tec_ctx *ctx = tec_ctx_new();
  topi_dense p = {.m = 16, .n = 32, .k = 8};
  tune_task task;
  int64_t n0 = tec_target_parse_count();
  ck_assert_msg(tune_task_topi(ctx, topi_template_find("dense"), &p, "m=16,n=32,k=8", "llvm -O1", &task) == 0,
                "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(tec_target_parse_count() - n0, 1);
  ck_assert_ptr_nonnull(task.target_value);
  ck_assert_str_eq(task.target, task.target_value->str);
  tune_options o = tune_options_default();
  o.trials = 4, o.batch = 2, o.repeats = 1, o.warmup = 0, o.seed = 3, o.fork = 0, o.confirm = 0;
  tune_result r;
  int64_t n1 = tec_target_parse_count();
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_ge(r.ntrials, 2);
  ck_assert_int_eq(tec_target_parse_count() - n1, 0);
  tune_result_free(&r);
  /* a candidate built by hand the same way parses nothing either */
  int64_t n2 = tec_target_parse_count();
  const char *cs = NULL;
  lower_func *fn = task.lower(&task, ctx, task.default_index, &cs, NULL);
  ck_assert_ptr_nonnull(fn);
  ck_assert_ptr_nonnull(tec_build_for(ctx, 1, &fn, task.target_value));
  ck_assert_int_eq(tec_target_parse_count() - n2, 0);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- no target string compares outside target/ ---- */

static int grep_hits, grep_quiet;
static regex_t call_re, name_re, lit_re;

/* A strstr/strcmp/strncmp/strcasecmp call whose arguments (string literals aside) name a
 * target, triple or feature list, or whose literals are an architecture or target option. */
static void grep_line(const char *path, int lineno, const char *line) {
  regmatch_t m[2];
  const char *s = line;
  while (regexec(&call_re, s, 2, m, 0) == 0) {
    const char *a = s + m[0].rm_eo; /* after '(' */
    int depth = 1;
    const char *e = a;
    while (*e && depth) depth += (*e == '(') - (*e == ')'), e++;
    char args[512], bare[512];
    size_t n = (size_t)(e - a) < sizeof args - 1 ? (size_t)(e - a) : sizeof args - 1;
    memcpy(args, a, n), args[n] = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* string literals blanked */
      if (args[i] == '"') {
        for (i++; i < n && args[i] != '"'; i++) i += args[i] == '\\';
        continue;
      }
      bare[k++] = args[i];
    }
    bare[k] = 0;
    if (regexec(&name_re, bare, 0, NULL, 0) == 0 || regexec(&lit_re, args, 0, NULL, 0) == 0) {
      if (!grep_quiet) fprintf(stderr, "%s:%d: target string compare outside target/: %s\n", path, lineno, line);
      grep_hits++;
    }
    s += m[0].rm_eo;
  }
}

static void grep_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[4096];
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\n")] = 0;
    grep_line(path, lineno, line);
  }
  fclose(f);
}

static void grep_dir(const char *dir, int *nfiles) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "build") || !strncmp(e->d_name, "build-", 6)) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    size_t n = strlen(e->d_name);
    if (!strcmp(e->d_name, "test_target.c")) continue; /* this checker's own examples */
    if (n > 2 && (!strcmp(e->d_name + n - 2, ".c") || !strcmp(e->d_name + n - 2, ".h"))) {
      grep_file(p);
      ++*nfiles;
    } else if (!strchr(e->d_name, '.')) {
      grep_dir(p, nfiles);
    }
  }
  closedir(d);
}

START_TEST(target_no_string_compares_outside_target) {
  ck_assert_int_eq(regcomp(&call_re, "\\b(strstr|strcmp|strncmp|strcasecmp|strncasecmp)[[:space:]]*\\(",
                           REG_EXTENDED), 0);
  ck_assert_int_eq(regcomp(&name_re, "[A-Za-z_]*(target|triple|tstr|mattr|mcpu)[A-Za-z_0-9]*", REG_EXTENDED | REG_ICASE), 0);
  ck_assert_int_eq(regcomp(&lit_re, "\"[^\"]*(armv7|aarch64|arm64|x86_64|-mtriple|-mcpu|-mattr|avx512|avx2|neon)[^\"]*\"",
                           REG_EXTENDED), 0);
  /* the checker itself catches the issue's example and lets the tree's other compares pass */
  grep_hits = 0, grep_quiet = 1;
  grep_line("example", 1, "  if (t && strstr(t, \"armv7\")) return 16;");
  grep_line("example", 2, "  if (strcmp(r->target, tstr)) {");
  ck_assert_int_eq(grep_hits, 2);
  grep_line("example", 3, "  else if (!strcmp(a, \"--target\")) slot = &o->target;");
  grep_line("example", 4, "  : !strcmp(key, \"target\") ? &r->target");
  ck_assert_int_eq(grep_hits, 2);
  grep_hits = 0, grep_quiet = 0;
  static const char *const dirs[] = {"topi", "tune", "tools", "codegen_llvm", "lower", "schedule", "te",
                                     "ir", "runtime", "difftest", "bench", "examples", "include", "tests",
                                     "autosched"};
  int nfiles = 0;
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
  {
    char d[4096];
    snprintf(d, sizeof d, "%s/%s", TEC_SOURCE_DIR, dirs[i]);
    grep_dir(d, &nfiles);
  }
  ck_assert_int_gt(nfiles, 100); /* the tree was found */
  ck_assert_msg(grep_hits == 0, "%d target string compares outside target/ (listed above)", grep_hits);
  regfree(&call_re), regfree(&name_re), regfree(&lit_re);
}
END_TEST

int main(void) {
  Suite *s = suite_create("target");
  TCase *tc = tcase_create("target");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, target_presets_facts);
  tcase_add_test(tc, target_feature_bits);
  tcase_add_test(tc, target_canonical_text);
  tcase_add_test(tc, target_bad_text);
  tcase_add_test(tc, target_matches_old_spellings);
  tcase_add_test(tc, target_old_record_applies);
  tcase_add_test(tc, target_parsed_once_per_task);
  tcase_add_test(tc, target_no_string_compares_outside_target);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
