/* test_lower.c — the lowering pipeline pass by pass: the TEC_DUMP_IR dump (which passes run,
 * in which order, and what each leaves behind), storage flattening (allocate for
 * intermediates, row-major indices on 1-d buffers), the init/update structure of reductions,
 * and the printed signature of a lowered function. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"


static tec_ctx *ctx;
static void setup(void) { ctx = tec_ctx_new(); }
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

static const ir_expr *plus_one(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_add(te_read(in, in->ndim, idx), ir_float(c, 1));
}
static const ir_expr *times_two(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_mul(te_read(in, in->ndim, idx), ir_float(c, 2));
}
static te_tensor *compute(const char *name, int ndim, const ir_expr *const *shape, te_body_fn fn,
                          void *user) {
  te_tensor *t = te_compute(ctx, &(te_compute_decl){.name = name, .ndim = ndim, .shape = shape,
                                                    .body = fn, .user = user});
  ck_assert_msg(t != NULL, "%s: %s", name, tec_ctx_error(ctx));
  return t;
}
static lower_func *lower(sch_schedule *s, int nargs, te_tensor *const *args) {
  ck_assert_msg(s != NULL, "%s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(s, "f", nargs, args);
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  return f;
}

/* A[n, m] -> B = A + 1 (intermediate) -> C = B * 2 (output) */
static te_tensor *A, *B, *C;
static sch_schedule *two_stage(const ir_expr *const *shape) {
  A = te_placeholder(ctx, "A", TEC_F32, 2, shape);
  B = compute("B", 2, A->shape, plus_one, A);
  C = compute("C", 2, A->shape, times_two, B);
  return sch_create(ctx, 1, &C);
}

