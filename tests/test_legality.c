/* test_legality.c — lowering only reads the schedule; the pragma table; the legality passes.
 * - A schedule lowered twice gives the same program, and its stages (attach points, leaves,
 *   loop kinds, pragmas) are the same before and after, also when the prepare/run split
 *   computes an attached constant stage at root and when lowering refuses the schedule; a
 *   primitive applied after a lowering acts on the schedule as written.
 * - The pragma table: listed in order, unknown keys and values of the wrong kind refused with
 *   the legal ones named, and each key's consuming pass really removes (acts on) it.
 * - check_schedule and legality sit around infer_bounds in the pipeline table. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tec/build.h"
#include "schedule/internal.h"
#include "schedule/pragma.h"

/* ---- a snapshot of everything lowering could be tempted to write ---- */
typedef struct stage_snap {
  sch_attach_kind attach;
  const sch_stage *attach_stage;
  const sch_iter *attach_iter;
  int nleaf, nrel, nalign;
  const sch_iter *leaf[16];
  ir_for_kind kind[16];
  int npragma[16], nprefetch[16], dead[16];
} stage_snap;
typedef struct snap {
  int nstage;
  stage_snap st[8];
} snap;

static snap take(const sch_schedule *s) {
  snap n;
  memset(&n, 0, sizeof n);
  ck_assert_int_le(s->nstage, 8);
  n.nstage = s->nstage;
  for (int i = 0; i < s->nstage; i++) {
    const sch_stage *st = s->stages[i];
    stage_snap *x = &n.st[i];
    x->attach = st->attach, x->attach_stage = st->attach_stage, x->attach_iter = st->attach_iter;
    x->nleaf = st->nleaf, x->nrel = st->nrel, x->nalign = st->nalign;
    ck_assert_int_le(st->nleaf, 16);
    for (int k = 0; k < st->nleaf; k++) {
      x->leaf[k] = st->leaf[k];
      x->kind[k] = st->leaf[k]->for_kind;
      x->npragma[k] = st->leaf[k]->npragma;
      x->nprefetch[k] = st->leaf[k]->nprefetch;
      x->dead[k] = st->leaf[k]->dead;
    }
  }
  return n;
}

static void same(const snap *a, const snap *b) {
  ck_assert_int_eq(a->nstage, b->nstage);
  for (int i = 0; i < a->nstage; i++) {
    const stage_snap *x = &a->st[i], *y = &b->st[i];
    ck_assert_int_eq(x->attach, y->attach);
    ck_assert_ptr_eq(x->attach_stage, y->attach_stage);
    ck_assert_ptr_eq(x->attach_iter, y->attach_iter);
    ck_assert_int_eq(x->nleaf, y->nleaf);
    ck_assert_int_eq(x->nrel, y->nrel);
    ck_assert_int_eq(x->nalign, y->nalign);
    for (int k = 0; k < x->nleaf; k++) {
      ck_assert_ptr_eq(x->leaf[k], y->leaf[k]);
      ck_assert_int_eq(x->kind[k], y->kind[k]);
      ck_assert_int_eq(x->npragma[k], y->npragma[k]);
      ck_assert_int_eq(x->nprefetch[k], y->nprefetch[k]);
      ck_assert_int_eq(x->dead[k], y->dead[k]);
    }
  }
}

/* C[i, j] = sum_k A[i, k] * Bp[j/8, k, j%8], Bp[jo, k, ji] = B[k, jo*8 + ji] with B constant:
 * Bp computed at C's jo loop, which the prepare/run split computes whole in prepare */
typedef struct mm { te_tensor *a, *b, *bp; const ir_expr *k; } mm;
static const ir_expr *pack_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return TE_AT(m->b, i[1], ir_add(ir_mul(i[0], ir_int(ctx, 8)), i[2]));
}
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  const ir_expr *b = TE_AT(m->bp, ir_div(i[1], ir_int(ctx, 8)), m->k, ir_mod(i[1], ir_int(ctx, 8)));
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), b), 1, &m->k, NULL);
}

typedef struct mm_sched {
  sch_schedule *s;
  sch_stage *sc, *sp;
  sch_iter *jo, *ji;
  te_tensor *args[3];
} mm_sched;

