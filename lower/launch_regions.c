/* launch_regions.c — lower_launch_regions: what a parallel_launch_point region means, decided
 * as IR (a build-time pass; codegen_parallel.c only translates the markers).
 *
 *   attr pragma_parallel_launch_point {          attr launch_region {
 *     for (k.outer, 0, 4) {                        for (k.outer, 0, 4) {
 *       C[0] = 0f                          ->          attr launch_sync { attr launch_task0 { C[0] = 0f } }
 *       for (j.outer, 0, 10) parallel {..}             attr launch_sync { for (j.outer, 0, 10) parallel {..} }
 *
 * The region (its body run once by every thread of the pool, tec_rt_parallel_launch) keeps
 * the same program; markers say how each statement runs:
 * - `launch_region`: the region; without a parallel loop the pragma is dropped (plain serial
 *   code), and a launch point inside a region is dropped too (the outer region runs it);
 * - a parallel loop in a region runs this task's static chunk (codegen) and is wrapped in
 *   `launch_sync`: after it every task meets at a barrier, so the next iteration of an
 *   enclosing serial loop sees every task's writes;
 * - consecutive statements without parallel loops that store to shared buffers (arguments,
 *   allocations outside the region) become `launch_sync { launch_task0 { ... } }`: task 0 runs
 *   them, then a barrier; if such a statement also writes a per-task buffer from outside it,
 *   every task runs it and only its shared stores are `launch_task0`, then a barrier;
 * - anything else (index loops, lets, work on per-task buffers) runs in every task;
 * - allocations in the region outside its parallel loops are per task (`launch_per_task`):
 *   each task has its own copy. Writing one inside a parallel loop would leave every copy
 *   partly filled: refused, as is pragma_parallel_dynamic on a loop in a region (its loops
 *   are cut statically).
 * It also hands codegen the marker of pragma_sched_pressure, `sched_pressure` (codegen knows
 * no pragma table), wherever it is. */
#include <string.h>
#include "lower/passes.h"
#include "schedule/pragma.h"

typedef struct lr_state {
  tec_ctx *ctx;
  const lower_func *f;
  const char *who;
  int in_region;
  const ir_stmt *dynamic;      /* the pragma_parallel_dynamic attr the next parallel loop has */
  const ir_expr **priv;        /* per-task buffers of the region being rewritten */
  int npriv, cappriv;
  int failed;
} lr_state;

/* ---- what a subtree holds ---- */
typedef struct lr_scan {
  const lr_state *L;
  int par, has_par, shared_store, outer_priv_store, nalloc;
  const ir_expr *allocs[64]; /* allocations inside the subtree (first 64) */
} lr_scan;

static int is_priv(const lr_state *L, const ir_expr *var) {
  for (int i = 0; i < L->npriv; i++)
    if (L->priv[i] == var) return 1;
  return 0;
}
static void scan_for(ir_visitor *v, const ir_stmt *s) {
  lr_scan *sc = v->user;
  int par = s->for_kind == IR_FOR_PARALLEL;
  sc->has_par |= par;
  sc->par += par;
  ir_visit_stmt_default(v, s);
  sc->par -= par;
}
static void scan_alloc(ir_visitor *v, const ir_stmt *s) {
  lr_scan *sc = v->user;
  if (sc->nalloc < 64) sc->allocs[sc->nalloc++] = s->var;
  ir_visit_stmt_default(v, s);
}
static void scan_store(ir_visitor *v, const ir_stmt *s) {
  lr_scan *sc = v->user;
  if (sc->par == 0) {
    if (!is_priv(sc->L, s->var)) {
      sc->shared_store = 1;
    } else {
      int inner = 0;
      for (int i = 0; i < sc->nalloc; i++) inner |= sc->allocs[i] == s->var;
      if (!inner) sc->outer_priv_store = 1;
    }
  }
  ir_visit_stmt_default(v, s);
}
static void scan(const lr_state *L, const ir_stmt *s, lr_scan *sc) {
  memset(sc, 0, sizeof *sc);
  sc->L = L;
  ir_visitor v;
  ir_visitor_init(&v, sc);
  v.stmt[IR_S_FOR] = scan_for;
  v.stmt[IR_S_ALLOCATE] = scan_alloc;
  v.stmt[IR_S_STORE] = scan_store;
  ir_visit_stmt(&v, s);
}
static int has_parallel(const ir_stmt *s) {
  lr_state none = {0};
  lr_scan sc;
  scan(&none, s, &sc);
  return sc.has_par;
}

