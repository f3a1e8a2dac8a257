/* test_autosched_tuned.c — the auto-scheduler's tuned mode without measurement (autosched/
 * space.c, tuned.c, hash.c): the space the rules generate for a matmul with bias and a floor and
 * for a two-stage stencil (its knobs, its default config being the instant schedule), configs
 * across the space applied, built at -O0 and run against the unscheduled program and plain C (0 wrong
 * results), the same config giving the same trace, records keyed by the program's structural
 * hash (a record applies to its program, not to one with an edited constant, nor to another
 * target), and bad input. The tuning run itself is in test_autosched_tune (slow). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "asprog.h"
#include "tec/autosched.h"
#include "testutil.h"

#define TOL 1e-4

static sch_schedule *fresh(const asprog *g) {
  sch_schedule *s = sch_create(g->ctx, 1, (te_tensor *[]){g->args[g->nargs - 1]});
  ck_assert_ptr_nonnull(s);
  return s;
}

static tune_space space_of(const asprog *g) {
  tune_space sp;
  ck_assert_msg(tec_autosched_space(fresh(g), NULL, NULL, &sp) == 0, "%s", tec_ctx_error(g->ctx));
  return sp;
}

static const tune_knob *knob(const tune_space *sp, const char *name) {
  int k = tune_space_find(sp, name);
  ck_assert_msg(k >= 0, "no knob %s", name);
  return &sp->knobs[k];
}

/* 1 if knob kn has a value labelled (or numbered) want */
static int has_value(const tune_knob *kn, const char *want) {
  for (int64_t v = 0; v < kn->nvalues; v++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)kn->values[v]);
    if (!strcmp(kn->labels ? kn->labels[v] : buf, want)) return 1;
  }
  return 0;
}

START_TEST(space_knobs) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g;
  asprog_matmul(&g, ctx, 64, 96, 70, 0);
  tune_space sp = space_of(&g);
  if (getenv("AUTOSCHED_PRINT")) tune_space_print(stderr, &sp);
  /* the tile's register tile and outer block, packing of B, the fusion into E, D's level */
  ck_assert(has_value(knob(&sp, "C.tile_i"), "1") && has_value(knob(&sp, "C.tile_i"), "8"));
  ck_assert(has_value(knob(&sp, "C.tile_j"), "16") || has_value(knob(&sp, "C.tile_j"), "8"));
  ck_assert(has_value(knob(&sp, "C.block_i"), "2"));
  asprog wide; /* 200 columns: 4 tiles of 64, in groups of 1 or 2 inside the row tile */
  asprog_matmul(&wide, ctx, 64, 200, 70, 0);
  tune_space ws = space_of(&wide);
  ck_assert(has_value(knob(&ws, "C.block_j"), "1") && has_value(knob(&ws, "C.block_j"), "2"));
  ck_assert_int_lt(tune_space_find(&sp, "C.block_j"), 0); /* 96 columns: 2 tiles, no group */
  ck_assert(has_value(knob(&sp, "C.pack"), "no") && has_value(knob(&sp, "C.pack"), "yes"));
  ck_assert(has_value(knob(&sp, "C.fuse"), "cache_write"));
  ck_assert(has_value(knob(&sp, "D.at"), "inline") && has_value(knob(&sp, "D.at"), "root"));
  ck_assert(has_value(knob(&sp, "C.par"), "serial"));
  ck_assert_int_lt(tune_space_find(&sp, "E.tile_i"), 0); /* the anchor follows its reduction */
  /* the default config is the instant mode's choice */
  const char *def = tune_space_config_str(ctx, &sp, tune_space_default_index(&sp));
  tu_assert_contains(def, "D.at=inline");
  tu_assert_contains(def, "C.pack=yes");
  tu_assert_contains(def, "C.fuse=fused");

  asprog st;
  asprog_stencil(&st, ctx, 45, 70, 1.0 / 9);
  tune_space ss = space_of(&st);
  if (getenv("AUTOSCHED_PRINT")) tune_space_print(stderr, &ss);
  const tune_knob *at = knob(&ss, "bx.at");
  ck_assert(has_value(at, "inline") && has_value(at, "attach") && has_value(at, "root"));
  ck_assert_str_eq(at->labels[at->def], "attach");
  /* the instant choice, a register tile of 8 rows x one vector (rule_attach.c) */
  ck_assert_int_eq(knob(&ss, "by.rows")->values[knob(&ss, "by.rows")->def], 8);
  tec_autosched_report ir;
  ck_assert_int_eq(tec_autoschedule(fresh(&st), NULL, NULL, &ir), 0);
  int64_t lanes = 0;
  for (int i = 0; i < ir.nstages; i++)
    if (!strcmp(ir.stages[i].stage, "by")) lanes = ir.stages[i].choice.vector;
  ck_assert_int_gt(lanes, 1);
  ck_assert_int_eq(knob(&ss, "by.cols")->values[knob(&ss, "by.cols")->def], lanes);
  ck_assert(has_value(knob(&ss, "by.tail"), "guard")); /* 70 columns: a tail for 16 lanes */
  /* the producers stored per tile and computed per row (store_at): off by default */
  const tune_knob *sl = knob(&ss, "by.slide");
  ck_assert(has_value(sl, "no") && has_value(sl, "yes"));
  ck_assert_str_eq(sl->labels[sl->def], "no");
  ck_assert_int_gt(tune_space_size(&ss), 50);

  asprog rs; /* 3 row sums of 1000: rfactored by the instant mode */
  asprog_rowsum(&rs, ctx, 3, 1000, 0.5);
  tune_space sr = space_of(&rs);
  const tune_knob *rf = knob(&sr, "s.rfactor");
  ck_assert(has_value(rf, "no") && has_value(rf, "yes"));
  ck_assert_str_eq(rf->labels[rf->def], "yes");
  tec_ctx_free(ctx);
}
END_TEST

