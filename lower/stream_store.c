/* stream_store.c — lower_stream_store: under pragma "stream_store" (on a loop of stage S),
 * the whole-vector stores of S's output go around the caches (non-temporal stores).
 *
 *   attr pragma_stream_store = <S's index> {       for (i, ...) for (j.outer, ...)
 *     for (i, ...) for (j.outer, ...)         ->      attr stream_store {
 *       out[ramp(i*W + j.outer*16, 1, 16)] = v          out[ramp(i*W + j.outer*16, 1, 16)] = v
 *   }                                               }
 *
 * Codegen (codegen_mem.c) gives a store under `attr stream_store` LLVM's !nontemporal
 * metadata: vmovntps on x86 (each function that made one ends with an sfence, so the lines
 * are in memory before a parallel task returns to the join or the call to its caller),
 * stnp on AArch64. A streamed line is written whole without being read first (no
 * read-for-ownership), which saves a third of the memory traffic of a stage that streams an
 * output much larger than the last-level cache; on an output that fits a cache it costs (the
 * next reader fetches it back from memory), so the auto-scheduler asks for it by size
 * (autosched/rule_stream.c).
 *
 * A store of S's output streams when: the output is an argument of the function (not a buffer
 * of it) that the function never reads (a load, an extern call's argument: the streamed line
 * would come back from memory); the store has no predicate; its value is a vector of 16, 32 or
 * 64 bytes written at consecutive elements; its first element's byte offset is a known
 * multiple of the vector's bytes (TEC_ALIGN-aligned buffers: the vector is aligned; a split's
 * shift_inwards tail or a width not known is not). Every other store of the output stays a
 * plain one and the lowered function's notes say why (strict mode: an error). Stores of other
 * stages inside the loop (attached producers) are not the pragma's and stay as they are.
 * Runs after unroll (the final vector stores); the pragma's attribute is consumed.
 */
#include <string.h>
#include "arith/arith.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"
#include "schedule/pragma.h"

#define SS_MAX_OUT 16

typedef struct ss_state {
  const lower_state *ls;
  const lower_func *f;
  const ir_stmt *whole;               /* the function's program: reads are looked for here */
  const ir_expr *bufs[SS_MAX_OUT];    /* the current pragma's streamable buffers */
  int nbuf;
  const char *loop, *stage;
  int streamed, plain;
} ss_state;

typedef struct ss_reads {
  const ir_expr *buf;
  int found;
} ss_reads;

static void reads_expr(ir_visitor *v, const ir_expr *e) {
  ss_reads *r = v->user;
  if (e == r->buf || (e->kind == IR_LOAD && e->a == r->buf)) r->found = 1;
  if (!r->found) ir_visit_expr_default(v, e);
}

/* 1 if an expression of s names buf (a load, an extern call's argument); stores to it are
 * not reads. */
static int reads(const ir_stmt *s, const ir_expr *buf) {
  ss_reads r = {buf, 0};
  ir_visitor v;
  ir_visitor_init(&v, &r);
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v.expr[i] = reads_expr;
  ir_visit_stmt(&v, s);
  return r.found;
}

static int pred_always(const ir_expr *c) {
  int64_t v;
  return !c || (c->type.lanes == 1 && ir_is_const_int(c, &v) && v != 0);
}

/* NULL if s can stream, else why not. */
static const char *why_plain(const ir_stmt *s) {
  const ir_expr *v = s->b, *ie = s->a;
  int64_t one;
  if (!pred_always(s->c)) return "it has a predicate (a guarded tail): only whole vectors stream";
  if (!v || v->type.lanes < 2) return "it stores one element, not a vector";
  int64_t bytes = (int64_t)tec_dtype_bytes(v->type) * v->type.lanes;
  if (bytes != 16 && bytes != 32 && bytes != 64)
    return tec_ctx_printf(s->ctx, "its vector is %lld bytes (16, 32 or 64 stream)",
                          (long long)bytes);
  const ir_expr *base = ie;
  if (ie->type.lanes != 1) {
    if (ie->kind != IR_RAMP || !ir_is_const_int(ie->b, &one) || one != 1)
      return "its lanes are not consecutive elements (a scatter)";
    base = ie->a;
  }
  if ((arith_known_multiple(base) * tec_dtype_bytes(v->type)) % bytes)
    return tec_ctx_printf(s->ctx, "its first element is not known to start a %lld-byte aligned "
                          "vector (a shift_inwards tail, or a row width that is not a multiple of "
                          "the vector)", (long long)bytes);
  return NULL;
}

