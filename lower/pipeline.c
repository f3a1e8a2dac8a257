/* pipeline.c — tec_lower: the pass pipeline, one table run by one loop (run_passes).
 *
 * The table below is the order; each entry says what it needs from the ones before. Three
 * phases: once per tec_lower on the schedule (DECL), per lowered function (FUNC: <name>, or
 * <name>_prepare and <name>_run), and per function when tec_build / tec_emit generate code
 * for a target (BUILD, lower_for_target). Passes marked IR turn a program into a program:
 * TEC_DUMP_IR=1 prints the program after each (TEC_DUMP_IR=<word>: after those whose name
 * contains <word>), tec_lower_options.observe sees each, stop_after may name one, and the
 * verifier (verify.c) checks each result when asked (options, TEC_VERIFY_IR=1), and those of
 * tec_lower in builds without NDEBUG. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

typedef struct lower_pipe {
  lower_state ls;
  lower_split_plan plan;       /* DECL: the prepare/run split */
  lower_func *f;               /* FUNC, BUILD: the function */
  const ir_stmt *body;         /* FUNC, BUILD: its program so far */
  const ir_stmt *entry;        /* BUILD: the checked entry's program (entry_checks) */
  const lower_target *target;  /* BUILD */
  const char *who;             /* BUILD: the API call, for messages */
  lower_verify_what vw;        /* what the verifier may require by now */
} lower_pipe;

typedef enum { DECL, FUNC, BUILD } lower_phase;
typedef struct lower_pass {
  const char *name;
  int (*run)(lower_pipe *p);   /* 0, or -1: failed (with an error) */
  lower_phase phase;
  int ir;                      /* program in, program out: 1 the body, 2 the entry's */
} lower_pass;

static int p_inline(lower_pipe *p) { return lower_inline(&p->ls); }
static int p_plan(lower_pipe *p) { return lower_plan_precompute(&p->ls, &p->plan); }
static int p_bounds(lower_pipe *p) { return lower_infer_bounds(&p->ls); }
static int p_check(lower_pipe *p) { return lower_check_schedule(&p->ls); }
static int p_legal(lower_pipe *p) { return lower_check_bounds(&p->ls); }
static int p_reads(lower_pipe *p) { return lower_read_bounds(&p->ls, p->f); }
static int p_schedule(lower_pipe *p) { return (p->body = lower_schedule_ops(&p->ls)) ? 0 : -1; }
static int p_scan(lower_pipe *p) { return (p->body = lower_scan(&p->ls, p->body)) ? 0 : -1; }
static int p_prefetch(lower_pipe *p) { return (p->body = lower_prefetch(&p->ls, p->body)) ? 0 : -1; }
static int p_flatten(lower_pipe *p) {
  p->vw.flat = 1;
  return (p->body = lower_storage_flatten(p->body, p->f, p->ls.s)) ? 0 : -1;
}
static int p_extern(lower_pipe *p) { return (p->body = lower_extern_call(p->body)) ? 0 : -1; }
static int p_guard(lower_pipe *p) { p->body = lower_guard_loads(p->body); return 0; }
static int p_sizes(lower_pipe *p);
static int p_simplify(lower_pipe *p) { p->body = lower_simplify(p->body); return 0; }
static int p_partition(lower_pipe *p) { p->body = lower_loop_partition(p->body); return 0; }
static int p_tensorize(lower_pipe *p) {
  if (!p->body) return 0;
  return (p->body = lower_tensorize(p->f->ctx, p->body)) ? 0 : -1;
}
static int p_vectorize(lower_pipe *p) { p->body = lower_vectorize(p->body); return 0; }
static int p_transpose(lower_pipe *p) { p->body = lower_transpose_block(p->body); return 0; }
static int p_unroll(lower_pipe *p) { p->body = lower_unroll(p->body); return 0; }
static int p_stream(lower_pipe *p) {
  if (!p->body) return 0;
  return (p->body = lower_stream_store(&p->ls, p->f, p->body)) ? 0 : -1;
}
static int p_rewrite(lower_pipe *p) {
  if (p->body) p->body = lower_storage_rewrite(p->body);
  return 0;
}
static int p_slice(lower_pipe *p) {
  p->body = lower_slice_vectors(p->f->ctx, p->body, p->target->vector_bits);
  return 0;
}

