/* dt_prim.c — applying a primitive held as data: resolve its identifiers, write it as a C
 * call into the reproducer, call it, and check the error protocol (0, or -1/NULL with a
 * non-empty message). New loops and cache stages get identifiers here:
 *
 *   split C.i by 8     ->  sch_iter *C_i_outer, *C_i_inner;
 *                          sch_split(s_C, C_i, 8, &C_i_outer, &C_i_inner);
 *   cache_write C      ->  te_tensor *C_local = sch_cache_write(s, C, "local");
 *                          sch_stage *s_C_local = sch_stage_of(s, C_local);
 *                          sch_iter *C_local_i = sch_axis(s_C_local, 0), ...;
 */
#include <string.h>
#include "tec/tec.h"
#include "difftest/dt_internal.h"
#include "schedule/internal.h"

static const char *const program_enum[DT_NPROGRAMS] = {
    "DT_MATMUL", "DT_CONV2D", "DT_DEPTHWISE", "DT_ELEMWISE", "DT_REDUCE", "DT_PRODCONS"};

void dt_stage_id(char *out, const sch_stage *s) {
  char id[DT_ID];
  dt_ident(id, sizeof id, s->tensor->name);
  snprintf(out, DT_ID, "s_%.76s", id);
}

static int iter_index(dt_state *st, const char *id) {
  for (int i = 0; i < st->niter; i++)
    if (strcmp(st->iters[i].id, id) == 0) return i;
  return -1;
}

/* Makes id unique among declared identifiers (appends _2, _3, ...), then declares it. */
static void declare(dt_state *st, char *id, sch_iter *it) {
  char base[DT_ID];
  snprintf(base, sizeof base, "%s", id);
  for (int k = 2; iter_index(st, id) >= 0; k++) snprintf(id, DT_ID, "%.60s_%d", base, k);
  if (st->niter < DT_MAX_ITERS) {
    snprintf(st->iters[st->niter].id, DT_ID, "%s", id);
    st->iters[st->niter].it = it;
    st->niter++;
  }
}

/* The identifier a new loop named name of stage s would get: "<tensor>_<loop>". */
static void loop_id(char *out, const sch_stage *s, const char *name) {
  char a[DT_ID], b[DT_ID];
  dt_ident(a, sizeof a, s ? s->tensor->name : "none");
  dt_ident(b, sizeof b, name);
  snprintf(out, DT_ID, "%.38s_%.38s", a, b);
}

/* Declares the stage of tensor t and its root loops in the reproducer. */
static void declare_stage(dt_state *st, sch_stage *s) {
  char sid[DT_ID], tid[DT_ID];
  dt_stage_id(sid, s);
  dt_ident(tid, sizeof tid, s->tensor->name);
  dt_text_printf(st->text, "sch_stage *%s = sch_stage_of(s, %s);\n", sid, tid);
  int ndata = s->tensor->ndim;
  for (int i = 0; i < ndata + s->tensor->nreduce; i++) {
    sch_iter *it = i < ndata ? sch_axis(s, i) : sch_reduce_axis(s, i - ndata);
    if (!it) {
      tec_ctx_clear_error(st->in->ctx);
      continue;
    }
    char id[DT_ID];
    loop_id(id, s, it->name);
    declare(st, id, it);
    dt_text_printf(st->text, "sch_iter *%s = %s(%s, %d);\n", id,
                   i < ndata ? "sch_axis" : "sch_reduce_axis", sid, i < ndata ? i : i - ndata);
  }
}

void dt_state_init(dt_state *st, dt_instance *in, dt_text *text) {
  memset(st, 0, sizeof *st);
  st->in = in;
  st->text = text;
  dt_text_printf(text, "tec_ctx *ctx = tec_ctx_new();\n");
  dt_text_printf(text, "dt_instance *p = dt_instance_new(ctx, %s, %d); /* %s */\n",
                 program_enum[in->program], in->variant, dt_program_name(in->program));
  dt_text_printf(text, "sch_schedule *s = p->sched;\n");
  sch_schedule *s = in->sched;
  for (int i = 0; i < s->nstage; i++) {
    char tid[DT_ID];
    dt_ident(tid, sizeof tid, s->stages[i]->tensor->name);
    dt_text_printf(text, "te_tensor *%s = dt_instance_tensor(p, \"%s\");\n", tid,
                   s->stages[i]->tensor->name);
  }
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor->op == TE_COMPUTE) declare_stage(st, s->stages[i]);
}

