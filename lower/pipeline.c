/* pipeline.c — tec_lower: the pass pipeline, in order.
 *
 *   0. inline            compute_inline'd bodies substituted into their readers
 *   1. infer_bounds      ranges of every iter var; regions of attached stages (needs 0: the
 *                        reads an attached stage must serve may come through inlined ones)
 *   2. schedule_ops      one loop nest per stage, attached ones inside (needs 1)
 *   3. storage_flatten   n-d tensors -> 1-d buffers (needs every tensor placed: after 2)
 *   3b. guard_loads      loads in a select's arm predicated on it (padding reads stay in bounds)
 *   4. simplify          folds the index arithmetic that 2 and 3 build, drops provable guards
 *   5. loop_partition    peels split guards and likely() conditions out of hot loops (needs
 *                        4's canonical `e < n`)
 *   6. simplify          folds the split points and drops the guards now provable
 *   7. vectorize         vector code (after 5/6: a guard left in a vectorized loop scalarizes it)
 *   8. unroll            straight-line copies (after 7: a vectorized body is unrolled whole)
 *   9. simplify          folds min + k of the copies and the ramp arithmetic of 7
 *  10. storage_rewrite   hoists/shares allocations (last: 5 and 8 copy allocations, it merges)
 *
 * TEC_DUMP_IR=1 prints the program after every pass; TEC_DUMP_IR=<word> after the passes
 * whose name contains <word>. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "lower/arith.h"

static void dump(const char *pass, const ir_stmt *s) {
  const char *want = getenv("TEC_DUMP_IR");
  if (!want || !*want || strcmp(want, "0") == 0) return;
  if (strcmp(want, "1") != 0 && !strstr(pass, want)) return;
  fprintf(stderr, "// ---- after %s ----\n", pass);
  ir_print_stmt(stderr, s);
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

static int check_args(sch_schedule *s, const char *name, int nargs, te_tensor *const *args) {
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
    int known = 0;
    for (int k = 0; k < s->nstage; k++) known |= s->stages[k]->tensor == args[i];
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
    if (!found && (t->op == TE_PLACEHOLDER || s->stages[k]->is_output))
      return tec_ctx_set_error(ctx, "tec_lower '%s': %s '%s' must be one of the arguments",
                               name, t->op == TE_PLACEHOLDER ? "input" : "output", t->name);
  }
  return 0;
}

/* Lowers the stages not in skip into function `name` taking args (passes 1 and on). */
static lower_func *lower_one(sch_schedule *s, const ir_expr **bodies, const char *name, int nargs,
                             te_tensor *const *args, const unsigned char *skip) {
  tec_ctx *ctx = s->ctx;
  unsigned long errors_before = tec_ctx_error_count(ctx);
  lower_func *f = tec_ctx_alloc(ctx, sizeof *f);
  if (!f) return NULL;
  f->ctx = ctx;
  f->name = tec_ctx_strdup(ctx, name);
  f->nargs = nargs;
  f->args = tec_ctx_alloc(ctx, sizeof *f->args * (size_t)nargs);
  f->arg_bufs = tec_ctx_alloc(ctx, sizeof *f->arg_bufs * (size_t)nargs);
  int cap = 0;
  if (!f->args || !f->arg_bufs) return NULL;
  for (int i = 0; i < nargs; i++) {
    f->args[i] = args[i];
    f->arg_bufs[i] = ir_var(ctx, args[i]->name, TEC_HANDLET, IR_VAR_BUFFER);
    for (int d = 0; d < args[i]->ndim; d++) {
      const ir_expr *e = args[i]->shape[d];
      if (e->kind != IR_VAR || e->v.i != IR_VAR_SIZE) continue;
      int seen = 0;
      for (int k = 0; k < f->nsize; k++) seen |= f->size_vars[k] == e;
      if (seen) continue;
      if (tec_grow(ctx, (void **)&f->size_vars, &cap, f->nsize + 1, sizeof *f->size_vars))
        return NULL;
      f->size_vars[f->nsize++] = e;
    }
  }

  lower_state ls = {0};
  ls.ctx = ctx;
  ls.s = s;
  ls.nargs = nargs;
  ls.args = args;
  ls.body = bodies;
  ls.skip = skip;
  ls.fname = name;
  if (lower_infer_bounds(&ls)) return NULL;
  const ir_stmt *body = lower_schedule_ops(&ls);
  if (!body) return NULL;
  dump("schedule_ops", body);
  body = lower_storage_flatten(body, f, s);
  if (!body) return NULL;
  dump("storage_flatten", body);
  body = lower_guard_loads(body); /* needs loads (after 3); before vectorize */
  dump("guard_loads", body);

  size_check sc = {f, NULL};
  ir_visitor v;
  ir_visitor_init(&v, &sc);
  v.expr[IR_VAR] = check_size_var;
  ir_visit_stmt(&v, body);
  if (sc.unbound) {
    tec_ctx_set_error(ctx, "tec_lower '%s': size variable '%s' is not the extent of any "
                           "argument's dimension, so a call cannot bind it; make it the shape "
                           "of an input or output", name, sc.unbound->name);
    return NULL;
  }

  body = lower_simplify(body);
  dump("simplify", body);
  /* Loop partition needs the simplified guards; the simplify after it folds the split points
   * (min/max of floordivs) and removes the guards that became provable. */
  body = lower_loop_partition(body);
  dump("loop_partition", body);
  body = lower_simplify(body);
  dump("partition simplify", body);
  /* Vectorize sees clean inner loops; unroll after it copies whole vector bodies (unrolling
   * first would leave the vectorizer nothing to vectorize over). */
  body = lower_vectorize(body);
  dump("vectorize", body);
  body = lower_unroll(body);
  dump("unroll", body);
  body = lower_simplify(body);
  dump("unroll simplify", body);
  /* Storage rewrite last: partition and unroll duplicate allocations, it merges the copies. */
  if (body) body = lower_storage_rewrite(body);
  dump("storage_rewrite", body);
  if (!body) {
    /* NULL from a pass that failed (it reported why), or an empty program; an error an
     * earlier call left in the ctx says nothing about which */
    if (tec_ctx_error_count(ctx) != errors_before) return NULL;
    /* nothing left to do: zero-size tensors, or a region dropped by debug_skip_region */
    body = ir_evaluate(ir_int(ctx, 0));
  }
  f->body = body;
  return f;
}


