/* trace.c — schedules as data: the primitive list read as a table, the records primitives
 * append when they succeed, and the trace printed as C calls.
 *
 *   sch_split(sc, sch_axis(sc, 0), 32, &io, &ii)   ->  record {split, stage "C", iter "i",
 *                                                       factor 32, outer "i.outer", inner ...}
 *   sch_trace_c:   te_tensor *C = sch_tensor_named(s, "C");
 *                  sch_stage *s_C = sch_stage_of(s, C);
 *                  sch_iter *C_i = sch_leaf_named(s_C, "i");
 *                  sch_iter *C_i_outer, *C_i_inner;
 *                  sch_split(s_C, C_i, 32, &C_i_outer, &C_i_inner);
 * JSON is in trace_json.c, replay in replay.c. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

static const char *const prim_names[SCH_PRIM_COUNT] = {
#define SCH_NAME_(kind, name, operands) [SCH_PRIM_##kind] = #name,
    SCH_FOR_EACH_PRIM(SCH_NAME_)
#undef SCH_NAME_
};

static const char *const prim_operands[SCH_PRIM_COUNT] = {
#define SCH_OPERANDS_(kind, name, operands) [SCH_PRIM_##kind] = operands,
    SCH_FOR_EACH_PRIM(SCH_OPERANDS_)
#undef SCH_OPERANDS_
};

const char *sch_prim_name(sch_prim_kind k) {
  return (int)k >= 0 && k < SCH_PRIM_COUNT ? prim_names[k] : NULL;
}

const char *sch_prim_operands(sch_prim_kind k) {
  return (int)k >= 0 && k < SCH_PRIM_COUNT ? prim_operands[k] : NULL;
}

int sch_prim_by_name(const char *name) {
  for (int k = 0; name && k < SCH_PRIM_COUNT; k++)
    if (strcmp(prim_names[k], name) == 0) return k;
  return -1;
}

static const struct { const char *name; sch_opd_type type; } type_names[] = {
    {"stage", SCH_T_STAGE}, {"tensor", SCH_T_TENSOR}, {"iter", SCH_T_ITER},
    {"iters", SCH_T_ITERS}, {"axis", SCH_T_AXIS},     {"tensors", SCH_T_TENSORS},
    {"int", SCH_T_INT},     {"str", SCH_T_STR},       {"value", SCH_T_VALUE}};

/* Reads "field:type[@owner]" words; the list is written by hand in schedule.h, so a word
 * that does not parse is a bug there (an empty spec, which every caller refuses). */
int sch_prim_spec(sch_prim_kind k, sch_opd_spec *spec) {
  const char *p = sch_prim_operands(k);
  int n = 0;
  while (p && *p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *end = strchr(p, ' ');
    if (!end) end = p + strlen(p);
    char word[64];
    size_t len = (size_t)(end - p);
    if (len >= sizeof word || n >= SCH_MAX_OPD) return 0;
    memcpy(word, p, len);
    word[len] = 0;
    p = end;
    sch_opd_spec *o = &spec[n];
    char *w = word, *colon = strchr(word, ':'), *at = strchr(word, '@');
    if (!colon) return 0;
    *colon = 0;
    if (at) *at = 0;
    o->out = *w == '>';
    if (o->out) w++;
    snprintf(o->field, sizeof o->field, "%.23s", w);
    o->owner = -1;
    int found = 0;
    for (size_t t = 0; t < sizeof type_names / sizeof type_names[0]; t++)
      if (strcmp(type_names[t].name, colon + 1) == 0) o->type = type_names[t].type, found = 1;
    if (!found) return 0;
    if (at)
      for (int j = 0; j < n; j++)
        if (strcmp(spec[j].field, at + 1) == 0) o->owner = j;
    if (at && o->owner < 0) return 0;
    n++;
  }
  return n;
}

/* ---- recording ---- */

/* The stage of field k of a (a stage, or a computed tensor's stage). */
static sch_stage *owner_stage(sch_schedule *s, const sch_arg *a, int k) {
  if (a[k].stage) return a[k].stage;
  for (int i = 0; i < s->nstage && a[k].tensor; i++)
    if (s->stages[i]->tensor == a[k].tensor) return s->stages[i];
  return NULL;
}

