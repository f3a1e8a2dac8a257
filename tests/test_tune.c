/* test_tune.c — tuning (tune/): spaces (sizes and values of split, reorder, annotate and
 * categorical knobs counted by hand, printing, bad knobs with their messages); a small tune of
 * dense 64x64x64 checked against a naive matmul reference (the records load back, apply-best
 * picks the fastest record, a corrupt line is reported and skipped, another target's record is
 * never applied, missing and mismatched records warn with the workload and the default); a
 * deliberately wrong candidate and a time-out injected through the test hook (error records,
 * never the best); the same seed giving the same trial order; bad options. */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tec/tune.h"
#include "testutil.h"
#include "tune/internal.h" /* tune_calls_per_cost */

/* ---------------- spaces ---------------- */

static char *print_space(const tune_space *sp) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  tune_space_print(f, sp);
  fclose(f);
  return buf;
}

START_TEST(split_counts) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  /* 12 = 2^2 * 3: 6 divisors; ordered factorizations into 3: C(4,2) * C(3,2) = 18 */
  ck_assert_int_eq(tune_define_split(sp, "f2", 12, 2, TUNE_SPLIT_FACTORS, 0, NULL), 0);
  ck_assert_int_eq(tune_define_split(sp, "f3", 12, 3, TUNE_SPLIT_FACTORS, 0, NULL), 1);
  /* inner powers of two <= 12: 1 2 4 8; pairs with product <= 12: 10 */
  ck_assert_int_eq(tune_define_split(sp, "p2", 12, 2, TUNE_SPLIT_POWER2, 0, NULL), 2);
  ck_assert_int_eq(tune_define_split(sp, "p3", 12, 3, TUNE_SPLIT_POWER2, 0, NULL), 3);
  const int64_t cands[] = {5, 3, 12};
  ck_assert_int_eq(tune_define_split(sp, "l2", 12, 2, TUNE_SPLIT_LIST, 3, cands), 4);
  const int64_t want_n[] = {6, 18, 4, 10, 3};
  for (int k = 0; k < 5; k++) ck_assert_int_eq(sp->knobs[k].nvalues, want_n[k]);
  /* values, outer first: f2 = [12,1] [6,2] [4,3] [3,4] [2,6] [1,12] */
  const int64_t f2[] = {12, 1, 6, 2, 4, 3, 3, 4, 2, 6, 1, 12};
  for (int i = 0; i < 12; i++) ck_assert_int_eq(sp->knobs[0].values[i], f2[i]);
  /* f3: [12,1,1] [6,1,2] ... [1,12,1]; every product 12 */
  ck_assert_int_eq(sp->knobs[1].values[3], 6);
  ck_assert_int_eq(sp->knobs[1].values[5], 2);
  for (int v = 0; v < 18; v++) {
    const int64_t *e = sp->knobs[1].values + 3 * v;
    ck_assert_int_eq(e[0] * e[1] * e[2], 12);
  }
  /* power2: [12,1] [6,2] [3,4] [2,8] (outer = ceil) */
  const int64_t p2[] = {12, 1, 6, 2, 3, 4, 2, 8};
  for (int i = 0; i < 8; i++) ck_assert_int_eq(sp->knobs[2].values[i], p2[i]);
  /* list: [3,5] [4,3] [1,12] */
  const int64_t l2[] = {3, 5, 4, 3, 1, 12};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(sp->knobs[4].values[i], l2[i]);
  ck_assert_int_eq(tune_space_size(sp), 6 * 18 * 4 * 10 * 3);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(reorder_annotate_knob) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_reorder(sp, "order", 3, 0, NULL), 0);
  ck_assert_int_eq(sp->knobs[0].nvalues, 6);
  const int64_t perms[] = {0, 1, 2, 0, 2, 1, 1, 0, 2, 1, 2, 0, 2, 0, 1, 2, 1, 0};
  for (int i = 0; i < 18; i++) ck_assert_int_eq(sp->knobs[0].values[i], perms[i]);
  const int two[] = {2, 0, 1, 0, 1, 2};
  ck_assert_int_eq(tune_define_reorder(sp, "order2", 3, 2, two), 1);
  ck_assert_int_eq(sp->knobs[1].nvalues, 2);
  /* none|unroll on two axes, none|unroll|vectorize on the last: 2 * 2 * 3 */
  const unsigned ann[] = {TUNE_ANN_NONE | TUNE_ANN_UNROLL, TUNE_ANN_NONE | TUNE_ANN_UNROLL,
                          TUNE_ANN_NONE | TUNE_ANN_UNROLL | TUNE_ANN_VECTORIZE};
  ck_assert_int_eq(tune_define_annotate(sp, "ann", 3, ann), 2);
  ck_assert_int_eq(sp->knobs[2].nvalues, 12);
  /* parallel allowed on both axes, at most one of them: none/none, none/par, par/none */
  const unsigned par[] = {TUNE_ANN_NONE | TUNE_ANN_PARALLEL, TUNE_ANN_NONE | TUNE_ANN_PARALLEL};
  ck_assert_int_eq(tune_define_annotate(sp, "par", 2, par), 3);
  ck_assert_int_eq(sp->knobs[3].nvalues, 3);
  const char *const labels[] = {"root", "at_i", "inline"};
  ck_assert_int_eq(tune_define_knob(sp, "where", 3, NULL, labels), 4);
  ck_assert_int_eq(tune_space_size(sp), 6 * 2 * 12 * 3 * 3);
  /* index: knob 0 fastest; decode, encode and the entity */
  int64_t idx[5] = {5, 1, 11, 2, 1}, back[5];
  int64_t index = tune_space_encode(sp, idx);
  ck_assert_int_eq(index, 5 + 6 * (1 + 2 * (11 + 12 * (2 + 3 * 1))));
  ck_assert_int_eq(tune_space_decode(sp, index, back), 0);
  for (int k = 0; k < 5; k++) ck_assert_int_eq(back[k], idx[k]);
  ck_assert_int_eq(tune_space_get(sp, index, 0)[0], 2);
  ck_assert_str_eq(tune_space_config_str(ctx, sp, index),
                   "order=[2,1,0] order2=[0,1,2] ann=[unroll,unroll,vec] par=[par,none] where=at_i");
  ck_assert_int_eq(tune_space_decode(sp, tune_space_size(sp), back), -1);
  /* the text parses back to the index; knobs not named keep their default (value 0) */
  int64_t parsed = -1;
  OK(ctx, tune_space_parse(ctx, sp, tune_space_config_str(ctx, sp, index), &parsed));
  ck_assert_int_eq(parsed, index);
  OK(ctx, tune_space_parse(ctx, sp, "where=inline, order=[0,2,1]", &parsed));
  ck_assert_int_eq(parsed, 1 + 6 * 2 * 12 * 3 * 2);
  ck_assert_int_eq(tune_space_default_index(sp), 0);
  ck_assert_int_eq(tune_space_parse(ctx, sp, "order=[0,1]", &parsed), -1);
  assert_err(ctx, "tune space: config: knob 'order' = '[0,1]' is not one of its values (legal: [0,1,2], [0,2,1], "
                  "[1,0,2], [1,2,0], [2,0,1], [2,1,0])");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_space_parse(ctx, sp, "where=leaf", &parsed), -1);
  assert_err(ctx, "tune space: config: knob 'where' = 'leaf' is not one of its values (legal: root, at_i, inline)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_space_parse(ctx, sp, "wher=root", &parsed), -1);
  assert_err(ctx, "tune space: config: no knob 'wher' (knobs: order, order2, ann, par, where)");
  tec_ctx_clear_error(ctx);
  char *text = print_space(sp);
  ck_assert_str_eq(text,
                   "space: 5 knobs, 1296 configs\n"
                   "  order        reorder     6 values: [0,1,2] [0,2,1] [1,0,2] [1,2,0] [2,0,1] [2,1,0]\n"
                   "  order2       reorder     2 values: [2,0,1] [0,1,2]\n"
                   "  ann          annotate   12 values: [none,none,none] [none,none,unroll] [none,none,vec] "
                   "[none,unroll,none] [none,unroll,unroll] [none,unroll,vec] [unroll,none,none] [unroll,none,unroll] ...\n"
                   "  par          annotate    3 values: [none,none] [none,par] [par,none]\n"
                   "  where        category    3 values: root at_i inline\n");
  free(text);
  tec_ctx_free(ctx);
}
END_TEST

/* A space with a config struct: int knobs bound to its fields (what a template declares),
 * beside a split knob, and a rule across two of them. */
typedef struct field_cfg {
  int64_t tile, unroll, other; /* other: no knob, kept from the default */
} field_cfg;
static int field_rule(const void *data, const void *config) {
  const field_cfg *c = config;
  return c->tile * c->unroll <= *(const int64_t *)data;
}

