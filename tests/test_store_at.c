/* test_store_at.c — sch_store_at (Halide's store_at) with its sliding window and storage
 * folding: a 3x3 blur, a 3-stage and an 11-stage 5x5 stencil chain (the loop warm-up: every
 * fold 8 rows), exact against plain C at sizes the tiles do not divide, folded and not, with the consumer's row loop split; how many elements
 * the producer computes (counted by walking the lowered program's loops, not its text); every
 * access checked against its buffer at run time (check_bounds); the refusals; a parallel loop in between (a note and a right answer); the record round trip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ir/eval.h"
#include "tec/difftest.h"

/* ---------- counting the stores of a tensor in a lowered program (schedule_ops' output) ----
 * Runs the integer control flow (loops, ifs, lets; expressions by ir/eval.c) and counts the
 * provides of the tensor. The program must not depend on tensor data. */
typedef struct counter {
  int nt;
  te_tensor *const *t; /* the tensors counted, n[k] each */
  int64_t *n;
  int nv;
  const ir_expr *var[64];
  int64_t val[64];
  int bad; /* an expression it could not evaluate */
} counter;

static int64_t ev(counter *c, const ir_expr *e) {
  ir_eval_env env = {.n = c->nv, .vars = c->var, .vals = c->val};
  int64_t v = ir_eval_int(e, &env);
  c->bad |= env.bad;
  return v;
}

static void walk(counter *c, const ir_stmt *s) {
  if (!s || c->bad) return;
  switch (s->kind) {
  case IR_S_FOR: {
    int64_t lo = ev(c, s->a), n = ev(c, s->b);
    ck_assert_int_lt(c->nv, 64);
    c->var[c->nv] = s->var;
    for (int64_t i = 0; i < n && !c->bad; i++) {
      c->val[c->nv++] = lo + i;
      walk(c, s->body);
      c->nv--;
    }
    return;
  }
  case IR_S_PROVIDE:
    for (int k = 0; k < c->nt; k++) c->n[k] += s->tensor == c->t[k];
    return;
  case IR_S_SEQ:
    for (int i = 0; i < s->n; i++) walk(c, s->seq[i]);
    return;
  case IR_S_IF:
    if (ev(c, s->a))
      walk(c, s->body);
    else
      walk(c, s->else_body);
    return;
  case IR_S_LET_STMT:
    c->var[c->nv] = s->var;
    c->val[c->nv++] = ev(c, s->a);
    walk(c, s->body);
    c->nv--;
    return;
  case IR_S_ATTR:
  case IR_S_REALIZE:
  case IR_S_PRODUCE: walk(c, s->body); return;
  case IR_S_STORE:
  case IR_S_EVALUATE:
  case IR_S_ASSERT: return; /* no body: nothing of the tensor's is provided there */
  default: c->bad = 1; return; /* a body this walker does not follow: the count would be low */
  }
}

/* how many elements of each of t[0 .. nt) the schedule computes (n[k]) */
static void count_many(const sch_schedule *s, int nt, te_tensor *const *t, int64_t *n,
                       int nargs, te_tensor *const *args) {
  tec_ctx *ctx = sch_schedule_ctx(s);
  tec_lower_options o = {.stop_after = "schedule_ops"};
  lower_func *f = tec_lower_with(s, "count", nargs, args, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  for (int k = 0; k < nt; k++) n[k] = 0;
  counter c = {.nt = nt, .t = t, .n = n};
  walk(&c, f->body);
  ck_assert_msg(!c.bad, "the counter could not evaluate the program");
  tec_lower_free(f);
}

static int64_t count_stores(const sch_schedule *s, te_tensor *t, int nargs,
                            te_tensor *const *args) {
  int64_t n;
  count_many(s, 1, &t, &n, nargs, args);
  return n;
}

/* ---------- a 3x3 blur: in [H+2][W+2], blur_x [H+2][W], blur_y [H][W] ---------- */
static const ir_expr *bx_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *in = u;
  return ir_add(ir_add(TE_AT(in, i[0], i[1]), TE_AT(in, i[0], ir_add(i[1], ir_int(ctx, 1)))),
                TE_AT(in, i[0], ir_add(i[1], ir_int(ctx, 2))));
}
static const ir_expr *by_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *bx = u;
  return ir_add(ir_add(TE_AT(bx, i[0], i[1]), TE_AT(bx, ir_add(i[0], ir_int(ctx, 1)), i[1])),
                TE_AT(bx, ir_add(i[0], ir_int(ctx, 2)), i[1]));
}

/* pre = input + 1 (blur_make(h, w, 1)): a stage blur_x reads instead of the input */
static const ir_expr *plus1_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
}

typedef struct blur {
  tec_ctx *ctx;
  te_tensor *in, *pre, *bx, *by; /* pre: NULL, or input + 1, which blur_x reads */
  sch_schedule *s;
  sch_stage *sx, *sy;
  int64_t h, w;
} blur;