static int value_operand(sch_operand *o, const ir_expr *v) {
  o->vkind = SCH_VALUE_NONE;
  if (!v) return 0;
  o->vtype = v->type;
  if (v->type.lanes == 1 && tec_dtype_is_int(v->type) && ir_is_const_int(v, &o->i) &&
      v->kind == IR_INT_IMM)
    o->vkind = SCH_VALUE_INT;
  else if (v->type.lanes == 1 && tec_dtype_is_float(v->type) && v->kind == IR_FLOAT_IMM &&
           ir_is_const_float(v, &o->f))
    o->vkind = SCH_VALUE_FLOAT;
  else
    o->vkind = SCH_VALUE_EXPR, o->expr = v;
  return 0;
}

static int fill(sch_schedule *s, const sch_opd_spec *sp, int nsp, const sch_arg *a,
                sch_operand *o) {
  tec_ctx *ctx = s->ctx;
  for (int k = 0; k < nsp; k++) {
    switch (sp[k].type) {
    case SCH_T_STAGE: o[k].name = a[k].stage->tensor->name; break;
    case SCH_T_TENSOR: o[k].name = a[k].tensor->name; break;
    case SCH_T_ITER: o[k].name = a[k].iter->name; break;
    case SCH_T_AXIS: {
      const sch_stage *st = owner_stage(s, a, sp[k].owner);
      o[k].i = -1;
      for (int d = 0; st && d < st->tensor->ndim; d++)
        if (st->root[d] == a[k].iter) o[k].i = d;
      if (o[k].i < 0) return TEC_INTERNAL(ctx, "a recorded axis is not a data axis");
      break;
    }
    case SCH_T_ITERS:
    case SCH_T_TENSORS:
      o[k].n = a[k].n;
      o[k].names = tec_ctx_alloc(ctx, sizeof *o[k].names * (size_t)(a[k].n ? a[k].n : 1));
      if (!o[k].names) return -1;
      for (int j = 0; j < a[k].n; j++)
        o[k].names[j] = sp[k].type == SCH_T_ITERS ? a[k].iters[j]->name : a[k].tensors[j]->name;
      break;
    case SCH_T_INT: o[k].i = a[k].i; break;
    case SCH_T_STR:
      if (!(o[k].name = tec_ctx_strdup(ctx, a[k].str))) return -1;
      break;
    case SCH_T_VALUE: value_operand(&o[k], a[k].value); break;
    }
  }
  return 0;
}

int sch_trace_add(sch_schedule *s, sch_prim_kind k, const sch_arg *a) {
  sch_trace *t = &s->trace;
  if (t->broken) return 0; /* already out of step with the schedule; said so once */
  sch_opd_spec sp[SCH_MAX_OPD];
  int n = sch_prim_spec(k, sp);
  sch_operand *o = n ? tec_ctx_alloc(s->ctx, sizeof *o * (size_t)n) : NULL;
  if (!n) TEC_INTERNAL(s->ctx, "a primitive without an operand list");
  if (!o || fill(s, sp, n, a, o) ||
      tec_grow(s->ctx, (void **)&t->rec, &t->cap, t->n + 1, sizeof *t->rec)) {
    t->broken = tec_ctx_printf(s->ctx, "record %d (%s) could not be kept", t->n,
                               sch_prim_name(k));
    if (!t->broken) t->broken = "a record could not be kept";
    return -1;
  }
  t->rec[t->n++] = (sch_record){k, n, o};
  return 0;
}

const sch_trace *sch_get_trace(const sch_schedule *s) { return s ? &s->trace : NULL; }

int sch_trace_len(const sch_trace *t) { return t ? t->n : 0; }

te_tensor *sch_tensor_named(sch_schedule *s, const char *name) {
  if (!s) return NULL;
  sch_stage *st = sch_find_stage(s, "sch_tensor_named", name);
  return st ? st->tensor : NULL;
}

/* ---- C text ---- */

const char *sch_c_string(tec_ctx *ctx, const char *s) {
  size_t n = strlen(s);
  char *out = tec_ctx_alloc(ctx, 4 * n + 3), *p = out;
  if (!out) return NULL;
  *p++ = '"';
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') *p++ = '\\', *p++ = (char)*c;
    else if (*c < 32 || *c >= 127) p += sprintf(p, "\\%03o", *c);
    else *p++ = (char)*c;
  }
  *p++ = '"';
  *p = 0;
  return out;
}