static int p_half(lower_pipe *p) {
  return lower_check_half_arith(p->f->ctx, p->f, p->body, p->target, p->who);
}

static int p_checkers(lower_pipe *p) {
  return (p->body = lower_bound_checkers(p->f, p->body)) ? 0 : -1;
}

static int p_launch(lower_pipe *p) {
  return (p->body = lower_launch_regions(p->f, p->body, p->who)) ? 0 : -1;
}

static int p_entry(lower_pipe *p) {
  return (p->entry = lower_entry_checks(p->f, p->who)) ? 0 : -1;
}

static const lower_pass passes[] = {
  {"inline", p_inline, DECL, 0},            /* first: every later pass reads inlined bodies */
  {"plan_precompute", p_plan, DECL, 0},     /* the prepare/run split, over inlined bodies */
  {"check_schedule", p_check, FUNC, 0},    /* the attach structure infer_bounds walks */
  {"infer_bounds", p_bounds, FUNC, 0},      /* reads through inlined stages to regions */
  {"legality", p_legal, FUNC, 0},           /* the schedule checks that need ranges */
  {"read_bounds", p_reads, FUNC, 0},        /* reads of root stages within their shapes */
  {"schedule_ops", p_schedule, FUNC, 1},    /* loop nests: needs every range and region */
  {"scan", p_scan, FUNC, 1},                /* recurrences: init copies, state -> the scan's
                                               reads; on schedule_ops' tensor-level program */
  {"prefetch", p_prefetch, FUNC, 1},        /* bounds tensor reads: before flattening */
  {"storage_flatten", p_flatten, FUNC, 1},  /* needs every tensor placed (schedule_ops) */
  {"extern_call", p_extern, FUNC, 1},       /* strides of extern calls: needs loads */
  {"guard_loads", p_guard, FUNC, 1},        /* needs loads (flattened); before vectorize */
  {"check_sizes", p_sizes, FUNC, 0},        /* every size var an argument's extent */
  {"simplify", p_simplify, FUNC, 1},        /* folds the indices built above, proven guards */
  {"loop_partition", p_partition, FUNC, 1}, /* needs simplify's canonical `e < n` */
  {"partition simplify", p_simplify, FUNC, 1}, /* folds split points, newly proven guards */
  {"tensorize", p_tensorize, FUNC, 1},      /* flat, partitioned indices; marks init loops
                                               vectorized, so before vectorize */
  {"vectorize", p_vectorize, FUNC, 1},      /* after partition: a guard would scalarize */
  {"transpose_block", p_transpose, FUNC, 1}, /* after vectorize (a copy is one vector store),
                                               before unroll (the loop is replaced whole) */
  {"unroll", p_unroll, FUNC, 1},            /* after vectorize: vector bodies copied whole */
  {"unroll simplify", p_simplify, FUNC, 1}, /* folds min + k of the copies, ramp arithmetic */
  {"stream_store", p_stream, FUNC, 1},      /* after unroll: the final vector stores */
  {"storage_rewrite", p_rewrite, FUNC, 1},  /* last: merges what partition/unroll copied */
  {"unroll_rest", p_unroll, BUILD, 1},      /* unrolled loops a hand-built program kept */
  {"half_arith", p_half, BUILD, 0},         /* a check: float16 arithmetic needs the target's */
  {"slice_vectors", p_slice, BUILD, 1},     /* needs the target's vector width */
  {"bound_checkers", p_checkers, BUILD, 1}, /* debug option; after slicing: final accesses */
  {"launch_regions", p_launch, BUILD, 1},   /* task 0, barriers, per-task buffers */
  {"entry_checks", p_entry, BUILD, 2},      /* the DLTensor entry's asserts (own program) */
};
enum { NPASS = sizeof passes / sizeof passes[0] };