/* Runs tec_lower with TEC_DUMP_IR=mode (NULL: unset) and returns what went to stderr. */
static char *lower_dumped(sch_schedule *s, int nargs, te_tensor *const *args, const char *mode,
                          lower_func **out) {
  if (mode)
    setenv("TEC_DUMP_IR", mode, 1);
  else
    unsetenv("TEC_DUMP_IR");
  FILE *tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  ck_assert_int_ge(saved, 0);
  ck_assert_int_ge(dup2(fileno(tmp), STDERR_FILENO), 0);
  lower_func *f = tec_lower(s, "f", nargs, args);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  unsetenv("TEC_DUMP_IR");
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  if (out) *out = f;
  long len = ftell(tmp);
  rewind(tmp);
  char *text = tec_ctx_alloc(ctx, (size_t)len + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_int_eq(fread(text, 1, (size_t)len, tmp), (size_t)len);
  text[len] = '\0';
  fclose(tmp);
  return text;
}

/* The part of a dump after the header of `pass`, up to the next header. */
static const char *section(const char *dump, const char *pass) {
  const char *h = tec_ctx_printf(ctx, "// ---- after %s ----\n", pass);
  const char *p = strstr(dump, h);
  ck_assert_msg(p != NULL, "no dump after %s in\n%s", pass, dump);
  p += strlen(h);
  const char *end = strstr(p, "// ---- after ");
  size_t n = end ? (size_t)(end - p) : strlen(p);
  char *s = tec_ctx_alloc(ctx, n + 1);
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

static int count(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
  return n;
}

/* ======== TEC_DUMP_IR ======== */

START_TEST(dump_lists_passes) {
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  lower_func *f;
  const char *d = lower_dumped(s, 2, (te_tensor *const[]){A, C}, "1", &f);
  /* the passes that produce a program, each once, in pipeline order */
  static const char *const passes[] = {"schedule_ops", "storage_flatten", "simplify"};
  const char *prev = d;
  for (int i = 0; i < 3; i++) {
    const char *h = tec_ctx_printf(ctx, "// ---- after %s ----\n", passes[i]);
    ck_assert_msg(count(d, h) == 1, "expected one dump after %s in\n%s", passes[i], d);
    const char *at = strstr(d, h);
    ck_assert_msg(at >= prev, "%s dumped out of order in\n%s", passes[i], d);
    prev = at;
  }
  ck_assert_msg(strncmp(d, "// ---- after ", 14) == 0, "the dump starts with a header:\n%s", d);
  /* the last dump is the final program, as tec_lower_print shows it (B's loops: `B.i`) */
  const char *t = tec_lower_str(f), *from = strchr(t, '\n') + 1;
  char *body = tec_ctx_alloc(ctx, strlen(t) + 1), *w = body;
  for (const char *p = from; *p && strcmp(p, "}\n") != 0; p++) {
    if (p == from || p[-1] == '\n') p += 2; /* tec_lower_print indents the body by two */
    *w++ = *p;
  }
  *w = '\0';
  tu_assert_contains(body, "for (B.i, 0, 64) {\n");
  const char *tail = d + strlen(d) - strlen(body);
  ck_assert_str_eq(tail, body);
}
END_TEST

START_TEST(dump_each_pass_output) {
  sch_schedule *s = two_stage((const ir_expr *const[]){te_size_var(ctx, "n"), te_size_var(ctx, "m")});
  const char *d = lower_dumped(s, 2, (te_tensor *const[]){A, C}, "1", NULL);
  /* schedule_ops: multi-dimensional provide/read, the intermediate realized */
  const char *so = section(d, "schedule_ops");
  tu_assert_contains(so, "realize B([0, n], [0, m]) {\n");
  tu_assert_contains(so, "produce B {");
  tu_assert_contains(so, "B[B.i, B.j] = (A[B.i, B.j] + 1f)\n");
  tu_assert_contains(so, "C[i, j] = (B[i, j]*2f)\n");
  assert_not_contains(so, "allocate");
  ck_assert_msg(strstr(so, "produce B {") < strstr(so, "produce C {"), "B before C:\n%s", so);
  /* storage_flatten: the realize became an allocate, accesses are 1-d */
  const char *sf = section(d, "storage_flatten");
  tu_assert_contains(sf, "allocate B[float32 * (n*m)] {\n");
  assert_not_contains(sf, "realize");
  assert_not_contains(sf, "A[i, j]");
  assert_not_contains(sf, "B[i, j]");
  tu_assert_contains(sf, "A[((B.i*m) + B.j)]"); /* arguments: no region min to subtract */
  /* simplify: clean row-major indices everywhere */
  const char *si = section(d, "simplify");
  ck_assert_str_eq(si, "allocate B[float32 * (n*m)] {\n"
                       "  produce B {\n"
                       "    for (B.i, 0, n) {\n"
                       "      for (B.j, 0, m) {\n"
                       "        B[((B.i*m) + B.j)] = (A[((B.i*m) + B.j)] + 1f)\n"
                       "      }\n"
                       "    }\n"
                       "  }\n"
                       "  produce C {\n"
                       "    for (i, 0, n) {\n"
                       "      for (j, 0, m) {\n"
                       "        C[((i*m) + j)] = (B[((i*m) + j)]*2f)\n"
                       "      }\n"
                       "    }\n"
                       "  }\n"
                       "}\n");
}
END_TEST

START_TEST(dump_filtered) {
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  te_tensor *args[] = {A, C};
  const char *d = lower_dumped(s, 2, args, "flatten", NULL);
  ck_assert_int_eq(count(d, "// ---- after "), 1);
  ck_assert_int_eq(strncmp(d, "// ---- after storage_flatten ----\n", 35), 0);
  d = lower_dumped(s, 2, args, "simplify", NULL);
  ck_assert_int_eq(count(d, "// ---- after simplify ----\n"), 1);
  /* every header names a pass containing the word */
  for (const char *h = strstr(d, "// ---- after "); h; h = strstr(h + 1, "// ---- after ")) {
    const char *eol = strchr(h, '\n');
    ck_assert_msg(eol && memmem(h, (size_t)(eol - h), "simplify", 8), "unexpected dump %.*s",
                  (int)(eol ? eol - h : 40), h);
  }
  d = lower_dumped(s, 2, args, "schedule_ops", NULL);
  ck_assert_int_eq(count(d, "// ---- after "), 1);
  tu_assert_contains(d, "// ---- after schedule_ops ----\n");
  /* off */
  ck_assert_str_eq(lower_dumped(s, 2, args, "0", NULL), "");
  ck_assert_str_eq(lower_dumped(s, 2, args, "", NULL), "");
  ck_assert_str_eq(lower_dumped(s, 2, args, NULL, NULL), "");
  ck_assert_str_eq(lower_dumped(s, 2, args, "no_such_pass", NULL), "");
}
END_TEST

/* ======== storage flatten ======== */

typedef struct node_count {
  int kind_expr[IR_EXPR_KIND_COUNT];
  int kind_stmt[IR_STMT_KIND_COUNT];
} node_count;
static void count_expr(ir_visitor *v, const ir_expr *e) {
  ((node_count *)v->user)->kind_expr[e->kind]++;
  ir_visit_expr_default(v, e);
}
static void count_stmt(ir_visitor *v, const ir_stmt *s) {
  ((node_count *)v->user)->kind_stmt[s->kind]++;
  ir_visit_stmt_default(v, s);
}
static node_count census(const ir_stmt *s) {
  node_count nc;
  memset(&nc, 0, sizeof nc);
  ir_visitor v;
  ir_visitor_init(&v, &nc);
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v.expr[i] = count_expr;
  for (int i = 0; i < IR_STMT_KIND_COUNT; i++) v.stmt[i] = count_stmt;
  ir_visit_stmt(&v, s);
  return nc;
}

/* Value of an integer index expression with vars bound to vals. */
static int64_t eval_int(const ir_expr *e, int n, const ir_expr *const *vars, const int64_t *vals) {
  int64_t a, b;
  switch (e->kind) {
  case IR_INT_IMM: return e->v.i;
  case IR_VAR:
    for (int i = 0; i < n; i++)
      if (vars[i] == e) return vals[i];
    ck_abort_msg("unbound variable %s", e->name);
    return 0;
  case IR_CAST: return eval_int(e->a, n, vars, vals);
  default: break;
  }
  a = eval_int(e->a, n, vars, vals);
  b = eval_int(e->b, n, vars, vals);
  switch (e->kind) {
  case IR_ADD: return a + b;
  case IR_SUB: return a - b;
  case IR_MUL: return a * b;
  case IR_DIV: return a / b;
  case IR_MOD: return a % b;
  case IR_FLOORDIV: return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  case IR_FLOORMOD: return ((a % b) + b) % b;
  case IR_MIN: return a < b ? a : b;
  case IR_MAX: return a > b ? a : b;
  default: ck_abort_msg("cannot evaluate %s", ir_expr_str(e));
  }
  return 0;
}

START_TEST(flatten_allocates_intermediates) {
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  lower_func *f = lower(s, 2, (te_tensor *const[]){A, C});
  node_count nc = census(f->body);
  ck_assert_int_eq(nc.kind_stmt[IR_S_ALLOCATE], 1);
  ck_assert_int_eq(nc.kind_stmt[IR_S_REALIZE], 0);
  ck_assert_int_eq(nc.kind_stmt[IR_S_PROVIDE], 0);
  ck_assert_int_eq(nc.kind_expr[IR_READ], 0);
  ck_assert_int_eq(nc.kind_expr[IR_REDUCE], 0);
  ck_assert_int_eq(nc.kind_stmt[IR_S_STORE], 2);
  ck_assert_int_eq(nc.kind_expr[IR_LOAD], 2);
  /* the allocate is the outermost statement: B's buffer, B's type, all of B */
  const ir_stmt *al = f->body;
  ck_assert_int_eq(al->kind, IR_S_ALLOCATE);
  ck_assert_str_eq(al->var->name, "B");
  ck_assert_int_eq(al->var->type.code, TEC_HANDLE);
  ck_assert(tec_dtype_eq(al->type, TEC_F32));
  int64_t size;
  ck_assert(ir_is_const_int(al->a, &size));
  ck_assert_int_eq(size, 64 * 32);
  const char *t = tec_lower_str(f);
  tu_assert_contains(t, "allocate B[float32 * 2048] {\n");
  /* arguments are buffers of the function, never allocated */
  assert_not_contains(t, "allocate A");
  assert_not_contains(t, "allocate C");
  ck_assert_int_eq(f->nargs, 2);
  ck_assert_str_eq(f->arg_bufs[0]->name, "A");
  ck_assert_int_eq(f->arg_bufs[0]->v.i, IR_VAR_BUFFER);
  ck_assert(tec_dtype_eq(f->arg_bufs[1]->type, TEC_HANDLET));
  ck_assert(ir_stmt_uses_var(f->body, f->arg_bufs[0]));
  ck_assert(ir_stmt_uses_var(f->body, f->arg_bufs[1]));
  ck_assert(f->arg_bufs[0] != al->var && f->arg_bufs[1] != al->var);
}
END_TEST

START_TEST(flatten_no_intermediate_when_output) {
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  /* B passed as an argument: the caller's buffer, not an allocation */
  lower_func *f = lower(s, 3, (te_tensor *const[]){A, B, C});
  node_count nc = census(f->body);
  ck_assert_int_eq(nc.kind_stmt[IR_S_ALLOCATE], 0);
  assert_not_contains(tec_lower_str(f), "allocate");
}
END_TEST

START_TEST(flatten_row_major) {
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 3, TE_SHAPE(ctx, 4, 8, 16));
  te_tensor *Y = compute("Y", 3, X->shape, plus_one, X);
  lower_func *f = lower(sch_create(ctx, 1, &Y), 2, (te_tensor *const[]){X, Y});
  const char *t = tec_lower_str(f);
  /* (i*8 + j)*16 + k, distributed */
  tu_assert_contains(t, "Y[(((i*128) + (j*16)) + k)] = (X[(((i*128) + (j*16)) + k)] + 1f)\n");

  /* symbolic: strides are products of the trailing extents */
  const ir_expr *p = te_size_var(ctx, "p"), *q = te_size_var(ctx, "q"), *r = te_size_var(ctx, "r");
  te_tensor *P = te_placeholder(ctx, "P", TEC_F32, 3, (const ir_expr *const[]){p, q, r});
  te_tensor *Q = compute("Q", 3, P->shape, plus_one, P);
  f = lower(sch_create(ctx, 1, &Q), 2, (te_tensor *const[]){P, Q});
  ck_assert_int_eq(f->nsize, 3);
  ck_assert_ptr_eq(f->size_vars[0], p);
  ck_assert_ptr_eq(f->size_vars[1], q);
  ck_assert_ptr_eq(f->size_vars[2], r);
  t = tec_lower_str(f);
  tu_assert_contains(t, "for (i, 0, p) {");
  tu_assert_contains(t, "for (k, 0, r) {");
  /* the index is ((i*q + j)*r + k) up to the simplifier's ordering: check by evaluation */
  const ir_stmt *st = f->body;
  while (st->kind != IR_S_STORE) {
    ck_assert_msg(st->body != NULL, "no store in\n%s", t);
    st = st->body;
  }
  const ir_expr *loopv[3];
  const ir_stmt *l = f->body;
  for (int i = 0; i < 3; i++) {
    while (l->kind != IR_S_FOR) l = l->body;
    loopv[i] = l->var;
    l = l->body;
  }
  const ir_expr *vars[6] = {p, q, r, loopv[0], loopv[1], loopv[2]};
  const int64_t vals[6] = {5, 6, 7, 2, 3, 4};
  ck_assert_int_eq(eval_int(st->a, 6, vars, vals), (2 * 6 + 3) * 7 + 4);
  const int64_t vals2[6] = {9, 10, 11, 8, 9, 10};
  ck_assert_int_eq(eval_int(st->a, 6, vars, vals2), (8 * 10 + 9) * 11 + 10);
}
END_TEST

/* ======== reductions ======== */

static te_tensor *MA, *MB;
static const ir_expr *matmul(tec_ctx *c, const ir_expr *const *idx, void *u) {
  const ir_expr *k = te_reduce_axis_n(c, "k", 16);
  return te_sum(ir_mul(TE_AT(MA, idx[0], k), TE_AT(MB, k, idx[1])), 1, &k, NULL);
}

START_TEST(reduction_init_update) {
  MA = te_placeholder(ctx, "MA", TEC_F32, 2, TE_SHAPE(ctx, 8, 16));
  MB = te_placeholder(ctx, "MB", TEC_F32, 2, TE_SHAPE(ctx, 16, 4));
  te_tensor *M = compute("M", 2, TE_SHAPE(ctx, 8, 4), matmul, NULL);
  lower_func *f;
  const char *d = lower_dumped(sch_create(ctx, 1, &M), 3, (te_tensor *const[]){MA, MB, M}, "1", &f);
  /* before flattening: the multi-dimensional init and update */
  const char *so = section(d, "schedule_ops");
  tu_assert_contains(so, "      M[i, j] = 0f\n"
                         "      for (k, 0, 16) {\n"
                         "        M[i, j] = (M[i, j] + (MA[i, k]*MB[k, j]))\n"
                         "      }\n");
  ck_assert_int_eq(count(so, "= 0f"), 1);
  /* structurally: for i { for j { seq(store init, for k { store update }) } } */
  const ir_stmt *s = f->body;
  ck_assert_int_eq(s->kind, IR_S_PRODUCE);
  ck_assert_ptr_eq(s->tensor, M);
  const ir_stmt *li = s->body, *lj = li->body;
  ck_assert_int_eq(li->kind, IR_S_FOR);
  ck_assert_str_eq(li->var->name, "i");
  ck_assert_int_eq(lj->kind, IR_S_FOR);
  ck_assert_str_eq(lj->var->name, "j");
  const ir_stmt *sq = lj->body;
  ck_assert_int_eq(sq->kind, IR_S_SEQ);
  ck_assert_int_eq(sq->n, 2);
  ck_assert_int_eq(sq->seq[0]->kind, IR_S_STORE);
  ck_assert(ir_is_zero(sq->seq[0]->b));
  ck_assert_int_eq(sq->seq[1]->kind, IR_S_FOR);
  ck_assert_str_eq(sq->seq[1]->var->name, "k");
  const ir_stmt *upd = sq->seq[1]->body;
  ck_assert_int_eq(upd->kind, IR_S_STORE);
  ck_assert_ptr_eq(upd->var, f->arg_bufs[2]);
  ck_assert_int_eq(upd->b->kind, IR_ADD);
  ck_assert_int_eq(upd->b->a->kind, IR_LOAD); /* reads its own element */
  ck_assert_ptr_eq(upd->b->a->a, f->arg_bufs[2]);
  ck_assert(ir_expr_equal(upd->b->a->b, upd->a));
  ck_assert(ir_expr_equal(sq->seq[0]->a, upd->a));
  tu_assert_contains(tec_lower_str(f),
                     "M[((i*4) + j)] = (M[((i*4) + j)] + (MA[((i*16) + k)]*MB[((k*4) + j)]))\n");
}
END_TEST

typedef struct comb_user {
  te_tensor *A;
  ir_combiner comb;
  int two_axes, with_cond;
} comb_user;
static const ir_expr *reduce_body(tec_ctx *c, const ir_expr *const *idx, void *u) {
  comb_user *cu = u;
  const ir_expr *k = te_reduce_axis_n(c, "k", 6);
  const ir_expr *l = te_reduce_axis_n(c, "l", 2);
  const ir_expr *src = cu->two_axes ? TE_AT(cu->A, idx[0], ir_add(ir_mul(k, ir_int(c, 2)), l))
                                    : TE_AT(cu->A, idx[0], k);
  const ir_expr *cond = cu->with_cond ? ir_le(k, idx[0]) : NULL;
  const ir_expr *axes[2] = {k, l};
  return ir_reduce(cu->comb, src, cu->two_axes ? 2 : 1, axes, cond);
}
static const char *lower_reduction(tec_dtype t, ir_combiner comb, int two_axes, int with_cond) {
  comb_user cu = {te_placeholder(ctx, "A", t, 2, TE_SHAPE(ctx, 4, 12)), comb, two_axes, with_cond};
  te_tensor *R = compute("R", 1, TE_SHAPE(ctx, 4), reduce_body, &cu);
  return tec_lower_str(lower(sch_create(ctx, 1, &R), 2, (te_tensor *const[]){cu.A, R}));
}

START_TEST(reduction_combiners) {
  const char *t = lower_reduction(TEC_F32, IR_COMB_MAX, 0, 0);
  tu_assert_contains(t, "      R[i] = -inff\n"
                        "      for (k, 0, 6) {\n"
                        "        R[i] = max(R[i], A[((i*12) + k)])\n");
  t = lower_reduction(TEC_F32, IR_COMB_MIN, 0, 0);
  tu_assert_contains(t, "R[i] = inff\n");
  tu_assert_contains(t, "R[i] = min(R[i], A[((i*12) + k)])\n");
  t = lower_reduction(TEC_F32, IR_COMB_PROD, 0, 0);
  tu_assert_contains(t, "R[i] = 1f\n");
  tu_assert_contains(t, "R[i] = (R[i]*A[((i*12) + k)])\n");
  t = lower_reduction(TEC_I32, IR_COMB_SUM, 0, 0);
  tu_assert_contains(t, "func f(A: int32[4, 12], R: int32[4]) {\n");
  tu_assert_contains(t, "R[i] = 0i32\n");
  tu_assert_contains(t, "R[i] = (R[i] + A[((i*12) + k)])\n");
  t = lower_reduction(TEC_I32, IR_COMB_MAX, 0, 0);
  tu_assert_contains(t, "R[i] = -2147483648i32\n");
}
END_TEST

START_TEST(reduction_two_axes) {
  const char *t = lower_reduction(TEC_F32, IR_COMB_SUM, 1, 0);
  ck_assert_int_eq(count(t, "= 0f"), 1);
  tu_assert_contains(t, "      R[i] = 0f\n"
                        "      for (k, 0, 6) {\n"
                        "        for (l, 0, 2) {\n"
                        "          R[i] = (R[i] + A[");
}
END_TEST

START_TEST(reduction_with_condition) {
  comb_user cu = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 12)), IR_COMB_SUM, 0, 1};
  te_tensor *R = compute("R", 1, TE_SHAPE(ctx, 4), reduce_body, &cu);
  lower_func *f;
  const char *d = lower_dumped(sch_create(ctx, 1, &R), 2, (te_tensor *const[]){cu.A, R}, "1", &f);
  /* the condition guards the update only; the init is unconditional */
  tu_assert_contains(section(d, "schedule_ops"), "    R[i] = 0f\n"
                                                 "    for (k, 0, 6) {\n"
                                                 "      if ((k <= i)) {\n"
                                                 "        R[i] = (R[i] + A[i, k])\n"
                                                 "      }\n");
  tu_assert_contains(section(d, "simplify"), "    R[i] = 0f\n"
                                             "    for (k, 0, 6) {\n"
                                             "      if ((k <= i)) {\n"
                                             "        R[i] = (R[i] + A[((i*12) + k)])\n"
                                             "      }\n");
  /* whatever later passes do with the condition, the init stays outside it, once */
  const char *t = tec_lower_str(f);
  ck_assert_int_eq(count(t, "R[i] = 0f\n"), 1);
  tu_assert_contains(t, "    for (i, 0, 4) {\n      R[i] = 0f\n");
}
END_TEST