const char *sch_prim_call_c(tec_ctx *ctx, sch_prim_kind k, const char *const *text,
                            const int *n) {
  sch_opd_spec sp[SCH_MAX_OPD];
  int ns = sch_prim_spec(k, sp);
  const char *decl = "", *args = "", *result = "";
  if (ns && sp[0].type != SCH_T_STAGE) args = "s";
  for (int i = 0; i < ns && decl && args && result; i++) {
    const char *a = text[i] ? text[i] : "NULL";
    if (sp[i].out && sp[i].type == SCH_T_TENSOR) {
      result = tec_ctx_printf(ctx, "te_tensor *%s = ", a);
      continue;
    }
    if (sp[i].out) {
      decl = tec_ctx_printf(ctx, "%s%s*%s", decl, *decl ? ", " : "sch_iter ", a);
      a = tec_ctx_printf(ctx, "&%s", a);
    } else if (sp[i].type == SCH_T_ITERS || sp[i].type == SCH_T_TENSORS) {
      a = tec_ctx_printf(ctx, "%d, (%s *[]){%s}", n ? n[i] : 0,
                         sp[i].type == SCH_T_ITERS ? "sch_iter" : "te_tensor", a);
    }
    if (!a) return NULL; /* out of memory (recorded) */
    args = tec_ctx_printf(ctx, "%s%s%s", args, *args ? ", " : "", a);
  }
  if (!decl || !args || !result) return NULL; /* out of memory (recorded) */
  return tec_ctx_printf(ctx, "%s%s%ssch_%s(%s);", decl, *decl ? ";\n" : "", result,
                        sch_prim_name(k), args);
}

/* The C printer's identifiers: one per tensor, stage and loop it has declared. */
typedef enum { ID_TENSOR, ID_STAGE, ID_ITER } id_kind;
typedef struct cid {
  id_kind kind;
  const char *owner, *name; /* iter: the stage's tensor name and the loop's */
  const char *id;
  int live;                 /* still names what it was bound to */
} cid;

typedef struct cprint {
  tec_ctx *ctx;
  cid *ids;
  int n, cap;
  const char *out;
} cprint;

static const char *const reserved[] = {
    "s", "ctx", "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
    "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "NULL", NULL};

static int taken(const cprint *c, const char *id) {
  for (int i = 0; reserved[i]; i++)
    if (strcmp(reserved[i], id) == 0) return 1;
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->ids[i].id, id) == 0) return 1;
  return 0;
}