START_TEST(field_knobs) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  OK(ctx, tune_space_init(ctx, &sp, "mine", sizeof(field_cfg)));
  ((field_cfg *)sp.default_config)->other = 7;
  ck_assert_int_eq(tune_define_field(&sp, "tile", "columns per tile", offsetof(field_cfg, tile), 3,
                                     (const int64_t[]){4, 8, 16}, 8), 0);
  ck_assert_int_eq(tune_define_split(&sp, "sp", 8, 2, TUNE_SPLIT_FACTORS, 0, NULL), 1);
  ck_assert_int_eq(tune_define_field(&sp, "unroll", NULL, offsetof(field_cfg, unroll), 3,
                                     (const int64_t[]){1, 2, 4}, 1), 2);
  ck_assert_str_eq(sp.knobs[0].doc, "columns per tile");
  /* the default: tile 8 (value 1), sp [8,1] (value 0), unroll 1 (value 0) */
  ck_assert_int_eq(tune_space_default_index(&sp), 1);
  field_cfg c;
  ck_assert_int_eq(tune_space_config(&sp, 1, &c), 0);
  ck_assert_int_eq(c.tile, 8); ck_assert_int_eq(c.unroll, 1); ck_assert_int_eq(c.other, 7);
  ck_assert_int_eq(tune_space_index(&sp, &c), 1);
  /* index 2 + 3 * (1 + 4 * 2): tile 16, sp [4,2], unroll 4 */
  ck_assert_int_eq(tune_space_config(&sp, 2 + 3 * (1 + 4 * 2), &c), 0);
  ck_assert_int_eq(c.tile, 16); ck_assert_int_eq(c.unroll, 4);
  ck_assert_int_eq(tune_space_index(&sp, &c), 2 + 3 * 4 * 2); /* the split at its default */
  ck_assert_str_eq(tune_config_str(ctx, &sp, &c), "tile=16 unroll=4");
  ck_assert_str_eq(tune_space_config_str(ctx, &sp, 2 + 3 * (1 + 4 * 2)), "tile=16 sp=[4,2] unroll=4");
  ck_assert_int_eq(tune_space_config(&sp, tune_space_range(&sp), &c), -1);
  /* the rule: tile * unroll <= 32 refuses (16, 4) only */
  static const int64_t cap = 32;
  OK(ctx, tune_space_set_rule(&sp, 0x5u, field_rule, &cap, "tile*unroll <= 32"));
  ck_assert_int_eq(sp.pruned, 4); /* (16, 4) times the split's 4 values */
  ck_assert_int_eq(tune_space_size(&sp), 36 - 4);
  ck_assert_int_eq(tune_space_config(&sp, 2 + 3 * (1 + 4 * 2), &c), 1);
  ck_assert_int_eq(tune_space_allows(&sp, 2 + 3 * (1 + 4 * 2)), 0);
  ck_assert_int_eq(tune_space_allows(&sp, 1), 1);
  ck_assert_int_eq(tune_space_allows_config(&sp, &c), 0);
  /* parsing into the struct: the default, the named knobs set (the rule does not apply) */
  OK(ctx, tune_config_parse(ctx, &sp, "unroll=4 tile=16", &c));
  ck_assert_int_eq(c.tile, 16); ck_assert_int_eq(c.unroll, 4); ck_assert_int_eq(c.other, 7);
  ck_assert_int_eq(tune_config_parse(ctx, &sp, "tile=5", &c), -1);
  assert_err(ctx, "mine: knob 'tile' = 5 is not legal for this problem and target (legal: 4, 8, 16)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_config_parse(ctx, &sp, "tile=x", &c), -1);
  assert_err(ctx, "mine: config: knob 'tile' needs an integer value, got 'x' (legal: 4, 8, 16)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_config_parse(ctx, &sp, "tile", &c), -1);
  assert_err(ctx, "mine: config 'tile' is not knob=value");
  tec_ctx_clear_error(ctx);
  c.unroll = 3;
  ck_assert_int_eq(tune_space_check(ctx, &sp, &c), -1);
  assert_err(ctx, "mine: knob 'unroll' = 3 is not legal for this problem and target (legal: 1, 2, 4)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_space_index(&sp, &c), -1);
  /* bad fields and rules */
  ck_assert_int_eq(tune_define_field(&sp, "x", NULL, offsetof(field_cfg, other), 2, (const int64_t[]){2, 1}, 1), -1);
  assert_err(ctx, "mine: knob 'x': the values must ascend (1 after 2)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_define_field(&sp, "x", NULL, offsetof(field_cfg, other), 2, (const int64_t[]){1, 2}, 3), -1);
  assert_err(ctx, "mine: knob 'x': the default 3 is not one of its values");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_define_field(&sp, "x", NULL, sizeof(field_cfg), 2, (const int64_t[]){1, 2}, 1), -1);
  assert_err(ctx, "mine: knob 'x': offset 24 is not an int64_t field of the 24-byte config struct (tune_space_init "
                  "sets its size)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_define_field(&sp, "tile", NULL, offsetof(field_cfg, other), 1, (const int64_t[]){1}, 1), -1);
  assert_err(ctx, "mine: knob 'tile': a knob of that name exists already");
  tec_ctx_clear_error(ctx);
  static const int64_t tiny = 4;
  ck_assert_int_eq(tune_space_set_rule(&sp, 0x5u, field_rule, &tiny, "tile*unroll <= 4"), -1);
  assert_err(ctx, "mine: the default config tile=8 unroll=1 is outside its own space (tile*unroll <= 4)");
  tec_ctx_clear_error(ctx);
  tune_space *own = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_field(own, "x", NULL, 0, 1, (const int64_t[]){1}, 1), -1);
  assert_err(ctx, "tune space: knob 'x': offset 0 is not an int64_t field of the 0-byte config struct "
                  "(tune_space_init sets its size)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_space_set_rule(own, 1u, field_rule, &cap, NULL), -1);
  assert_err(ctx, "tune space: a rule needs a function and a space with a config struct (tune_space_init with its "
                  "size)");
  ck_assert_int_eq(sp.nknobs, 3); /* the failed knobs were not added */
  tec_ctx_free(ctx);
}
END_TEST

/* Records written before the one knob space (tune_space beside tune_space; tec 36222ff, `tec
 * tune` on an AVX-512 host, its target string in every line; here an AVX-512 target's, so
 * the spaces are the records' on every build machine): dense 64x64x64 (random,
 * seed 1, the default's trial and confirmation lines left out, so the best is another config)
 * and conv2d_nchwc 16x10x9 -> 16, 3x3, NCHW8c (a space with a rule; random, seed 2). They load,
 * every record's index still names its config text, and apply-best applies the same config. */
#ifndef TEC_TEST_DATA_DIR
#define TEC_TEST_DATA_DIR "tests/data"
#endif
#define X86 "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"
/* file's lines, their target (this suite's build host's) replaced by target, into a temporary
 * file (malloc'd path): the spaces are the target's, an AVX-512 one on every build machine */
static char *retarget(const char *file, const char *target) {
  char path[512], line[65536];
  snprintf(path, sizeof path, "%s/%s", TEC_TEST_DATA_DIR, file);
  FILE *in = fopen(path, "r");
  ck_assert_msg(in != NULL, "cannot read %s", path);
  char *out_path = strdup("/tmp/tec_old_records_XXXXXX");
  int fd = mkstemp(out_path);
  ck_assert_int_ge(fd, 0);
  FILE *out = fdopen(fd, "w");
  while (fgets(line, sizeof line, in)) {
    char *t = strstr(line, "\"target\":\""), *e = t ? strchr(t + 10, '"') : NULL;
    ck_assert_ptr_nonnull(e);
    fprintf(out, "%.*s%s%s", (int)(t + 10 - line), line, target, e);
  }
  fclose(in);
  fclose(out);
  return out_path;
}

static void old_records(const char *file, const char *tmpl, const void *problem, const char *problem_str,
                        int64_t want_index, const char *want_config) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *tg = tec_target_parse(ctx, X86);
  ck_assert_ptr_nonnull(tg);
  const char *target = tg->str;
  char *path = retarget(file, target);
  tune_record *recs;
  int n = 0;
  OK(ctx, tune_records_load(ctx, path, stderr, &recs, &n));
  ck_assert_int_ge(n, 5);
  tune_space sp;
  OK(ctx, topi_space_as(ctx, tmpl, NULL, problem, tg, &sp));
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  for (int i = 0; i < n; i++) { /* every record's index still names its config */
    ck_assert_str_eq(recs[i].target, target);
    ck_assert_str_eq(recs[i].template_name, tmpl);
    ck_assert_int_eq(tune_space_config(&sp, recs[i].index, cfg), 0);
    ck_assert_str_eq(tune_config_str(ctx, &sp, cfg), recs[i].config);
    ck_assert_str_eq(tune_space_config_str(ctx, &sp, recs[i].index), recs[i].config);
  }
  const char *warning = NULL;
  ck_assert_msg(tune_apply_best(ctx, path, tmpl, problem_str, X86, &sp, cfg, &warning, 0) == 1, "%s",
                warning ? warning : tec_ctx_error(ctx));
  ck_assert_ptr_null(warning);
  ck_assert_str_eq(tune_config_str(ctx, &sp, cfg), want_config);
  ck_assert_int_eq(tune_space_index(&sp, cfg), want_index);
  ck_assert_int_ne(want_index, tune_space_default_index(&sp));
  /* and the config schedules */
  topi_decl d;
  topi_op op;
  OK(ctx, topi_declare_as(ctx, tmpl, NULL, problem, &d));
  OK(ctx, topi_schedule(&d, cfg, tg, &op));
  unlink(path);
  free(path);
  tec_ctx_free(ctx);
}

START_TEST(records_before_space) {
  topi_dense dp = {.m = 64, .n = 64, .k = 64, .const_b = 1}; /* `tec tune dense`'s problem: b constant */
  old_records("records_before_space_dense.jsonl", "dense", &dp, "m=64,n=64,k=64", 982,
              "mr=11 nr=32 ku=1 jb=2 parallel=1 pack=0");
  topi_conv2d cp = {.n = 1, .c_in = 16, .h = 10, .w = 9, .c_out = 16, .kh = 3, .kw = 3, .stride_h = 1,
                    .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 1,
                    .in_layout = {.kind = TOPI_NCHWC, .block = 8}, .out_layout = {.kind = TOPI_NCHWC, .block = 8},
                    .epi = {.act = TOPI_ACT_RELU}};
  old_records("records_before_space_conv.jsonl", "conv2d_nchwc", &cp, "c=16,h=10,w=9,oc=16,k=3,pad=1,in=NCHW8c,out=NCHW8c,act=relu",
              2258, "ow_tile=9 oc_tiles=1 ic_split=2 ic_unroll=0 oh_tile=10 pad_copy=1 parallel=0 oh_reg=2");
}
END_TEST

START_TEST(bad_knobs) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_split(sp, "x", 8, 2, TUNE_SPLIT_FACTORS, 0, NULL), 0);
  ck_assert_int_eq(tune_define_split(sp, "x", 8, 2, TUNE_SPLIT_FACTORS, 0, NULL), -1);
  assert_err(ctx, "tune space: knob 'x': a knob of that name exists already");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_define_split(sp, "y", 0, 2, TUNE_SPLIT_FACTORS, 0, NULL), -1);
  assert_err(ctx, "tune space: split 'y': extent 0 and 2 parts; the extent must be >= 1 and the parts 1..8");
  tec_ctx_clear_error(ctx);
  const int64_t big[] = {9};
  ck_assert_int_eq(tune_define_split(sp, "z", 8, 2, TUNE_SPLIT_LIST, 1, big), -1);
  assert_err(ctx, "tune space: split 'z': candidate 0 has a factor 9 that is < 1 or makes the product exceed the extent 8");
  tec_ctx_clear_error(ctx);
  const int notperm[] = {0, 0};
  ck_assert_int_eq(tune_define_reorder(sp, "r", 2, 1, notperm), -1);
  assert_err(ctx, "tune space: reorder 'r': candidate 0 is not a permutation of 0..1");
  tec_ctx_clear_error(ctx);
  const unsigned none[] = {0};
  ck_assert_int_eq(tune_define_annotate(sp, "a", 1, none), -1);
  assert_err(ctx, "tune space: annotate 'a': axis 0 allows 0x0; a non-empty mask of TUNE_ANN_NONE, _UNROLL, "
                  "_VECTORIZE, _PARALLEL is legal");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_space_size(sp), 4); /* the failed knobs were not added */
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- a small tune of dense 64x64x64 ---------------- */