static blur blur_make(int64_t h, int64_t w, int pre) {
  blur b = {tec_ctx_new(), NULL, NULL, NULL, NULL, NULL, NULL, NULL, h, w};
  tec_ctx *ctx = b.ctx;
  b.in = te_placeholder(ctx, "input", TEC_F32, 2, te_shape(ctx, 2, (int64_t[]){h + 2, w + 2}));
  if (pre)
    b.pre = te_compute(ctx, &(te_compute_decl){.name = "pre", .ndim = 2,
                                               .shape = te_shape(ctx, 2, (int64_t[]){h + 2, w + 2}),
                                               .body = plus1_body, .user = b.in});
  b.bx = te_compute(ctx, &(te_compute_decl){.name = "blur_x", .ndim = 2,
                                            .shape = te_shape(ctx, 2, (int64_t[]){h + 2, w}),
                                            .body = bx_body, .user = pre ? b.pre : b.in});
  b.by = te_compute(ctx, &(te_compute_decl){.name = "blur_y", .ndim = 2,
                                            .shape = te_shape(ctx, 2, (int64_t[]){h, w}),
                                            .body = by_body, .user = b.bx});
  b.s = sch_create(ctx, 1, &b.by);
  b.sx = sch_stage_of(b.s, b.bx);
  b.sy = sch_stage_of(b.s, b.by);
  return b;
}
static blur blur_new(int64_t h, int64_t w) { return blur_make(h, w, 0); }

/* lowers b's schedule with every load and store checked against its buffer (a buffer too
 * small fails the call) */
static lower_func *blur_lower(blur *b, const tec_lower_options *o, const char *what) {
  tec_lower_options oc = o ? *o : (tec_lower_options){0};
  oc.check_bounds = 1;
  lower_func *f = tec_lower_with(b->s, "blur", 2, (te_tensor *[]){b->in, b->by}, &oc);
  ck_assert_msg(f != NULL, "%s: %s", what, tec_ctx_error(b->ctx));
  return f;
}

/* runs f, b's schedule lowered (blur_lower), and compares with plain C (sums of exact small
 * integers: exact); frees f */
static void blur_run(blur *b, lower_func *f, const char *what) {
  tec_ctx *ctx = b->ctx;
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s: %s", what, tec_ctx_error(ctx));
  int64_t ish[2] = {b->h + 2, b->w + 2}, osh[2] = {b->h, b->w};
  DLTensor in = tu_zeros(TEC_F32, 2, ish), out = tu_zeros(TEC_F32, 2, osh);
  float *x = tu_f32(&in);
  for (int64_t i = 0; i < ish[0] * ish[1]; i++) x[i] = (float)((i * 7919) % 61);
  ck_assert_msg(tec_module_get(m, "blur")((DLTensor *[]){&in, &out}, 2) == 0, "%s",
                tec_rt_last_error());
  for (int64_t y = 0; y < b->h; y++)
    for (int64_t c = 0; c < b->w; c++) {
      float ref = 0;
      for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) ref += x[(y + a) * ish[1] + c + e] + (b->pre ? 1 : 0);
      ck_assert_msg(tu_f32(&out)[y * b->w + c] == ref, "%s %lldx%lld at (%lld, %lld): %g vs %g",
                    what, (long long)b->h, (long long)b->w, (long long)y, (long long)c,
                    tu_f32(&out)[y * b->w + c], ref);
    }
  tec_dl_free(&in), tec_dl_free(&out);
  tec_module_free(m);
  tec_lower_free(f);
}

static void blur_check(blur *b, const tec_lower_options *o, const char *what) {
  blur_run(b, blur_lower(b, o, what), what);
}

/* blur_y: (x.outer, y, x.inner); blur_x computed per row, stored per column tile (store 1) or
 * per row (store 0) */
static void blur_tiles(blur *b, int store, int64_t tile) {
  sch_iter *xo, *xi;
  OK(b->ctx, sch_split(b->sy, sch_axis(b->sy, 1), tile, &xo, &xi));
  OK(b->ctx, SCH_REORDER(b->sy, xo, sch_axis(b->sy, 0), xi));
  OK(b->ctx, sch_compute_at(b->sx, b->sy, sch_axis(b->sy, 0)));
  if (store) OK(b->ctx, sch_store_at(b->sx, b->sy, xo));
}

START_TEST(blur_sliding) {
  static const int64_t sz[][2] = {{1, 1}, {7, 33}, {20, 70}, {64, 64}};
  for (int k = 0; k < 4; k++)
    for (int fold = 0; fold < 2; fold++) {
      int64_t h = sz[k][0], w = sz[k][1];
      blur b = blur_new(h, w);
      blur_tiles(&b, 1, 32);
      tec_lower_options o = {.no_storage_folding = !fold};
      blur_check(&b, &o, fold ? "store_at folded" : "store_at");
      /* every row of blur_x once per column tile: (h + 2) * w, not h * 3 * w */
      ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), (h + 2) * w);
      tec_ctx_free(b.ctx);
      /* without store_at: the halo rows again at every row */
      b = blur_new(h, w);
      blur_tiles(&b, 0, 32);
      blur_check(&b, NULL, "compute_at only");
      ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), h * 3 * w);
      tec_ctx_free(b.ctx);
    }
}
END_TEST

