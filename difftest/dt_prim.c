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
#include "tec/difftest.h"
#include "difftest/dt_internal.h"
#include "schedule/internal.h"

static const char *const program_enum[DT_NPROGRAMS] = {
    "DT_MATMUL", "DT_CONV2D", "DT_DEPTHWISE", "DT_ELEMWISE", "DT_REDUCE", "DT_PRODCONS",
    "DT_EXTERN", "DT_SCAN"};

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
  if (in->target) dt_text_printf(text, "p->target = \"%s\";\n", in->target);
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

/* The name a loop the call creates will get (split.c, fuse.c): "<x>.outer" / "<x>.inner" of
 * the loop it comes from (tile: x for xo/xi, y for yo/yi), "<a>.<b>.fused". Only the
 * reproducer's identifier depends on it. */
static void created_loop_name(const char *field, sch_iter *const *in, int nin, char *out,
                              size_t cap) {
  const char *a = nin > 0 && in[0] ? in[0]->name : "null";
  const char *b = nin > 1 && in[1] ? in[1]->name : "null";
  size_t n = strlen(field);
  if (strcmp(field, "fused") == 0) {
    snprintf(out, cap, "%.60s.%.60s.fused", a, b);
    return;
  }
  int outer = strcmp(field, "outer") == 0 || (n == 2 && field[1] == 'o');
  snprintf(out, cap, "%.70s.%s", n == 2 && field[0] == 'y' ? b : a, outer ? "outer" : "inner");
}

/* The primitive list (SCH_FOR_EACH_PRIM) drives everything below: a dt_prim's fields fill the
 * primitive's operands in order — stages from stage then stage2, iters and axes from
 * iters[0..], an iter list from all of iters, tensors from tensor, a tensor list from readers,
 * ints from a then b, a string from str, a value from a (if has_value) — and the call is
 * printed, made and checked the same way for every primitive. */
int dt_prim_apply(dt_state *st, const dt_prim *p) {
  tec_ctx *ctx = st->in->ctx;
  dt_text *tx = st->text;
  sch_opd_spec sp[SCH_MAX_OPD];
  int ns = sch_prim_spec(p->kind, sp);
  sch_arg a[SCH_MAX_OPD];
  const char *text[SCH_MAX_OPD] = {0};
  int cnt[SCH_MAX_OPD] = {0};
  char ids[SCH_MAX_OPD][DT_ID];
  sch_iter *its[6] = {0}, *in_iters[6] = {0};
  te_tensor *rd[4] = {0};
  memset(a, 0, sizeof a);
  int nstage = 0, niter = 0, nint = 0, unresolved = !ns;
  for (int i = 0; i < p->niter && i < 6; i++) unresolved |= resolve_iter(st, p->iters[i], &its[i]);
  for (int k = 0; k < ns && !unresolved; k++) {
    if (sp[k].out) continue;
    switch (sp[k].type) {
    case SCH_T_STAGE: {
      const char *id = nstage++ ? p->stage2 : p->stage;
      unresolved |= !(a[k].stage = dt_state_stage(st, id));
      text[k] = id;
      break;
    }
    case SCH_T_TENSOR:
      unresolved |= !(a[k].tensor = dt_state_tensor(st, p->tensor));
      text[k] = p->tensor;
      break;
    case SCH_T_ITER:
    case SCH_T_AXIS:
      a[k].iter = niter < 6 ? its[niter] : NULL;
      text[k] = iter_text(niter < 6 ? p->iters[niter] : "");
      if (niter < 6) in_iters[niter] = a[k].iter;
      niter++;
      break;
    case SCH_T_ITERS: {
      const char *list = "";
      for (int i = 0; i < p->niter && i < 6; i++)
        list = tec_ctx_printf(ctx, "%s%s%s", list, i ? ", " : "", iter_text(p->iters[i]));
      a[k].n = p->niter;
      a[k].iters = its;
      text[k] = list;
      cnt[k] = p->niter;
      break;
    }
    case SCH_T_TENSORS: {
      const char *list = "";
      for (int i = 0; i < p->nreaders && i < 4; i++) {
        unresolved |= !(rd[i] = dt_state_tensor(st, p->readers[i]));
        list = tec_ctx_printf(ctx, "%s%s%s", list, i ? ", " : "", p->readers[i]);
      }
      a[k].n = p->nreaders;
      a[k].tensors = rd;
      text[k] = list;
      cnt[k] = p->nreaders;
      break;
    }
    case SCH_T_INT:
      a[k].i = nint++ ? p->b : p->a;
      text[k] = tec_ctx_printf(ctx, "%lld", (long long)a[k].i);
      break;
    case SCH_T_STR:
      a[k].str = p->str;
      text[k] = sch_c_string(ctx, p->str);
      break;
    case SCH_T_VALUE:
      a[k].value = p->has_value ? ir_int(ctx, p->a) : NULL;
      text[k] = p->has_value ? tec_ctx_printf(ctx, "ir_int(ctx, %lld)", (long long)p->a) : "NULL";
      break;
    }
  }
  if (unresolved) {
    dt_text_printf(tx, "/* skipped: an argument of a %s no longer exists */\n",
                   ns ? sch_prim_name(p->kind) : "(unknown) primitive");
    return 0;
  }
  /* identifiers for what the call creates, before the call (a crash in it keeps the line) */
  sch_stage *s0 = NULL;
  for (int k = 0; k < ns && !s0; k++) s0 = a[k].stage;
  for (int k = 0; k < ns; k++) {
    if (!sp[k].out) continue;
    char name[2 * DT_ID];
    if (sp[k].type == SCH_T_TENSOR) {
      const char *scope = p->kind == SCH_PRIM_RFACTOR ? "rf" : p->str;
      const char *predicted = sch_cache_name(st->in->sched, a[0].tensor->name, scope);
      snprintf(name, sizeof name, "%s", predicted ? predicted : a[0].tensor->name);
      dt_ident(ids[k], DT_ID, name);
    } else {
      created_loop_name(sp[k].field, in_iters, niter, name, sizeof name);
      loop_id(ids[k], s0, name);
      declare(st, ids[k], NULL);
    }
    text[k] = ids[k];
  }
  size_t start = tx->len;
  const char *call = sch_prim_call_c(ctx, p->kind, text, cnt);
  dt_text_printf(tx, "%s", call ? call : "/* the call's text: out of memory */");
  tec_ctx_clear_error(ctx);
  int ok = sch_prim_invoke(st->in->sched, p->kind, a) == 0;
  te_tensor *made = NULL;
  for (int k = 0; k < ns; k++) {
    if (!sp[k].out) continue;
    if (sp[k].type == SCH_T_TENSOR) made = a[k].tensor;
    else if (ok) bind(st, ids[k], a[k].iter);
  }
  if (!ok && made == NULL && tx->len > start) {
    /* a refused cache: no variable (its name may be taken by a later, accepted cache) */
    char *eq = strstr(tx->buf + start, " = ");
    int has_result = 0;
    for (int k = 0; k < ns; k++) has_result |= sp[k].out && sp[k].type == SCH_T_TENSOR;
    if (has_result && eq) {
      char line[1024];
      snprintf(line, sizeof line, "%s", eq + 3);
      tx->len = start;
      tx->buf[start] = 0;
      dt_text_printf(tx, "(void)%s", line);
    }
  }
  int rc = outcome(st, ok);
  if (rc == 0 && made) {
    for (int k = 0; k < ns; k++)
      if (sp[k].out && sp[k].type == SCH_T_TENSOR) new_tensor(st, ids[k], made);
  }
  return rc;
}