#define M 64
static const topi_dense dense_prob = {.m = M, .n = M, .k = M, .const_b = 1};
static char dir[64];

/* the independent reference: a naive matmul of the tuner's inputs */
static int naive_ref(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout) {
  ck_assert_int_eq(nargs, 3);
  ck_assert_int_eq(nout, M * M);
  tu_ref_matmul(args[0]->data, args[1]->data, out, M, M, M);
  ++*(int *)user;
  return 0;
}

typedef struct hook_ctl {
  int64_t wrong, slow;
} hook_ctl;

static void hook(void *user, int64_t index, float *out, int64_t nout) {
  const hook_ctl *h = user;
  if (index == h->wrong) out[nout / 2] += 1.0f;
  if (index == h->slow) usleep(3000 * 1000); /* killed at 2 x 1 s + 0.5 s when forked */
}

static void make_task(tec_ctx *ctx, tune_task *task) {
  ck_assert_msg(tune_task_topi(ctx, topi_template_find("dense"), &dense_prob, "n=64, m=64,k=64", NULL, task) == 0, "%s",
                tec_ctx_error(ctx));
}

static tune_options small_options(const char *records, int *ref_calls) {
  tune_options o = tune_options_default();
  o.trials = 7, o.batch = 3, o.repeats = 1, o.warmup = 0, o.seed = 5, o.timeout = 1.0, o.records = records;
  o.reference = naive_ref, o.reference_user = ref_calls;
  o.confirm = 0; /* the trials alone (confirm_stage checks the confirmation) */
  return o;
}

static int count_lines(const char *path) {
  char *s = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(s);
  int n = 0;
  for (char *c = s; *c; c++) n += *c == '\n';
  free(s);
  return n;
}

static void setup(void) {
  strcpy(dir, "/tmp/tec_tune_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_tune: could not remove %s\n", dir);
}