START_TEST(reduction_intermediate) {
  comb_user cu = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 12)), IR_COMB_SUM, 0, 0};
  te_tensor *R = compute("R", 1, TE_SHAPE(ctx, 4), reduce_body, &cu);
  te_tensor *S = compute("S", 1, TE_SHAPE(ctx, 4), times_two, R);
  const char *t = tec_lower_str(lower(sch_create(ctx, 1, &S), 2, (te_tensor *const[]){cu.A, S}));
  ck_assert_str_eq(t, "func f(A: float32[4, 12], S: float32[4]) {\n"
                      "  allocate R[float32 * 4] {\n"
                      "    produce R {\n"
                      "      for (R.i, 0, 4) {\n"
                      "        R[R.i] = 0f\n"
                      "        for (R.k, 0, 6) {\n"
                      "          R[R.i] = (R[R.i] + A[((R.i*12) + R.k)])\n"
                      "        }\n"
                      "      }\n"
                      "    }\n"
                      "    produce S {\n"
                      "      for (i, 0, 4) {\n"
                      "        S[i] = (R[i]*2f)\n"
                      "      }\n"
                      "    }\n"
                      "  }\n"
                      "}\n");
}
END_TEST

/* ======== the printed function ======== */

static const ir_expr *positive(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_gt(te_read(in, in->ndim, idx), ir_int(c, 0));
}

