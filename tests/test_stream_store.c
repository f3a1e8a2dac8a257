/* test_stream_store.c — pragma stream_store (lower/stream_store.c, codegen_mem.c) and the
 * auto-scheduler's rule for it (autosched/rule_stream.c). A 3x3 blur (blur_x at the root or
 * at the output's rows, the output blur_y vectorized) with the pragma on blur_y's row loop:
 * exact against plain C at widths that divide the vector and that leave a tail, serial and on
 * two threads; the stores that stream are marked in the program, the others get a note
 * (misaligned rows, a stage that is no argument, an output the function reads, scalar stores),
 * strict mode refuses; a value is refused. The assembly: vmovntps and an sfence on x86
 * (AVX-512 zmm, AVX2 ymm), stnp on AArch64; none without the pragma. The rule: a large output
 * streams, a small one or one whose rows are not whole vectors does not; the tuned space has
 * the knob. */
#include <stdlib.h>
#include "testutil.h"

typedef struct bl {
  tec_ctx *ctx;
  te_tensor *in, *bx, *by;
  sch_schedule *s;
  sch_stage *sx, *sy;
  sch_iter *i; /* blur_y's row loop */
} bl;

static const ir_expr *three(tec_ctx *ctx, const ir_expr *a, const ir_expr *b, const ir_expr *c) {
  return ir_mul(ir_add(ir_add(a, b), c), ir_float(ctx, 1.0 / 3.0));
}
static const ir_expr *bx_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *t = u;
  return three(ctx, TE_AT(t, i[0], i[1]), TE_AT(t, i[0], ir_add(i[1], ir_int(ctx, 1))),
               TE_AT(t, i[0], ir_add(i[1], ir_int(ctx, 2))));
}
static const ir_expr *by_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *t = u;
  return three(ctx, TE_AT(t, i[0], i[1]), TE_AT(t, ir_add(i[0], ir_int(ctx, 1)), i[1]),
               TE_AT(t, ir_add(i[0], ir_int(ctx, 2)), i[1]));
}

static bl declare(int64_t h, int64_t w) {
  bl b = {.ctx = tec_ctx_new()};
  tec_ctx *ctx = b.ctx;
  b.in = te_placeholder(ctx, "input", TEC_F32, 2, TE_SHAPE(ctx, h + 2, w + 2));
  b.bx = te_compute(ctx, &(te_compute_decl){.name = "blur_x", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, h + 2, w), .body = bx_body,
                                            .user = b.in});
  b.by = te_compute(ctx, &(te_compute_decl){.name = "blur_y", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, h, w), .body = by_body,
                                            .user = b.bx});
  ck_assert_msg(b.by != NULL, "%s", tec_ctx_error(ctx));
  b.s = sch_create(ctx, 1, &b.by);
  b.sx = sch_stage_of(b.s, b.bx);
  b.sy = sch_stage_of(b.s, b.by);
  return b;
}

/* blur_y: rows parallel (when par), columns split by lanes (shift_inwards tail), vectorized;
 * blur_x at the root, vectorized the same way, or (at_rows) computed per row of blur_y */
static bl make(int64_t h, int64_t w, int lanes, int par, int at_rows, int pragma) {
  bl b = declare(h, w);
  tec_ctx *ctx = b.ctx;
  sch_iter *jo, *ji;
  b.i = sch_axis(b.sy, 0);
  OK(ctx, sch_split_tail(b.sy, sch_axis(b.sy, 1), lanes, SCH_TAIL_SHIFT_INWARDS, &jo, &ji));
  OK(ctx, sch_vectorize(b.sy, ji));
  if (par) OK(ctx, sch_parallel(b.sy, b.i));
  if (at_rows) OK(ctx, sch_compute_at(b.sx, b.sy, b.i));
  OK(ctx, sch_split_tail(b.sx, sch_axis(b.sx, 1), lanes, SCH_TAIL_SHIFT_INWARDS, &jo, &ji));
  OK(ctx, sch_vectorize(b.sx, ji));
  if (pragma) OK(ctx, sch_pragma(b.sy, b.i, "stream_store", NULL));
  return b;
}

static void count_stream(ir_visitor *v, const ir_stmt *s) {
  if (s->kind == IR_S_ATTR && s->name && !strcmp(s->name, "stream_store")) (*(int *)v->user)++;
  ir_visit_stmt_default(v, s);
}
static int streamed(const lower_func *f) {
  int n = 0;
  ir_visitor v;
  ir_visitor_init(&v, &n);
  v.stmt[IR_S_ATTR] = count_stream;
  ir_visit_stmt(&v, f->body);
  return n;
}

static int has_note(const lower_func *f, const char *sub) {
  for (int k = 0; k < f->nnotes; k++)
    if (strstr(f->notes[k], sub)) return 1;
  return 0;
}

static int host_lanes(void) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *t = tec_target_parse(ctx, NULL);
  int l = t && t->vector_lanes > 1 ? t->vector_lanes : 4;
  tec_ctx_free(ctx);
  return l;
}