/* the fold shows in the program: blur_x's buffer is 4 rows by the tile (3 rows a row) */
START_TEST(blur_fold_size) {
  blur b = blur_new(20, 70);
  blur_tiles(&b, 1, 32);
  lower_func *f = TEC_LOWER(b.s, "blur", b.in, b.by);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
  tu_assert_contains(tec_lower_str(f), "allocate blur_x[float32 * 128]");
  ck_assert_int_eq(f->nnotes, 0);
  tec_lower_free(f);
  tec_lower_options o = {.no_storage_folding = 1};
  f = tec_lower_with(b.s, "blur", 2, (te_tensor *[]){b.in, b.by}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
  tu_assert_contains(tec_lower_str(f), "allocate blur_x[float32 * 704]"); /* 22 rows x 32 */
  tec_lower_free(f);
  tec_ctx_free(b.ctx);
}
END_TEST

/* the row loop split (a tail: 20 rows by 8), the window restarting per strip; the strip loop
 * parallel: the buffer moves inside it, with a note */
START_TEST(blur_split_rows) {
  for (int par = 0; par < 2; par++)
    for (int fold = 0; fold < 2; fold++) {
      int64_t h = 20, w = 45;
      blur b = blur_new(h, w);
      sch_iter *xo, *xi, *yo, *yi;
      OK(b.ctx, sch_split(b.sy, sch_axis(b.sy, 1), 16, &xo, &xi));
      OK(b.ctx, sch_split(b.sy, sch_axis(b.sy, 0), 8, &yo, &yi));
      OK(b.ctx, SCH_REORDER(b.sy, xo, yo, yi, xi));
      if (par) OK(b.ctx, sch_parallel(b.sy, yo));
      OK(b.ctx, sch_compute_at(b.sx, b.sy, yi));
      OK(b.ctx, sch_store_at(b.sx, b.sy, xo));
      tec_lower_options o = {.no_storage_folding = !fold};
      blur_check(&b, &o, par ? "parallel strips" : "split rows");
      /* per strip of 8 rows (3 strips, the last 4): 10 + 10 + 6 rows */
      ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), 26 * w);
      lower_func *f = TEC_LOWER(b.s, "blur", b.in, b.by);
      ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
      ck_assert_int_eq(f->nnotes, par);
      if (par) tu_assert_contains(f->notes[0], "parallel");
      tec_lower_free(f);
      if (par) { /* strict mode refuses what the note reports */
        tec_ctx_set_strict(b.ctx, 1);
        ck_assert_ptr_null(TEC_LOWER(b.s, "blur", b.in, b.by));
        tu_assert_contains(tec_ctx_error(b.ctx), "strict mode");
      }
      tec_ctx_free(b.ctx);
    }
}
END_TEST

/* blur_x vectorized along x inside its row: still exact, still sliding */
START_TEST(blur_vectorized_producer) {
  blur b = blur_new(19, 70);
  blur_tiles(&b, 1, 32);
  sch_iter *o, *i;
  OK(b.ctx, sch_split(b.sx, sch_axis(b.sx, 1), 8, &o, &i));
  OK(b.ctx, sch_vectorize(b.sx, i));
  blur_check(&b, NULL, "vectorized blur_x");
  ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), 21 * 70);
  tec_ctx_free(b.ctx);
}
END_TEST

/* store_root (Halide's): the buffer outside every loop; the window slides down the rows of
 * each column tile (the column-tile loop moves the box without overlap: not slid) */
START_TEST(store_root_blur) {
  for (int tiles = 0; tiles < 2; tiles++) {
    blur b = blur_new(21, 45);
    if (tiles) {
      blur_tiles(&b, 0, 16);
    } else {
      OK(b.ctx, sch_compute_at(b.sx, b.sy, sch_axis(b.sy, 0)));
    }
    OK(b.ctx, sch_store_root(b.sx));
    ck_assert_int_eq(sch_stage_store_root(b.sx), 1);
    blur_check(&b, NULL, tiles ? "store_root, column tiles" : "store_root");
    ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), 23 * 45);
    lower_func *f = TEC_LOWER(b.s, "blur", b.in, b.by);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(b.ctx));
    ck_assert_int_eq(f->nnotes, 0);
    tu_assert_contains(tec_lower_str(f), "allocate blur_x[float32 * 180]"); /* 4 rows of 45 */
    tec_lower_free(f);
    /* the record round trip */
    const char *js = sch_trace_json(b.ctx, sch_get_trace(b.s));
    tu_assert_contains(js, "\"prim\": \"store_root\"");
    blur r = blur_new(21, 45);
    OK(r.ctx, sch_trace_replay(r.s, sch_trace_parse_json(r.ctx, js)));
    ck_assert_int_eq(sch_stage_store_root(r.sx), 1);
    blur_check(&r, NULL, "store_root replayed");
    tec_ctx_free(r.ctx);
    /* store_at afterwards replaces it; compute_root drops both */
    if (tiles) {
      OK(b.ctx, sch_store_at(b.sx, b.sy, sch_leaf_named(b.sy, "j.outer")));
      ck_assert_int_eq(sch_stage_store_root(b.sx), 0);
    }
    OK(b.ctx, sch_compute_root(b.sx));
    ck_assert_int_eq(sch_stage_store_root(b.sx), 0);
    tec_ctx_free(b.ctx);
  }
}
END_TEST