/* the instant schedule's trace and config index's, both as C calls */
static const char *instant_c(const asprog *g) {
  tec_autosched_report rep;
  ck_assert_int_eq(tec_autoschedule(fresh(g), NULL, NULL, &rep), 0);
  return rep.trace_c;
}
static const char *config_c(const asprog *g, int64_t index, const char **config) {
  tec_autosched_report rep;
  ck_assert_msg(tec_autoschedule_config(fresh(g), NULL, NULL, index, &rep) == 0, "%s",
                tec_ctx_error(g->ctx));
  if (config) *config = rep.config;
  return rep.trace_c;
}

START_TEST(default_is_instant) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g[2];
  asprog_matmul(&g[0], ctx, 37, 100, 70, 0);
  asprog_stencil(&g[1], ctx, 45, 70, 1.0 / 9);
  for (int p = 0; p < 2; p++) {
    tune_space sp = space_of(&g[p]);
    ck_assert_str_eq(config_c(&g[p], tune_space_default_index(&sp), NULL), instant_c(&g[p]));
    /* another config: another schedule, the same one twice */
    int64_t other = tune_space_range(&sp) - 1;
    const char *a = config_c(&g[p], other, NULL), *b = config_c(&g[p], other, NULL);
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, instant_c(&g[p]));
  }
  tec_ctx_free(ctx);
}
END_TEST

/* config index of g applied, run and compared with the unscheduled program's output (ref) and
 * plain C's (plain); the larger error */
static double check_config(const asprog *g, int64_t index, DLTensor *dl, const float *ref,
                           const float *plain, const char **cfg) {
  sch_schedule *s = fresh(g);
  tec_autosched_report rep;
  ck_assert_msg(tec_autoschedule_config(s, NULL, NULL, index, &rep) == 0, "%s",
                tec_ctx_error(g->ctx));
  *cfg = rep.config;
  char msg[512];
  DLTensor *out = &dl[g->nargs - 1];
  memset(out->data, 0, sizeof(float) * (size_t)tec_dl_numel(out));
  /* built at -O0: the schedule's lowering is what differs between configs, and a build there
   * costs 5 ms instead of 50 (the tuning suite, test_autosched_tune, builds at -O3) */
  ck_assert_msg(asprog_run(g, s, "llvm -O0", dl, msg, sizeof msg) == 0, "config %s: %s", rep.config,
                msg);
  int64_t n = tec_dl_numel(out);
  double e1 = tu_max_err(tu_f32(out), ref, n), e2 = tu_max_err(tu_f32(out), plain, n);
  return e1 > e2 ? e1 : e2;
}