/* runs b and checks blur_y against the C blur, bit for bit (the same float operations in the
 * same order) */
static void run_exact(bl *b, int64_t h, int64_t w) {
  lower_func *f = tec_lower(b->s, "blur", 2, (te_tensor *[]){b->in, b->by});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(b->ctx));
  tec_module *m = tec_build(b->ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(b->ctx));
  int64_t si[2] = {h + 2, w + 2}, so[2] = {h, w};
  DLTensor in = tu_rand_f32(2, si, 7), out = tu_zeros(TEC_F32, 2, so);
  ck_assert_msg(tec_module_run(m, "blur", 2, (DLTensor *[]){&in, &out}) == 0, "%s",
                tec_rt_last_error());
  const float *x = tu_f32(&in), *y = tu_f32(&out);
  const float third = (float)(1.0 / 3.0);
  for (int64_t i = 0; i < h; i++)
    for (int64_t j = 0; j < w; j++) {
      float r[3];
      for (int k = 0; k < 3; k++) {
        const float *row = x + (i + k) * (w + 2) + j;
        r[k] = ((row[0] + row[1]) + row[2]) * third;
      }
      float want = ((r[0] + r[1]) + r[2]) * third;
      ck_assert_msg(y[i * w + j] == want, "w %lld: out[%lld, %lld] = %.9g, want %.9g", (long long)w,
                    (long long)i, (long long)j, y[i * w + j], want);
    }
  tec_dl_free(&in), tec_dl_free(&out);
  tec_module_free(m);
}

START_TEST(exact_and_marked) {
  int L = host_lanes();
  /* w = 4L: every row starts a vector (streams); 4L + L/2 and 4L + 3: rows misaligned and a
   * shift_inwards tail (a note, plain stores) */
  int64_t widths[3] = {4 * L, 4 * L + L / 2, 4 * L + 3}, h = 7;
  int emu = tu_emulated(); /* under qemu: the two first widths, parallel, blur_x per row */
  for (int k = 0; k < 3 - emu; k++)
    for (int par = emu; par < 2; par++)
      for (int at_rows = emu; at_rows < 2; at_rows++) {
        bl b = make(h, widths[k], L, par, at_rows, 1);
        lower_func *f = tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by});
        ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
        if (k == 0) {
          ck_assert_int_eq(f->nnotes, 0);
          ck_assert_int_gt(streamed(f), 0);
        } else {
          ck_assert_int_eq(streamed(f), 0);
          ck_assert_msg(has_note(f, "stream_store: a store to 'blur_y' in loop 'i' of stage "
                                    "'blur_y' stays a plain (cached) store: its first element is "
                                    "not known to start"),
                        "w %lld: %d notes, first: %s", (long long)widths[k], f->nnotes,
                        f->nnotes ? f->notes[0] : "-");
        }
        if (par) tec_rt_set_num_threads(2);
        run_exact(&b, h, widths[k]);
        tec_rt_set_num_threads(0);
        tec_ctx_free(b.ctx);
      }
  /* without the pragma: nothing marked, the same numbers */
  bl b = make(h, 4 * L, L, 0, 1, 0);
  lower_func *f = tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by});
  ck_assert_int_eq(streamed(f), 0);
  run_exact(&b, h, 4 * L);
  tec_ctx_free(b.ctx);
}
END_TEST

typedef struct rs {
  te_tensor *A;
  const ir_expr *k;
} rs;
static const ir_expr *row_sum(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  rs *r = u;
  (void)ctx;
  return TE_SUM(TE_AT(r->A, r->k, i[0]), r->k);
}