static void dump(const char *pass, const lower_func *f, const ir_stmt *s);
static int verify_on(const tec_lower_options *o, lower_phase phase);

/* Runs the passes of `phase` in order (up to the one named stop, if any). */
static int run_passes(lower_pipe *p, lower_phase phase, const tec_lower_options *o) {
  for (int i = 0; i < NPASS; i++) {
    const lower_pass *ps = &passes[i];
    if (ps->phase != phase) continue;
    if (ps->run(p)) return -1;
    if (ps->ir) {
      const ir_stmt *out = ps->ir == 2 ? p->entry : p->body;
      dump(ps->name, p->f, out);
      if (o && o->observe) o->observe(o->user, p->f, ps->name, out);
      if (out && verify_on(o, phase) && lower_verify(p->f, out, ps->name, &p->vw)) return -1;
    }
    if (o && o->stop_after && strcmp(o->stop_after, ps->name) == 0) {
      p->f->stopped_after = ps->name;
      break;
    }
  }
  return 0;
}

const char *tec_lower_pass_name(int i, int *ir, int *at_build) {
  if (i < 0 || i >= NPASS) return NULL;
  if (ir) *ir = passes[i].ir;
  if (at_build) *at_build = passes[i].phase == BUILD;
  return passes[i].name;
}

/* Asked for, or a build without NDEBUG lowering (not building: a hand-built program given to
 * tec_build is verified only on request, so codegen's own checks of it stay testable). */
static int verify_on(const tec_lower_options *o, lower_phase phase) {
  const char *e = getenv("TEC_VERIFY_IR");
  if ((o && o->verify) || (e && strcmp(e, "1") == 0)) return 1;
#ifndef NDEBUG
  return phase != BUILD;
#else
  (void)phase;
  return 0;
#endif
}

/* Where tec_lower_print is in its output, for lower_print_lines: lines written so far, the
 * memory stream the body goes to and the caller's hook. */
typedef struct print_at {
  int line;
  FILE *m;
  char **buf;
  size_t *len;
  void (*on_loop)(void *user, const ir_stmt *loop, int line);
  void *user;
} print_at;

static void print_at_for(void *user, const ir_stmt *loop) {
  print_at *at = user;
  fflush(at->m);
  int n = 0;
  for (size_t i = 0; *at->buf && i < *at->len; i++) n += (*at->buf)[i] == '\n';
  at->on_loop(at->user, loop, at->line + n + 1);
}

/* s as tec_lower_print shows it: loops named as loop_names.c says (plain when out of memory) */
static void print_named_at(FILE *out, const lower_func *f, const ir_stmt *s, print_at *at) {
  ir_print_names nm;
  (void)lower_loop_names(f, s, &nm); /* empty when out of memory */
  if (at && at->on_loop) nm.on_for = print_at_for, nm.user = at;
  ir_print_stmt_names(out, s, &nm);
  lower_loop_names_free(&nm);
}
static void print_named(FILE *out, const lower_func *f, const ir_stmt *s) { print_named_at(out, f, s, NULL); }

static void dump(const char *pass, const lower_func *f, const ir_stmt *s) {
  const char *want = getenv("TEC_DUMP_IR");
  if (!want || !*want || strcmp(want, "0") == 0 || lower_trace_replaying()) return;
  if (strcmp(want, "1") != 0 && !strstr(pass, want)) return;
  fprintf(stderr, "// ---- after %s ----\n", pass);
  print_named(stderr, f, s);
}

static int is_c_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

typedef struct size_check {
  lower_func *f;
  const ir_expr *unbound;
} size_check;

static void check_size_var(ir_visitor *v, const ir_expr *e) {
  size_check *sc = v->user;
  if (e->kind == IR_VAR && e->v.i == IR_VAR_SIZE && !sc->unbound) {
    int ok = 0;
    for (int i = 0; i < sc->f->nsize; i++) ok |= sc->f->size_vars[i] == e;
    if (!ok) sc->unbound = e;
  }
  ir_visit_expr_default(v, e);
}