static mm_sched make_mm(tec_ctx *ctx) {
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  m->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 6, 5));
  m->b = te_const_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 5, 16));
  m->k = te_reduce_axis_n(ctx, "k", 5);
  m->bp = te_compute(ctx, &(te_compute_decl){"Bp", 3, TE_SHAPE(ctx, 2, 5, 8), pack_body, m,
                                              NULL, NULL});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, TE_SHAPE(ctx, 6, 16), mm_body, m,
                                                     NULL, NULL});
  mm_sched r = {.s = sch_create(ctx, 1, &C)};
  r.sc = sch_stage_of(r.s, C);
  r.sp = sch_stage_of(r.s, m->bp);
  OK(ctx, sch_split(r.sc, sch_axis(r.sc, 1), 8, &r.jo, &r.ji));
  OK(ctx, sch_reorder(r.sc, 4, (sch_iter *[]){r.jo, sch_axis(r.sc, 0), sch_reduce_axis(r.sc, 0), r.ji}));
  OK(ctx, sch_compute_at(r.sp, r.sc, r.jo));
  OK(ctx, sch_vectorize(r.sc, r.ji));
  r.args[0] = m->a, r.args[1] = m->b, r.args[2] = C;
  return r;
}

static const char *lower_text(const sch_schedule *s, const char *name, te_tensor *const *args) {
  lower_func *f = tec_lower(s, name, 3, args); /* a const schedule, without a cast */
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(s->ctx));
  return tec_lower_str(f);
}

START_TEST(lowering_twice_same_program) {
  tec_ctx *ctx = tec_ctx_new();
  mm_sched m = make_mm(ctx);
  const sch_schedule *cs = m.s;
  snap before = take(cs);
  const char *first = lower_text(cs, "mm", m.args);
  snap after = take(cs);
  same(&before, &after);
  /* the split moved Bp to root in prepare, in the lowering's own view only */
  ck_assert_int_eq(m.sp->attach, SCH_ATTACH_SCOPE);
  ck_assert_ptr_eq(m.sp->attach_iter, m.jo);
  tu_assert_contains(first, "// note: precompute: 'Bp' is computed at loop 'j.outer' of 'C'");
  tu_assert_contains(first, "func mm_prepare(");
  const char *second = lower_text(cs, "mm", m.args);
  ck_assert_str_eq(first, second);
  snap again = take(cs);
  same(&before, &again);
  /* the schedule as written: without the split, Bp is produced inside j.outer */
  sch_set_precompute(m.s, 0);
  const char *whole = lower_text(cs, "mm", m.args);
  assert_not_contains(whole, "mm_prepare");
  const char *jo = strstr(whole, "for (j.outer"), *bp = strstr(whole, "produce Bp");
  ck_assert_msg(jo && bp && jo < bp, "Bp is not produced inside j.outer:\n%s", whole);
  sch_set_precompute(m.s, 1);
  ck_assert_str_eq(lower_text(cs, "mm", m.args), first);
  /* a primitive after lowering acts on the schedule as written; lowering sees it */
  OK(ctx, sch_parallel(m.sc, m.jo));
  const char *par = lower_text(cs, "mm", m.args);
  ck_assert_str_ne(par, first);
  tu_assert_contains(par, "parallel");
  snap later = take(cs);
  ck_assert_int_eq(later.st[0].attach, before.st[0].attach);
  ck_assert_str_eq(lower_text(cs, "mm", m.args), par);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(refused_lowering_writes_nothing) {
  tec_ctx *ctx = tec_ctx_new();
  mm_sched m = make_mm(ctx);
  sch_iter *i = m.sc->leaf[1];
  /* parallel_dynamic on a serial loop: refused by check_schedule */
  OK(ctx, sch_pragma(m.sc, i, "parallel_dynamic", NULL));
  snap before = take(m.s);
  ck_assert_ptr_null(tec_lower(m.s, "mm", 3, m.args));
  assert_err(ctx, "tec_lower 'mm_run': pragma parallel_dynamic on loop 'i' of stage 'C': the "
                  "loop is serial, not parallel; it chooses how a parallel loop's iterations are "
                  "shared out, so call sch_parallel on the loop or drop the pragma");
  snap after = take(m.s);
  same(&before, &after);
  tec_ctx_clear_error(ctx);
  /* made legal afterwards, it lowers */
  OK(ctx, sch_parallel(m.sc, i));
  lower_text(m.s, "mm", m.args);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- the pragma table ---- */
START_TEST(pragma_table_listed) {
  static const char *const keys[] = {"auto_unroll_max_step", "debug_skip_region",
                                     "parallel_dynamic", "parallel_launch_point",
                                     "sched_pressure", "stream_store", "tensorize",
                                     "transpose_block", "unroll",
                                     "user_<name>"};
  int n = 0;
  const sch_pragma_desc *d;
  for (; (d = sch_pragma_desc_at(n)); n++) {
    ck_assert_int_lt(n, 10);
    ck_assert_str_eq(d->key, keys[n]);
    ck_assert_msg(d->doc && strlen(d->doc) > 10, "row %d has no doc", n);
    ck_assert_ptr_nonnull(sch_pragma_value_kind_name(d->value));
    if (!d->pass) {
      ck_assert_str_eq(d->key, "user_<name>"); /* only the annotations act on nothing */
      continue;
    }
    /* the consumer is a pass of the pipeline table, or code generation */
    int found = strcmp(d->pass, "codegen") == 0;
    const char *p;
    for (int i = 0; (p = tec_lower_pass_name(i, NULL, NULL)); i++) found |= strcmp(p, d->pass) == 0;
    ck_assert_msg(found, "pragma '%s': pass '%s' is not in the pipeline", d->key, d->pass);
  }
  ck_assert_int_eq(n, 10);
  ck_assert_ptr_null(sch_pragma_desc_at(-1));
  ck_assert_int_eq(sch_pragma_desc_at(0)->value, SCH_PRAGMA_VALUE_COUNT);
  ck_assert_int_eq(sch_pragma_desc_at(2)->value, SCH_PRAGMA_VALUE_COUNT_OR_NONE);
  ck_assert_int_eq(sch_pragma_desc_at(4)->value, SCH_PRAGMA_VALUE_NONE);
  ck_assert_int_eq(sch_pragma_desc_at(5)->value, SCH_PRAGMA_VALUE_NONE);
  ck_assert_int_eq(sch_pragma_desc_at(6)->value, SCH_PRAGMA_VALUE_COUNT);
  ck_assert_int_eq(sch_pragma_desc_at(7)->value, SCH_PRAGMA_VALUE_NONE);
  ck_assert_str_eq(sch_pragma_value_kind_name(SCH_PRAGMA_VALUE_NONE), "no value");
}
END_TEST

static const ir_expr *ew_double(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2));
}