sch_stage *dt_state_stage(dt_state *st, const char *id) {
  sch_schedule *s = st->in->sched;
  for (int i = 0; i < s->nstage; i++) {
    char sid[DT_ID];
    dt_stage_id(sid, s->stages[i]);
    if (s->stages[i]->tensor->op == TE_COMPUTE && strcmp(sid, id) == 0) return s->stages[i];
  }
  return NULL;
}

te_tensor *dt_state_tensor(dt_state *st, const char *id) {
  sch_schedule *s = st->in->sched;
  for (int i = 0; i < s->nstage; i++) {
    char tid[DT_ID];
    dt_ident(tid, sizeof tid, s->stages[i]->tensor->name);
    if (strcmp(tid, id) == 0) return s->stages[i]->tensor;
  }
  return NULL;
}

sch_iter *dt_state_iter(dt_state *st, const char *id) {
  int k = iter_index(st, id);
  return k >= 0 ? st->iters[k].it : NULL;
}

const char *dt_state_iter_id(dt_state *st, const sch_iter *it) {
  for (int i = 0; i < st->niter; i++)
    if (it && st->iters[i].it == it) return st->iters[i].id;
  return "";
}

int64_t dt_iter_extent(const sch_iter *it) {
  int64_t v;
  if (!it) return -1;
  if (it->dom_extent) return ir_is_const_int(it->dom_extent, &v) ? v : -1;
  const sch_stage *s = it->stage;
  for (int r = 0; r < s->nrel; r++) {
    const sch_relation *rel = &s->rel[r];
    if (rel->kind == SCH_REL_FUSE && rel->fused == it) {
      int64_t a = dt_iter_extent(rel->outer), b = dt_iter_extent(rel->inner);
      return a < 0 || b < 0 ? -1 : a * b;
    }
    if (rel->kind != SCH_REL_SPLIT || (rel->outer != it && rel->inner != it)) continue;
    int64_t pe = dt_iter_extent(rel->parent), f = -1, np = -1;
    if (rel->factor) ir_is_const_int(rel->factor, &f);
    if (rel->nparts) ir_is_const_int(rel->nparts, &np);
    if (rel->outer == it) return f > 0 ? (pe < 0 ? -1 : (pe + f - 1) / f) : np;
    return f > 0 ? f : (pe < 0 || np <= 0 ? -1 : (pe + np - 1) / np);
  }
  return -1;
}

/* ---- the error protocol ---- */

/* After a call that returned ok (1) or not (0): 0 accepted, 1 refused, -1 broken. */
static int outcome(dt_state *st, int ok) {
  tec_ctx *ctx = st->in->ctx;
  const char *e = tec_ctx_error(ctx);
  st->prims++;
  if (ok && !e) {
    dt_text_printf(st->text, "\n");
    return 0;
  }
  if (ok) {
    snprintf(st->bad, sizeof st->bad, "succeeded but left an error: %s", e);
    dt_text_printf(st->text, " /* succeeded, but left an error: %s */\n", e);
    return -1;
  }
  if (!e || !*e) {
    snprintf(st->bad, sizeof st->bad, "refused without a message");
    dt_text_printf(st->text, " /* refused WITHOUT A MESSAGE */\n");
    return -1;
  }
  dt_text_printf(st->text, " /* refused: %s */\n", e);
  st->refused++;
  tec_ctx_clear_error(ctx);
  return 1;
}

/* Resolves an iter argument: "" is a deliberate NULL; an unknown identifier fails. */
static int resolve_iter(dt_state *st, const char *id, sch_iter **out) {
  *out = NULL;
  if (!*id) return 0;
  *out = dt_state_iter(st, id);
  return *out ? 0 : -1;
}

static const char *iter_text(const char *id) { return *id ? id : "NULL"; }

/* Declares the identifiers of new loops: returns them in ids (made unique). */
static void new_loops(dt_state *st, const sch_stage *s, const sch_iter *from, const char *suffix,
                      char *id) {
  char name[2 * DT_ID];
  snprintf(name, sizeof name, "%.70s.%s", from ? from->name : "null", suffix);
  loop_id(id, s, name);
  declare(st, id, NULL);
}

static void bind(dt_state *st, const char *id, sch_iter *it) {
  int k = iter_index(st, id);
  if (k >= 0) st->iters[k].it = it;
}

/* After a cache primitive: name the new tensor, its stage and its loops. */
static void new_tensor(dt_state *st, const char *printed, te_tensor *t) {
  char tid[DT_ID];
  dt_ident(tid, sizeof tid, t->name);
  if (strcmp(tid, printed) != 0) dt_text_printf(st->text, "te_tensor *%s = %s;\n", tid, printed);
  for (int i = 0; i < st->in->sched->nstage; i++)
    if (st->in->sched->stages[i]->tensor == t) declare_stage(st, st->in->sched->stages[i]);
}