/* A fresh C identifier made from text: other characters become '_', repeats get _2, _3. */
static const char *new_id(cprint *c, const char *text) {
  if (!text) return NULL;
  size_t n = strlen(text);
  char *base = tec_ctx_alloc(c->ctx, n + 2);
  if (!base) return NULL;
  char *p = base;
  if (!((*text >= 'a' && *text <= 'z') || (*text >= 'A' && *text <= 'Z') || *text == '_'))
    *p++ = '_';
  for (const char *t = text; *t; t++) {
    int ok = (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9');
    *p++ = ok ? *t : '_';
  }
  *p = 0;
  const char *id = base;
  for (int k = 2; id && taken(c, id); k++) id = tec_ctx_printf(c->ctx, "%s_%d", base, k);
  return id;
}

static const char *bind(cprint *c, id_kind kind, const char *owner, const char *name,
                        const char *id) {
  for (int i = 0; i < c->n; i++)
    if (c->ids[i].kind == kind && strcmp(c->ids[i].name, name) == 0 &&
        (!owner || strcmp(c->ids[i].owner, owner) == 0))
      c->ids[i].live = 0;
  if (!id || tec_grow(c->ctx, (void **)&c->ids, &c->cap, c->n + 1, sizeof *c->ids)) return NULL;
  c->ids[c->n++] = (cid){kind, owner, name, id, 1};
  return id;
}

static const char *find(const cprint *c, id_kind kind, const char *owner, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (c->ids[i].live && c->ids[i].kind == kind && strcmp(c->ids[i].name, name) == 0 &&
        (!owner || strcmp(c->ids[i].owner, owner) == 0))
      return c->ids[i].id;
  return NULL;
}

static void emit(cprint *c, const char *line) {
  if (c->out && line) c->out = tec_ctx_printf(c->ctx, "%s%s\n", c->out, line);
  else c->out = NULL;
}

static const char *tensor_id(cprint *c, const char *name) {
  const char *id = find(c, ID_TENSOR, NULL, name);
  if (id) return id;
  id = bind(c, ID_TENSOR, NULL, name, new_id(c, name));
  const char *lit = sch_c_string(c->ctx, name);
  emit(c, id && lit ? tec_ctx_printf(c->ctx, "te_tensor *%s = sch_tensor_named(s, %s);", id, lit)
                    : NULL);
  return c->out ? id : NULL;
}

static const char *stage_id(cprint *c, const char *name) {
  const char *id = find(c, ID_STAGE, NULL, name);
  if (id) return id;
  const char *t = tensor_id(c, name);
  id = t ? bind(c, ID_STAGE, NULL, name, new_id(c, tec_ctx_printf(c->ctx, "s_%s", name))) : NULL;
  emit(c, id ? tec_ctx_printf(c->ctx, "sch_stage *%s = sch_stage_of(s, %s);", id, t) : NULL);
  return c->out ? id : NULL;
}

static const char *iter_id(cprint *c, const char *owner, const char *name) {
  const char *id = find(c, ID_ITER, owner, name);
  if (id) return id;
  const char *st = stage_id(c, owner);
  id = st ? bind(c, ID_ITER, owner, name, new_id(c, tec_ctx_printf(c->ctx, "%s_%s", owner, name)))
          : NULL;
  const char *lit = sch_c_string(c->ctx, name);
  emit(c, id && lit ? tec_ctx_printf(c->ctx, "sch_iter *%s = sch_leaf_named(%s, %s);", id, st, lit)
                    : NULL);
  return c->out ? id : NULL;
}

static const char *int_text(tec_ctx *ctx, int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807 - 1)";
  return tec_ctx_printf(ctx, "%lld", (long long)v);
}

static const char *dtype_c(tec_ctx *ctx, tec_dtype t) {
  static const char *const code[] = {"TEC_INT", "TEC_UINT", "TEC_FLOAT"};
  return tec_ctx_printf(ctx, "TEC_DTYPE(%s, %d, 1)", code[t.code], t.bits);
}

/* The C text of a value, or NULL with an error (not a constant). */
static const char *value_c(tec_ctx *ctx, const sch_operand *o) {
  switch (o->vkind) {
  case SCH_VALUE_NONE: return "NULL";
  case SCH_VALUE_INT:
    if (tec_dtype_eq(o->vtype, TEC_I64)) return tec_ctx_printf(ctx, "ir_int(ctx, %s)", int_text(ctx, o->i));
    return tec_ctx_printf(ctx, "ir_int_t(ctx, %s, %s)", dtype_c(ctx, o->vtype), int_text(ctx, o->i));
  case SCH_VALUE_FLOAT:
    if (o->f != o->f || o->f - o->f != 0) break; /* NaN or infinite: no literal */
    return tec_ctx_printf(ctx, "ir_float_t(ctx, %s, %.17g)", dtype_c(ctx, o->vtype), o->f);
  case SCH_VALUE_EXPR: break;
  }
  return NULL;
}

/* Why record r cannot be printed or replayed, or NULL. */
static const char *unprintable(tec_ctx *ctx, const sch_record *r) {
  for (int k = 0; k < r->nopd; k++) {
    const sch_operand *o = &r->opd[k];
    if (o->vkind == SCH_VALUE_EXPR)
      return tec_ctx_printf(ctx, "the value %s is not a constant; a trace holds integer and "
                                 "float constants only", ir_expr_str(o->expr));
    if (o->vkind == SCH_VALUE_FLOAT && (o->f != o->f || o->f - o->f != 0))
      return tec_ctx_printf(ctx, "the value %g is not a finite float", o->f);
  }
  return NULL;
}

int sch_trace_check_printable(tec_ctx *ctx, const sch_trace *t, const char *who) {
  if (!t) return tec_ctx_set_error(ctx, "%s: the trace is NULL", who);
  if (t->broken) return tec_ctx_set_error(ctx, "%s: the trace is incomplete: %s", who, t->broken);
  for (int i = 0; i < t->n; i++) {
    const char *why = unprintable(ctx, &t->rec[i]);
    if (why)
      return tec_ctx_set_error(ctx, "%s: record %d (%s): %s", who, i,
                               sch_prim_name(t->rec[i].kind), why);
  }
  return 0;
}

