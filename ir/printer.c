/* printer.c — the IR as stable, readable text: the debug dump, the test oracle, and what
 * users read to understand a schedule.
 *
 *   for (i.outer, 0, 32) {
 *     for (i.inner, 0, 8) vectorized {
 *       C[((i.outer*8) + i.inner)] = (A[((i.outer*8) + i.inner)] + 1f)
 *     }
 *   }
 *
 * int64 immediates print bare (`8`), other types carry a suffix (`1f`, `2.5f64`, `3i32`).
 * ir_print_stmt_names prints some variables under display names (a lowered function's loops,
 * lower/loop_names.c); `attr buffer_reuse` prints as `// T now holds U`. */
#include <stdlib.h>
#include <string.h>
#include "tec/te.h"

static const char *const expr_names[] = {
#define IR_X(k, s, n) s,
    IR_FOR_EACH_EXPR(IR_X)
#undef IR_X
};
static const char *const stmt_names[] = {
#define IR_X(k, s) s,
    IR_FOR_EACH_STMT(IR_X)
#undef IR_X
};

const char *ir_expr_kind_name(ir_expr_kind k) {
  return (unsigned)k < IR_EXPR_KIND_COUNT ? expr_names[k] : "?";
}
const char *ir_stmt_kind_name(ir_stmt_kind k) {
  return (unsigned)k < IR_STMT_KIND_COUNT ? stmt_names[k] : "?";
}
const char *ir_for_kind_name(ir_for_kind k) {
  switch (k) {
  case IR_FOR_SERIAL: return "serial";
  case IR_FOR_PARALLEL: return "parallel";
  case IR_FOR_VECTORIZED: return "vectorized";
  case IR_FOR_UNROLLED: return "unrolled";
  }
  return "?";
}

/* The printed name of a variable: its display name in nm, else its own. */
static const char *var_name(const ir_expr *v, const ir_print_names *nm) {
  for (int i = 0; nm && i < nm->n; i++)
    if (nm->vars[i] == v) return nm->names[i];
  return v->name;
}

static void print_expr(FILE *f, const ir_expr *e, const ir_print_names *nm);

static void print_args(FILE *f, int n, const ir_expr *const *args, const ir_print_names *nm) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    print_expr(f, args[i], nm);
  }
}

static const char *const comb_names[] = {"sum", "prod", "max", "min"};

void ir_print_expr(FILE *f, const ir_expr *e) { print_expr(f, e, NULL); }