static int check_args(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args) {
  tec_ctx *ctx = s->ctx;
  if (!is_c_identifier(name))
    return tec_ctx_set_error(ctx, "tec_lower: function name '%s' is not a C identifier (letters, "
                                  "digits and '_', not starting with a digit)",
                             name ? name : "(null)");
  if (nargs < 1 || !args)
    return tec_ctx_set_error(ctx, "tec_lower '%s': needs the argument tensors (inputs and "
                                  "outputs)", name);
  for (int i = 0; i < nargs; i++) {
    if (!args[i]) return tec_ctx_set_error(ctx, "tec_lower '%s': argument %d is NULL", name, i);
    for (int j = 0; j < i; j++)
      if (args[j] == args[i])
        return tec_ctx_set_error(ctx, "tec_lower '%s': tensor '%s' is passed twice (arguments "
                                      "%d and %d)", name, args[i]->name, j, i);
    if (args[i]->scan_of)
      return tec_ctx_set_error(ctx, "tec_lower '%s': argument %d ('%s') is the state of scan "
                                    "'%s', which reads its earlier steps from the scan's own "
                                    "buffer; pass '%s' instead", name, i, args[i]->name,
                               args[i]->scan_of->name, args[i]->scan_of->name);
    int known = 0;
    const te_tensor *op = args[i]->nout > 1 ? args[i]->outputs[0] : args[i]; /* multi-output */
    for (int k = 0; k < s->nstage; k++) known |= s->stages[k]->tensor == op;
    /* an input the outputs do not read is a plain unused parameter (a template's optional
     * input); a computed tensor outside the schedule would never be written */
    if (!known && args[i]->op != TE_PLACEHOLDER)
      return tec_ctx_set_error(ctx, "tec_lower '%s': argument %d ('%s') is computed, but not "
                                    "by this schedule (its outputs do not read it); pass the "
                                    "schedule's inputs and outputs", name, i, args[i]->name);
    for (int k = 0; k < s->nstage && !known; k++)
      if (strcmp(s->stages[k]->tensor->name, args[i]->name) == 0)
        return tec_ctx_set_error(ctx, "tec_lower '%s': argument %d is a tensor called '%s' that "
                                      "the schedule does not use, but it uses another tensor of "
                                      "that name; names must be unique", name, i, args[i]->name);
  }
  for (int k = 0; k < s->nstage; k++) {
    te_tensor *t = s->stages[k]->tensor;
    int found = 0;
    for (int i = 0; i < nargs; i++) found |= args[i] == t;
    for (int o = 1; o < t->nout && found && s->stages[k]->is_output; o++) {
      found = 0; /* every output of a multi-output op that is an output */
      for (int i = 0; i < nargs; i++) found |= args[i] == t->outputs[o];
      if (!found) t = t->outputs[o];
    }
    if (!found && ((t->op == TE_PLACEHOLDER && !t->scan_of) || s->stages[k]->is_output))
      return tec_ctx_set_error(ctx, "tec_lower '%s': %s '%s' must be one of the arguments",
                               name, t->op == TE_PLACEHOLDER ? "input" : "output", t->name);
  }
  /* a margin (te_tensor_set_margin) describes the caller's buffer: arguments only */
  for (int k = 0; k < s->nstage; k++) {
    te_tensor *t = s->stages[k]->tensor;
    for (int o = 0; o < (t->nout > 1 ? t->nout : 1); o++) {
      const te_tensor *u = t->nout > 1 ? t->outputs[o] : t;
      int found = 0;
      for (int i = 0; i < nargs; i++) found |= args[i] == u;
      if (!found && te_has_margin(u))
        return tec_ctx_set_error(ctx, "tec_lower '%s': tensor '%s' has a margin "
                                      "(te_tensor_set_margin) but is not an argument; margins "
                                      "apply to arguments only (the caller's buffer), an "
                                      "intermediate has none: pass '%s' as an argument or "
                                      "drop its margin", name, u->name, u->name);
    }
  }
  /* the flattened indices and the build's entry checks read the margins: they stay */
  for (int i = 0; i < nargs; i++)
    if (!args[i]->margin_fixed_by) args[i]->margin_fixed_by = tec_ctx_strdup(ctx, name);
  return 0;
}