/* ---- per-task buffers: allocated in the region outside its parallel loops ---- */
typedef struct lr_priv {
  lr_state *L;
  const char *region_loop;
  const ir_expr *par_loop;
  int oom, bad;
} lr_priv;
static void priv_for(ir_visitor *v, const ir_stmt *s) {
  lr_priv *ps = v->user;
  const ir_expr *saved = ps->par_loop;
  if (s->for_kind == IR_FOR_PARALLEL && !ps->par_loop) ps->par_loop = s->var;
  ir_visit_stmt_default(v, s);
  ps->par_loop = saved;
}
static void priv_alloc(ir_visitor *v, const ir_stmt *s) {
  lr_priv *ps = v->user;
  lr_state *L = ps->L;
  if (!ps->par_loop) {
    if (tec_grow(L->ctx, (void **)&L->priv, &L->cappriv, L->npriv + 1, sizeof *L->priv)) {
      ps->oom = 1;
      return;
    }
    L->priv[L->npriv++] = s->var;
  }
  ir_visit_stmt_default(v, s);
}
static void priv_store(ir_visitor *v, const ir_stmt *s) {
  lr_priv *ps = v->user;
  if (ps->par_loop && !ps->bad && is_priv(ps->L, s->var)) {
    ps->bad = 1;
    tec_ctx_set_error(ps->L->ctx,
                      "%s '%s': pragma parallel_launch_point on loop '%s': buffer '%s' is "
                      "allocated inside the marked loop but outside parallel loop '%s', which "
                      "writes it; every thread would have its own copy and fill only its chunk. "
                      "Compute that stage inside the parallel loop (compute_at), at or outside "
                      "the marked loop, or remove the pragma",
                      ps->L->who, ps->L->f->name, ps->region_loop,
                      s->var->name ? s->var->name : "?",
                      ps->par_loop->name ? ps->par_loop->name : "?");
  }
  ir_visit_stmt_default(v, s);
}

/* ---- the rewrite ---- */
static const ir_stmt *sync(const ir_stmt *s) { return ir_attr("launch_sync", NULL, s); }
static const ir_stmt *task0(const ir_stmt *s) { return ir_attr("launch_task0", NULL, s); }

static const ir_stmt *guard_store(ir_mutator *m, const ir_stmt *s) {
  return is_priv(m->user, s->var) ? s : task0(s);
}
/* A statement every task runs whose shared stores task 0 alone makes. */
static const ir_stmt *guarded(lr_state *L, const ir_stmt *s) {
  ir_mutator g;
  ir_mutator_init(&g, L->ctx, L);
  g.stmt[IR_S_STORE] = guard_store;
  return ir_mutate_stmt(&g, s);
}

static const ir_stmt *per_task_alloc(ir_mutator *m, const ir_stmt *s) {
  const ir_stmt *r = ir_mutate_stmt_default(m, s);
  return r && is_priv(m->user, s->var) ? ir_attr("launch_per_task", NULL, r) : r;
}
/* s (free of parallel loops) with its per-task allocations marked. */
static const ir_stmt *mark_per_task(lr_state *L, const ir_stmt *s) {
  ir_mutator g;
  ir_mutator_init(&g, L->ctx, L);
  g.stmt[IR_S_ALLOCATE] = per_task_alloc;
  return ir_mutate_stmt(&g, s);
}

static const ir_stmt *lr_stmt(ir_mutator *m, const ir_stmt *s);

typedef enum { ITEM_PAR, ITEM_ALL, ITEM_TASK0, ITEM_GUARD } item_kind;
static item_kind classify(const lr_state *L, const ir_stmt *s) {
  lr_scan sc;
  scan(L, s, &sc);
  if (sc.has_par) return ITEM_PAR;
  if (!sc.shared_store) return ITEM_ALL;
  return sc.outer_priv_store || sc.nalloc >= 64 ? ITEM_GUARD : ITEM_TASK0;
}

/* A region statement that is a sequence, a parallel loop or free of parallel loops. */
static const ir_stmt *region_items(ir_mutator *m, const ir_stmt *s) {
  lr_state *L = m->user;
  const ir_stmt *const *items = s->kind == IR_S_SEQ ? s->seq : &s;
  int n = s->kind == IR_S_SEQ ? s->n : 1;
  const ir_stmt **out = tec_ctx_alloc(L->ctx, sizeof *out * (size_t)(n ? n : 1));
  if (!out) return NULL;
  int nout = 0;
  for (int i = 0; i < n;) {
    int j = i + 1;
    const ir_stmt *r;
    switch (classify(L, items[i])) {
    case ITEM_PAR: r = lr_stmt(m, items[i]); break; /* back here for its parts */
    case ITEM_ALL: r = mark_per_task(L, items[i]); break;
    case ITEM_TASK0:
      while (j < n && classify(L, items[j]) == ITEM_TASK0) j++;
      r = sync(task0(mark_per_task(L, ir_seq(L->ctx, j - i, &items[i]))));
      break;
    case ITEM_GUARD:
    default: r = sync(guarded(L, mark_per_task(L, items[i]))); break;
    }
    if (!r) return NULL;
    out[nout++] = r;
    i = j;
  }
  return ir_seq(L->ctx, nout, out);
}