START_TEST(tune_dense_records) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, &task);
  ck_assert_str_eq(task.workload, "dense k=64,m=64,n=64");
  tune_space tsp;
  ck_assert_int_eq(topi_space_of(ctx, "dense", &dense_prob, NULL, &tsp), 0);
  ck_assert_int_eq(tune_space_size(task.space), tune_space_size(&tsp));
  ck_assert_int_eq(task.space->nknobs, tsp.nknobs);
  char rec[128], csv[128], svg[128];
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(svg, sizeof svg, "%s/t.svg", dir);

  /* run 1: everything correct */
  int refs = 0;
  tune_options o = small_options(rec, &refs);
  o.csv = csv, o.svg = svg;
  tune_result r1;
  ck_assert_msg(tune_run(ctx, &task, &o, &r1) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(refs, 1);
  ck_assert_int_eq(r1.ntrials, 7);
  ck_assert_int_eq(r1.trials[0].index, task.default_index); /* the default first */
  for (int i = 0; i < r1.ntrials; i++) {
    ck_assert_msg(r1.trials[i].status == TUNE_OK, "trial %d: %s", i, r1.trials[i].error);
    ck_assert_int_eq(r1.trials[i].ncosts, 1);
    ck_assert(r1.trials[i].gflops > 0);
    tu_assert_contains(r1.trials[i].trace, "{\"tec_trace\": 2, \"records\": [");
    for (int j = 0; j < i; j++) ck_assert(r1.trials[j].index != r1.trials[i].index);
  }
  ck_assert_int_ge(r1.best, 0);
  ck_assert_int_eq(count_lines(rec), 7);
  ck_assert_int_eq(count_lines(csv), 8);
  char *s = tu_read_file(svg, NULL);
  ck_assert_ptr_nonnull(s);
  tu_assert_contains(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
  tu_assert_contains(s, "dense k=64,m=64,n=64: best-so-far GFLOP/s</text>");
  free(s);

  /* the records load back, one per trial, in order */
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 7);
  int fastest = 0;
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(recs[i].workload, "dense k=64,m=64,n=64");
    ck_assert_str_eq(recs[i].target, task.target);
    ck_assert_str_eq(recs[i].template_name, "dense");
    ck_assert_str_eq(recs[i].config, r1.trials[i].config);
    ck_assert_str_eq(recs[i].status, "ok");
    ck_assert_int_eq(recs[i].index, r1.trials[i].index);
    ck_assert_int_eq(recs[i].ncosts, 1);
    ck_assert_str_eq(recs[i].version, "0.1.0");
    if (recs[i].gflops > recs[fastest].gflops) fastest = i;
  }
  ck_assert_int_eq(fastest, r1.best);

  /* apply-best: the fastest record's config */
  void *cfg = tec_ctx_alloc(ctx, tsp.config_size);
  const char *warning;
  ck_assert_int_eq(tune_apply_best(ctx, rec, "dense", "m=64,n=64,k=64", NULL, &tsp, cfg, &warning, 0), 1);
  ck_assert_ptr_null(warning);
  ck_assert_str_eq(tune_config_str(ctx, &tsp, cfg), r1.trials[r1.best].config);

  /* a corrupt line is reported (file:line) and skipped; a much faster record of another
   * target is never applied */
  char *all = tu_read_file(rec, NULL);
  char *line2 = strchr(all, '\n') + 1;
  char *line3 = strchr(line2, '\n') + 1;
  FILE *f = fopen(rec, "w");
  fwrite(all, 1, (size_t)(line3 - all), f);
  fputs("{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\n", f); /* line 3: cut short */
  fputs(line3, f);
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"rasp4b\",\"template\":\"dense\",\"config\":"
             "\"mr=1 nr=16 ku=1 jb=1 parallel=0 pack=0\",\"status\":\"ok\",\"gflops\":99999}\n");
  fclose(f);
  free(all);
  char *warn_text = NULL;
  size_t wlen = 0;
  FILE *w = open_memstream(&warn_text, &wlen);
  ck_assert_int_eq(tune_records_load(ctx, rec, w, &recs, &n), 0);
  fclose(w);
  ck_assert_int_eq(n, 8);
  char want[256];
  snprintf(want, sizeof want, "%s:3: skipped: expected a string\n", rec);
  ck_assert_str_eq(warn_text, want);
  free(warn_text);
  ck_assert_int_eq(tune_apply_best(ctx, rec, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 1);
  ck_assert_str_eq(tune_config_str(ctx, &tsp, cfg), r1.trials[r1.best].config);

  /* only another target's record: the default, with a warning naming the workload */
  char other[128];
  snprintf(other, sizeof other, "%s/other.jsonl", dir);
  f = fopen(other, "w");
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"rasp4b\",\"template\":\"dense\",\"config\":"
             "\"mr=1 nr=16 ku=1 jb=1 parallel=0 pack=0\",\"status\":\"ok\",\"gflops\":99999}\n");
  fclose(f);
  const char *defstr = tune_config_str(ctx, &tsp, tsp.default_config);
  ck_assert_int_eq(tune_apply_best(ctx, other, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 0);
  ck_assert_str_eq(warning, tec_ctx_printf(ctx, "tune: no record for dense k=64,m=64,n=64 on target '%s' in %s (1 record for "
                                                "other targets such as 'rasp4b', never applied); using the default config %s",
                                           task.target, other, defstr));
  ck_assert_int_eq(memcmp(cfg, tsp.default_config, tsp.config_size), 0);
  /* no record of this workload at all */
  ck_assert_int_eq(tune_apply_best(ctx, rec, "dense", "k=32,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 0);
  ck_assert_str_eq(warning, tec_ctx_printf(ctx, "tune: no record for dense k=32,m=64,n=64 in %s; using the default config %s",
                                           rec, defstr));
  /* a record whose config the space refuses */
  f = fopen(other, "w");
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"%s\",\"template\":\"dense\",\"config\":"
             "\"mr=99\",\"status\":\"ok\",\"gflops\":5}\n", task.target);
  fclose(f);
  ck_assert_int_eq(tune_apply_best(ctx, other, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 0);
  tu_assert_contains(warning, "tune: the best record for dense k=64,m=64,n=64 in ");
  tu_assert_contains(warning, ", config 'mr=99', does not fit this template's space (dense: knob 'mr' = 99 is not legal");
  tu_assert_contains(warning, tec_ctx_printf(ctx, "); using the default config %s", defstr));
  ck_assert_int_eq(memcmp(cfg, tsp.default_config, tsp.config_size), 0);
  /* an unreadable file is an error */
  ck_assert_int_eq(tune_apply_best(ctx, "/nonexistent/r.jsonl", "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tune: cannot read the records file /nonexistent/r.jsonl: ");
  tec_ctx_clear_error(ctx);

  /* run 2, same seed: the same trial order; trial 2's candidate made wrong by the hook and
   * trial 4's slowed past the time-out: error records, never the best */
  hook_ctl h = {.wrong = r1.trials[2].index, .slow = r1.trials[4].index};
  char rec2[128];
  snprintf(rec2, sizeof rec2, "%s/r2.jsonl", dir);
  tune_options o2 = small_options(rec2, &refs);
  o2.hook = hook, o2.hook_user = &h;
  tune_result r2;
  ck_assert_msg(tune_run(ctx, &task, &o2, &r2) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r2.ntrials, 7);
  for (int i = 0; i < 7; i++) ck_assert_int_eq(r2.trials[i].index, r1.trials[i].index);
  ck_assert_int_eq(r2.trials[2].status, TUNE_WRONG);
  tu_assert_contains(r2.trials[2].error, "wrong output: element 2048 is ");
  tu_assert_contains(r2.trials[2].error, "(tolerance 0.001 * (1 + |reference|))");
  ck_assert_int_eq(r2.trials[4].status, TUNE_TIMEOUT);
  tu_assert_contains(r2.trials[4].error, "time-out of 1 s");
  if (!getenv("TEC_TEST_EMULATED")) /* forked: the hanging run is killed */
    ck_assert_str_eq(r2.trials[4].error, "a run did not finish within the time-out of 1 s (killed)");
  ck_assert_int_eq(r2.trials[2].gflops, 0);
  ck_assert(r2.best != 2 && r2.best != 4 && r2.best >= 0);
  ck_assert_int_eq(r2.trials[r2.best].status, TUNE_OK);
  ck_assert_int_eq(tune_records_load(ctx, rec2, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 7);
  ck_assert_str_eq(recs[2].status, "wrong");
  ck_assert_str_eq(recs[2].error, r2.trials[2].error);
  ck_assert_str_eq(recs[4].status, "timeout");
  ck_assert_int_eq(tune_apply_best(ctx, rec2, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 1);
  ck_assert_str_eq(tune_config_str(ctx, &tsp, cfg), r2.trials[r2.best].config);

  /* another seed: another order (7 draws from 4608 configs) */
  tune_options o3 = small_options(NULL, &refs);
  o3.seed = 6, o3.trials = 3;
  tune_result r3;
  ck_assert_msg(tune_run(ctx, &task, &o3, &r3) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r3.trials[0].index, r1.trials[0].index);
  ck_assert(r3.trials[1].index != r1.trials[1].index || r3.trials[2].index != r1.trials[2].index);
  tune_result_free(&r1), tune_result_free(&r2), tune_result_free(&r3);
  tec_ctx_free(ctx);
}
END_TEST

static int count_of(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static double median_of(const double *c, int n) {
  double v[TUNE_MAX_COSTS];
  memcpy(v, c, sizeof *v * (size_t)n);
  for (int i = 0; i < n; i++) /* insertion sort: independent of the library's qsort */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The confirmation stage: the fastest distinct trials measured again side by side, one cost a
 * round, recorded with "stage":"confirm" and preferred by apply-best; tune_compare's refusals,
 * and a config made wrong or slow there. */
START_TEST(confirm_stage) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, &task);
  tune_space tsp;
  ck_assert_int_eq(topi_space_of(ctx, "dense", &dense_prob, NULL, &tsp), 0);
  char rec[128], csv[128];
  snprintf(rec, sizeof rec, "%s/c.jsonl", dir);
  snprintf(csv, sizeof csv, "%s/c.csv", dir);
  int refs = 0;
  tune_options o = small_options(rec, &refs);
  o.confirm = 3, o.confirm_rounds = 20, o.csv = csv; /* more rounds than a trial has repeats */
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 7);
  /* the 3 fastest trials (all configs distinct here), fastest first, then the default (trial
   * 1) when it is not among them */
  int order[7];
  for (int i = 0; i < 7; i++) order[i] = i;
  for (int i = 0; i < 7; i++)
    for (int j = i; j > 0 && r.trials[order[j]].median < r.trials[order[j - 1]].median; j--) {
      int t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  int def_in_top = order[0] == 0 || order[1] == 0 || order[2] == 0, nc = def_in_top ? 3 : 4;
  ck_assert_int_eq(r.nconfirmed, nc);
  int best = -1;
  for (int i = 0; i < nc; i++) {
    const tune_trial *c = &r.confirmed[i], *tr = &r.trials[i < 3 ? order[i] : 0];
    ck_assert_msg(c->status == TUNE_OK, "confirmation %d: %s", i, c->error);
    ck_assert_int_eq(c->index, tr->index);
    ck_assert_str_eq(c->config, tr->config);
    ck_assert_int_eq(c->confirmed, 1);
    ck_assert_int_eq(c->ncosts, 20);
    ck_assert_double_eq(c->median, median_of(c->costs, 20));
    ck_assert_double_eq_tol(c->gflops, 2.0 * M * M * M / c->median * 1e-9, 1e-6 * c->gflops);
    if (best < 0 || c->median < r.confirmed[best].median) best = i;
  }
  ck_assert_int_eq(r.best_confirmed, best);
  ck_assert_int_eq(refs, 1); /* the stage checks against the same reference output */
  /* recorded: 7 trials, then the confirmations */
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 7 + nc);
  for (int i = 0; i < n; i++) ck_assert_int_eq(recs[i].confirmed, i >= 7);
  ck_assert_int_eq(recs[7 + best].index, r.confirmed[best].index);
  ck_assert_int_eq(recs[7].ncosts, 20); /* every round's cost read back */
  for (int i = 0; i < 20; i++) ck_assert_double_eq_tol(recs[7].costs[i], r.confirmed[0].costs[i], 1e-5 * r.confirmed[0].costs[i]);
  char *text = tu_read_file(rec, NULL);
  ck_assert_int_eq(count_of(text, ",\"stage\":\"confirm\""), nc);
  free(text);
  text = tu_read_file(csv, NULL);
  ck_assert_int_eq(count_of(text, "\nconfirm,"), nc);
  free(text);
  /* apply-best: the confirmed best, even beside a faster trial record of another config */
  void *cfg = tec_ctx_alloc(ctx, tsp.config_size);
  const char *warning;
  int other = r.confirmed[best].index == r.trials[0].index ? 1 : 0;
  FILE *f = fopen(rec, "a");
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"%s\",\"template\":\"dense\",\"config\":\"%s\","
             "\"status\":\"ok\",\"gflops\":99999}\n", task.target, r.trials[other].config);
  fclose(f);
  ck_assert_int_eq(tune_apply_best(ctx, rec, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 1);
  ck_assert_str_eq(tune_config_str(ctx, &tsp, cfg), r.confirmed[best].config);
  /* without confirmations that trial record wins */
  char rec1[128];
  snprintf(rec1, sizeof rec1, "%s/c1.jsonl", dir);
  f = fopen(rec1, "w");
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"%s\",\"template\":\"dense\",\"config\":\"%s\","
             "\"status\":\"ok\",\"gflops\":99999}\n", task.target, r.trials[other].config);
  fprintf(f, "{\"workload\":\"dense k=64,m=64,n=64\",\"target\":\"%s\",\"template\":\"dense\",\"config\":\"%s\","
             "\"status\":\"ok\",\"gflops\":5,\"stage\":\"trial\"}\n", task.target, r.confirmed[best].config);
  fclose(f);
  ck_assert_int_eq(tune_apply_best(ctx, rec1, "dense", "k=64,m=64,n=64", NULL, &tsp, cfg, &warning, 0), 1);
  ck_assert_str_eq(tune_config_str(ctx, &tsp, cfg), r.trials[other].config);

  /* tune_compare: one config made wrong, one slowed past the time-out, one fine */
  hook_ctl h = {.wrong = r.trials[1].index, .slow = r.trials[2].index};
  tune_options co = small_options(NULL, &refs);
  co.hook = hook, co.hook_user = &h;
  int64_t idx[3] = {r.trials[0].index, r.trials[1].index, r.trials[2].index};
  tune_trial out[3];
  ck_assert_msg(tune_compare(ctx, &task, &co, idx, 3, 4, out) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(out[0].status == TUNE_OK, "%s", out[0].error);
  ck_assert_int_eq(out[0].ncosts, 4);
  ck_assert_int_eq(out[1].status, TUNE_WRONG);
  tu_assert_contains(out[1].error, "wrong output: element 2048 is ");
  ck_assert_int_eq(out[1].ncosts, 0);
  ck_assert_int_eq(out[2].status, TUNE_TIMEOUT);
  tu_assert_contains(out[2].error, "over the time-out of 1 s");
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(out[i].confirmed, 1);
    tune_trial_free(&out[i]);
  }
  /* refusals */
  ck_assert_int_eq(tune_compare(ctx, &task, &co, idx, 0, 4, out), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "tune_compare: 0 configs; 1 to 16 are measured side by side");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_compare(ctx, &task, &co, idx, 3, 65, out), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "tune_compare: 65 rounds; 1 to 64 are legal");
  tec_ctx_clear_error(ctx);
  int64_t bad[1] = {tune_space_range(task.space)};
  ck_assert_int_eq(tune_compare(ctx, &task, &co, bad, 1, 4, out), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), tec_ctx_printf(ctx, "tune_compare: config index %lld is not in dense k=64,m=64,n=64's space (0 to %lld)",
                                                      (long long)bad[0], (long long)bad[0] - 1));
  tec_ctx_clear_error(ctx);
  tune_remote rem = {0};
  co.remote = &rem;
  ck_assert_int_eq(tune_compare(ctx, &task, &co, idx, 3, 4, out), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tune_compare: measures here");
  tec_ctx_clear_error(ctx);
  tune_options bo = small_options(NULL, &refs);
  bo.confirm = 17;
  tune_result rb;
  ck_assert_int_eq(tune_run(ctx, &task, &bo, &rb), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "tune: confirm is 17; it must be 0 (no confirmation stage) to 16 configs, or -1 (8; none with remote)");
  tec_ctx_clear_error(ctx);
  bo.confirm = 2, bo.confirm_rounds = 0;
  ck_assert_int_eq(tune_run(ctx, &task, &bo, &rb), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "tune: confirm_rounds is 0; it must be 1 to 64");
  tec_ctx_clear_error(ctx);
  bo.confirm_rounds = 3, bo.remote = &rem;
  ck_assert_int_eq(tune_run(ctx, &task, &bo, &rb), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tune: confirm is 2 with remote measurement;");
  tec_ctx_clear_error(ctx);
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* grid: indices in order after the default; the space exhausted ends the run early */
START_TEST(grid_and_bad_options) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  const topi_softmax sm = {.m = 4, .n = 8};
  ck_assert_int_eq(tune_task_topi(ctx, topi_template_find("softmax"), &sm, "m=4,n=8", NULL, &task), 0);
  ck_assert_int_eq(tune_space_size(task.space), 4); /* vectorize x parallel */
  tune_options o = tune_options_default();
  o.tuner = "grid", o.trials = 10, o.repeats = 1;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 4);
  ck_assert_int_eq(r.trials[0].index, task.default_index);
  int64_t next = 0;
  for (int i = 1; i < 4; i++, next++) {
    if (next == task.default_index) next++;
    ck_assert_int_eq(r.trials[i].index, next);
    ck_assert_msg(r.trials[i].status == TUNE_OK, "%s", r.trials[i].error);
  }
  tune_result_free(&r);
  o.trials = 0;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: trials is 0; it must be >= 1");
  tec_ctx_clear_error(ctx);
  o.trials = 2, o.tuner = "annealing";
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: unknown tuner 'annealing'; the tuners are grid, random, anneal, xgb");
  tec_ctx_clear_error(ctx);
  o.tuner = "random", o.repeats = 17;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: warmup 1, repeats 17; warmup must be >= 0 and repeats 1..16");
  tec_ctx_clear_error(ctx);
  o.repeats = 1, o.records = "/nonexistent/dir/r.jsonl";
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tune: cannot open the records file /nonexistent/dir/r.jsonl: ");
  tec_ctx_free(ctx);
}
END_TEST

/* min_repeat_ms: each timed cost repeats the call until it lasts that long (counted through the
 * hook, called after every call in the measuring process: fork 0); 0 is one call per cost; a
 * negative value or one past 1000 * the time-out is refused */
static void count_calls(void *user, int64_t index, float *out, int64_t nout) {
  (void)out, (void)nout;
  if (index >= 0) (*(int64_t *)user)++; /* the candidate's calls, not the anchor's (-1) */
}

START_TEST(min_repeat_ms) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  const topi_softmax sm = {.m = 4, .n = 8}; /* well under a microsecond a call */
  ck_assert_int_eq(tune_task_topi(ctx, topi_template_find("softmax"), &sm, "m=4,n=8", NULL, &task), 0);
  tune_options o = tune_options_default();
  int64_t calls = 0;
  o.tuner = "grid", o.trials = 1, o.warmup = 1, o.repeats = 3, o.fork = 0, o.overlap = 0;
  o.hook = count_calls, o.hook_user = &calls, o.confirm = 0;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.trials[0].status, TUNE_OK);
  ck_assert(r.trials[0].anchor_s == 0);
  int64_t plain = calls; /* the reference's run(s) and warmup + repeats */
  ck_assert_int_le(plain, 1 + 3 + 2);
  tune_result_free(&r);
  calls = 0, o.min_repeat_ms = 2.0, o.anchor = 0; /* raw costs: the calls' own time */
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.trials[0].status, TUNE_OK);
  ck_assert(r.trials[0].anchor_s == 0);
  /* after the warm-up, calibration calls until a run lasts 2 ms, then 3 timed runs of that many
   * calls each: the calls past those made without cover 3 x 2 ms at the calls' mean time (at
   * least half of it: timing noise) */
  ck_assert(r.trials[0].ncosts == 3);
  int64_t extra = calls - plain + 3;
  ck_assert_msg(extra >= 3 * 2, "%lld calls with min_repeat_ms 2, %lld without", (long long)calls,
                (long long)plain);
  for (int k = 0; k < r.trials[0].ncosts; k++) /* a cost is the mean of its run's calls */
    ck_assert_msg((double)extra * r.trials[0].costs[k] >= 3e-3 && r.trials[0].costs[k] < 1e-3,
                  "%lld calls past the plain ones, a call %g s", (long long)extra,
                  r.trials[0].costs[k]);
  tune_result_free(&r);
  o.anchor = -1; /* the default: anchored with min_repeat_ms (not without, above) */
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(r.trials[0].status == TUNE_OK && r.trials[0].anchor_s > 0, "%s", r.trials[0].error);
  tune_result_free(&r);
  o.min_repeat_ms = -1;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: min_repeat_ms is -1; it must be 0 (one call per cost) to 1000 * the "
                  "time-out (1000 ms)");
  tec_ctx_clear_error(ctx);
  o.min_repeat_ms = 1500;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: min_repeat_ms is 1500; it must be 0 (one call per cost) to 1000 * the "
                  "time-out (1000 ms)");
  ck_assert_int_eq(tune_calls_per_cost(0, 1e-6), 1);
  ck_assert_int_eq(tune_calls_per_cost(2.0, 1e-4), 20);
  ck_assert_int_eq(tune_calls_per_cost(2.0, 1.0), 1);
  ck_assert_int_eq(tune_calls_per_cost(1000.0, 0), 100000);
  tec_ctx_free(ctx);
}
END_TEST

