/* trace_json.c — a trace as JSON and back, one record per line, fields named and ordered by
 * the primitive list:
 *
 *   {"tec_trace": 1, "records": [
 *     {"prim": "split", "stage": "C", "iter": "i", "factor": 32, "outer": "i.outer", "inner": "i.inner"},
 *     {"prim": "pragma", "stage": "C", "iter": "i.outer", "key": "auto_unroll_max_step", "value": 16}
 *   ]}
 *
 * The parser reads any JSON of that shape (fields in any order) and says where it is wrong:
 * "sch_trace_parse_json: line 3: record 1 (split): field 'factor': expected an integer,
 * found a string". */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

#define WHO "sch_trace_parse_json"

/* ---- printing ---- */

static const char *json_string(tec_ctx *ctx, const char *s) {
  size_t n = strlen(s);
  char *out = tec_ctx_alloc(ctx, 6 * n + 3), *p = out;
  if (!out) return NULL;
  *p++ = '"';
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') *p++ = '\\', *p++ = (char)*c;
    else if (*c < 32) p += sprintf(p, "\\u%04x", *c);
    else *p++ = (char)*c;
  }
  *p++ = '"';
  *p = 0;
  return out;
}

static const char *json_value(tec_ctx *ctx, const sch_operand *o, int strict) {
  char ty[32];
  switch (o->vkind) {
  case SCH_VALUE_NONE: return "null";
  case SCH_VALUE_INT:
    if (tec_dtype_eq(o->vtype, TEC_I64)) return tec_ctx_printf(ctx, "%lld", (long long)o->i);
    return tec_ctx_printf(ctx, "{\"type\": \"%s\", \"int\": %lld}",
                          tec_dtype_str(o->vtype, ty, sizeof ty), (long long)o->i);
  case SCH_VALUE_FLOAT:
    if (o->f == o->f && o->f - o->f == 0)
      return tec_ctx_printf(ctx, "{\"type\": \"%s\", \"float\": %.17g}",
                            tec_dtype_str(o->vtype, ty, sizeof ty), o->f);
    break;
  case SCH_VALUE_EXPR: break;
  }
  if (strict) return NULL;
  return json_string(ctx, o->vkind == SCH_VALUE_EXPR
                              ? tec_ctx_printf(ctx, "<not a constant: %s>", ir_expr_str(o->expr))
                              : "<not a finite float>");
}

const char *sch_record_json(tec_ctx *ctx, const sch_record *r, int strict) {
  sch_opd_spec sp[SCH_MAX_OPD];
  int ns = sch_prim_spec(r->kind, sp);
  const char *s = tec_ctx_printf(ctx, "{\"prim\": \"%s\"", sch_prim_name(r->kind));
  for (int k = 0; k < ns && k < r->nopd && s; k++) {
    const sch_operand *o = &r->opd[k];
    const char *v = NULL;
    switch (sp[k].type) {
    case SCH_T_STAGE:
    case SCH_T_TENSOR:
    case SCH_T_ITER:
    case SCH_T_STR: v = json_string(ctx, o->name); break;
    case SCH_T_AXIS:
    case SCH_T_INT: v = tec_ctx_printf(ctx, "%lld", (long long)o->i); break;
    case SCH_T_VALUE: v = json_value(ctx, o, strict); break;
    case SCH_T_ITERS:
    case SCH_T_TENSORS:
      v = "[";
      for (int j = 0; j < o->n && v; j++) {
        const char *e = json_string(ctx, o->names[j]);
        v = e ? tec_ctx_printf(ctx, "%s%s%s", v, j ? ", " : "", e) : NULL;
      }
      if (v) v = tec_ctx_printf(ctx, "%s]", v);
      break;
    }
    s = v ? tec_ctx_printf(ctx, "%s, \"%s\": %s", s, sp[k].field, v) : NULL;
  }
  return s ? tec_ctx_printf(ctx, "%s}", s) : NULL;
}