typedef struct ew { tec_ctx *ctx; te_tensor *A, *C; sch_schedule *s; sch_stage *sc; } ew;
static ew make_ew(void) {
  ew e = {.ctx = tec_ctx_new()};
  e.A = te_placeholder(e.ctx, "A", TEC_F32, 2, TE_SHAPE(e.ctx, 8, 4));
  e.C = te_compute(e.ctx, &(te_compute_decl){"C", 2, e.A->shape, ew_double, e.A, NULL, NULL});
  e.s = sch_create(e.ctx, 1, &e.C);
  e.sc = sch_stage_of(e.s, e.C);
  return e;
}

START_TEST(pragma_wrong_key_or_value) {
  ew e = make_ew();
  tec_ctx *ctx = e.ctx;
  sch_iter *i = sch_axis(e.sc, 0);
  const char *known = "known keys: auto_unroll_max_step, debug_skip_region, parallel_dynamic, "
                      "parallel_launch_point, sched_pressure, stream_store, tensorize, "
                      "transpose_block, unroll, or user_<name> (kept in the "
                      "lowered IR as an annotation, with no effect)";
  ck_assert_int_eq(sch_pragma(e.sc, i, "unroll_all", NULL), -1);
  assert_err(ctx, tec_ctx_printf(ctx, "pragma: key 'unroll_all' on loop 'i' of stage 'C' has no "
                                      "effect in tec; %s", known));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(e.sc, i, "", NULL), -1);
  assert_err(ctx, tec_ctx_printf(ctx, "pragma: loop 'i' of stage 'C': the key is empty; %s", known));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(e.sc, i, "Unroll", NULL), -1);
  assert_err(ctx, "pragma: key 'Unroll' on loop 'i' of stage 'C' must use lower-case letters, "
                  "digits and '_'");
  tec_ctx_clear_error(ctx);
  /* a key that takes no value */
  ck_assert_int_eq(sch_pragma(e.sc, i, "unroll", ir_int(ctx, 3)), -1);
  assert_err(ctx, "pragma: unroll on loop 'i' of stage 'C' takes no value (pass NULL), not 3");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(e.sc, i, "parallel_launch_point", ir_float(ctx, 1.5)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "parallel_launch_point on loop 'i' of stage 'C' takes "
                                         "no value (pass NULL), not 1.5");
  tec_ctx_clear_error(ctx);
  /* a count: a float, a negative one, a missing one */
  ck_assert_int_eq(sch_pragma(e.sc, i, "auto_unroll_max_step", ir_float(ctx, 4)), -1);
  assert_err(ctx, "pragma: auto_unroll_max_step on loop 'i' of stage 'C' needs a constant "
                  "integer value >= 0");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(e.sc, i, "auto_unroll_max_step", ir_int(ctx, -1)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "needs a constant integer value >= 0");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_pragma(e.sc, i, "debug_skip_region", ir_int(ctx, 0)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "debug_skip_region on loop 'i' of stage 'C' takes no value");
  tec_ctx_clear_error(ctx);
  /* nothing was recorded by the refused calls; a user_ key takes any value */
  ck_assert_int_eq(i->npragma, 0);
  OK(ctx, sch_pragma(e.sc, i, "user_x", ir_float(ctx, 0.5)));
  OK(ctx, sch_pragma(e.sc, i, "user_y", NULL));
  ck_assert_int_eq(i->npragma, 2);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- every key is consumed by the pass the table names ---- */