/* Every size variable the program uses must be bound by an argument's shape, one whose
 * extent determines it (entry_checks.c: v, or a*v + b). */
static int p_sizes(lower_pipe *p) {
  size_check sc = {p->f, NULL};
  ir_visitor v;
  ir_visitor_init(&v, &sc);
  v.expr[IR_VAR] = check_size_var;
  ir_visit_stmt(&v, p->body);
  p->vw.sizes = 1;
  if (sc.unbound)
    return tec_ctx_set_error(p->ls.ctx, "tec_lower '%s': size variable '%s' is not the extent "
                                        "of any argument's dimension, so a call cannot bind it; "
                                        "make it the shape of an input or output",
                             p->f->name, sc.unbound->name);
  lower_size_site *site = tec_ctx_alloc(p->ls.ctx, sizeof *site * (size_t)(p->f->nsize + 1));
  if (!site) return -1;
  return lower_size_sites(p->f, tec_ctx_printf(p->ls.ctx, "tec_lower '%s'", p->f->name), site);
}

typedef struct size_list {
  tec_ctx *ctx;
  lower_func *f;
  int *cap, oom;
} size_list;

static void add_size_var(ir_visitor *v, const ir_expr *e) {
  size_list *sl = v->user;
  lower_func *f = sl->f;
  if (e->kind == IR_VAR && e->v.i == IR_VAR_SIZE) {
    int seen = 0;
    for (int k = 0; k < f->nsize; k++) seen |= f->size_vars[k] == e;
    if (!seen && tec_grow(sl->ctx, (void **)&f->size_vars, sl->cap, f->nsize + 1,
                          sizeof *f->size_vars))
      sl->oom = 1;
    else if (!seen)
      f->size_vars[f->nsize++] = e;
  }
  ir_visit_expr_default(v, e);
}

/* Lowers the stages not in skip into function `name` taking args (the FUNC passes). */
static lower_func *lower_one(const sch_schedule *s, const sch_attach_kind *attach,
                             const ir_expr **bodies, const char *name, int nargs,
                             te_tensor *const *args, const unsigned char *skip,
                             const tec_lower_options *opt) {
  tec_ctx *ctx = s->ctx;
  unsigned long errors_before = tec_ctx_error_count(ctx);
  lower_func *f = tec_ctx_alloc(ctx, sizeof *f);
  if (!f) return NULL;
  f->ctx = ctx;
  f->name = tec_ctx_strdup(ctx, name);
  f->options = opt;
  f->nargs = nargs;
  f->args = tec_ctx_alloc(ctx, sizeof *f->args * (size_t)nargs);
  f->arg_bufs = tec_ctx_alloc(ctx, sizeof *f->arg_bufs * (size_t)nargs);
  int cap = 0;
  if (!f->args || !f->arg_bufs) return NULL;
  for (int i = 0; i < nargs; i++) {
    f->args[i] = args[i];
    f->arg_bufs[i] = ir_var(ctx, args[i]->name, TEC_HANDLET, IR_VAR_BUFFER);
    /* every size a shape uses (8*m, n / 4: m, n), in order of first use */
    for (int d = 0; d < args[i]->ndim; d++) {
      size_list sl = {ctx, f, &cap, 0};
      ir_visitor v;
      ir_visitor_init(&v, &sl);
      v.expr[IR_VAR] = add_size_var;
      ir_visit_expr(&v, args[i]->shape[d]);
      if (sl.oom) return NULL;
    }
  }

  lower_pipe p = {.f = f};
  p.ls.ctx = ctx;
  p.ls.s = s;
  p.ls.attach = attach;
  p.ls.nargs = nargs;
  p.ls.args = args;
  p.ls.body = bodies;
  p.ls.skip = skip;
  p.ls.fname = name;
  p.ls.no_fold = opt && opt->no_storage_folding;
  if (run_passes(&p, FUNC, opt)) return NULL;
  if (!p.body) {
    /* NULL from a pass that failed (it reported why), or an empty program; an error an
     * earlier call left in the ctx says nothing about which */
    if (tec_ctx_error_count(ctx) != errors_before) return NULL;
    /* nothing left to do: zero-size tensors, or a region dropped by debug_skip_region */
    p.body = ir_evaluate(ir_int(ctx, 0));
  }
  f->body = p.body;
  return f;
}