static void print_expr(FILE *f, const ir_expr *e, const ir_print_names *nm) {
  char tb[32];
  if (!e) {
    fputs("<null>", f);
    return;
  }
  switch (e->kind) {
  case IR_INT_IMM:
    if (e->type.code == TEC_BOOL)
      fputs(e->v.i ? "true" : "false", f);
    else if (e->type.code == TEC_INT && e->type.bits == 64)
      fprintf(f, "%lld", (long long)e->v.i);
    else
      fprintf(f, "%lld%c%d", (long long)e->v.i, e->type.code == TEC_UINT ? 'u' : 'i',
              e->type.bits);
    return;
  case IR_FLOAT_IMM:
    if (e->type.bits == 32)
      fprintf(f, "%.9gf", e->v.f);
    else
      fprintf(f, "%.17gf%d", e->v.f, e->type.bits);
    return;
  case IR_VAR: fputs(var_name(e, nm), f); return;
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_EQ: case IR_NE:
  case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_AND: case IR_OR: {
    const char *op = expr_names[e->kind];
    int tight = e->kind == IR_MUL;
    fputc('(', f);
    print_expr(f, e->a, nm);
    fprintf(f, tight ? "%s" : " %s ", op);
    print_expr(f, e->b, nm);
    fputc(')', f);
    return;
  }
  case IR_FLOORDIV: case IR_FLOORMOD: case IR_MIN: case IR_MAX:
    fprintf(f, "%s(", expr_names[e->kind]);
    print_expr(f, e->a, nm);
    fputs(", ", f);
    print_expr(f, e->b, nm);
    fputc(')', f);
    return;
  case IR_NOT:
    fputc('!', f);
    print_expr(f, e->a, nm);
    return;
  case IR_SELECT:
    fputs("select(", f);
    print_expr(f, e->a, nm);
    fputs(", ", f);
    print_expr(f, e->b, nm);
    fputs(", ", f);
    print_expr(f, e->c, nm);
    fputc(')', f);
    return;
  case IR_CAST:
    fprintf(f, "%s(", tec_dtype_str(e->type, tb, 32));
    print_expr(f, e->a, nm);
    fputc(')', f);
    return;
  case IR_CALL:
    fprintf(f, "%s(", e->name);
    print_args(f, e->nargs, e->args, nm);
    fputc(')', f);
    return;
  case IR_READ:
    fprintf(f, "%s[", e->tensor->name);
    print_args(f, e->nargs, e->args, nm);
    fputc(']', f);
    return;
  case IR_REDUCE:
    if (e->v.i == IR_COMB_USER && e->reducer)
      fprintf(f, "%s.%d(", e->reducer->name, e->value_index);
    else
      fprintf(f, "%s(", (unsigned)e->v.i < 4 ? comb_names[e->v.i] : "reduce");
    print_expr(f, e->a, nm);
    fputs(", axis=[", f);
    print_args(f, e->nargs, e->args, nm);
    fputc(']', f);
    if (e->b) {
      fputs(", where=", f);
      print_expr(f, e->b, nm);
    }
    if (e->c) { /* te_reduce_init */
      fputs(", init=", f);
      print_expr(f, e->c, nm);
    }
    fputc(')', f);
    return;
  case IR_LOAD:
    fprintf(f, "%s[", e->a->name);
    print_expr(f, e->b, nm);
    fputc(']', f);
    if (e->c) {
      fputs(" if ", f);
      print_expr(f, e->c, nm);
    }
    return;
  case IR_RAMP:
    fputs("ramp(", f);
    print_expr(f, e->a, nm);
    fputs(", ", f);
    print_expr(f, e->b, nm);
    fprintf(f, ", %d)", e->type.lanes);
    return;
  case IR_BROADCAST:
    fprintf(f, "x%d(", e->type.lanes);
    print_expr(f, e->a, nm);
    fputc(')', f);
    return;
  case IR_LET:
    fprintf(f, "(let %s = ", e->var->name);
    print_expr(f, e->a, nm);
    fputs(" in ", f);
    print_expr(f, e->b, nm);
    fputc(')', f);
    return;
  case IR_EXPR_KIND_COUNT: break;
  }
  fputs("<?>", f);
}

static void indent(FILE *f, int n) {
  for (int i = 0; i < n; i++) fputs("  ", f);
}