/* slide=yes: blur_x stored at by's tile loop, computed at its row loop (a sliding window) */
START_TEST(slide_knob_stores_per_tile) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g;
  asprog_stencil(&g, ctx, 45, 70, 1.0 / 9);
  tune_space sp = space_of(&g);
  int64_t kidx[64];
  int k = tune_space_find(&sp, "by.slide");
  ck_assert_int_ge(k, 0);
  tune_space_decode(&sp, tune_space_default_index(&sp), kidx);
  ck_assert_str_eq(sp.knobs[k].labels[kidx[k]], "no");
  assert_not_contains(config_c(&g, tune_space_encode(&sp, kidx), NULL), "sch_store_at(");
  kidx[k] = 1;
  const char *cfg, *c = config_c(&g, tune_space_encode(&sp, kidx), &cfg);
  tu_assert_contains(cfg, "by.slide=yes");
  tu_assert_contains(c, "sch_store_at(");
  /* and it slides: no note (a loop that moves blur_x's rows but cannot slide would make one) */
  sch_schedule *s = fresh(&g);
  ck_assert_int_eq(tec_autoschedule_config(s, NULL, NULL, tune_space_encode(&sp, kidx), NULL), 0);
  lower_func *f = tec_lower(s, "slid", g.nargs, g.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  if (getenv("AUTOSCHED_PRINT")) tec_lower_print(stderr, f);
  ck_assert_msg(f->nnotes == 0, "note: %s", f->nnotes ? f->notes[0] : "");
  tec_lower_free(f);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(configs_differential) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g[3];
  asprog_matmul(&g[0], ctx, 37, 200, 70, 0); /* 4 column tiles: groups of 2 too */
  asprog_stencil(&g[1], ctx, 45, 70, 1.0 / 9);
  asprog_rowsum(&g[2], ctx, 3, 1000, 0.5); /* rfactor: yes / no */
  int tried = 0, wrong = 0;
  for (int p = 0; p < 3; p++) {
    tune_space sp = space_of(&g[p]);
    DLTensor dl[4];
    asprog_args(&g[p], dl, 31);
    char msg[512];
    ck_assert_msg(asprog_run(&g[p], fresh(&g[p]), "llvm -O0", dl, msg, sizeof msg) == 0, "%s", msg);
    int64_t n = tec_dl_numel(&dl[g[p].nargs - 1]);
    float *ref = malloc(sizeof *ref * (size_t)n), *plain = asprog_plain(&g[p], dl);
    memcpy(ref, tu_f32(&dl[g[p].nargs - 1]), sizeof *ref * (size_t)n);
    ck_assert_msg(tu_max_err(ref, plain, n) < TOL, "the unscheduled program against plain C");
    /* every value of every knob, the others at their default, then seeded random configs */
    int64_t def = tune_space_default_index(&sp), kidx[64];
    ck_assert_int_le(sp.nknobs, 64);
    int64_t idx[256];
    int ni = 0;
    for (int k = 0; k < sp.nknobs; k++)
      for (int64_t v = 0; v < sp.knobs[k].nvalues && ni < 200; v++) {
        tune_space_decode(&sp, def, kidx);
        kidx[k] = v;
        idx[ni++] = tune_space_encode(&sp, kidx);
      }
    uint64_t r = 0x2545F4914F6CDD1Dull + (uint64_t)p;
    for (int k = 0; k < 4; k++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      idx[ni++] = (int64_t)(r % (uint64_t)tune_space_range(&sp));
    }
    for (int i = 0; i < ni; i++) {
      const char *cfg;
      double e = check_config(&g[p], idx[i], dl, ref, plain, &cfg);
      tried++;
      if (!(e < TOL)) {
        wrong++;
        fprintf(stderr, "program %d config %s: error %g\n", p, cfg, e);
      }
    }
    free(ref), free(plain);
    asprog_free_args(&g[p], dl);
  }
  if (getenv("AUTOSCHED_PRINT")) fprintf(stderr, "%d configs tried\n", tried);
  ck_assert_int_gt(tried, 40);
  ck_assert_int_eq(wrong, 0);
  tec_ctx_free(ctx);
}
END_TEST

/* a record of g's config index written into path as tune_run writes one */
static void write_record(const asprog *g, const char *path, const char *target, int64_t index) {
  tune_task task;
  ck_assert_msg(tune_task_auto(fresh(g), target, NULL, &task) == 0, "%s", tec_ctx_error(g->ctx));
  tune_trial t = {.index = index, .status = TUNE_OK, .error = "", .ncosts = 1,
                  .costs = {1e-3}, .median = 1e-3, .gflops = 1,
                  .config = tune_space_config_str(g->ctx, task.space, index),
                  .trace = "[]"};
  const char *line = tune_record_json(g->ctx, &task, &t);
  ck_assert_ptr_nonnull(line);
  ck_assert_int_eq(tune_record_append(g->ctx, path, line, 0), 0);
}