/* blur_x's own loops that cannot compute a slid range: no sliding, a note, a right answer */
START_TEST(producer_cannot_slide) {
  for (int how = 0; how < 2; how++) {
    blur b = blur_new(19, 70);
    blur_tiles(&b, 1, 32);
    sch_iter *f, *o, *i;
    if (how == 0) OK(b.ctx, sch_fuse(b.sx, sch_axis(b.sx, 0), sch_axis(b.sx, 1), &f));
    if (how == 1) OK(b.ctx, sch_split_tail(b.sx, sch_axis(b.sx, 0), 2, SCH_TAIL_SHIFT_INWARDS, &o, &i));
    lower_func *fn = TEC_LOWER(b.s, "blur", b.in, b.by);
    ck_assert_msg(fn != NULL, "%s", tec_ctx_error(b.ctx));
    ck_assert_int_eq(fn->nnotes, 1);
    tu_assert_contains(fn->notes[0], how ? "shift_inwards" : "fuses that dimension");
    tec_lower_free(fn);
    blur_check(&b, NULL, how ? "shift_inwards rows" : "fused blur_x");
    tec_ctx_free(b.ctx);
  }
}
END_TEST

/* a stage computed inside the slid stage's loops (pre = input + 1 at blur_x's row loop) would
 * get its region from blur_x's unslid rows: no sliding, a note, a right answer (every access
 * checked; it read pre's buffer out of bounds and 56 of 64 outputs were wrong) */
START_TEST(stage_inside_slid) {
  blur b = blur_make(8, 8, 1);
  OK(b.ctx, sch_compute_at(b.sx, b.sy, sch_axis(b.sy, 0)));
  OK(b.ctx, sch_store_root(b.sx));
  sch_stage *sp = sch_stage_of(b.s, b.pre);
  OK(b.ctx, sch_compute_at(sp, b.sx, sch_axis(b.sx, 0)));
  lower_func *f = blur_lower(&b, NULL, "pre inside blur_x");
  ck_assert_int_eq(f->nnotes, 1);
  tu_assert_contains(f->notes[0], "stage 'pre' is computed inside its loops");
  blur_run(&b, f, "pre inside blur_x");
  tec_ctx_free(b.ctx);
}
END_TEST

/* ---------- a 3-stage 5x5 stencil chain ---------- */
static const ir_expr *st5(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *p = u;
  const ir_expr *e = NULL;
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 5; b++) {
      const ir_expr *t = ir_mul(ir_float(ctx, (a + 1) * (b + 1) / 225.0),
                                TE_AT(p, ir_add(i[0], ir_int(ctx, a)), ir_add(i[1], ir_int(ctx, b))));
      e = e ? ir_add(e, t) : t;
    }
  return e;
}

/* plain C, st5's sums in the same order: buf[1..n] the n stages of a 5x5 chain over buf[0]
 * ([h + 4n][w + 4n]), stage k + 1 of (h + 4(n - 1 - k)) x (w + 4(n - 1 - k)); the caller
 * frees buf[1..n] */
static void chain_ref(float **buf, int n, int64_t h, int64_t w) {
  for (int k = 0; k < n; k++) {
    int64_t e = 4 * (n - 1 - k), oh = h + e, ow = w + e, iw = ow + 4;
    buf[k + 1] = malloc(sizeof(float) * (size_t)(oh * ow));
    ck_assert(buf[k + 1] != NULL);
    for (int64_t y = 0; y < oh; y++)
      for (int64_t x = 0; x < ow; x++) {
        float v = 0;
        for (int p = 0; p < 5; p++)
          for (int q = 0; q < 5; q++) {
            float u = (float)((p + 1) * (q + 1) / 225.0) * buf[k][(y + p) * iw + x + q];
            v = (p || q) ? v + u : u;
          }
        buf[k + 1][y * ow + x] = v;
      }
  }
}