typedef struct watch {
  const char *attr;   /* "pragma_<key>" */
  int seen_after_ops; /* present after schedule_ops */
  int gone_after;     /* absent after the consuming pass (its index + 1), 0: never */
  const char *pass;
  int passes, present_last, loops_after_ops;
} watch;

static void observe(void *user, const lower_func *f, const char *pass, const ir_stmt *body) {
  (void)f;
  watch *w = user;
  if (strcmp(pass, "entry_checks") == 0) return; /* the entry's own program */
  const char *txt = ir_stmt_str(body);
  int has = txt && strstr(txt, w->attr) != NULL;
  w->passes++;
  if (strcmp(pass, "schedule_ops") == 0) {
    w->seen_after_ops = has;
    w->loops_after_ops = txt && strstr(txt, "for (") != NULL;
  }
  if (w->pass && strcmp(pass, w->pass) == 0 && !has) w->gone_after = w->passes;
  w->present_last = has;
}

/* TVM's pragma keys (schedule/pragma_tvm.c): the two tec honours by what it always does are
 * accepted (no annotation left, the program computes C = 2 A, parallel or not), a value tec
 * cannot honour and the keys it cannot are refused naming tec's equivalent. One check per key. */
START_TEST(pragma_tvm_keys) {
  static const struct {
    const char *key;
    int value; /* -1: none */
    int parallel;
    const char *want; /* NULL: accepted */
  } cases[] = {
      {"unroll_explicit", 1, 0, NULL},
      {"unroll_explicit", -1, 0, NULL},
      {"unroll_explicit", 0, 0, "pragma: TVM's unroll_explicit = 0 on loop 'i' of stage 'C': tec's "
                                "unrolling is always explicit in the IR (auto_unroll_max_step, sch_unroll"},
      {"parallel_barrier_when_finish", -1, 1, NULL},
      {"parallel_barrier_when_finish", 2, 1, "pragma: TVM's parallel_barrier_when_finish = 2 on loop"},
      {"parallel_stride_pattern", -1, 1, "pragma: TVM's parallel_stride_pattern on loop 'i' of stage "
                                         "'C' has no tec meaning: tec shares a parallel loop out in one "
                                         "contiguous static range per thread, or with pragma parallel_dynamic"},
      {"import_llvm", -1, 0, "pragma: TVM's import_llvm on loop 'i' of stage 'C' has no tec meaning: "
                             "tec embeds no foreign LLVM IR in a loop: write the body as a tec stage"},
      {"import_c", -1, 0, "has no tec meaning: tec embeds no foreign C in a loop"},
      {"loop_partition_hint", -1, 0, "has no tec meaning: tec partitions a loop by itself where a "
                                     "condition in its body is marked ir_likely()"},
  };
  int keys_seen = 0;
  for (size_t n = 0; n < sizeof cases / sizeof *cases; n++) {
    ew e = make_ew();
    tec_ctx *ctx = e.ctx;
    sch_iter *i = sch_axis(e.sc, 0);
    if (cases[n].parallel) OK(ctx, sch_parallel(e.sc, i));
    const ir_expr *v = cases[n].value >= 0 ? ir_int(ctx, cases[n].value) : NULL;
    int rc = sch_pragma(e.sc, i, cases[n].key, v);
    if (cases[n].want) {
      ck_assert_msg(rc == -1, "%s: accepted", cases[n].key);
      tu_assert_contains(tec_ctx_error(ctx), cases[n].want);
    } else {
      ck_assert_msg(rc == 0, "%s: %s", cases[n].key, tec_ctx_error(ctx));
      lower_func *f = tec_lower(e.s, "k", 2, (te_tensor *[]){e.A, e.C});
      ck_assert_msg(f != NULL, "%s: %s", cases[n].key, tec_ctx_error(ctx));
      ck_assert_msg(!strstr(tec_lower_str(f), cases[n].key), "%s left in:\n%s", cases[n].key,
                    tec_lower_str(f));
      tec_module *m = tec_build(ctx, 1, &f, NULL);
      ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
      int64_t sh[2] = {8, 4};
      DLTensor a = tu_rand_f32(2, sh, 5), c = tu_zeros(TEC_F32, 2, sh);
      ck_assert_msg(tec_module_run(m, "k", 2, (DLTensor *[]){&a, &c}) == 0, "%s", tec_rt_last_error());
      for (int k = 0; k < 32; k++) ck_assert(tu_f32(&c)[k] == 2 * tu_f32(&a)[k]);
      tec_dl_free(&a), tec_dl_free(&c);
    }
    tec_ctx_free(ctx);
  }
  /* every key of the table has a case above */
  for (int k = 0; k < sch_pragma_tvm_count(); k++) {
    int found = 0;
    for (size_t n = 0; n < sizeof cases / sizeof *cases; n++) found |= !strcmp(cases[n].key, sch_pragma_tvm_key(k));
    ck_assert_msg(found, "TVM key %s has no case", sch_pragma_tvm_key(k));
    keys_seen++;
  }
  ck_assert_int_eq(keys_seen, 6);
  ck_assert_ptr_null(sch_pragma_tvm_key(6));
}
END_TEST