/* Anchored trials (tune_options.anchor), in simulated time (tune_options.clock): every call
 * of a candidate or of the anchor (index -1) advances the clock by that config's cost. A slow
 * spell from the first call of one candidate until another candidate's calls begin makes every
 * call (the candidate's and the anchor's) twice as long: the anchor's time in the record says
 * so, and the cost stays. Then only the anchor slowed, threefold: the cost falls to a third
 * (scaled by the anchor, not against it). Simulated, the arithmetic is checked exactly,
 * whatever else the machine runs (it was a timed test, flaky on a loaded machine). */
typedef struct spell {
  int64_t index, last; /* the candidate slowed; the candidate whose calls come now */
  int64_t anchor;      /* the anchor's config (the default): it costs ANCHOR_COST */
  double extra;        /* the slow-down, as a fraction of the call's time */
  int anchor_only;     /* 1: only the anchor's calls */
  double now;          /* the simulated clock, seconds */
} spell;
#define ANCHOR_COST 4e-6

/* A config's simulated cost per call: the anchor's, or 1.5x / 2x / 2.5x it. */
static double config_cost(const spell *s, int64_t index) {
  return index < 0 || index == s->anchor ? ANCHOR_COST : ANCHOR_COST * (1.5 + 0.5 * (double)(index % 3));
}

static void spell_hook(void *user, int64_t index, float *out, int64_t nout) {
  (void)out, (void)nout;
  spell *s = user;
  if (index >= 0) s->last = index;
  double dt = config_cost(s, index);
  if (s->last == s->index && (index < 0 || !s->anchor_only)) dt *= 1.0 + s->extra;
  s->now += dt;
}