static const ir_stmt *parallel_loop(ir_mutator *m, const ir_stmt *s) {
  lr_state *L = m->user;
  if (L->in_region && L->dynamic) {
    L->failed = 1;
    tec_ctx_set_error(L->ctx, "%s '%s': pragma parallel_dynamic on parallel loop '%s', which is "
                              "inside a parallel_launch_point region: every thread runs the "
                              "region and takes a static share of each loop in it; drop one of "
                              "the two pragmas",
                      L->who, L->f->name, s->var->name ? s->var->name : "?");
    return NULL;
  }
  /* the body runs in one chunk of one thread: no region, no dynamic pragma applies there */
  int saved_in = L->in_region;
  const ir_stmt *saved_dyn = L->dynamic;
  L->in_region = 0, L->dynamic = NULL;
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  L->in_region = saved_in, L->dynamic = saved_dyn;
  if (!body) return NULL;
  const ir_stmt *r = ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL);
  return L->in_region ? sync(r) : r;
}

static const ir_stmt *launch_point(ir_mutator *m, const ir_stmt *s) {
  lr_state *L = m->user;
  if (L->in_region || !has_parallel(s->body)) return ir_mutate_stmt(m, s->body); /* plain */
  const ir_stmt *loop = s->body;
  while (loop && loop->kind == IR_S_ATTR) loop = loop->body;
  lr_priv ps = {L, loop && loop->kind == IR_S_FOR && loop->var->name ? loop->var->name : "?",
                NULL, 0, 0};
  L->npriv = 0;
  ir_visitor pv;
  ir_visitor_init(&pv, &ps);
  pv.stmt[IR_S_FOR] = priv_for;
  pv.stmt[IR_S_ALLOCATE] = priv_alloc;
  pv.stmt[IR_S_STORE] = priv_store;
  ir_visit_stmt(&pv, s->body);
  if (ps.oom || ps.bad) {
    L->failed = 1;
    return NULL;
  }
  L->in_region = 1;
  const ir_stmt *body = lr_stmt(m, s->body);
  L->in_region = 0;
  return body ? ir_attr("launch_region", s->a, body) : NULL;
}

/* Every statement passes through here. */
static const ir_stmt *lr_stmt(ir_mutator *m, const ir_stmt *s) {
  lr_state *L = m->user;
  if (!s || L->failed) return s;
  if (s->kind == IR_S_ATTR && s->name) {
    int pragma = sch_pragma_id_of_attr(s->name);
    if (pragma == SCH_PRAGMA_PARALLEL_LAUNCH_POINT) return launch_point(m, s);
    if (pragma == SCH_PRAGMA_PARALLEL_DYNAMIC) {
      const ir_stmt *saved = L->dynamic;
      L->dynamic = s;
      const ir_stmt *body = lr_stmt(m, s->body);
      L->dynamic = saved;
      /* the build-time marker codegen reads (it knows no pragma table): the chunk kept */
      return body ? ir_attr("parallel_dynamic", s->a, body) : NULL;
    }
    if (pragma == SCH_PRAGMA_SCHED_PRESSURE) { /* codegen's marker, as parallel_dynamic's */
      const ir_stmt *body = lr_stmt(m, s->body);
      return body ? ir_attr("sched_pressure", NULL, body) : NULL;
    }
  }
  if (s->kind == IR_S_FOR && s->for_kind == IR_FOR_PARALLEL) return parallel_loop(m, s);
  if (L->in_region && (s->kind == IR_S_SEQ || !has_parallel(s))) return region_items(m, s);
  const ir_stmt *r = ir_mutate_stmt_default(m, s);
  if (r && L->in_region && s->kind == IR_S_ALLOCATE && is_priv(L, s->var))
    r = ir_attr("launch_per_task", NULL, r);
  return r;
}

const ir_stmt *lower_launch_regions(const lower_func *f, const ir_stmt *body, const char *who) {
  if (!body) return NULL;
  lr_state L = {.ctx = f->ctx, .f = f, .who = who};
  ir_mutator m;
  ir_mutator_init(&m, f->ctx, &L);
  for (int k = 0; k < IR_STMT_KIND_COUNT; k++) m.stmt[k] = lr_stmt;
  unsigned long errors_before = tec_ctx_error_count(f->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, body);
  if (L.failed || tec_ctx_error_count(f->ctx) != errors_before) return NULL;
  return r;
}