int dt_prim_apply(dt_state *st, const dt_prim *p) {
  tec_ctx *ctx = st->in->ctx;
  dt_text *tx = st->text;
  sch_stage *s = NULL, *s2 = NULL;
  sch_iter *it[6] = {0};
  int needs_stage = p->kind != DT_P_CACHE_READ && p->kind != DT_P_CACHE_WRITE;
  int unresolved = needs_stage && !(s = dt_state_stage(st, p->stage));
  if (p->kind == DT_P_COMPUTE_AT) unresolved |= !(s2 = dt_state_stage(st, p->stage2));
  for (int i = 0; i < p->niter && i < 6; i++) unresolved |= resolve_iter(st, p->iters[i], &it[i]);
  if (unresolved) {
    dt_text_printf(tx, "/* skipped: an argument of a %d primitive no longer exists */\n", p->kind);
    return 0;
  }
  tec_ctx_clear_error(ctx);
  int ok = 0;
  switch (p->kind) {
  case DT_P_SPLIT:
  case DT_P_SPLIT_NPARTS: {
    char o[DT_ID], in[DT_ID];
    new_loops(st, s, it[0], "outer", o);
    new_loops(st, s, it[0], "inner", in);
    const char *fn = p->kind == DT_P_SPLIT ? "sch_split" : "sch_split_nparts";
    dt_text_printf(tx, "sch_iter *%s, *%s;\n%s(%s, %s, %lld, &%s, &%s);", o, in, fn, p->stage,
                   iter_text(p->iters[0]), (long long)p->a, o, in);
    sch_iter *ro, *ri;
    ok = (p->kind == DT_P_SPLIT ? sch_split : sch_split_nparts)(s, it[0], p->a, &ro, &ri) == 0;
    if (ok) bind(st, o, ro), bind(st, in, ri);
    break;
  }
  case DT_P_FUSE: {
    char f[DT_ID], name[2 * DT_ID];
    snprintf(name, sizeof name, "%.60s.%.60s.fused", it[0] ? it[0]->name : "null",
             it[1] ? it[1]->name : "null");
    loop_id(f, s, name);
    declare(st, f, NULL);
    dt_text_printf(tx, "sch_iter *%s;\nsch_fuse(%s, %s, %s, &%s);", f, p->stage,
                   iter_text(p->iters[0]), iter_text(p->iters[1]), f);
    sch_iter *rf;
    ok = sch_fuse(s, it[0], it[1], &rf) == 0;
    if (ok) bind(st, f, rf);
    break;
  }
  case DT_P_REORDER:
    dt_text_printf(tx, "sch_reorder(%s, %d, (sch_iter *[]){", p->stage, p->niter);
    for (int i = 0; i < p->niter; i++)
      dt_text_printf(tx, "%s%s", i ? ", " : "", iter_text(p->iters[i]));
    dt_text_printf(tx, "});");
    ok = sch_reorder(s, p->niter, it) == 0;
    break;
  case DT_P_TILE: {
    char xo[DT_ID], yo[DT_ID], xi[DT_ID], yi[DT_ID];
    new_loops(st, s, it[0], "outer", xo);
    new_loops(st, s, it[1], "outer", yo);
    new_loops(st, s, it[0], "inner", xi);
    new_loops(st, s, it[1], "inner", yi);
    dt_text_printf(tx, "sch_iter *%s, *%s, *%s, *%s;\nsch_tile(%s, %s, %s, %lld, %lld, &%s, &%s, "
                   "&%s, &%s);", xo, yo, xi, yi, p->stage, iter_text(p->iters[0]),
                   iter_text(p->iters[1]), (long long)p->a, (long long)p->b, xo, yo, xi, yi);
    sch_iter *r[4];
    ok = sch_tile(s, it[0], it[1], p->a, p->b, &r[0], &r[1], &r[2], &r[3]) == 0;
    if (ok) bind(st, xo, r[0]), bind(st, yo, r[1]), bind(st, xi, r[2]), bind(st, yi, r[3]);
    break;
  }
  case DT_P_COMPUTE_AT:
    dt_text_printf(tx, "sch_compute_at(%s, %s, %s);", p->stage, p->stage2, iter_text(p->iters[0]));
    ok = sch_compute_at(s, s2, it[0]) == 0;
    break;
  case DT_P_COMPUTE_INLINE:
    dt_text_printf(tx, "sch_compute_inline(%s);", p->stage);
    ok = sch_compute_inline(s) == 0;
    break;
  case DT_P_COMPUTE_ROOT:
    dt_text_printf(tx, "sch_compute_root(%s);", p->stage);
    ok = sch_compute_root(s) == 0;
    break;
  case DT_P_CACHE_READ:
  case DT_P_CACHE_WRITE: {
    te_tensor *t = dt_state_tensor(st, p->tensor), *rd[4] = {0};
    int missing = !t;
    for (int i = 0; i < p->nreaders && i < 4; i++) missing |= !(rd[i] = dt_state_tensor(st, p->readers[i]));
    if (missing) {
      dt_text_printf(tx, "/* skipped: a tensor of a cache primitive no longer exists */\n");
      return 0;
    }
    char v[DT_ID], name[2 * DT_ID];
    /* the name the cache will get, before the call (a crash in it keeps the line) */
    const char *predicted = sch_cache_name(st->in->sched, t->name, p->str);
    snprintf(name, sizeof name, "%s", predicted ? predicted : t->name);
    dt_ident(v, sizeof v, name);
    size_t start = tx->len;
    te_tensor *c;
    if (p->kind == DT_P_CACHE_READ) {
      dt_text_printf(tx, "te_tensor *%s = sch_cache_read(s, %s, \"%s\", %d, (te_tensor *[]){", v,
                     p->tensor, p->str, p->nreaders);
      for (int i = 0; i < p->nreaders; i++) dt_text_printf(tx, "%s%s", i ? ", " : "", p->readers[i]);
      dt_text_printf(tx, "});");
      c = sch_cache_read(st->in->sched, t, p->str, p->nreaders, rd);
    } else {
      dt_text_printf(tx, "te_tensor *%s = sch_cache_write(s, %s, \"%s\");", v, p->tensor, p->str);
      c = sch_cache_write(st->in->sched, t, p->str);
    }
    if (!c && tx->len > start) {
      /* refused: no variable (its name may be taken by a later, accepted cache) */
      char line[1024];
      snprintf(line, sizeof line, "%s", tx->buf + start);
      char *eq = strstr(line, " = ");
      tx->len = start;
      tx->buf[start] = 0;
      dt_text_printf(tx, "(void)%s", eq ? eq + 3 : line);
    }
    int rc = outcome(st, c != NULL);
    if (rc == 0) new_tensor(st, v, c);
    return rc;
  }
  case DT_P_PARALLEL:
  case DT_P_VECTORIZE:
  case DT_P_UNROLL: {
    static const char *const fn[] = {"sch_parallel", "sch_vectorize", "sch_unroll"};
    int k = p->kind - DT_P_PARALLEL;
    dt_text_printf(tx, "%s(%s, %s);", fn[k], p->stage, iter_text(p->iters[0]));
    ok = (k == 0 ? sch_parallel : k == 1 ? sch_vectorize : sch_unroll)(s, it[0]) == 0;
    break;
  }
  case DT_P_PRAGMA:
    if (p->has_value)
      dt_text_printf(tx, "sch_pragma(%s, %s, \"%s\", ir_int(ctx, %lld));", p->stage,
                     iter_text(p->iters[0]), p->str, (long long)p->a);
    else
      dt_text_printf(tx, "sch_pragma(%s, %s, \"%s\", NULL);", p->stage, iter_text(p->iters[0]),
                     p->str);
    ok = sch_pragma(s, it[0], p->str, p->has_value ? ir_int(ctx, p->a) : NULL) == 0;
    break;
  case DT_P_STORAGE_ALIGN:
    dt_text_printf(tx, "sch_storage_align(%s, %s, %lld, %lld);", p->stage, iter_text(p->iters[0]),
                   (long long)p->a, (long long)p->b);
    ok = sch_storage_align(s, it[0], p->a, p->b) == 0;
    break;
  case DT_P_PREFETCH: {
    te_tensor *t = dt_state_tensor(st, p->tensor);
    if (!t) {
      dt_text_printf(tx, "/* skipped: the tensor of a prefetch no longer exists */\n");
      return 0;
    }
    dt_text_printf(tx, "sch_prefetch(%s, %s, %s, %lld);", p->stage, p->tensor,
                   iter_text(p->iters[0]), (long long)p->a);
    ok = sch_prefetch(s, t, it[0], p->a) == 0;
    break;
  }
  default:
    return 0;
  }
  return outcome(st, ok);
}