START_TEST(records_keyed_by_program) {
  char path[] = "/tmp/tec_autosched_recXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  tec_ctx *ctx = tec_ctx_new(), *ctx2 = tec_ctx_new();
  asprog g, same, edited;
  asprog_matmul(&g, ctx, 37, 100, 70, 0);
  asprog_matmul(&same, ctx2, 37, 100, 70, 0);  /* declared again, in another ctx */
  asprog_matmul(&edited, ctx, 37, 100, 70, 0.5); /* the floor's constant edited */
  tune_space sp = space_of(&g);
  int64_t index = tune_space_range(&sp) - 1;
  write_record(&g, path, NULL, index);
  const char *want_cfg;
  const char *want = config_c(&g, index, &want_cfg);

  tec_autosched_report rep;
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&same), NULL, NULL, path, &rep), 0);
  ck_assert_msg(rep.warning == NULL, "%s", rep.warning);
  ck_assert_str_eq(rep.config, want_cfg);
  ck_assert_str_eq(rep.trace_c, want);

  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&edited), NULL, NULL, path, &rep), 0);
  ck_assert_ptr_nonnull(rep.warning);
  tu_assert_contains(rep.warning, "no record for auto h=");
  ck_assert_str_eq(rep.trace_c, instant_c(&edited));
  tec_autosched_report r1;
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&g), NULL, NULL, path, &r1), 0);
  ck_assert_str_ne(rep.problem, r1.problem);

  /* a record for another target is not applied */
  asprog st;
  asprog_stencil(&st, ctx, 45, 70, 1.0 / 9);
  tune_space ss = space_of(&st);
  write_record(&st, path, "llvm -mtriple=aarch64-linux-gnu -mattr=+neon", tune_space_range(&ss) - 1);
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&st), NULL, NULL, path, &rep), 0);
  ck_assert_ptr_nonnull(rep.warning);
  tu_assert_contains(rep.warning, "other targets");
  ck_assert_str_eq(rep.trace_c, instant_c(&st));
  unlink(path);
  tec_ctx_free(ctx), tec_ctx_free(ctx2);
}
END_TEST

static const ir_expr *twice(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2));
}

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n"), *m = te_size_var(ctx, "m");
  te_tensor *a = te_placeholder(ctx, "a", TEC_F32, 2, (const ir_expr *[]){n, m});
  te_tensor *b = te_compute(ctx, &(te_compute_decl){.name = "b", .ndim = 2,
                                                    .shape = (const ir_expr *[]){n, m},
                                                    .body = twice, .user = a});
  tune_space sp;
  tune_task task;
  /* symbolic sizes without estimates: refused, the size named */
  ck_assert_int_eq(tec_autosched_space(sch_create(ctx, 1, &b), NULL, NULL, &sp), -1);
  tu_assert_contains(tec_ctx_error(ctx), "symbolic sizes 'n', 'm' have no estimate");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_task_auto(sch_create(ctx, 1, &b), NULL, NULL, &task), -1);
  tu_assert_contains(tec_ctx_error(ctx), "have no estimate");
  tec_ctx_clear_error(ctx);
  /* with estimates the space exists, but tuning needs constant sizes: named */
  tec_autosched_options o = {.nestimates = 2,
                             .estimates = (tec_autosched_estimate[]){{"n", 64}, {"m", 80}}};
  ck_assert_int_eq(tec_autosched_space(sch_create(ctx, 1, &b), NULL, &o, &sp), 0);
  ck_assert_int_eq(tune_task_auto(sch_create(ctx, 1, &b), NULL, &o, &task), -1);
  tu_assert_contains(tec_ctx_error(ctx), "has symbolic sizes (n, m)");
  tec_ctx_clear_error(ctx);

  asprog g;
  asprog_matmul(&g, ctx, 16, 32, 20, 0);
  tune_space gs = space_of(&g);
  tec_autosched_report rep;
  int64_t range = tune_space_range(&gs);
  ck_assert_int_eq(tec_autoschedule_config(fresh(&g), NULL, NULL, range, &rep), -1);
  tu_assert_contains(tec_ctx_error(ctx), "is outside the generated space of E");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_autoschedule_config(fresh(&g), NULL, NULL, -1, &rep), -1);
  tec_ctx_clear_error(ctx);
  /* a schedule with primitives applied */
  sch_schedule *s = fresh(&g);
  ck_assert_int_eq(tec_autoschedule(s, NULL, NULL, NULL), 0);
  ck_assert_int_eq(tec_autosched_space(s, NULL, NULL, &gs), -1);
  tu_assert_contains(tec_ctx_error(ctx), "unscheduled program");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&g), NULL, NULL, NULL, &rep), -1);
  tu_assert_contains(tec_ctx_error(ctx), "records is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(&g), NULL, NULL, "/nonexistent/r.jsonl", &rep), -1);
  tu_assert_contains(tec_ctx_error(ctx), "/nonexistent/r.jsonl");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_autoschedule_config(NULL, NULL, NULL, 0, &rep), -1);
  ck_assert_int_eq(tune_task_auto(fresh(&g), "llvm -mcpu=nosuchcpu -mtriple=nope", NULL, &task), -1);
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("autosched_tuned");
  TCase *tc = tcase_create("tuned");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, space_knobs);
  tcase_add_test(tc, default_is_instant);
  tcase_add_test(tc, slide_knob_stores_per_tile);
  tcase_add_test(tc, configs_differential);
  tcase_add_test(tc, records_keyed_by_program);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