static void print_stmt(FILE *f, const ir_stmt *s, int d, const ir_print_names *nm) {
  char tb[32];
  if (!s) return;
  switch (s->kind) {
  case IR_S_FOR:
    if (nm && nm->on_for) nm->on_for(nm->user, s);
    indent(f, d);
    fprintf(f, "for (%s, ", var_name(s->var, nm));
    print_expr(f, s->a, nm);
    fputs(", ", f);
    print_expr(f, s->b, nm);
    fputs(")", f);
    if (s->for_kind != IR_FOR_SERIAL) fprintf(f, " %s", ir_for_kind_name(s->for_kind));
    fputs(" {\n", f);
    print_stmt(f, s->body, d + 1, nm);
    indent(f, d);
    fputs("}\n", f);
    return;
  case IR_S_STORE:
    indent(f, d);
    fprintf(f, "%s[", s->var->name);
    print_expr(f, s->a, nm);
    fputs("] = ", f);
    print_expr(f, s->b, nm);
    if (s->c) {
      fputs(" if ", f);
      print_expr(f, s->c, nm);
    }
    fputc('\n', f);
    return;
  case IR_S_PROVIDE:
    indent(f, d);
    fprintf(f, "%s[", s->tensor->name);
    print_args(f, s->n, s->args, nm);
    fputs("] = ", f);
    print_expr(f, s->a, nm);
    fputc('\n', f);
    return;
  case IR_S_REALIZE:
    indent(f, d);
    fprintf(f, "realize %s(", s->tensor->name);
    for (int i = 0; i < s->n; i++) {
      fputs(i ? ", [" : "[", f);
      print_expr(f, s->args[2 * i], nm);
      fputs(", ", f);
      print_expr(f, s->args[2 * i + 1], nm);
      fputc(']', f);
    }
    fputs(") {\n", f);
    print_stmt(f, s->body, d + 1, nm);
    indent(f, d);
    fputs("}\n", f);
    return;
  case IR_S_ALLOCATE:
    indent(f, d);
    fprintf(f, "allocate %s[%s * ", s->var->name, tec_dtype_str(s->type, tb, 32));
    print_expr(f, s->a, nm);
    fputs("] {\n", f);
    print_stmt(f, s->body, d + 1, nm);
    indent(f, d);
    fputs("}\n", f);
    return;
  case IR_S_SEQ:
    for (int i = 0; i < s->n; i++) print_stmt(f, s->seq[i], d, nm);
    return;
  case IR_S_IF:
    indent(f, d);
    fputs("if (", f);
    print_expr(f, s->a, nm);
    fputs(") {\n", f);
    print_stmt(f, s->body, d + 1, nm);
    if (s->else_body) {
      indent(f, d);
      fputs("} else {\n", f);
      print_stmt(f, s->else_body, d + 1, nm);
    }
    indent(f, d);
    fputs("}\n", f);
    return;
  case IR_S_LET_STMT:
    indent(f, d);
    fprintf(f, "let %s = ", s->var->name);
    print_expr(f, s->a, nm);
    fputc('\n', f);
    print_stmt(f, s->body, d, nm);
    return;
  case IR_S_ATTR:
    indent(f, d);
    if (s->name && strcmp(s->name, IR_ATTR_BUFFER_REUSE) == 0 && s->a && s->a->kind == IR_VAR &&
        s->var) { /* storage_rewrite.c */
      fprintf(f, "// %s now holds %s\n", s->a->name, s->var->name);
      print_stmt(f, s->body, d, nm);
      return;
    }
    fprintf(f, "// attr %s", s->name);
    if (s->a) {
      fputs(" = ", f);
      print_expr(f, s->a, nm);
    }
    fputc('\n', f);
    print_stmt(f, s->body, d, nm);
    return;
  case IR_S_EVALUATE:
    indent(f, d);
    print_expr(f, s->a, nm);
    fputc('\n', f);
    return;
  case IR_S_PRODUCE:
    indent(f, d);
    fprintf(f, "produce %s {\n", s->tensor->name);
    print_stmt(f, s->body, d + 1, nm);
    indent(f, d);
    fputs("}\n", f);
    return;
  case IR_S_ASSERT:
    indent(f, d);
    fputs("assert(", f);
    print_expr(f, s->a, nm);
    fprintf(f, ", \"%s\"", s->name);
    if (s->b) fputs(", ", f), print_expr(f, s->b, nm);
    if (s->c) fputs(", ", f), print_expr(f, s->c, nm);
    fputs(")\n", f);
    return;
  case IR_STMT_KIND_COUNT: break;
  }
}

void ir_print_stmt(FILE *f, const ir_stmt *s) { print_stmt(f, s, 0, NULL); }
void ir_print_stmt_names(FILE *f, const ir_stmt *s, const ir_print_names *nm) {
  print_stmt(f, s, 0, nm);
}

/* Prints through a memory stream into the ctx's arena. */
static const char *to_str(tec_ctx *ctx, const ir_expr *e, const ir_stmt *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  if (e) ir_print_expr(f, e);
  if (s) ir_print_stmt(f, s);
  fclose(f);
  const char *out = tec_ctx_strdup(ctx, buf ? buf : "");
  free(buf);
  return out;
}

const char *ir_expr_str(const ir_expr *e) { return e ? to_str(e->ctx, e, NULL) : "<null>"; }
const char *ir_stmt_str(const ir_stmt *s) { return s ? to_str(s->ctx, NULL, s) : ""; }