static const ir_stmt *ss_store(ir_mutator *m, const ir_stmt *s) {
  ss_state *st = m->user;
  int k = 0;
  while (k < st->nbuf && st->bufs[k] != s->var) k++;
  if (k == st->nbuf) return s; /* another stage's store */
  const char *why = why_plain(s);
  if (!why) return st->streamed++, ir_attr("stream_store", NULL, s);
  st->plain++;
  if (tec_ctx_note(s->ctx, "stream_store: a store to '%s' in loop '%s' of stage '%s' stays a "
                           "plain (cached) store: %s", s->var->name ? s->var->name : "?",
                   st->loop, st->stage, why))
    return NULL;
  return s;
}

/* The output buffers of stage si that may stream; a note for each that may not. -1: out of
 * memory (a note failed). */
static int targets(ss_state *st, int si) {
  const sch_stage *sg = si >= 0 && si < st->ls->s->nstage ? st->ls->s->stages[si] : NULL;
  st->nbuf = 0;
  if (!sg) return 0;
  const te_tensor *t = sg->tensor;
  st->stage = t->name ? t->name : "?";
  int nv = t->nout > 1 ? t->nout : 1;
  for (int o = 0; o < nv && o < SS_MAX_OUT; o++) {
    const te_tensor *out = nv > 1 ? t->outputs[o] : t;
    const ir_expr *buf = NULL;
    for (int a = 0; a < st->f->nargs && !buf; a++)
      if (st->f->args[a] == out) buf = st->f->arg_bufs[a];
    const char *why = NULL;
    if (!buf)
      why = "it is not an argument of the function (a buffer of it, which its readers read back)";
    else if (reads(st->whole, buf))
      why = "the function reads it (a streamed line would be fetched back from memory)";
    if (!why) {
      st->bufs[st->nbuf++] = buf;
      continue;
    }
    if (tec_ctx_note(st->ls->ctx, "stream_store: loop '%s' of stage '%s': the stores to '%s' stay "
                                  "plain (cached) stores: %s", st->loop, st->stage,
                     out->name ? out->name : "?", why))
      return -1;
  }
  return 0;
}

/* The pass rewrites statements only: no expression is walked. */
static const ir_expr *ss_expr(ir_mutator *m, const ir_expr *e) { return (void)m, e; }

static const ir_stmt *ss_attr(ir_mutator *m, const ir_stmt *s) {
  if (sch_pragma_id_of_attr(s->name) != SCH_PRAGMA_STREAM_STORE)
    return ir_mutate_stmt_default(m, s);
  ss_state *st = m->user, saved = *st;
  int64_t si = -1;
  if (!s->a || !ir_is_const_int(s->a, &si)) si = -1;
  st->loop = s->body && s->body->kind == IR_S_FOR && s->body->var->name ? s->body->var->name : "?";
  st->stage = "?";
  st->streamed = st->plain = 0;
  if (targets(st, (int)si)) return NULL;
  ir_mutator inner;
  ir_mutator_init(&inner, s->ctx, st);
  inner.stmt[IR_S_STORE] = ss_store;
  inner.stmt[IR_S_ATTR] = ss_attr; /* a nested pragma of another stage */
  /* walked even when this stage streams nothing: a nested pragma of another stage inside */
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) inner.expr[k] = ss_expr;
  const ir_stmt *body = ir_mutate_stmt(&inner, s->body);
  if (body && st->nbuf && !st->streamed && !st->plain &&
      tec_ctx_note(s->ctx, "stream_store: loop '%s' of stage '%s' holds no store of the stage's "
                           "output", st->loop, st->stage))
    body = NULL;
  *st = saved;
  return body;
}

const ir_stmt *lower_stream_store(const lower_state *ls, const lower_func *f, const ir_stmt *s) {
  if (!s) return NULL;
  ss_state st = {.ls = ls, .f = f, .whole = s};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &st);
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) m.expr[k] = ss_expr;
  m.stmt[IR_S_ATTR] = ss_attr;
  unsigned long errors_before = tec_ctx_error_count(s->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  if (tec_ctx_error_count(s->ctx) != errors_before) return NULL;
  return r ? r : s;
}