START_TEST(signature_line) {
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  /* one stage, the output's: its loops print with their own names, as ir_stmt_str does */
  ck_assert_int_eq(sch_compute_inline(sch_stage_of(s, B)), 0);
  lower_func *f = tec_lower(s, "add_then_double", 2, (te_tensor *const[]){A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *t = tec_lower_str(f);
  const char *nl = strchr(t, '\n');
  ck_assert_ptr_nonnull(nl);
  ck_assert_str_eq(tec_ctx_printf(ctx, "%.*s", (int)(nl - t), t),
                   "func add_then_double(A: float32[64, 32], C: float32[64, 32]) {");
  /* the body, indented two spaces, then a closing brace */
  const char *body = ir_stmt_str(f->body);
  char *want = tec_ctx_alloc(ctx, strlen(body) * 2 + 4);
  char *w = want;
  for (const char *p = body; *p; p++) {
    if (p == body || p[-1] == '\n') *w++ = ' ', *w++ = ' ';
    *w++ = *p;
  }
  strcpy(w, "}\n");
  ck_assert_str_eq(nl + 1, want);
  /* tec_lower_print writes the same text */
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  tec_lower_print(m, f);
  fclose(m);
  ck_assert_str_eq(buf, t);
  free(buf);
  ck_assert_str_eq(tec_lower_str(NULL), "");
}
END_TEST

START_TEST(signature_types_and_sizes) {
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *I = te_placeholder(ctx, "I", TEC_I32, 2, (const ir_expr *const[]){n, ir_int(ctx, 4)});
  te_tensor *O = compute("O", 2, I->shape, positive, I);
  te_tensor *D = te_placeholder(ctx, "D", TEC_F64, 1, TE_SHAPE(ctx, 3));
  te_tensor *E = compute("E", 1, D->shape, times_two, D);
  sch_schedule *s = sch_create(ctx, 2, (te_tensor *const[]){O, E});
  lower_func *f = tec_lower(s, "mixed", 4, (te_tensor *const[]){I, D, O, E});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *t = tec_lower_str(f);
  ck_assert_int_eq(strncmp(t, "func mixed(I: int32[n, 4], D: float64[3], O: bool[n, 4], "
                              "E: float64[3]) {\n", 73), 0);
  /* two output stages with a loop `i` each: both print qualified (loop_names.c) */
  tu_assert_contains(t, "O[((O.i*4) + O.j)] = (I[((O.i*4) + O.j)] > 0i32)\n");
  tu_assert_contains(t, "E[E.i] = (D[E.i]*2f64)\n");
  ck_assert_int_eq(f->nsize, 1);
  ck_assert_ptr_eq(f->size_vars[0], n);
  ck_assert_str_eq(f->name, "mixed");
}
END_TEST


/* The loop variables of body, once each (visiting order). */
typedef struct loop_vars {
  const ir_expr *v[64];
  int n;
} loop_vars;
static void lv_for(ir_visitor *v, const ir_stmt *s) {
  loop_vars *lv = v->user;
  int seen = 0;
  for (int i = 0; i < lv->n; i++) seen |= lv->v[i] == s->var;
  if (!seen && lv->n < 64) lv->v[lv->n++] = s->var;
  ir_visit_stmt_default(v, s);
}

/* The distinct names after "for (" in text. */
static int printed_loop_names(const char *text, const char **names, int max) {
  int n = 0;
  for (const char *p = strstr(text, "for ("); p; p = strstr(p + 1, "for (")) {
    const char *b = p + 5, *e = strchr(b, ',');
    ck_assert_ptr_nonnull(e);
    const char *name = tec_ctx_printf(ctx, "%.*s", (int)(e - b), b);
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= strcmp(names[i], name) == 0;
    if (!seen && n < max) names[n++] = name;
  }
  return n;
}

START_TEST(loop_names_stage_qualified) {
  /* C's rows split by 8; B computed per block of rows, inside C's i.outer: both stages have a
   * loop the schedule calls `i` and one called `j` */
  sch_schedule *s = two_stage(TE_SHAPE(ctx, 64, 32));
  sch_stage *sb = sch_stage_of(s, B), *sc = sch_stage_of(s, C);
  sch_iter *io, *ii;
  ck_assert_int_eq(sch_split(sc, sch_axis(sc, 0), 8, &io, &ii), 0);
  ck_assert_int_eq(sch_compute_at(sb, sc, io), 0);
  lower_func *f = lower(s, 2, (te_tensor *const[]){A, C});
  const char *t = tec_lower_str(f);
  /* the output stage's loops keep their names; the producer's carry its stage's name */
  tu_assert_contains(t, "for (i.outer, 0, 8) {\n");
  tu_assert_contains(t, "produce B {\n          for (B.i, 0, 8) {\n            for (B.j, 0, 32) {\n");
  tu_assert_contains(t, "B[((B.i*32) + B.j)] = (A[(((B.i*32) + (i.outer*256)) + B.j)] + 1f)\n");
  tu_assert_contains(t, "for (i.inner, 0, 8) {\n          for (j, 0, 32) {\n");
  tu_assert_contains(t, "C[(((i.outer*256) + (i.inner*32)) + j)] = (B[((i.inner*32) + j)]*2f)\n");
  assert_not_contains(t, "for (i, ");
  assert_not_contains(t, "for (B.i.outer, ");
  /* the rule: as many printed loop names as loops */
  loop_vars lv = {.n = 0};
  ir_visitor v;
  ir_visitor_init(&v, &lv);
  v.stmt[IR_S_FOR] = lv_for;
  ir_visit_stmt(&v, f->body);
  const char *names[64];
  ck_assert_int_eq(lv.n, 5);
  ck_assert_int_eq(printed_loop_names(t, names, 64), lv.n);
  /* only the text: the variables, the schedule's names and the trace keep the plain ones */
  tu_assert_contains(ir_stmt_str(f->body), "for (i, 0, 8) {\n");
  ck_assert_ptr_eq(sch_leaf_named(sb, "i"), sch_axis(sb, 0));
  ck_assert_ptr_eq(sch_leaf_named(sc, "i.outer"), io);
  const char *js = sch_trace_json(ctx, sch_get_trace(s));
  ck_assert_ptr_nonnull(js);
  tu_assert_contains(js, "\"at\": \"i.outer\"");
  assert_not_contains(js, "B.i");
  /* TEC_DUMP_IR prints the same names */
  const char *dump = lower_dumped(s, 2, (te_tensor *const[]){A, C}, "storage_rewrite", NULL);
  tu_assert_contains(section(dump, "storage_rewrite"), "for (B.j, 0, 32) {\n");
}
END_TEST

START_TEST(loop_names_two_outputs) {
  /* two output stages with a loop `i` each: both qualified; a lone output stays plain */
  te_tensor *D = te_placeholder(ctx, "D", TEC_F32, 1, TE_SHAPE(ctx, 3));
  te_tensor *E = compute("E", 1, D->shape, times_two, D);
  te_tensor *G = compute("G", 1, D->shape, plus_one, D);
  sch_schedule *s = sch_create(ctx, 2, (te_tensor *const[]){E, G});
  const char *t = tec_lower_str(lower(s, 3, (te_tensor *const[]){D, E, G}));
  tu_assert_contains(t, "for (E.i, 0, 3) {\n      E[E.i] = (D[E.i]*2f)\n");
  tu_assert_contains(t, "for (G.i, 0, 3) {\n      G[G.i] = (D[G.i] + 1f)\n");
  s = sch_create(ctx, 1, &E);
  t = tec_lower_str(lower(s, 2, (te_tensor *const[]){D, E}));
  tu_assert_contains(t, "for (i, 0, 3) {\n      E[i] = (D[i]*2f)\n");
}
END_TEST

/* A chain A -> P -> R -> Q -> O, P computed inside R's rows and Q inside O's: P's and Q's
 * buffers are never live at once, and storage rewrite gives Q P's buffer. */
START_TEST(storage_reuse_printed) {
  A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 16));
  te_tensor *P = compute("P", 2, A->shape, plus_one, A);
  te_tensor *R = compute("R", 2, A->shape, times_two, P);
  te_tensor *Q = compute("Q", 2, A->shape, plus_one, R);
  te_tensor *O = compute("O", 2, A->shape, times_two, Q);
  sch_schedule *s = sch_create(ctx, 1, &O);
  sch_stage *sp = sch_stage_of(s, P), *sr = sch_stage_of(s, R);
  sch_stage *sq = sch_stage_of(s, Q), *so = sch_stage_of(s, O);
  ck_assert_int_eq(sch_compute_at(sp, sr, sch_axis(sr, 0)), 0);
  ck_assert_int_eq(sch_compute_at(sq, so, sch_axis(so, 0)), 0);
  lower_func *f = lower(s, 2, (te_tensor *const[]){A, O});
  const char *t = tec_lower_str(f);
  /* one buffer for P and Q, said where Q starts using it */
  tu_assert_contains(t, "allocate P[float32 * 16] {\n");
  assert_not_contains(t, "allocate Q");
  tu_assert_contains(t, "      // P now holds Q\n      produce O {\n");
  tu_assert_contains(t, "P[Q.j] = (R[((i*16) + Q.j)] + 1f)\n");
  tu_assert_contains(t, "O[((i*16) + j)] = (P[j]*2f)\n");
  ck_assert_int_eq(count(t, "//"), 1); /* the only comment */
}
END_TEST