static void chain_run(int64_t h, int64_t w, int mode, int fold) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *in = te_placeholder(ctx, "input", TEC_F32, 2,
                                 te_shape(ctx, 2, (int64_t[]){h + 12, w + 12}));
  te_tensor *st[3], *cur = in;
  for (int s = 0; s < 3; s++) {
    int64_t e = 4 * (2 - s);
    cur = st[s] = te_compute(ctx, &(te_compute_decl){
                                 .name = tec_ctx_printf(ctx, "stage_%d", s), .ndim = 2,
                                 .shape = te_shape(ctx, 2, (int64_t[]){h + e, w + e}),
                                 .body = st5, .user = cur});
  }
  sch_schedule *s = sch_create(ctx, 1, &st[2]);
  sch_stage *so = sch_stage_of(s, st[2]);
  sch_iter *yo, *yi, *xo, *xi;
  /* mode 0: strips of 16 rows, stages 0 and 1 stored per strip, computed per row (the
   * expert's shape); mode 1: 4 x 4 tiles fused, row loop inside */
  if (mode == 0) {
    OK(ctx, sch_split(so, sch_axis(so, 0), 16, &yo, &yi));
  } else {
    sch_iter *t;
    OK(ctx, sch_tile(so, sch_axis(so, 0), sch_axis(so, 1), (h + 3) / 4, (w + 3) / 4, &yo, &xo,
                     &yi, &xi));
    OK(ctx, sch_fuse(so, yo, xo, &t));
    yo = t;
  }
  for (int k = 1; k >= 0; k--) {
    sch_stage *sk = sch_stage_of(s, st[k]);
    OK(ctx, sch_compute_at(sk, so, yi));
    OK(ctx, sch_store_at(sk, so, yo));
  }
  tec_lower_options o = {.no_storage_folding = !fold, .check_bounds = 1};
  lower_func *f = tec_lower_with(s, "chain", 2, (te_tensor *[]){in, st[2]}, &o);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(f->nnotes, 0);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t ish[2] = {h + 12, w + 12}, osh[2] = {h, w};
  DLTensor a = tu_rand_f32(2, ish, 3), out = tu_zeros(TEC_F32, 2, osh);
  ck_assert_msg(tec_module_get(m, "chain")((DLTensor *[]){&a, &out}, 2) == 0, "%s",
                tec_rt_last_error());
  float *buf[4];
  buf[0] = tu_f32(&a);
  chain_ref(buf, 3, h, w);
  for (int64_t i = 0; i < h * w; i++)
    ck_assert_msg(fabsf(tu_f32(&out)[i] - buf[3][i]) <= 1e-5f * (1 + fabsf(buf[3][i])),
                  "chain %lldx%lld mode %d fold %d at %lld: %g vs %g", (long long)h,
                  (long long)w, mode, fold, (long long)i, tu_f32(&out)[i], buf[3][i]);
  /* the rows each stage computes: once per strip (its rows + its halo), not 5 per row */
  if (mode == 0) {
    int64_t strips = (h + 15) / 16, rows1 = 0, rows0 = 0;
    for (int64_t k = 0; k < strips; k++) {
      int64_t r = h - 16 * k < 16 ? h - 16 * k : 16;
      rows1 += r + 4, rows0 += r + 8;
    }
    ck_assert_int_eq(count_stores(s, st[1], 2, (te_tensor *[]){in, st[2]}), rows1 * (w + 4));
    ck_assert_int_eq(count_stores(s, st[0], 2, (te_tensor *[]){in, st[2]}), rows0 * (w + 8));
  }
  for (int k = 1; k < 4; k++) free(buf[k]);
  tec_dl_free(&a), tec_dl_free(&out);
  tec_module_free(m);
  tec_lower_free(f);
  tec_ctx_free(ctx);
}

START_TEST(stencil_chain) {
  for (int fold = 0; fold < 2; fold++) {
    chain_run(37, 29, 0, fold);
    chain_run(16, 16, 0, fold);
    chain_run(21, 30, 1, fold);
  }
}
END_TEST

/* ---------- a 10-stage chain (the expert's group): warm-up ----------
 * stage_0 .. stage_9 stored per 4 x 4 tile of stage_10 and computed per row of it: the row
 * loop starts 4 rows early per stage (40 for stage_0), so that every iteration computes one
 * new row of every stage and every buffer folds to 8 rows (the window of 5, next power of
 * two), whatever the chain's length. split_rows: stage_3's own row loop split, which cannot slide
 * with a warm-up: the whole loop then has none (bound inference runs again), and each
 * stage's first row computes its whole window, as before. */