START_TEST(pragma_each_key_consumed) {
  const sch_pragma_desc *d;
  for (int n = 0; (d = sch_pragma_desc_at(n)); n++) {
    if (!d->pass || strcmp(d->key, "tensorize") == 0) continue; /* tensorize needs an int8
                                                                  * reduction: test_tensorize */
    ew e = make_ew();
    tec_ctx *ctx = e.ctx;
    sch_iter *i = sch_axis(e.sc, 0), *j = sch_axis(e.sc, 1);
    const ir_expr *value = d->value == SCH_PRAGMA_VALUE_COUNT ? ir_int(ctx, 64) : NULL;
    int id = n;
    if (strcmp(d->key, "parallel_dynamic") == 0) OK(ctx, sch_parallel(e.sc, i));
    if (strcmp(d->key, "parallel_launch_point") == 0) OK(ctx, sch_parallel(e.sc, j));
    OK(ctx, sch_pragma(e.sc, strcmp(d->key, "unroll") == 0 ? j : i, d->key, value));
    watch w = {.attr = tec_ctx_printf(ctx, "pragma_%s", d->key), .pass = d->pass};
    tec_lower_options o = {.observe = observe, .user = &w};
    lower_func *f = tec_lower_with(e.s, "k", 2, (te_tensor *[]){e.A, e.C}, &o);
    ck_assert_msg(f != NULL, "%s: %s", d->key, tec_ctx_error(ctx));
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s: %s", d->key, tec_ctx_error(ctx));
    if (strcmp(d->pass, "schedule_ops") == 0) { /* debug_skip_region: the loop is gone */
      ck_assert_msg(!w.seen_after_ops && !w.loops_after_ops, "%s: still there", d->key);
    } else if (strcmp(d->pass, "codegen") == 0) { /* kept for code generation */
      ck_assert_msg(w.seen_after_ops && w.present_last, "%s: not kept to codegen", d->key);
    } else {
      ck_assert_msg(w.seen_after_ops, "%s: not in the program after schedule_ops", d->key);
      ck_assert_msg(w.gone_after > 0, "%s: pass '%s' did not consume it", d->key, d->pass);
    }
    /* the numbers: C = 2 A (debug_skip_region drops the work: C stays 0) */
    int64_t sh[2] = {8, 4};
    DLTensor a = tu_rand_f32(2, sh, (unsigned)id + 1), c = tu_zeros(TEC_F32, 2, sh);
    ck_assert_msg(tec_module_run(m, "k", 2, (DLTensor *[]){&a, &c}) == 0, "%s", tec_rt_last_error());
    const float *pa = tu_f32(&a), *pc = tu_f32(&c);
    int skip = strcmp(d->key, "debug_skip_region") == 0;
    for (int k = 0; k < 32; k++)
      ck_assert_msg(pc[k] == (skip ? 0.0f : 2 * pa[k]), "%s: C[%d] = %g", d->key, k, pc[k]);
    tec_dl_free(&a), tec_dl_free(&c);
    tec_module_free(m);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---- the legality passes around bound inference ---- */
START_TEST(legality_passes_in_table) {
  const char *n, *prev = NULL;
  int bounds = -1, i;
  for (i = 0; (n = tec_lower_pass_name(i, NULL, NULL)); i++) {
    if (strcmp(n, "infer_bounds") == 0) {
      bounds = i;
      ck_assert_str_eq(prev, "check_schedule");
    }
    if (bounds >= 0 && i == bounds + 1) ck_assert_str_eq(n, "legality");
    prev = n;
  }
  ck_assert_int_ge(bounds, 0);
  /* stopping right after legality is no program stop: refused by name */
  ew e = make_ew();
  tec_lower_options o = {.stop_after = "legality"};
  ck_assert_ptr_null(tec_lower_with(e.s, "k", 2, (te_tensor *[]){e.A, e.C}, &o));
  tu_assert_contains(tec_ctx_error(e.ctx), "stop_after 'legality' is not a pass of tec_lower "
                                           "that makes a program");
  tec_ctx_free(e.ctx);
}
END_TEST

/* a check that needs ranges (legality): a vectorized loop of symbolic extent, refused after
 * bound inference with the message the primitive's documentation promises. C is not an
 * output (a compute_at could still give it a constant range); on an output the primitive
 * itself refuses it, with the same message (test_limits.c). */
START_TEST(legality_needs_ranges) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){ir_int(ctx, 4), n});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, A->shape, ew_double, A, NULL, NULL});
  te_tensor *D = te_compute(ctx, &(te_compute_decl){"D", 2, A->shape, ew_double, C, NULL, NULL});
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sc = sch_stage_of(s, C);
  OK(ctx, sch_vectorize(sc, sch_axis(sc, 1)));
  snap before = take(s);
  ck_assert_ptr_null(tec_lower(s, "v", 2, (te_tensor *[]){A, D}));
  assert_err(ctx, "vectorize: loop 'j' of stage 'C' has extent n, which is not a constant; "
                  "split it by a constant factor and vectorize the inner loop");
  snap after = take(s);
  same(&before, &after);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("legality");
  TCase *t = tcase_create("read_only");
  tcase_add_test(t, lowering_twice_same_program);
  tcase_add_test(t, refused_lowering_writes_nothing);
  suite_add_tcase(s, t);
  t = tcase_create("pragma_table");
  tcase_add_test(t, pragma_table_listed);
  tcase_add_test(t, pragma_wrong_key_or_value);
  tcase_add_test(t, pragma_each_key_consumed);
  tcase_add_test(t, pragma_tvm_keys);
  suite_add_tcase(s, t);
  t = tcase_create("passes");
  tcase_add_test(t, legality_passes_in_table);
  tcase_add_test(t, legality_needs_ranges);
  suite_add_tcase(s, t);
  return tu_run(s);
}