const char *sch_trace_c(tec_ctx *ctx, const sch_trace *t) {
  if (!ctx) return NULL;
  if (sch_trace_check_printable(ctx, t, "sch_trace_c")) return NULL;
  cprint c = {ctx, NULL, 0, 0, ""};
  emit(&c, tec_ctx_printf(ctx, "/* a tec schedule trace: %d records; `ctx` and the schedule `s` "
                               "in scope */", t->n));
  if (t->version == 1) /* rfactor's order before version 2 */
    emit(&c, "sch_set_trace_version(s, 1);");
  for (int r = 0; r < t->n && c.out; r++) {
    const sch_record *rec = &t->rec[r];
    sch_opd_spec sp[SCH_MAX_OPD];
    int ns = sch_prim_spec(rec->kind, sp);
    const char *text[SCH_MAX_OPD] = {0};
    int cnt[SCH_MAX_OPD] = {0};
    const char *created[SCH_MAX_OPD] = {0};
    for (int k = 0; k < ns && k < rec->nopd; k++) {
      const sch_operand *o = &rec->opd[k];
      const char *owner = sp[k].owner >= 0 ? rec->opd[sp[k].owner].name : NULL;
      switch (sp[k].type) {
      case SCH_T_STAGE: text[k] = stage_id(&c, o->name); break;
      case SCH_T_TENSOR:
        if (sp[k].out) text[k] = created[k] = new_id(&c, o->name);
        else text[k] = tensor_id(&c, o->name);
        break;
      case SCH_T_ITER:
        if (sp[k].out) {
          /* the owner of created loops: the stage the call works on */
          text[k] = created[k] = new_id(&c, tec_ctx_printf(ctx, "%s_%s", rec->opd[0].name, o->name));
        } else {
          text[k] = iter_id(&c, owner, o->name);
        }
        break;
      case SCH_T_AXIS: {
        const char *sid = stage_id(&c, owner);
        text[k] = sid ? tec_ctx_printf(ctx, "sch_axis(%s, %lld)", sid, (long long)o->i) : NULL;
        break;
      }
      case SCH_T_ITERS:
      case SCH_T_TENSORS: {
        const char *list = "";
        for (int j = 0; j < o->n && list; j++) {
          const char *id = sp[k].type == SCH_T_ITERS ? iter_id(&c, owner, o->names[j])
                                                     : tensor_id(&c, o->names[j]);
          list = id ? tec_ctx_printf(ctx, "%s%s%s", list, j ? ", " : "", id) : NULL;
        }
        text[k] = list;
        cnt[k] = o->n;
        break;
      }
      case SCH_T_INT: text[k] = int_text(ctx, o->i); break;
      case SCH_T_STR: text[k] = sch_c_string(ctx, o->name); break;
      case SCH_T_VALUE: text[k] = value_c(ctx, o); break;
      }
      if (!text[k]) c.out = NULL;
    }
    if (!c.out) break;
    emit(&c, sch_prim_call_c(ctx, rec->kind, text, cnt));
    /* what the call made: bound after it, so its own arguments still name the old ones */
    for (int k = 0; k < ns; k++) {
      if (!created[k]) continue;
      if (sp[k].type == SCH_T_TENSOR) {
        bind(&c, ID_TENSOR, NULL, rec->opd[k].name, created[k]);
        bind(&c, ID_STAGE, NULL, rec->opd[k].name, NULL); /* a stage of that name is new */
      } else {
        bind(&c, ID_ITER, rec->opd[0].name, rec->opd[k].name, created[k]);
      }
    }
    /* cache_write and rfactor rebuild the loops of the tensor they work on */
    if (rec->kind == SCH_PRIM_CACHE_WRITE || rec->kind == SCH_PRIM_RFACTOR)
      for (int i = 0; i < c.n; i++)
        if (c.ids[i].kind == ID_ITER && strcmp(c.ids[i].owner, rec->opd[0].name) == 0)
          c.ids[i].live = 0;
  }
  return c.out;
}