enum { LC_MAX = 11 };
static void long_chain(int64_t h, int64_t w, int LC, int split_rows) {
  tec_ctx *ctx = tec_ctx_new();
  int64_t e0 = 4 * LC;
  te_tensor *in = te_placeholder(ctx, "input", TEC_F32, 2,
                                 te_shape(ctx, 2, (int64_t[]){h + e0, w + e0}));
  te_tensor *st[LC_MAX], *cur = in;
  for (int s = 0; s < LC; s++) {
    int64_t e = 4 * (LC - 1 - s);
    cur = st[s] = te_compute(ctx, &(te_compute_decl){
                                 .name = tec_ctx_printf(ctx, "stage_%d", s), .ndim = 2,
                                 .shape = te_shape(ctx, 2, (int64_t[]){h + e, w + e}),
                                 .body = st5, .user = cur});
  }
  sch_schedule *s = sch_create(ctx, 1, &st[LC - 1]);
  sch_stage *so = sch_stage_of(s, st[LC - 1]);
  sch_iter *yo, *yi, *xo, *xi, *t;
  int64_t th = (h + 3) / 4, tw = (w + 3) / 4;
  OK(ctx, sch_tile(so, sch_axis(so, 0), sch_axis(so, 1), th, tw, &yo, &xo, &yi, &xi));
  OK(ctx, sch_fuse(so, yo, xo, &t));
  for (int k = LC - 2; k >= 0; k--) {
    sch_stage *sk = sch_stage_of(s, st[k]);
    OK(ctx, sch_compute_at(sk, so, yi));
    OK(ctx, sch_store_at(sk, so, t));
  }
  if (split_rows) {
    sch_stage *s3 = sch_stage_of(s, st[3]);
    sch_iter *o, *i;
    OK(ctx, sch_split(s3, sch_axis(s3, 0), 2, &o, &i));
  }
  te_tensor *args[2] = {in, st[LC - 1]};
  lower_func *f = tec_lower_with(s, "chain", 2, args, &(tec_lower_options){.check_bounds = 1});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(f->nnotes, 0);
  /* the program: the row loop's warm-up, each fold 8 rows by the stage's tile columns */
  lower_func *g = tec_lower_with(s, "chain", 2, args,
                                 &(tec_lower_options){.stop_after = "schedule_ops"});
  ck_assert_msg(g != NULL, "%s", tec_ctx_error(ctx));
  const char *prog = tec_lower_str(g);
  const char *warm =
      strstr(prog, tec_ctx_printf(ctx, "for (%s, %d, ", sch_iter_name(yi), -4 * (LC - 1)));
  ck_assert_msg(split_rows ? !warm : warm != NULL, "the warm-up loop (split %d)", split_rows);
  for (int k = 0; k < LC - 1; k++) {
    int64_t e = 4 * (LC - 1 - k), rows = 8, cols = tw + e;
    if (split_rows) { /* the window of stage k: 5 rows per stage to the output, folded */
      rows = 1;
      while (rows < 1 + e) rows *= 2;
      if (rows >= th + e) continue; /* not folded (the split's rows may add one) */
    }
    if (rows >= th + e) rows = th + e; /* the tile's rows are no more: not folded */
    /* realize stage_k([<row min>, rows], [<column min>, cols]) */
    const char *key = tec_ctx_printf(ctx, "realize stage_%d([", k);
    const char *at = strstr(prog, key), *mid = at ? strstr(at, "], [") : NULL;
    const char *end = mid ? strstr(mid, "]) {") : NULL;
    ck_assert_msg(at && mid && end, "no buffer of stage_%d", k);
    while (mid > at && mid[-1] != ' ') mid--;
    while (end > at && end[-1] != ' ') end--;
    ck_assert_int_eq(strtoll(mid, NULL, 10), rows);
    ck_assert_int_eq(strtoll(end, NULL, 10), cols);
  }
  tec_lower_free(g);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t ish[2] = {h + e0, w + e0}, osh[2] = {h, w};
  DLTensor a = tu_rand_f32(2, ish, 5), out = tu_zeros(TEC_F32, 2, osh);
  ck_assert_msg(tec_module_get(m, "chain")((DLTensor *[]){&a, &out}, 2) == 0, "%s",
                tec_rt_last_error());
  float *buf[LC_MAX + 1];
  buf[0] = tu_f32(&a);
  chain_ref(buf, LC, h, w);
  for (int64_t i = 0; i < h * w; i++)
    ck_assert_msg(fabsf(tu_f32(&out)[i] - buf[LC][i]) <= 1e-5f * (1 + fabsf(buf[LC][i])),
                  "chain of %d %lldx%lld split %d at %lld: %g vs %g", LC, (long long)h,
                  (long long)w, split_rows, (long long)i, tu_f32(&out)[i], buf[LC][i]);
  /* every stage computes each row of its tile's box once: rows and columns of the tile plus
   * its halo to the output, cut at the stage's end (a split row loop computes whole chunks) */
  int64_t counted[LC_MAX - 1];
  if (!split_rows) count_many(s, LC - 1, st, counted, 2, args);
  for (int k = 0; k < LC - 1 && !split_rows; k++) {
    int64_t e = 4 * (LC - 1 - k), n = 0;
    for (int64_t y0 = 0; y0 < h; y0 += th)
      for (int64_t x0 = 0; x0 < w; x0 += tw) {
        int64_t r = y0 + th + e < h + e ? th + e : h + e - y0;
        int64_t c = x0 + tw + e < w + e ? tw + e : w + e - x0;
        n += r * c;
      }
    ck_assert_int_eq(counted[k], n);
  }
  for (int k = 1; k <= LC; k++) free(buf[k]);
  tec_dl_free(&a), tec_dl_free(&out);
  tec_module_free(m);
  tec_lower_free(f);
  tec_ctx_free(ctx);
}

START_TEST(chain_warm_up) {
  long_chain(37, 29, 11, 0);
  long_chain(21, 30, 5, 1); /* (5 stages: the compile of 11 takes seconds) */
}
END_TEST

/* ---------- refusals ---------- */
#define REFUSED(ctx, call, text)                                                            \
  do {                                                                                      \
    tec_ctx_clear_error(ctx);                                                               \
    ck_assert_int_eq((call), -1);                                                           \
    tu_assert_contains(tec_ctx_error(ctx), text);                                           \
  } while (0)

