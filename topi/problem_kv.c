/* problem_kv.c — "key=value" pairs (commas or spaces between) read into a table whose values
 * are asked for by key (an integer or a string, with a default), every key checked: a bad
 * value, a key given twice and a key nobody asked for are refused by name. A problem's text
 * (problem_text.c) and a generator's --shape parameters (tools/driver_params.c) read through
 * it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topi/problem_kv.h"

int topi_kv_parse(tec_ctx *ctx, const char *what, const char *text, topi_kv *p) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  p->what = what ? what : "";
  p->sep = what ? ": " : "";
  const char *s = text ? text : "";
  while (*s) {
    while (*s == ',' || *s == ' ') s++;
    if (!*s) break;
    size_t len = strcspn(s, ", ");
    const char *eq = memchr(s, '=', len);
    if (!eq || eq == s || eq == s + len - 1) {
      tec_ctx_set_error(ctx, "%s%s'%.*s' is not key=value (e.g. %sn=1,c=16,h=14,w=14)", p->what, p->sep,
                        (int)len, s, what ? "--shape " : "");
      return -1;
    }
    if (p->n == TOPI_KV_MAX) {
      tec_ctx_set_error(ctx, "%s%smore than %d key=value pairs", p->what, p->sep, TOPI_KV_MAX);
      return -1;
    }
    p->key[p->n] = tec_ctx_printf(ctx, "%.*s", (int)(eq - s), s);
    p->val[p->n] = tec_ctx_printf(ctx, "%.*s", (int)(s + len - eq - 1), eq + 1);
    if (!p->key[p->n] || !p->val[p->n]) return -1;
    for (int i = 0; i < p->n; i++)
      if (!strcmp(p->key[i], p->key[p->n])) {
        tec_ctx_set_error(ctx, "%s%s'%s' given twice", p->what, p->sep, p->key[i]);
        return -1;
      }
    p->n++;
    s += len;
  }
  return 0;
}

static int find(const topi_kv *p, const char *key) {
  topi_kv *q = (topi_kv *)p;
  int seen = 0;
  for (int i = 0; i < q->nasked; i++) seen |= !strcmp(q->asked[i], key);
  if (!seen && q->nasked < TOPI_KV_MAX) q->asked[q->nasked++] = tec_ctx_strdup(q->ctx, key);
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->key[i], key)) return i;
  return -1;
}

int64_t topi_kv_int(const topi_kv *p, const char *key, int64_t dflt) {
  topi_kv *q = (topi_kv *)p;
  int i = find(p, key);
  if (i < 0) return dflt;
  q->used[i] = 1;
  char *end;
  long long v = strtoll(p->val[i], &end, 10);
  if (*end || end == p->val[i]) {
    if (!q->bad) q->bad = tec_ctx_printf(p->ctx, "%s%s%s=%s is not an integer", p->what, p->sep, key, p->val[i]);
    return dflt;
  }
  return v;
}

const char *topi_kv_str(const topi_kv *p, const char *key, const char *dflt) {
  int i = find(p, key);
  if (i < 0) return dflt;
  ((topi_kv *)p)->used[i] = 1;
  return p->val[i];
}

int topi_kv_finish(const topi_kv *p, const char *legal) {
  if (p->bad) return tec_ctx_set_error(p->ctx, "%s", p->bad), -1;
  if (!legal) { /* a generator: the keys it asked for */
    char *l = tec_ctx_alloc(p->ctx, 1024);
    if (!l) return -1;
    l[0] = 0;
    for (int i = 0; i < p->nasked; i++)
      snprintf(l + strlen(l), 1024 - strlen(l), "%s%s", i ? " " : "", p->asked[i]);
    legal = p->nasked ? l : "none";
  }
  for (int i = 0; i < p->n; i++)
    if (!p->used[i]) {
      tec_ctx_set_error(p->ctx, "%s%sunknown key '%s'%s%s", p->what, p->sep, p->key[i],
                        legal ? "; the keys are " : "", legal ? legal : "");
      return -1;
    }
  return 0;
}