static double spell_clock(void *user) { return ((spell *)user)->now; }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The median cost of config idx among r's trials (-1 if absent or failed). */
static double median_of_config(const tune_result *r, int64_t idx, const tune_trial **t) {
  for (int i = 0; i < r->ntrials; i++)
    if (r->trials[i].index == idx) {
      *t = &r->trials[i];
      return r->trials[i].status == TUNE_OK ? r->trials[i].median : -1;
    }
  return -1;
}

START_TEST(anchored_trials) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, &task);
  char rec[128];
  snprintf(rec, sizeof rec, "%s/anchor.jsonl", dir);
  int refs = 0;
  tune_options o = small_options(rec, &refs);
  o.trials = 4, o.warmup = 1, o.repeats = 5, o.min_repeat_ms = 1.0, o.fork = 0, o.overlap = 0;
  tune_result quiet, spelled, dist;
  spell sp = {.index = -100, .last = -2, .anchor = task.default_index};
  const tune_trial *tq = NULL, *ts = NULL, *td = NULL;
  o.hook = spell_hook, o.hook_user = &sp, o.clock = spell_clock, o.records = rec;
  remove(rec);
  ck_assert_msg(tune_run(ctx, &task, &o, &quiet) == 0, "%s", tec_ctx_error(ctx));
  sp = (spell){.index = quiet.trials[2].index, .last = -2, .anchor = task.default_index,
               .extra = 1.0};
  o.records = NULL; /* the third trial in a 2x spell */
  ck_assert_msg(tune_run(ctx, &task, &o, &spelled) == 0, "%s", tec_ctx_error(ctx));
  sp.last = -2, sp.extra = 2.0, sp.anchor_only = 1; /* the anchor alone, 3x, beside it */
  ck_assert_msg(tune_run(ctx, &task, &o, &dist) == 0, "%s", tec_ctx_error(ctx));
  double cq = median_of_config(&quiet, sp.index, &tq), cs = median_of_config(&spelled, sp.index, &ts),
         cd = median_of_config(&dist, sp.index, &td);
  ck_assert_msg(cq > 0 && cs > 0 && cd > 0, "%s / %s / %s", tq ? tq->error : "absent", ts ? ts->error : "absent",
                td ? td->error : "absent");
  /* quiet: the cost is the config's own (anchored against an anchor at its base) */
  ck_assert_double_eq_tol(cq, config_cost(&sp, sp.index), 1e-3 * cq);
  if (getenv("TEC_TEST_VERBOSE"))
    fprintf(stderr, "anchored_trials: %g s; in a spell %g s (x%.2f; the anchor x%.2f its base); beside a slowed "
            "anchor %g s (x%.2f; the anchor x%.2f)\n", cq, cs, cs / cq, ts->anchor_s / ts->anchor_base_s, cd, cd / cq,
            td->anchor_s / td->anchor_base_s);
  /* the spell: the anchor saw it, the cost did not */
  ck_assert_double_eq_tol(ts->anchor_s, 2.0 * ts->anchor_base_s, 1e-3 * ts->anchor_s);
  ck_assert_double_eq_tol(cs, cq, 1e-3 * cq);
  /* the anchor alone 3x slower: the cost is scaled by it (a third), not against it */
  ck_assert_double_eq_tol(td->anchor_s, 3.0 * td->anchor_base_s, 1e-3 * td->anchor_s);
  ck_assert_double_eq_tol(cd, cq / 3.0, 1e-3 * cq);
  for (int i = 0; i < quiet.ntrials; i++) { /* every trial anchored, one base a run */
    const tune_trial *t = &quiet.trials[i];
    ck_assert_msg(t->status == TUNE_OK, "%s", t->error);
    ck_assert_int_eq(t->ncosts, 5);
    ck_assert(t->anchor_s > 0 && t->anchor_base_s > 0);
    ck_assert_double_eq(t->anchor_base_s, quiet.trials[0].anchor_base_s);
  }
  /* the default config is the anchor: its trial costs its base */
  ck_assert_int_eq(quiet.trials[0].index, task.default_index);
  ck_assert_double_eq_tol(quiet.trials[0].median, quiet.trials[0].anchor_base_s, 1e-3 * quiet.trials[0].median);
  ck_assert_double_eq_tol(quiet.trials[0].anchor_base_s, ANCHOR_COST, 1e-3 * ANCHOR_COST);
  char *text = tu_read_file(rec, NULL);
  ck_assert_int_eq(count_of(text, ",\"anchor_s\":"), 4);
  ck_assert_int_eq(count_of(text, ",\"anchor_base_s\":"), 4);
  free(text);
  tune_record *recs; /* read back */
  int nrec;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &nrec), 0);
  ck_assert_int_eq(nrec, 4);
  for (int i = 0; i < 4; i++) {
    ck_assert_double_eq_tol(recs[i].anchor_s, quiet.trials[i].anchor_s, 1e-5 * quiet.trials[i].anchor_s);
    ck_assert_double_eq_tol(recs[i].anchor_base_s, quiet.trials[i].anchor_base_s, 1e-5 * quiet.trials[i].anchor_base_s);
  }
  tune_result_free(&quiet), tune_result_free(&spelled), tune_result_free(&dist);
  /* refusals */
  tune_result r;
  o.anchor = 2;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  assert_err(ctx, "tune: anchor is 2; it must be 1 (the default config timed beside each candidate), 0 (not) "
                  "or -1 (1 when measured here with min_repeat_ms > 0)");
  tec_ctx_clear_error(ctx);
  tune_remote rem = {0};
  o.anchor = 1, o.remote = &rem;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tune: anchor is 1 with remote measurement; the hosts time each candidate "
                                         "alone");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- a schedule of one's own ---------------- */

/* C = A x B, 32 x 32 x 32: j split by a power-of-two knob, the three loops (i, j.outer,
 * j.inner) reordered by a candidate list and annotated (i parallel or not; j.inner unrolled,
 * vectorized or neither). */
#define U 32
typedef struct mm {
  te_tensor *a, *b;
  const ir_expr *k;
} mm;

static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

/* C = A x B (U x U x U), A and B in *a, *b. */
static te_tensor *mm_decl(tec_ctx *ctx, te_tensor **a, te_tensor **b) {
  const ir_expr *n = ir_int(ctx, U);
  *a = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, n});
  *b = te_placeholder(ctx, "B", TEC_F32, 2, (const ir_expr *[]){n, n});
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  if (!m) return NULL;
  *m = (mm){*a, *b, te_reduce_axis(ctx, "k", ir_int(ctx, 0), n)};
  return te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                            .shape = (const ir_expr *[]){n, n},
                                            .body = mm_body, .user = m});
}

static lower_func *mm_lower(const tune_task *task, tec_ctx *ctx, int64_t index, const char **cfg, const char **trace) {
  const tune_space *sp = task->space;
  te_tensor *A, *B, *C = mm_decl(ctx, &A, &B);
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *loops[3];
  loops[0] = sch_axis(st, 0);
  if (tune_sch_split(st, sch_axis(st, 1), tune_space_get(sp, index, 0), 2, loops + 1) != 0 ||
      tune_sch_reorder(st, 3, loops, tune_space_get(sp, index, 1)) != 0 ||
      tune_sch_annotate(st, 3, loops, tune_space_get(sp, index, 2)) != 0)
    return NULL;
  if (cfg) *cfg = tune_space_config_str(ctx, sp, index);
  if (trace) *trace = NULL;
  return tec_lower(s, "mm", 3, (te_tensor *[]){A, B, C});
}

static int mm_ref(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout) {
  tu_ref_matmul(args[0]->data, args[1]->data, out, U, U, U);
  return 0;
}

START_TEST(own_schedule) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_split(sp, "tile_j", U, 2, TUNE_SPLIT_POWER2, 0, NULL), 0); /* 1..32: 6 */
  const int orders[] = {0, 1, 2, 1, 0, 2};                                               /* i outer or j.outer outer */
  ck_assert_int_eq(tune_define_reorder(sp, "order", 3, 2, orders), 1);
  const unsigned ann[] = {TUNE_ANN_NONE | TUNE_ANN_PARALLEL, TUNE_ANN_NONE,
                          TUNE_ANN_NONE | TUNE_ANN_UNROLL | TUNE_ANN_VECTORIZE};
  ck_assert_int_eq(tune_define_annotate(sp, "ann", 3, ann), 2);
  ck_assert_int_eq(tune_space_size(sp), 6 * 2 * 6);
  tune_task task = {.template_name = "my_matmul", .problem = "n=32", .workload = "my_matmul n=32",
                    .target = tec_target_str(ctx, NULL), .space = sp, .flops = 2.0 * U * U * U,
                    .default_index = -1, .lower = mm_lower};
  tune_options o = tune_options_default();
  o.trials = 5, o.repeats = 1, o.seed = 9, o.reference = mm_ref;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 5);
  ck_assert_int_eq(r.trials[0].index, 0);
  ck_assert_str_eq(r.trials[0].config, "tile_j=[32,1] order=[0,1,2] ann=[none,none,none]");
  for (int i = 0; i < 5; i++) /* every candidate computes the naive product */
    ck_assert_msg(r.trials[i].status == TUNE_OK, "%s: %s", r.trials[i].config, r.trials[i].error);
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* annealing on measurements: distinct candidates, each correct; from the third round on each
 * chain's proposal is one knob away from a config measured before (a neighbour), unless the
 * chain had to restart (none can in a 72-config space with 20 trials) */
static int knob_distance(const tune_space *sp, int64_t a, int64_t b) {
  int64_t ka[8], kb[8];
  ck_assert_int_eq(tune_space_decode(sp, a, ka), 0);
  ck_assert_int_eq(tune_space_decode(sp, b, kb), 0);
  int d = 0;
  for (int k = 0; k < sp->nknobs; k++) d += ka[k] != kb[k];
  return d;
}