START_TEST(store_at_refused) {
  blur b = blur_new(20, 70);
  tec_ctx *ctx = b.ctx;
  sch_iter *xo, *xi;
  OK(ctx, sch_split(b.sy, sch_axis(b.sy, 1), 32, &xo, &xi));
  OK(ctx, SCH_REORDER(b.sy, xo, sch_axis(b.sy, 0), xi));
  /* at root: nothing to store apart */
  REFUSED(ctx, sch_store_at(b.sx, b.sy, xo), "call compute_at('blur_x', ...) first");
  /* the output */
  REFUSED(ctx, sch_store_at(b.sy, b.sy, xo), "output");
  OK(ctx, sch_compute_at(b.sx, b.sy, sch_axis(b.sy, 0)));
  /* a loop inside the compute loop */
  REFUSED(ctx, sch_store_at(b.sx, b.sy, xi), "one of 'j.outer', 'i'");
  /* a loop of another stage */
  REFUSED(ctx, sch_store_at(b.sx, b.sy, sch_axis(b.sx, 0)), "not a loop of stage 'blur_y'");
  /* a NULL loop */
  REFUSED(ctx, sch_store_at(b.sx, b.sy, NULL), "NULL");
  /* inline */
  blur c = blur_new(8, 8);
  OK(c.ctx, sch_compute_inline(c.sx));
  REFUSED(c.ctx, sch_store_at(c.sx, c.sy, sch_axis(c.sy, 0)), "inline");
  tec_ctx_free(c.ctx);
  /* a reorder that puts the store loop inside the compute loop: refused by tec_lower */
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_store_at(b.sx, b.sy, xo));
  OK(ctx, SCH_REORDER(b.sy, sch_axis(b.sy, 0), xo, xi));
  ck_assert_ptr_null(TEC_LOWER(b.s, "blur", b.in, b.by));
  tu_assert_contains(tec_ctx_error(ctx), "now inside its compute loop 'i'");
  /* the producer passed as an argument: the caller's buffer */
  tec_ctx_clear_error(ctx);
  OK(ctx, SCH_REORDER(b.sy, xo, sch_axis(b.sy, 0), xi));
  ck_assert_ptr_null(TEC_LOWER(b.s, "blur", b.in, b.bx, b.by));
  tu_assert_contains(tec_ctx_error(ctx), "argument of the function");
  /* compute_root drops the store_at */
  OK(ctx, sch_compute_root(b.sx));
  ck_assert_ptr_null(sch_stage_store_iter(b.sx));
  tec_ctx_free(ctx);
}
END_TEST

/* store_root where the consumer is itself computed at another stage's loop: refused by
 * tec_lower (what it reads is known per iteration of that loop only) */
START_TEST(store_root_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *in = te_placeholder(ctx, "input", TEC_F32, 2, te_shape(ctx, 2, (int64_t[]){20, 20}));
  te_tensor *st[3], *cur = in;
  for (int k = 0; k < 3; k++)
    cur = st[k] = te_compute(ctx, &(te_compute_decl){
                                  .name = tec_ctx_printf(ctx, "stage_%d", k), .ndim = 2,
                                  .shape = te_shape(ctx, 2, (int64_t[]){16 - 4 * k, 16 - 4 * k}),
                                  .body = st5, .user = cur});
  sch_schedule *s = sch_create(ctx, 1, &st[2]);
  sch_stage *s0 = sch_stage_of(s, st[0]), *s1 = sch_stage_of(s, st[1]), *s2 = sch_stage_of(s, st[2]);
  REFUSED(ctx, sch_store_root(s0), "call compute_at('stage_0', ...) first");
  ck_assert_int_eq(sch_store_root(NULL), -1); /* (no ctx to tell: as compute_root) */
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_compute_at(s1, s2, sch_axis(s2, 0)));
  OK(ctx, sch_compute_at(s0, s1, sch_axis(s1, 0)));
  OK(ctx, sch_store_root(s0));
  ck_assert_ptr_null(TEC_LOWER(s, "chain", in, st[2]));
  tu_assert_contains(tec_ctx_error(ctx), "store_root: 'stage_0' is stored at the top level, but "
                                         "its consumer 'stage_1' is itself computed inside");
  /* store_at a loop of stage_1 instead: fine */
  tec_ctx_clear_error(ctx);
  OK(ctx, sch_store_at(s0, s1, sch_axis(s1, 0)));
  lower_func *f = TEC_LOWER(s, "chain", in, st[2]);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_lower_free(f);
  tec_ctx_free(ctx);
}
END_TEST

/* split of the store loop keeps the buffer at the outer loop */
START_TEST(store_loop_split) {
  blur b = blur_new(20, 70);
  blur_tiles(&b, 1, 32);
  sch_iter *xo = sch_leaf_named(b.sy, "j.outer"), *o, *i;
  OK(b.ctx, sch_split(b.sy, xo, 2, &o, &i));
  ck_assert_ptr_eq(sch_stage_store_iter(b.sx), o);
  blur_check(&b, NULL, "store loop split");
  /* each x.outer.inner iteration restarts the window: 2 tiles * 22 rows per x.outer.outer */
  ck_assert_int_eq(count_stores(b.s, b.bx, 2, (te_tensor *[]){b.in, b.by}), 22 * 70);
  tec_ctx_free(b.ctx);
}
END_TEST