const char *sch_trace_json(tec_ctx *ctx, const sch_trace *t) {
  if (!ctx) return NULL;
  if (sch_trace_check_printable(ctx, t, "sch_trace_json")) return NULL;
  const char *s = tec_ctx_printf(ctx, "{\"tec_trace\": %d, \"records\": [\n",
                                 t->version == 1 ? 1 : SCH_TRACE_VERSION);
  for (int i = 0; i < t->n && s; i++) {
    const char *r = sch_record_json(ctx, &t->rec[i], 1);
    s = r ? tec_ctx_printf(ctx, "%s  %s%s\n", s, r, i + 1 < t->n ? "," : "") : NULL;
  }
  return s ? tec_ctx_printf(ctx, "%s]}\n", s) : NULL;
}

/* ---- parsing: text -> a small JSON tree -> records ---- */

typedef enum { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STRING, J_ARRAY, J_OBJECT } jkind;

typedef struct jval {
  jkind kind;
  int line;
  int64_t i;
  double f;
  const char *s;
  int n;
  struct jval **items;  /* array items, object values */
  const char **keys;    /* object keys */
} jval;

typedef struct jparser {
  tec_ctx *ctx;
  const char *p;
  int line;
  int failed;
} jparser;

static const char *jkind_name(jkind k) {
  static const char *const n[] = {"null", "a boolean", "an integer", "a number", "a string",
                                  "an array", "an object"};
  return n[k];
}

/* What the text shows at the parser's position, for an error. */
static const char *found_here(jparser *p) {
  if (!*p->p) return "the end of the text";
  int n = 0;
  while (p->p[n] && p->p[n] != '\n' && n < 12) n++;
  return tec_ctx_printf(p->ctx, "'%.*s'", n, p->p);
}

static void *syntax(jparser *p, const char *expected) {
  if (!p->failed)
    tec_ctx_set_error(p->ctx, WHO ": line %d: expected %s, found %s", p->line, expected,
                      found_here(p));
  p->failed = 1;
  return NULL;
}

static void skip_ws(jparser *p) {
  for (;; p->p++) {
    if (*p->p == '\n') p->line++;
    else if (*p->p != ' ' && *p->p != '\t' && *p->p != '\r') return;
  }
}

static jval *jnew(jparser *p, jkind k) {
  jval *v = tec_ctx_alloc(p->ctx, sizeof *v);
  if (!v) {
    p->failed = 1;
    return NULL;
  }
  memset(v, 0, sizeof *v);
  v->kind = k;
  v->line = p->line;
  return v;
}

static const char *parse_string(jparser *p) {
  if (*p->p != '"') return syntax(p, "a string");
  const char *start = ++p->p;
  size_t cap = 1;
  for (const char *q = start; *q && *q != '"'; q++) cap += *q == '\\' && q[1] ? (q++, 2) : 1;
  char *out = tec_ctx_alloc(p->ctx, cap + 4), *o = out;
  if (!out) {
    p->failed = 1;
    return NULL;
  }
  while (*p->p != '"') {
    unsigned char c = (unsigned char)*p->p;
    if (!c || c == '\n') return syntax(p, "the closing '\"' of a string");
    if (c < 32) return syntax(p, "a printable character in a string");
    if (c != '\\') {
      *o++ = (char)c;
      p->p++;
      continue;
    }
    char e = p->p[1];
    const char *map = strchr("\"\\/bfnrt", e);
    if (e && map) {
      *o++ = "\"\\/\b\f\n\r\t"[map - "\"\\/bfnrt"];
      p->p += 2;
    } else if (e == 'u') {
      unsigned v = 0;
      for (int k = 2; k < 6; k++) {
        char h = p->p[k];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0) return syntax(p, "four hex digits after \\u");
        v = v * 16 + (unsigned)d;
      }
      if (v == 0 || v > 127) return syntax(p, "\\u0001 to \\u007f (names are ASCII)");
      *o++ = (char)v;
      p->p += 6;
    } else {
      p->p++;
      return syntax(p, "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\'");
    }
  }
  p->p++;
  *o = 0;
  return out;
}

static jval *parse_value(jparser *p, int depth);