START_TEST(anneal_tuner) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_split(sp, "tile_j", U, 2, TUNE_SPLIT_POWER2, 0, NULL), 0);
  const int orders[] = {0, 1, 2, 1, 0, 2};
  ck_assert_int_eq(tune_define_reorder(sp, "order", 3, 2, orders), 1);
  const unsigned ann[] = {TUNE_ANN_NONE | TUNE_ANN_PARALLEL, TUNE_ANN_NONE,
                          TUNE_ANN_NONE | TUNE_ANN_UNROLL | TUNE_ANN_VECTORIZE};
  ck_assert_int_eq(tune_define_annotate(sp, "ann", 3, ann), 2);
  tune_task task = {.template_name = "my_matmul", .problem = "n=32", .workload = "my_matmul n=32",
                    .target = tec_target_str(ctx, NULL), .space = sp, .flops = 2.0 * U * U * U,
                    .default_index = -1, .lower = mm_lower};
  tune_options o = tune_options_default();
  o.tuner = "anneal", o.trials = 20, o.batch = 4, o.repeats = 1, o.seed = 5, o.reference = mm_ref;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 20);
  ck_assert_int_eq(r.trials[0].index, 0); /* the default first */
  for (int i = 0; i < 20; i++) {
    ck_assert_msg(r.trials[i].status == TUNE_OK, "%s: %s", r.trials[i].config, r.trials[i].error);
    for (int j = 0; j < i; j++) ck_assert(r.trials[j].index != r.trials[i].index);
  }
  /* rounds: the default, then 4 chain starts (1..4), then 4 neighbours per round (5..) */
  for (int i = 5; i < 20; i++) {
    int near = 0;
    for (int j = 0; j < i - ((i - 5) % 4) && !near; j++)
      near = knob_distance(sp, r.trials[j].index, r.trials[i].index) == 1;
    ck_assert_msg(near, "trial %d (%s) is no neighbour of an earlier round's config", i,
                  r.trials[i].config);
  }
  ck_assert_int_ge(r.best, 0);
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* the cost-model tuner: without XGBoost, the message naming the package; with it
 * (libxgboost-dev found at configure time), random until 8 trials have features, then the model's proposals */
START_TEST(xgb_tuner) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  make_task(ctx, &task);
  tune_options o = tune_options_default();
  o.tuner = "xgb", o.trials = 12, o.batch = 4, o.repeats = 1, o.seed = 3;
  tune_result r;
  if (!tune_have_xgb()) {
    ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
    tu_assert_contains(tec_ctx_error(ctx), "libxgboost-dev");
    tec_ctx_free(ctx);
    return;
  }
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 12);
  for (int i = 0; i < 12; i++) {
    ck_assert_msg(r.trials[i].status == TUNE_OK, "%s: %s", r.trials[i].config, r.trials[i].error);
    ck_assert_ptr_nonnull(r.trials[i].features);
    for (int j = 0; j < i; j++) ck_assert(r.trials[j].index != r.trials[i].index);
  }
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- the build time-out ---------------- */

/* mm's C = A x B (U = 32), one candidate per value of knob "heavy", built by the task's build
 * function (tune_task.build): heavy 1 stands for a build that blows up (LLVM's time on a huge
 * unrolled body, which is machine-dependent: 17-40 s on one machine, under 3 s on another) by
 * sleeping 60 s before it builds, far past the 3 s time-out below; 0 builds at once (tens of
 * milliseconds). user: an int counting the build function's calls in this process. */
static lower_func *heavy_lower(const tune_task *task, tec_ctx *ctx, int64_t index, const char **cfg,
                               const char **trace) {
  te_tensor *A, *B, *C = mm_decl(ctx, &A, &B);
  sch_schedule *s = sch_create(ctx, 1, &C);
  if (cfg) *cfg = tune_space_config_str(ctx, task->space, index);
  if (trace) *trace = NULL;
  return tec_lower(s, "mm", 3, (te_tensor *[]){A, B, C});
}

static tec_module *heavy_build(const tune_task *task, tec_ctx *ctx, int64_t index, lower_func *f) {
  ++*(int *)task->user;
  if (tune_space_get(task->space, index, 0)[0] == 1) {
    struct timespec left = {60, 0};
    while (nanosleep(&left, &left) != 0) {
    }
  }
  return tec_build(ctx, 1, &f, task->target_arg);
}

/* A build function that fails without saying why. */
static tec_module *mute_build(const tune_task *task, tec_ctx *ctx, int64_t index, lower_func *f) {
  (void)task, (void)ctx, (void)index, (void)f;
  return NULL;
}

/* r holds n trials, every one a build error with exactly this message, none the best; freed. */
static void all_build_errors(tune_result *r, int n, const char *error) {
  ck_assert_int_eq(r->ntrials, n);
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(r->trials[i].status, TUNE_BUILD_ERROR);
    ck_assert_str_eq(r->trials[i].error, error);
  }
  ck_assert_int_eq(r->best, -1);
  tune_result_free(r);
}

static void heavy_task(tec_ctx *ctx, tune_task *task, int *calls) {
  tune_space *sp = tune_space_new(ctx);
  const int64_t vals[] = {0, 1, 0, 0};
  ck_assert_int_eq(tune_define_knob(sp, "heavy", 4, vals, NULL), 0);
  *task = (tune_task){.template_name = "heavy", .problem = "n=32", .workload = "heavy n=32",
                      .target = tec_target_str(ctx, NULL), .space = sp, .flops = 2.0 * U * U * U,
                      .default_index = 0, .lower = heavy_lower, .user = calls, .build = heavy_build};
}

/* A build past the build time-out is killed (fork on): an error record naming the time-out,
 * and the tuner goes on to the next candidate and finishes. Without fork the build is not
 * held to it (docs: it runs to its end). The task's build function is called where the build
 * happens (the child, or this process); one failing without a message gets one; remote
 * measurement refuses it. */
START_TEST(build_timeout) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  int calls = 0;
  heavy_task(ctx, &task, &calls);
  char records[128];
  snprintf(records, sizeof records, "%s/heavy.jsonl", dir);
  tune_options o = tune_options_default();
  o.tuner = "grid", o.trials = 4, o.batch = 2, o.repeats = 1, o.warmup = 0, o.reference = mm_ref;
  o.records = records;
  tune_result r;
  if (!getenv("TEC_TEST_EMULATED")) {
    /* the heavy candidate (index 1) killed at 3 s; the light ones before and after it built */
    o.fork = 1, o.build_timeout = 3.0;
    double t0 = now_s();
    ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
    double took = now_s() - t0;
    ck_assert_int_eq(r.ntrials, 4);
    for (int i = 0; i < 4; i++) {
      ck_assert_int_eq(r.trials[i].index, i);
      if (i == 1) {
        ck_assert_int_eq(r.trials[i].status, TUNE_BUILD_ERROR);
        ck_assert_str_eq(r.trials[i].error, "build took longer than 3 s (killed)");
        ck_assert_double_ge(r.trials[i].build_seconds, 3.0);
        ck_assert_double_lt(r.trials[i].build_seconds, 3.0 + 1.0);
      } else {
        ck_assert_msg(r.trials[i].status == TUNE_OK, "%d: %s", i, r.trials[i].error);
        ck_assert_double_gt(r.trials[i].build_seconds, 0.0);
        ck_assert_double_lt(r.trials[i].build_seconds, 3.0);
      }
    }
    ck_assert_int_ne(r.best, 1);
    ck_assert_double_lt(took, 30.0); /* the heavy build did not run to its end */
    ck_assert_int_eq(r.nconfirmed, 3); /* the three that built, again side by side */
    for (int i = 0; i < 3; i++) ck_assert_int_ne(r.confirmed[i].index, 1);
    ck_assert_int_eq(calls, 0);      /* every build ran in a child, the confirmation's too */
    tune_result_free(&r);
    /* the record says so */
    tune_record *recs;
    int nrec;
    ck_assert_int_eq(tune_records_load(ctx, records, stderr, &recs, &nrec), 0);
    ck_assert_int_eq(nrec, 4 + 3);
    ck_assert_str_eq(recs[1].status, "build");
    ck_assert_str_eq(recs[1].error, "build took longer than 3 s (killed)");
    ck_assert_str_eq(recs[3].status, "ok");
    /* tune_compare holds its forked child to the build time-out too: the heavy config is a
     * build error, the others were not measured */
    tune_options co = o;
    co.build_timeout = 2.0, co.records = NULL;
    tune_trial out[3];
    t0 = now_s();
    ck_assert_msg(tune_compare(ctx, &task, &co, (const int64_t[]){0, 1, 2}, 3, 2, out) == 0, "%s", tec_ctx_error(ctx));
    ck_assert_double_lt(now_s() - t0, 30.0);
    ck_assert_int_eq(out[1].status, TUNE_BUILD_ERROR);
    ck_assert_str_eq(out[1].error, "build took longer than 2 s (killed)");
    for (int i = 0; i < 3; i += 2) {
      ck_assert_int_eq(out[i].status, TUNE_RUN_ERROR);
      ck_assert_str_eq(out[i].error, "not measured: the process measuring the configs side by side was killed building config 2 of 3");
    }
    for (int i = 0; i < 3; i++) tune_trial_free(&out[i]);
    ck_assert_int_eq(calls, 0);
    /* a tiny time-out: every build killed, every trial recorded, the run still returns 0 */
    o.build_timeout = 0.001, o.records = NULL, o.overlap = 0;
    task.default_index = 0;
    ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
    all_build_errors(&r, 4, "build took longer than 0.001 s (killed)");
  }
  /* without fork: built in the tuner's process, to the end (the light ones only here) */
  const int64_t light[] = {0, 0};
  tune_space *sp = tune_space_new(ctx);
  ck_assert_int_eq(tune_define_knob(sp, "heavy", 2, light, NULL), 0);
  task.space = sp;
  o.fork = 0, o.build_timeout = 0.001, o.records = NULL;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(r.ntrials, 2);
  for (int i = 0; i < 2; i++) ck_assert_msg(r.trials[i].status == TUNE_OK, "%s", r.trials[i].error);
  ck_assert_int_eq(r.nconfirmed, 2);
  ck_assert_int_eq(calls, 2 + 2); /* the trials' builds and the confirmation's: the task's function */
  tune_result_free(&r);
  /* a build function that fails without a message: each trial a build error that says so */
  task.build = mute_build;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  all_build_errors(&r, 2, "tune: heavy n=32: the task's build function failed without a message");
  /* remote measurement builds its own objects: a task with a build function is refused */
  tune_remote ro = {.nhosts = 1, .hosts = (const char *const[]){"localhost"}, .runtime = "x"};
  o.remote = &ro;
  ck_assert_int_ne(tune_run(ctx, &task, &o, &r), 0);
  tu_assert_contains(tec_ctx_error(ctx), "cannot use the task's build function");
  tec_ctx_clear_error(ctx);
  o.remote = NULL;
  /* a build time-out that is not > 0 is refused, naming it */
  o.build_timeout = 0;
  ck_assert_int_ne(tune_run(ctx, &task, &o, &r), 0);
  ck_assert_ptr_nonnull(strstr(tec_ctx_error(ctx), "the build time-out is 0 s; it must be > 0"));
  tec_ctx_free(ctx);
}
END_TEST