/* passes.h: the BUILD passes over a copy of f's program */
const ir_stmt *lower_for_target(const lower_func *f, const lower_target *t, const char *who,
                                const ir_stmt **entry) {
  tec_ctx *ctx = f->ctx;
  if (f->stopped_after) {
    tec_ctx_set_error(ctx, "%s: function '%s' was lowered only up to pass '%s' "
                           "(tec_lower_options.stop_after); lower it whole to build it",
                      who, f->name, f->stopped_after);
    return NULL;
  }
  unsigned long errors_before = tec_ctx_error_count(ctx);
  lower_pipe p = {.f = (lower_func *)f, .body = f->body, .target = t, .who = who,
                  .vw = {.flat = 1, .sizes = 1}};
  p.ls.ctx = ctx;
  tec_lower_options o = f->options ? *f->options : (tec_lower_options){0};
  o.stop_after = NULL;
  if (run_passes(&p, BUILD, &o) || tec_ctx_error_count(ctx) != errors_before) return NULL;
  *entry = p.entry;
  return p.body ? p.body : ir_evaluate(ir_int(ctx, 0));
}

/* The prepare/run split: stages computed from constant placeholders alone go into
 * <name>_prepare (precompute.c decides which); <name>_run reads what they packed. */
static lower_func *lower_split(const sch_schedule *s, const sch_attach_kind *attach,
                               const ir_expr **bodies, const char *name, int nargs,
                               te_tensor *const *args, const lower_split_plan *plan,
                               const tec_lower_options *opt) {
  tec_ctx *ctx = s->ctx;
  int n = s->nstage;
  unsigned char *skip_run = tec_ctx_alloc(ctx, (size_t)n), *skip_prep = tec_ctx_alloc(ctx, (size_t)n);
  te_tensor **run_args = tec_ctx_alloc(ctx, sizeof *run_args * (size_t)(nargs + plan->npacked));
  te_tensor **prep_args = tec_ctx_alloc(ctx, sizeof *prep_args * (size_t)(nargs + plan->npacked));
  if (!skip_run || !skip_prep || !run_args || !prep_args) return NULL;
  for (int i = 0; i < n; i++) {
    skip_run[i] = plan->in_prepare[i];
    skip_prep[i] = !plan->in_prepare[i];
  }
  int nr = 0, np = 0;
  for (int i = 0; i < nargs; i++) {
    /* (a constant neither half reads, an unused argument, stays in run's list) */
    if (plan->const_arg_run[i] || !args[i]->is_const || !plan->const_arg_prep[i])
      run_args[nr++] = args[i];
    if (args[i]->is_const && plan->const_arg_prep[i]) prep_args[np++] = args[i];
  }
  for (int i = 0; i < plan->npacked; i++) run_args[nr++] = prep_args[np++] = plan->packed[i];
  /* the constant stages are computed whole, at root, in prepare: in this lowering's view of
   * the attach points (the schedule is not written) */
  sch_attach_kind *view = tec_ctx_alloc(ctx, sizeof *view * (size_t)n);
  if (!view) return NULL;
  for (int i = 0; i < n; i++) {
    const sch_stage *st = s->stages[i];
    view[i] = attach[i];
    if (plan->in_prepare[i] && attach[i] == SCH_ATTACH_SCOPE)
      tec_ctx_note(ctx, "precompute: '%s' is computed at loop '%s' of '%s', but it depends on "
                        "constants alone: it is computed whole, once, in %s_prepare (sch_set_"
                        "precompute(s, 0) keeps it at the loop)", st->tensor->name,
                   st->attach_iter->name, st->attach_stage->tensor->name, name);
    if (plan->in_prepare[i]) view[i] = SCH_ATTACH_ROOT;
  }
  lower_func *run = lower_one(s, view, bodies, tec_ctx_printf(ctx, "%s_run", name), nr,
                              run_args, skip_run, opt);
  lower_func *prep = run ? lower_one(s, view, bodies, tec_ctx_printf(ctx, "%s_prepare", name),
                                     np, prep_args, skip_prep, opt)
                         : NULL;
  if (!run || !prep) return NULL;
  run->prepare = prep;
  run->user_name = tec_ctx_strdup(ctx, name);
  run->nuser = nargs;
  run->user_args = tec_ctx_alloc(ctx, sizeof *run->user_args * (size_t)nargs);
  if (!run->user_args) return NULL;
  for (int i = 0; i < nargs; i++) run->user_args[i] = args[i];
  run->npacked = plan->npacked;
  run->packed = plan->packed;
  return run;
}