Suite *lower_suite(void) {
  Suite *s = suite_create("lower");
  TCase *d = tcase_create("dump");
  tcase_add_checked_fixture(d, setup, teardown);
  tcase_add_test(d, dump_lists_passes);
  tcase_add_test(d, dump_each_pass_output);
  tcase_add_test(d, dump_filtered);
  suite_add_tcase(s, d);
  TCase *f = tcase_create("flatten");
  tcase_add_checked_fixture(f, setup, teardown);
  tcase_add_test(f, flatten_allocates_intermediates);
  tcase_add_test(f, flatten_no_intermediate_when_output);
  tcase_add_test(f, flatten_row_major);
  suite_add_tcase(s, f);
  TCase *r = tcase_create("reduce");
  tcase_add_checked_fixture(r, setup, teardown);
  tcase_add_test(r, reduction_init_update);
  tcase_add_test(r, reduction_combiners);
  tcase_add_test(r, reduction_two_axes);
  tcase_add_test(r, reduction_with_condition);
  tcase_add_test(r, reduction_intermediate);
  suite_add_tcase(s, r);
  TCase *p = tcase_create("print");
  tcase_add_checked_fixture(p, setup, teardown);
  tcase_add_test(p, signature_line);
  tcase_add_test(p, signature_types_and_sizes);
  tcase_add_test(p, loop_names_stage_qualified);
  tcase_add_test(p, loop_names_two_outputs);
  tcase_add_test(p, storage_reuse_printed);
  suite_add_tcase(s, p);
  return s;
}

int main(void) { return tu_run(lower_suite()); }