/* A template's rule carried into the tune space: the size is the product less the pruned, every
 * index allowed exactly when the topi space gives its config as in the space, and the printout
 * names the pruned count and the rule (MobileNet pw12 on AVX-512: 18432 combinations, 1464 in). */
START_TEST(topi_rule_space) {
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d p = {.n = 1, .c_in = 512, .h = 7, .w = 7, .c_out = 1024, .kh = 1, .kw = 1, .stride_h = 1,
                   .stride_w = 1, .groups = 1, .in_layout = {TOPI_NCHWC, 16}, .out_layout = {TOPI_NCHWC, 16},
                   .epi = {.bias = 1, .act = TOPI_ACT_RELU6}};
  const char *x86 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
  tune_task task;
  ck_assert_msg(tune_task_topi(ctx, topi_template_find("conv2d_nchwc"), &p, "pw12", x86, &task) == 0, "%s",
                tec_ctx_error(ctx));
  tune_space tsp;
  ck_assert_int_eq(topi_space_of(ctx, "conv2d_nchwc", &p, tec_target_parse(ctx, x86), &tsp), 0);
  ck_assert_int_eq(tune_space_range(task.space), 18432);
  ck_assert_int_eq(tune_space_size(task.space), 1464);
  topi_conv2d_nchwc_config c;
  int64_t in = 0;
  for (int64_t i = 0; i < 18432; i++) {
    int a = tune_space_allows(task.space, i);
    ck_assert_int_eq(a, tune_space_config(&tsp, i, &c) == 0);
    in += a;
  }
  ck_assert_int_eq(in, 1464);
  ck_assert_int_eq(tune_space_allows(task.space, -1), 0);
  ck_assert_int_eq(tune_space_allows(task.space, 18432), 0);
  ck_assert_int_eq(tune_space_allows(task.space, task.default_index), 1);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  tune_space_print(f, task.space);
  fclose(f);
  tu_assert_contains(text, "space: 8 knobs, 1464 configs (16968 of the knobs' 18432 combinations pruned by the rule: "
                           "registers: ow_tile*oh_reg*oc_tiles*1 + oc_tiles*1 + 1 <= 32; unrolled "
                           "body:");
  free(text);
  tec_ctx_free(ctx);
}
END_TEST

/* The cost-model tuner's exploration picks (tune_explore_fill), in a space of knob a (2
 * values) and b (4). Six trials: a never 1, b tried {2, 2, 2, 0} times. The value owed most is
 * a = 1 (6/2 - 0 = 3, against b = 3's 1.5): put into the model's best config, or its
 * next when that one is visited or already picked; when neither can take it as it is, the
 * best is repaired (b moved one step); b = 3 comes once no config with a = 1 is left. A value
 * tried TUNE_EXPLORE_OWED_MAX times is owed no more, whatever its share. */
static int64_t ab(const tune_space *sp, int64_t a, int64_t b) {
  return tune_space_encode(sp, (int64_t[]){a, b});
}

/* the history: trials (a, b) = pairs[i], all visited */
static void explore_history(const tune_space *sp, const int (*pairs)[2], int n, tune_trial *tr, tune_visited *vis) {
  ck_assert_int_eq(tune_visited_init(vis, tune_space_range(sp)), 0);
  memset(tr, 0, sizeof *tr * (size_t)n);
  for (int i = 0; i < n; i++) {
    tr[i].index = ab(sp, pairs[i][0], pairs[i][1]);
    ck_assert_int_eq(tune_visited_add(vis, tr[i].index), 0);
  }
}

START_TEST(explore_picks) {
  ck_assert_int_eq(TUNE_EXPLORE_OWED_MAX, 6);
  tec_ctx *ctx = tec_ctx_new();
  tune_space *sp = tune_space_new(ctx);
  const int64_t vals[4] = {0, 1, 2, 3};
  ck_assert_int_eq(tune_define_knob(sp, "a", 2, vals, NULL), 0);
  ck_assert_int_eq(tune_define_knob(sp, "b", 4, vals, NULL), 1);
  tune_task task = {.space = sp};
  tune_visited vis;
  tune_trial tr[16];
  explore_history(sp, (const int[][2]){{0, 0}, {0, 0}, {0, 1}, {0, 1}, {0, 2}, {0, 2}}, 6, tr, &vis);
  tune_history h = {.task = &task, .trials = tr, .ntrials = 6, .visited = &vis};
  const int64_t top[2] = {ab(sp, 0, 1), ab(sp, 0, 2)};
  int64_t out[4];
  ck_assert_int_eq(tune_explore_fill(&h, top, 2, out, 0, 1), 1);
  ck_assert_int_eq(out[0], ab(sp, 1, 1));
  /* picked already: the model's second best takes a = 1 */
  ck_assert_int_eq(tune_explore_fill(&h, top, 2, out, 1, 1), 2);
  ck_assert_int_eq(out[1], ab(sp, 1, 2));
  /* (1, 1) visited, (1, 2) picked: the best repaired, b one step down */
  ck_assert_int_eq(tune_visited_add(&vis, ab(sp, 1, 1)), 0);
  out[0] = ab(sp, 1, 2);
  ck_assert_int_eq(tune_explore_fill(&h, top, 2, out, 1, 1), 2);
  ck_assert_int_eq(out[1], ab(sp, 1, 0));
  /* every config with a = 1 taken: b = 3 (owed 7/4 less the pick's 1) into the best */
  ck_assert_int_eq(tune_visited_add(&vis, ab(sp, 1, 0)), 0);
  ck_assert_int_eq(tune_visited_add(&vis, ab(sp, 1, 2)), 0);
  out[0] = ab(sp, 1, 3);
  ck_assert_int_eq(tune_explore_fill(&h, top, 2, out, 1, 1), 2);
  ck_assert_int_eq(out[1], ab(sp, 0, 3));
  /* no best config to put a value into: no pick */
  ck_assert_int_eq(tune_explore_fill(&h, top, 0, out, 0, 2), 0);
  tune_visited_free(&vis);
  /* sixteen trials, a = 1 in six (a share of 8 but owed 6), each b in four: nothing owed */
  explore_history(sp, (const int[][2]){{0, 0}, {0, 0}, {0, 0}, {0, 1}, {0, 1}, {0, 1}, {0, 2}, {0, 2}, {0, 3}, {0, 3},
                                       {1, 0}, {1, 1}, {1, 2}, {1, 2}, {1, 3}, {1, 3}}, 16, tr, &vis);
  h.ntrials = 16;
  ck_assert_int_eq(tune_explore_fill(&h, top, 2, out, 0, 2), 0);
  tune_visited_free(&vis);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tune");
  TCase *tc = tcase_create("tune");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, split_counts);
  tcase_add_test(tc, reorder_annotate_knob);
  tcase_add_test(tc, field_knobs);
  tcase_add_test(tc, records_before_space);
  tcase_add_test(tc, bad_knobs);
  tcase_add_test(tc, tune_dense_records);
  tcase_add_test(tc, confirm_stage);
  tcase_add_test(tc, grid_and_bad_options);
  tcase_add_test(tc, min_repeat_ms);
  tcase_add_test(tc, anchored_trials);
  tcase_add_test(tc, own_schedule);
  tcase_add_test(tc, xgb_tuner);
  tcase_add_test(tc, explore_picks);
  tcase_add_test(tc, anneal_tuner);
  tcase_add_test(tc, build_timeout);
  tcase_add_test(tc, topi_rule_space);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