START_TEST(notes_and_refusals) {
  int L = host_lanes();
  /* the pragma on blur_x at the root: a buffer of the function, read by blur_y */
  bl b = make(4, 4 * L, L, 0, 0, 0);
  OK(b.ctx, sch_pragma(b.sx, sch_axis(b.sx, 0), "stream_store", NULL));
  lower_func *f = tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
  ck_assert_int_eq(streamed(f), 0);
  ck_assert(has_note(f, "stream_store: loop 'i' of stage 'blur_x': the stores to 'blur_x' "
                        "stay plain (cached) stores: it is not an argument of the function"));
  /* strict mode: the note is an error */
  tec_ctx_set_strict(b.ctx, 1);
  ck_assert_ptr_null(tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by}));
  tu_assert_contains(tec_ctx_error(b.ctx), "stream_store: loop 'i' of stage 'blur_x'");
  tec_ctx_free(b.ctx);

  /* an output not vectorized: one element per store */
  b = declare(4, 4 * L);
  OK(b.ctx, sch_pragma(b.sy, sch_axis(b.sy, 0), "stream_store", NULL));
  f = tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by});
  ck_assert_int_eq(streamed(f), 0);
  ck_assert(has_note(f, "stays a plain (cached) store: it stores one element, not a vector"));
  /* a value: refused, naming what is legal */
  ck_assert_int_eq(sch_pragma(b.sy, sch_axis(b.sy, 0), "stream_store", ir_int(b.ctx, 1)), -1);
  assert_err(b.ctx, "pragma: stream_store on loop 'i' of stage 'blur_y' takes no value (pass "
                    "NULL), not 1");
  tec_ctx_free(b.ctx);

  /* an output its own update reads (a sum over rows, vectorized along its columns) */
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 4 * L));
  rs u = {A, te_reduce_axis_n(ctx, "k", 8)};
  te_tensor *S = te_compute(ctx, &(te_compute_decl){.name = "S", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 4 * L),
                                                    .body = row_sum, .user = &u});
  ck_assert_msg(S != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &S);
  sch_stage *st = sch_stage_of(s, S);
  sch_iter *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 0), L, &jo, &ji));
  OK(ctx, sch_reorder(st, 3, (sch_iter *[]){jo, sch_reduce_axis(st, 0), ji}));
  OK(ctx, sch_vectorize(st, ji));
  OK(ctx, sch_pragma(st, jo, "stream_store", NULL));
  f = tec_lower(s, "rsum", 2, (te_tensor *[]){A, S});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(streamed(f), 0);
  ck_assert(has_note(f, "the stores to 'S' stay plain (cached) stores: the function reads it"));
  tec_ctx_free(ctx);
}
END_TEST

static char *emit(int lanes, int pragma, const char *target) {
  bl b = make(4, 8 * lanes, lanes, 1, 1, pragma);
  lower_func *f = tec_lower(b.s, "blur", 2, (te_tensor *[]){b.in, b.by});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
  char *as = tu_emit_text(b.ctx, f, target, TEC_EMIT_ASM);
  tec_ctx_free(b.ctx);
  return as;
}

START_TEST(assembly) {
  static const struct {
    const char *target, *nt, *fence;
    int lanes;
  } t[] = {
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "vmovntps\t%zmm", "sfence", 16},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "vmovntps\t%ymm", "sfence", 8},
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", "stnp\t", NULL, 4},
  };
  for (int k = 0; k < 3; k++) {
    char *a = emit(t[k].lanes, 1, t[k].target), *p = emit(t[k].lanes, 0, t[k].target);
    tu_assert_contains(a, t[k].nt);
    if (t[k].fence) tu_assert_contains(a, t[k].fence);
    assert_not_contains(a, "dmb"); /* no barrier of its own on AArch64 (the join's suffice) */
    assert_not_contains(p, k < 2 ? "vmovnt" : "stnp");
    assert_not_contains(p, "sfence");
    free(a), free(p);
  }
}
END_TEST

static const ir_expr *twice(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2));
}

/* the rule: out = 2 * A at (h, w) for znver3 (8 lanes; L2 512 KiB, L3 32 MiB: an output must
 * pass 8 x 512 KiB = 4 MiB) */
static int rule_streams(int64_t h, int64_t w, int check_space) {
  const char *target = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3";
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, h, w));
  te_tensor *O = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2, .shape = A->shape,
                                                    .body = twice, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &O);
  tec_autosched_report rep;
  OK(ctx, tec_autoschedule(s, target, &(tec_autosched_options){.threads = 1}, &rep));
  ck_assert_int_eq(rep.nstages, 1);
  int yes = rep.stages[0].choice.stream;
  ck_assert_int_eq(yes, strstr(rep.trace_c, "\"stream_store\"") != NULL);
  lower_func *f = tec_lower(s, "f", 2, (te_tensor *[]){A, O});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(f->nnotes, 0);
  ck_assert_int_eq(streamed(f) > 0, yes);
  if (check_space) { /* the tuned space: a stream knob defaulting to the rule */
    tune_space sp;
    OK(ctx, tec_autosched_space(sch_create(ctx, 1, &O), target, NULL, &sp));
    int found = 0;
    for (int k = 0; k < sp.nknobs; k++)
      if (!strcmp(sp.knobs[k].name, "out.stream"))
        found = 1 + (int)sp.knobs[k].values[sp.knobs[k].def];
    ck_assert_int_eq(found, 1 + yes);
  }
  tec_ctx_free(ctx);
  return yes;
}

START_TEST(autosched_rule) {
  ck_assert_int_eq(rule_streams(1024, 2048, 1), 1); /* 8 MiB */
  ck_assert_int_eq(rule_streams(1024, 1024, 1), 0); /* 4 MiB: not past */
  ck_assert_int_eq(rule_streams(64, 512, 0), 0);
  ck_assert_int_eq(rule_streams(1024, 2052, 0), 0); /* rows not whole vectors */
}
END_TEST

int main(void) {
  Suite *s = suite_create("stream_store");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, exact_and_marked);
  tcase_add_test(tc, notes_and_refusals);
  tcase_add_test(tc, assembly);
  tcase_add_test(tc, autosched_rule);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