/* The prepare/run split: stages computed from constant placeholders alone go into
 * <name>_prepare (precompute.c decides which); <name>_run reads what they packed. */
static lower_func *lower_split(sch_schedule *s, const ir_expr **bodies, const char *name,
                               int nargs, te_tensor *const *args, const lower_split_plan *plan) {
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
  /* the constant stages are computed whole, at root, in prepare */
  sch_attach_kind *saved = tec_ctx_alloc(ctx, sizeof *saved * (size_t)n);
  if (!saved) return NULL;
  for (int i = 0; i < n; i++) {
    saved[i] = s->stages[i]->attach;
    sch_stage *st = s->stages[i];
    if (plan->in_prepare[i] && st->attach == SCH_ATTACH_SCOPE)
      tec_ctx_note(ctx, "precompute: '%s' is computed at loop '%s' of '%s', but it depends on "
                        "constants alone: it is computed whole, once, in %s_prepare (sch_set_"
                        "precompute(s, 0) keeps it at the loop)", st->tensor->name,
                   st->attach_iter->name, st->attach_stage->tensor->name, name);
    if (plan->in_prepare[i]) st->attach = SCH_ATTACH_ROOT;
  }
  lower_func *run = lower_one(s, bodies, tec_ctx_printf(ctx, "%s_run", name), nr, run_args, skip_run);
  lower_func *prep = run ? lower_one(s, bodies, tec_ctx_printf(ctx, "%s_prepare", name), np,
                                     prep_args, skip_prep)
                         : NULL;
  for (int i = 0; i < n; i++) s->stages[i]->attach = saved[i];
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

static lower_func *lower_notes(sch_schedule *s, const char *name, int nargs,
                               te_tensor *const *args);

/* The notes the passes make (tec_ctx_note) go into the function, or fail it in strict mode. */
static lower_func *lower_all(sch_schedule *s, const char *name, int nargs,
                             te_tensor *const *args) {
  tec_ctx *ctx = s->ctx;
  int note_mark = tec_ctx_note_mark(ctx);
  lower_func *f = lower_notes(s, name, nargs, args);
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
static lower_func *lower_notes(sch_schedule *s, const char *name, int nargs,
                               te_tensor *const *args) {
  tec_ctx *ctx = s->ctx;
  if (check_args(s, name, nargs, args)) return NULL;
  lower_state ls = {0};
  ls.ctx = ctx;
  ls.s = s;
  ls.nargs = nargs;
  ls.args = args;
  if (lower_inline(&ls)) return NULL; /* 0: every later pass reads the inlined bodies */
  lower_split_plan plan;
  if (lower_plan_precompute(&ls, &plan)) return NULL;
  lower_func *f = plan.npacked ? lower_split(s, ls.body, name, nargs, args, &plan)
                               : lower_one(s, ls.body, name, nargs, args, NULL);
  if (f && !f->user_name) {
    f->user_name = f->name;
    f->nuser = f->nargs;
    f->user_args = f->args;
  }
  return f;
}

/* The entry point decides failure from its own work (te.h): a NULL result or an error
 * reported on the way (a pass that fell back after running out of memory still failed). */
lower_func *tec_lower(sch_schedule *s, const char *name, int nargs, te_tensor *const *args) {
  if (!s) return NULL;
  tec_err_scope sc;
  tec_err_begin(s->ctx, &sc);
  lower_func *f = lower_all(s, name, nargs, args);
  if (f && lower_trace_check_wanted() && lower_trace_check(s, name, nargs, args, f)) f = NULL;
  return tec_err_end(s->ctx, &sc, f != NULL, "tec_lower") ? f : NULL;
}

static void print_one(FILE *out, const lower_func *f);

void tec_lower_print(FILE *out, const lower_func *f) {
  for (int i = 0; i < f->nnotes; i++) fprintf(out, "// note: %s\n", f->notes[i]);
  if (f->prepare) {
    fprintf(out, "// %s: constants packed once by %s, then %s per call\n", f->user_name,
            f->prepare->name, f->name);
    print_one(out, f->prepare);
  }
  print_one(out, f);
}

static void print_one(FILE *out, const lower_func *f) {
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
  }
  fputs(") {\n", out);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (m) {
    ir_print_stmt(m, f->body);
    fclose(m);
    for (char *line = buf, *nl; line && *line; line = nl + 1) {
      nl = strchr(line, '\n');
      if (!nl) {
        fprintf(out, "  %s\n", line);
        break;
      }
      fprintf(out, "  %.*s\n", (int)(nl - line), line);
    }
    free(buf);
  }
  fputs("}\n", out);
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