static lower_func *lower_notes(const sch_schedule *s, const char *name, int nargs,
                               te_tensor *const *args, const tec_lower_options *opt);

/* The notes the passes make (tec_ctx_note) go into the function, or fail it in strict mode. */
static lower_func *lower_all(const sch_schedule *s, const char *name, int nargs,
                             te_tensor *const *args, const tec_lower_options *opt) {
  tec_ctx *ctx = s->ctx;
  int note_mark = tec_ctx_note_mark(ctx);
  lower_func *f = lower_notes(s, name, nargs, args, opt);
  const char *const *notes;
  int nnotes = tec_ctx_notes_take(ctx, note_mark, &notes);
  if (!f || nnotes < 0) return NULL;
  if (nnotes && tec_ctx_strict(ctx)) {
    tec_ctx_set_error(ctx, "tec_lower '%s' (strict mode): %s", name, notes[0]);
    return NULL;
  }
  f->nnotes = nnotes;
  f->notes = notes;
  return f;
}

/* lower_all without the notes */
static lower_func *lower_notes(const sch_schedule *s, const char *name, int nargs,
                               te_tensor *const *args, const tec_lower_options *opt) {
  tec_ctx *ctx = s->ctx;
  if (check_args(s, name, nargs, args)) return NULL;
  if (opt && opt->stop_after) {
    int ir = 0, at_build = 0;
    const char *n;
    for (int i = 0; (n = tec_lower_pass_name(i, &ir, &at_build)); i++)
      if (ir && !at_build && strcmp(n, opt->stop_after) == 0) break;
    if (!n) {
      const char *legal = "";
      for (int i = 0; (n = tec_lower_pass_name(i, &ir, &at_build)); i++)
        if (ir && !at_build) legal = tec_ctx_printf(ctx, "%s%s'%s'", legal, *legal ? ", " : "", n);
      return tec_ctx_set_error(ctx, "tec_lower '%s': stop_after '%s' is not a pass of tec_lower "
                                    "that makes a program; the passes are %s",
                               name, opt->stop_after, legal), NULL;
    }
  }
  /* this lowering's view of where each stage is computed: the schedule's, until the
   * prepare/run split moves constant stages to root (lower_split) */
  sch_attach_kind *attach = tec_ctx_alloc(ctx, sizeof *attach * (size_t)s->nstage);
  if (!attach) return NULL;
  for (int i = 0; i < s->nstage; i++) attach[i] = s->stages[i]->attach;
  lower_pipe p = {0};
  p.ls.ctx = ctx;
  p.ls.s = s;
  p.ls.attach = attach;
  p.ls.nargs = nargs;
  p.ls.args = args;
  if (run_passes(&p, DECL, opt)) return NULL;
  lower_func *f = p.plan.npacked
                      ? lower_split(s, attach, p.ls.body, name, nargs, args, &p.plan, opt)
                      : lower_one(s, attach, p.ls.body, name, nargs, args, NULL, opt);
  if (f && !f->user_name) {
    f->user_name = f->name;
    f->nuser = f->nargs;
    f->user_args = f->args;
  }
  return f;
}