/* ---------- the record: trace -> JSON -> replay -> the same program and numbers ---------- */
START_TEST(store_at_round_trip) {
  blur b = blur_new(20, 70);
  blur_tiles(&b, 1, 32);
  const char *js = sch_trace_json(b.ctx, sch_get_trace(b.s));
  ck_assert_msg(js != NULL, "%s", tec_ctx_error(b.ctx));
  tu_assert_contains(js, "\"prim\": \"store_at\"");
  const char *c = sch_trace_c(b.ctx, sch_get_trace(b.s));
  ck_assert_msg(c != NULL, "%s", tec_ctx_error(b.ctx));
  tu_assert_contains(c, "sch_store_at(");
  lower_func *f1 = TEC_LOWER(b.s, "blur", b.in, b.by);
  ck_assert_msg(f1 != NULL, "%s", tec_ctx_error(b.ctx));
  blur r = blur_new(20, 70);
  sch_trace *t = sch_trace_parse_json(r.ctx, js);
  ck_assert_msg(t != NULL, "%s", tec_ctx_error(r.ctx));
  OK(r.ctx, sch_trace_replay(r.s, t));
  ck_assert_ptr_eq(sch_stage_store_iter(r.sx), sch_leaf_named(r.sy, "j.outer"));
  lower_func *f2 = TEC_LOWER(r.s, "blur", r.in, r.by);
  ck_assert_msg(f2 != NULL, "%s", tec_ctx_error(r.ctx));
  ck_assert_str_eq(tec_lower_str(f1), tec_lower_str(f2));
  blur_check(&r, NULL, "replayed");
  ck_assert_int_eq(count_stores(r.s, r.bx, 2, (te_tensor *[]){r.in, r.by}), 22 * 70);
  tec_lower_free(f1), tec_lower_free(f2);
  tec_ctx_free(b.ctx), tec_ctx_free(r.ctx);
}
END_TEST

/* ---------- the differential tester's programs (difftest/) with store_at ---------- */
static void dt_case(dt_program prog, int variant, const char *prod, int split, int par) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, prog, variant);
  ck_assert_msg(p != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = p->sched;
  te_tensor *out = p->args[p->nargs - 1];
  sch_stage *so = sch_stage_of(s, out), *sp = sch_stage_of(s, dt_instance_tensor(p, prod));
  sch_iter *row = sch_axis(so, 1), *o = NULL, *i;
  if (split) { /* the columns in tiles outside the rows */
    OK(ctx, sch_split(so, sch_axis(so, 1), 4, &o, &i));
    row = sch_axis(so, 0);
    OK(ctx, SCH_REORDER(so, o, row, i));
  }
  if (par) OK(ctx, sch_parallel(so, split ? o : sch_axis(so, 0)));
  OK(ctx, sch_compute_at(sp, so, row));
  OK(ctx, sch_store_at(sp, so, split ? o : sch_axis(so, 0)));
  char msg[512];
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "%s/%d %s: %s",
                dt_program_name(prog), variant, prod, msg);
  tec_ctx_free(ctx);
}

/* conv2d's pad computed inside the reduction: at ry stored per row (the window slides along
 * the columns, over w, through the reduce loops), at rc stored per channel, at w stored at
 * the top level (store_root) */
static void dt_conv_reduce(int variant, int mode) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_CONV2D, variant);
  ck_assert_msg(p != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = p->sched;
  sch_stage *so = sch_stage_of(s, p->args[p->nargs - 1]);
  sch_stage *sp = sch_stage_of(s, dt_instance_tensor(p, "pad"));
  if (mode == 0) {
    OK(ctx, sch_compute_at(sp, so, sch_reduce_axis(so, 1)));
    OK(ctx, sch_store_at(sp, so, sch_axis(so, 1)));
  } else if (mode == 1) {
    OK(ctx, sch_compute_at(sp, so, sch_reduce_axis(so, 0)));
    OK(ctx, sch_store_at(sp, so, sch_axis(so, 0)));
  } else {
    OK(ctx, sch_compute_at(sp, so, sch_axis(so, 2)));
    OK(ctx, sch_store_root(sp));
  }
  char msg[512];
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "conv2d/%d mode %d: %s", variant,
                mode, msg);
  tec_ctx_free(ctx);
}

START_TEST(difftest_programs) {
  for (int v = 0; v < 2; v++)
    for (int mode = 0; mode < 3; mode++) dt_conv_reduce(v, mode);
  for (int v = 0; v < 2; v++) {
    dt_case(DT_PRODCONS, v, "B", 1, 0);
    dt_case(DT_PRODCONS, v, "B", 1, 1);
    dt_case(DT_CONV2D, v, "pad", 0, 0);
    dt_case(DT_CONV2D, v, "pad", 0, 1);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("store_at");
  TCase *tc = tcase_create("store_at");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, blur_sliding);
  tcase_add_test(tc, blur_fold_size);
  tcase_add_test(tc, blur_split_rows);
  tcase_add_test(tc, blur_vectorized_producer);
  tcase_add_test(tc, producer_cannot_slide);
  tcase_add_test(tc, stage_inside_slid);
  tcase_add_test(tc, store_root_blur);
  tcase_add_test(tc, store_root_refused);
  tcase_add_test(tc, stencil_chain);
  tcase_add_test(tc, chain_warm_up);
  tcase_add_test(tc, store_at_refused);
  tcase_add_test(tc, store_loop_split);
  tcase_add_test(tc, store_at_round_trip);
  tcase_add_test(tc, difftest_programs);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