static jval *parse_container(jparser *p, int depth, int object) {
  jval *v = jnew(p, object ? J_OBJECT : J_ARRAY);
  int cap = 0;
  p->p++;
  skip_ws(p);
  char close = object ? '}' : ']';
  if (*p->p == close) {
    p->p++;
    return v;
  }
  for (;;) {
    if (!v) return NULL;
    const char *key = NULL;
    if (object) {
      skip_ws(p);
      if (!(key = parse_string(p))) return p->failed ? NULL : syntax(p, "a field name");
      skip_ws(p);
      if (*p->p != ':') return syntax(p, "':' after a field name");
      p->p++;
    }
    jval *item = parse_value(p, depth + 1);
    if (!item) return NULL;
    if (tec_grow(p->ctx, (void **)&v->items, &cap, v->n + 1, sizeof *v->items)) {
      p->failed = 1;
      return NULL;
    }
    if (object) {
      const char **keys = tec_ctx_alloc(p->ctx, sizeof *keys * (size_t)(v->n + 1));
      if (!keys) {
        p->failed = 1;
        return NULL;
      }
      if (v->n) memcpy(keys, v->keys, sizeof *keys * (size_t)v->n);
      v->keys = keys;
      v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    skip_ws(p);
    if (*p->p == ',') {
      p->p++;
      continue;
    }
    if (*p->p == close) {
      p->p++;
      return v;
    }
    return syntax(p, object ? "',' or '}' after a field" : "',' or ']' after an item");
  }
}

static jval *parse_value(jparser *p, int depth) {
  skip_ws(p);
  if (depth > 32) return syntax(p, "at most 32 levels of nesting");
  char c = *p->p;
  if (c == '{' || c == '[') return parse_container(p, depth, c == '{');
  if (c == '"') {
    jval *v = jnew(p, J_STRING);
    return v && (v->s = parse_string(p)) ? v : NULL;
  }
  static const char *const words[] = {"null", "true", "false"};
  for (int w = 0; w < 3; w++)
    if (strncmp(p->p, words[w], strlen(words[w])) == 0) {
      jval *v = jnew(p, w ? J_BOOL : J_NULL);
      if (v) v->i = w == 1;
      p->p += strlen(words[w]);
      return v;
    }
  if (c == '-' || (c >= '0' && c <= '9')) {
    const char *q = p->p + (c == '-');
    while (*q >= '0' && *q <= '9') q++;
    int is_float = *q == '.' || *q == 'e' || *q == 'E';
    jval *v = jnew(p, is_float ? J_FLOAT : J_INT);
    if (!v) return NULL;
    char *end;
    errno = 0;
    if (is_float) {
      v->f = strtod(p->p, &end);
    } else {
      v->i = strtoll(p->p, &end, 10);
      if (errno == ERANGE) return syntax(p, "an integer in the int64 range");
    }
    if (end == p->p) return syntax(p, "a number");
    p->p = end;
    return v;
  }
  return syntax(p, "a value (a string, a number, an object, an array, null)");
}

/* ---- tree -> records ---- */

static jval *field(const jval *obj, const char *key) {
  for (int i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
}

static const char *found_kind(tec_ctx *ctx, const jval *v) {
  if (v->kind == J_STRING) return tec_ctx_printf(ctx, "the string \"%s\"", v->s);
  if (v->kind == J_INT) return tec_ctx_printf(ctx, "%lld", (long long)v->i);
  return jkind_name(v->kind);
}

/* An error about record index r (kind name prim), field f (or NULL), at line. */
static int rec_error(tec_ctx *ctx, int line, int r, const char *prim, const char *f,
                     const char *fmt_expected, const char *found) {
  const char *where = f ? tec_ctx_printf(ctx, ": field '%s'", f) : "";
  tec_ctx_set_error(ctx, WHO ": line %d: record %d%s%s%s%s: expected %s%s%s", line, r,
                    prim ? " (" : "", prim ? prim : "", prim ? ")" : "", where, fmt_expected,
                    found ? ", found " : "", found ? found : "");
  return -1;
}

static int parse_dtype(const char *s, tec_dtype *out) {
  static const uint8_t codes[] = {TEC_INT, TEC_UINT, TEC_FLOAT};
  static const uint8_t bits[] = {8, 16, 32, 64};
  for (int c = 0; c < 3; c++)
    for (int b = 0; b < 4; b++) {
      char buf[32];
      tec_dtype t = TEC_DTYPE(codes[c], bits[b], 1);
      if ((c != 2 || b > 0) && strcmp(tec_dtype_str(t, buf, sizeof buf), s) == 0) {
        *out = t;
        return 0;
      }
    }
  return -1;
}

static int to_value(tec_ctx *ctx, const jval *v, int r, const char *prim, const char *f,
                    sch_operand *o) {
  const char *want = "null, an integer, or {\"type\": \"int32\", \"int\": 3} / {\"type\": "
                     "\"float32\", \"float\": 0.5}";
  if (v->kind == J_NULL) {
    o->vkind = SCH_VALUE_NONE;
    return 0;
  }
  if (v->kind == J_INT) {
    o->vkind = SCH_VALUE_INT;
    o->vtype = TEC_I64;
    o->i = v->i;
    return 0;
  }
  if (v->kind != J_OBJECT) return rec_error(ctx, v->line, r, prim, f, want, found_kind(ctx, v));
  const jval *ty = field(v, "type"), *iv = field(v, "int"), *fv = field(v, "float");
  if (!ty || ty->kind != J_STRING || v->n != 2 || (!iv == !fv))
    return rec_error(ctx, v->line, r, prim, f, want, "an object of another shape");
  if (parse_dtype(ty->s, &o->vtype) ||
      (iv && !tec_dtype_is_int(o->vtype)) || (fv && !tec_dtype_is_float(o->vtype)))
    return rec_error(ctx, v->line, r, prim, f,
                     iv ? "an integer type (int8 .. int64, uint8 .. uint64)"
                        : "a float type (float16, float32, float64)",
                     tec_ctx_printf(ctx, "\"%s\"", ty->s));
  if (iv) {
    if (iv->kind != J_INT)
      return rec_error(ctx, iv->line, r, prim, f, "an integer for \"int\"", found_kind(ctx, iv));
    o->vkind = SCH_VALUE_INT;
    o->i = iv->i;
  } else {
    if (fv->kind != J_INT && fv->kind != J_FLOAT)
      return rec_error(ctx, fv->line, r, prim, f, "a number for \"float\"", found_kind(ctx, fv));
    o->vkind = SCH_VALUE_FLOAT;
    o->f = fv->kind == J_INT ? (double)fv->i : fv->f;
  }
  return 0;
}

static int to_record(tec_ctx *ctx, const jval *v, int r, sch_record *out) {
  if (v->kind != J_OBJECT)
    return rec_error(ctx, v->line, r, NULL, NULL, "an object", jkind_name(v->kind));
  const jval *pv = field(v, "prim");
  if (!pv || pv->kind != J_STRING)
    return rec_error(ctx, v->line, r, NULL, "prim", "the primitive's name as a string",
                     pv ? found_kind(ctx, pv) : "no such field");
  int k = sch_prim_by_name(pv->s);
  if (k < 0) {
    const char *all = "";
    for (int i = 0; i < SCH_PRIM_COUNT; i++)
      all = tec_ctx_printf(ctx, "%s%s%s", all, i ? ", " : "", sch_prim_name((sch_prim_kind)i));
    return rec_error(ctx, pv->line, r, NULL, "prim", tec_ctx_printf(ctx, "one of %s", all),
                     found_kind(ctx, pv));
  }
  const char *prim = pv->s;
  sch_opd_spec sp[SCH_MAX_OPD];
  int ns = sch_prim_spec((sch_prim_kind)k, sp);
  for (int i = 0; i < v->n; i++) {
    int known = strcmp(v->keys[i], "prim") == 0;
    for (int j = 0; j < ns; j++) known |= strcmp(v->keys[i], sp[j].field) == 0;
    if (!known) {
      const char *all = "";
      for (int j = 0; j < ns; j++) all = tec_ctx_printf(ctx, "%s%s%s", all, j ? ", " : "", sp[j].field);
      return rec_error(ctx, v->items[i]->line, r, prim, v->keys[i],
                       tec_ctx_printf(ctx, "only the fields of %s (%s)", prim, all),
                       "a field it does not take");
    }
  }
  sch_operand *o = tec_ctx_alloc(ctx, sizeof *o * (size_t)(ns ? ns : 1));
  if (!o) return -1;
  memset(o, 0, sizeof *o * (size_t)(ns ? ns : 1));
  for (int j = 0; j < ns; j++) {
    const jval *f = field(v, sp[j].field);
    const char *name = sp[j].field;
    if (!f) return rec_error(ctx, v->line, r, prim, name, "this field", "none");
    switch (sp[j].type) {
    case SCH_T_STAGE:
    case SCH_T_TENSOR:
    case SCH_T_ITER:
    case SCH_T_STR:
      if (f->kind != J_STRING)
        return rec_error(ctx, f->line, r, prim, name,
                         sp[j].type == SCH_T_ITER ? "a loop's name (a string)"
                         : sp[j].type == SCH_T_STR ? "a string" : "a tensor's name (a string)",
                         found_kind(ctx, f));
      o[j].name = f->s;
      break;
    case SCH_T_AXIS:
    case SCH_T_INT:
      if (f->kind != J_INT)
        return rec_error(ctx, f->line, r, prim, name,
                         sp[j].type == SCH_T_AXIS ? "a dimension (an integer)" : "an integer",
                         found_kind(ctx, f));
      o[j].i = f->i;
      break;
    case SCH_T_VALUE:
      if (to_value(ctx, f, r, prim, name, &o[j])) return -1;
      break;
    case SCH_T_ITERS:
    case SCH_T_TENSORS:
      if (f->kind != J_ARRAY)
        return rec_error(ctx, f->line, r, prim, name, "an array of names", found_kind(ctx, f));
      o[j].n = f->n;
      o[j].names = tec_ctx_alloc(ctx, sizeof *o[j].names * (size_t)(f->n ? f->n : 1));
      if (!o[j].names) return -1;
      for (int e = 0; e < f->n; e++) {
        if (f->items[e]->kind != J_STRING)
          return rec_error(ctx, f->items[e]->line, r, prim, name,
                           "an array of names (strings)", found_kind(ctx, f->items[e]));
        o[j].names[e] = f->items[e]->s;
      }
      break;
    }
  }
  *out = (sch_record){(sch_prim_kind)k, ns, o};
  return 0;
}

sch_trace *sch_trace_parse_json(tec_ctx *ctx, const char *text) {
  if (!ctx) return NULL;
  if (!text) {
    tec_ctx_set_error(ctx, WHO ": the text is NULL");
    return NULL;
  }
  jparser p = {ctx, text, 1, 0};
  jval *root = parse_value(&p, 0);
  if (!root) return NULL;
  skip_ws(&p);
  if (*p.p) return syntax(&p, "the end of the text after the trace");
  const jval *ver = root->kind == J_OBJECT ? field(root, "tec_trace") : NULL;
  const jval *recs = root->kind == J_OBJECT ? field(root, "records") : NULL;
  if (!ver || !recs || root->n != 2) {
    tec_ctx_set_error(ctx, WHO ": line %d: expected an object with the fields \"tec_trace\" (a version) "
                           "and \"records\" (an array), found %s", root->line,
                      root->kind == J_OBJECT ? "an object with other fields" : jkind_name(root->kind));
    return NULL;
  }
  if (ver->kind != J_INT || ver->i < 1 || ver->i > SCH_TRACE_VERSION) {
    tec_ctx_set_error(ctx, WHO ": line %d: field 'tec_trace': expected a version from 1 to %d, "
                           "found %s", ver->line, SCH_TRACE_VERSION, found_kind(ctx, ver));
    return NULL;
  }
  if (recs->kind != J_ARRAY) {
    tec_ctx_set_error(ctx, WHO ": line %d: field 'records': expected an array, found %s",
                      recs->line, found_kind(ctx, recs));
    return NULL;
  }
  sch_trace *t = tec_ctx_alloc(ctx, sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->version = (int)ver->i;
  if (recs->n && tec_grow(ctx, (void **)&t->rec, &t->cap, recs->n, sizeof *t->rec)) return NULL;
  for (int i = 0; i < recs->n; i++)
    if (to_record(ctx, recs->items[i], i, &t->rec[t->n++])) return NULL;
  return t;
}