/* The entry point decides failure from its own work (te.h): a NULL result or an error
 * reported on the way (a pass that fell back after running out of memory still failed). */
lower_func *tec_lower_with(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args,
                           const tec_lower_options *opt) {
  if (!s) return NULL;
  tec_err_scope sc;
  tec_err_begin(s->ctx, &sc);
  /* everything the lowering makes is the function's, freed with it (tec_lower_free) */
  tec_mem_scope *ms = tec_mem_scope_begin(s->ctx);
  const tec_lower_options *kept = NULL;
  if (opt && ms) {
    tec_lower_options *o = tec_ctx_alloc(s->ctx, sizeof *o);
    if (o) *o = *opt;
    kept = o;
  }
  lower_func *f = ms && (!opt || kept) ? lower_all(s, name, nargs, args, kept) : NULL;
  if (f && lower_trace_check_wanted() && lower_trace_check(s, name, nargs, args, f, kept))
    f = NULL;
  tec_mem_scope_end(ms);
  if (!tec_err_end(s->ctx, &sc, f != NULL, "tec_lower")) {
    tec_mem_scope_free(ms);
    return NULL;
  }
  f->mem_scope = ms;
  return f;
}

void tec_lower_free(lower_func *f) {
  if (f) tec_mem_scope_free(f->mem_scope); /* f itself is in it */
}

lower_func *tec_lower(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args) {
  return tec_lower_with(s, name, nargs, args, NULL);
}

static void print_one(FILE *out, const lower_func *f, print_at *at);

void lower_print_lines(FILE *out, const lower_func *f, void (*on_loop)(void *user, const ir_stmt *loop, int line),
                       void *user) {
  print_at at = {0, NULL, NULL, NULL, on_loop, user};
  for (int i = 0; i < f->nnotes; i++, at.line++) fprintf(out, "// note: %s\n", f->notes[i]);
  if (f->prepare) {
    fprintf(out, "// %s: constants packed once by %s, then %s per call\n", f->user_name,
            f->prepare->name, f->name);
    at.line++;
    print_one(out, f->prepare, &at);
  }
  print_one(out, f, &at);
}

void tec_lower_print(FILE *out, const lower_func *f) { lower_print_lines(out, f, NULL, NULL); }

static void print_one(FILE *out, const lower_func *f, print_at *at) {
  char tb[32];
  fprintf(out, "func %s(", f->name);
  for (int i = 0; i < f->nargs; i++) {
    const te_tensor *t = f->args[i];
    fprintf(out, "%s%s: %s[", i ? ", " : "", t->name, tec_dtype_str(t->type, tb, 32));
    for (int d = 0; d < t->ndim; d++) {
      if (d) fputs(", ", out);
      ir_print_expr(out, t->shape[d]);
    }
    fputc(']', out);
    for (int d = 0; te_has_margin(t) && d < t->ndim; d++)
      fprintf(out, "%s%lld+%lld%s", d ? ", " : " margin[", (long long)te_margin(t, d, 0),
              (long long)te_margin(t, d, 1), d == t->ndim - 1 ? "]" : "");
  }
  fputs(") {\n", out);
  at->line++;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (m) {
    at->m = m, at->buf = &buf, at->len = &len;
    print_named_at(m, f, f->body, at);
    fclose(m);
    for (char *line = buf, *nl; line && *line; line = nl + 1, at->line++) {
      nl = strchr(line, '\n');
      if (!nl) {
        fprintf(out, "  %s\n", line);
        at->line++;
        break;
      }
      fprintf(out, "  %.*s\n", (int)(nl - line), line);
    }
    free(buf);
  }
  fputs("}\n", out);
  at->line++;
}

const char *tec_lower_str(const lower_func *f) {
  if (!f) return "";
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return "";
  tec_lower_print(m, f);
  fclose(m);
  const char *s = tec_ctx_strdup(f->ctx, buf ? buf : "");
  free(buf);
  return s;
}
