/* loop_names.c — lower_loop_names: the names a printed lowered function gives its loops, so
 * that a reader never sees two different loops under one name.
 *
 * Every stage names its loops after its own axes (`x`, `x.outer`), so a producer attached
 * inside its consumer's nest repeats the consumer's names. In the printed function, loops of
 * the function's output stages (a `produce` of an argument) keep their plain names; the loops
 * of every other stage are qualified with the stage's name, as Halide prints `f.s0.x`:
 *
 *   produce blur_y {                            produce blur_y {
 *     for (y.outer, 0, 8) {                       for (y.outer, 0, 8) {
 *       produce blur_x {                  ->        produce blur_x {
 *         for (x.outer, 0, 4) { ... }                 for (blur_x.x.outer, 0, 4) { ... }
 *       for (x.outer, 0, 4) { ... }                 for (x.outer, 0, 4) { ... }
 *
 * When two output stages of one function share a loop name, every output stage's loops are
 * qualified too. Only the text changes: the variables, the schedule's iterator names (what
 * sch_* calls, traces and records use) and the generated code keep the plain names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lower/passes.h"

typedef struct ln_loop {
  const ir_expr *var;
  const te_tensor *stage; /* the produce it is in, or NULL */
} ln_loop;

typedef struct ln_state {
  const te_tensor *cur;
  ln_loop *l;
  int n, cap, oom;
} ln_state;

static void ln_for(ir_visitor *v, const ir_stmt *s) {
  ln_state *st = v->user;
  int seen = 0;
  for (int i = 0; i < st->n && !seen; i++) seen = st->l[i].var == s->var;
  if (!seen && st->n == st->cap) {
    int cap = st->cap ? 2 * st->cap : 16;
    ln_loop *p = realloc(st->l, sizeof *p * (size_t)cap);
    if (!p) st->oom = 1;
    else st->l = p, st->cap = cap;
  }
  if (!seen && st->n < st->cap) st->l[st->n++] = (ln_loop){s->var, st->cur};
  ir_visit_stmt_default(v, s);
}

static void ln_produce(ir_visitor *v, const ir_stmt *s) {
  ln_state *st = v->user;
  const te_tensor *saved = st->cur;
  st->cur = s->tensor;
  ir_visit_stmt_default(v, s);
  st->cur = saved;
}

/* t (or one of its op's outputs) is an argument of f */
static int is_output(const lower_func *f, const te_tensor *t) {
  int nv = t->nout > 1 ? t->nout : 1;
  for (int k = 0; k < nv; k++)
    for (int i = 0; i < f->nargs; i++)
      if (f->args[i] == (nv > 1 ? t->outputs[k] : t)) return 1;
  return 0;
}

int lower_loop_names(const lower_func *f, const ir_stmt *body, ir_print_names *out) {
  *out = (ir_print_names){.n = 0};
  ln_state st = {0};
  ir_visitor v;
  ir_visitor_init(&v, &st);
  v.stmt[IR_S_FOR] = ln_for;
  v.stmt[IR_S_PRODUCE] = ln_produce;
  ir_visit_stmt(&v, body);
  int qualify_outputs = 0;
  for (int i = 0; i < st.n; i++)
    for (int j = i + 1; j < st.n && !qualify_outputs; j++)
      qualify_outputs = st.l[i].stage && st.l[j].stage && st.l[i].stage != st.l[j].stage &&
                        is_output(f, st.l[i].stage) && is_output(f, st.l[j].stage) &&
                        strcmp(st.l[i].var->name, st.l[j].var->name) == 0;
  const ir_expr **vars = malloc(sizeof *vars * (size_t)(st.n ? st.n : 1));
  char **names = malloc(sizeof *names * (size_t)(st.n ? st.n : 1));
  int n = 0, failed = !vars || !names || st.oom;
  for (int i = 0; !failed && i < st.n; i++) {
    const te_tensor *t = st.l[i].stage;
    if (!t || (!qualify_outputs && is_output(f, t))) continue; /* plain */
    size_t len = strlen(t->name) + strlen(st.l[i].var->name) + 2;
    if (!(names[n] = malloc(len))) {
      failed = 1;
      break;
    }
    snprintf(names[n], len, "%s.%s", t->name, st.l[i].var->name);
    vars[n++] = st.l[i].var;
  }
  free(st.l);
  *out = (ir_print_names){.n = n, .vars = vars, .names = (const char *const *)names};
  if (!failed) return 0;
  lower_loop_names_free(out);
  return -1;
}

void lower_loop_names_free(ir_print_names *nm) {
  for (int i = 0; i < nm->n; i++) free((char *)nm->names[i]);
  free((void *)nm->vars);
  free((void *)nm->names);
  *nm = (ir_print_names){.n = 0};
}
