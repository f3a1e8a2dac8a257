/* records_load.c — reading a records file back (a small JSON reader for the flat record
 * object; a line that does not parse is reported as FILE:LINE and skipped) and apply-best:
 * the fastest correct record of a workload on a target (a confirmation, measured side by side,
 * before any trial), never another target's, and a
 * warning naming the workload and the default used when there is none or it does not fit. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/tune_model.h"
#include "tune/internal.h"

typedef struct jp {
  tec_ctx *ctx;
  const char *p;
  const char *err;
} jp;

static void ws(jp *j) {
  while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r') j->p++;
}

static const char *jstring(jp *j) {
  if (*j->p != '"') return j->err = "expected a string", NULL;
  const char *s = ++j->p;
  size_t n = 0;
  while (s[n] && s[n] != '"') n += s[n] == '\\' && s[n + 1] ? 2 : 1;
  if (!s[n]) return j->err = "an unterminated string", NULL;
  char *out = tec_ctx_alloc(j->ctx, n + 1);
  if (!out) return j->err = "out of memory", NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\') {
      out[o++] = s[i];
      continue;
    }
    char c = s[++i];
    if (c == 'n') out[o++] = '\n';
    else if (c == 't') out[o++] = '\t';
    else if (c == 'u' && i + 4 < n) {
      unsigned v = 0;
      if (sscanf(s + i + 1, "%4x", &v) != 1) return j->err = "a bad \\u escape", NULL;
      out[o++] = v < 128 ? (char)v : '?';
      i += 4;
    } else out[o++] = c;
  }
  j->p = s + n + 1;
  return out;
}

/* a JSON number (not strtod's inf, nan or hex), finite as a double */
static int jnumber(jp *j, double *v) {
  char *end;
  const char *s = j->p + (*j->p == '-');
  if (*s < '0' || *s > '9' || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) return j->err = "expected a number", -1;
  errno = 0;
  *v = strtod(j->p, &end);
  if (end == j->p) return j->err = "expected a number", -1;
  if (!isfinite(*v)) return j->err = "a number out of range", -1;
  j->p = end;
  return 0;
}

/* skips any value (objects and arrays balanced, strings honoured) */
static int jskip(jp *j) {
  ws(j);
  if (*j->p == '"') return jstring(j) ? 0 : -1;
  if (*j->p == '{' || *j->p == '[') {
    int depth = 0;
    do {
      if (*j->p == '"') {
        if (!jstring(j)) return -1;
        continue;
      }
      if (*j->p == '{' || *j->p == '[') depth++;
      else if (*j->p == '}' || *j->p == ']') depth--;
      else if (!*j->p) return j->err = "an unterminated object or array", -1;
      j->p++;
    } while (depth > 0);
    return 0;
  }
  if (!strncmp(j->p, "null", 4) || !strncmp(j->p, "true", 4)) return j->p += 4, 0;
  if (!strncmp(j->p, "false", 5)) return j->p += 5, 0;
  double v;
  return jnumber(j, &v);
}

/* a JSON array of numbers (what: its key, for the message): the first cap into out, *n all of
 * them; -1 with j->err */
static int jnumbers(jp *j, const char *what, double *out, int cap, int *n) {
  if (*j->p != '[') return j->err = tec_ctx_printf(j->ctx, "%s is not an array", what), -1;
  *n = 0;
  j->p++;
  for (ws(j); *j->p != ']'; ws(j)) {
    double v;
    if (jnumber(j, &v)) return -1;
    if (*n < cap) out[*n] = v;
    ++*n;
    ws(j);
    if (*j->p == ',') j->p++;
    else if (*j->p != ']') return j->err = tec_ctx_printf(j->ctx, "expected ',' or ']' in %s", what), -1;
  }
  j->p++;
  return 0;
}

/* "features": TUNE_NFEATURES numbers, each a finite float, into r (arena); anything else
 * (not an array, another length, a number past float's range) leaves r without features */
static int jfeatures(jp *j, tune_record *r) {
  const char *at = j->p;
  double v[TUNE_NFEATURES];
  int n = 0, ok = jnumbers(j, "features", v, TUNE_NFEATURES, &n) == 0 && n == TUNE_NFEATURES;
  for (int i = 0; ok && i < n; i++) ok = fabs(v[i]) <= FLT_MAX;
  if (!ok) { /* skipped whole, as any value of a key the record does not use */
    j->err = NULL, j->p = at;
    return jskip(j);
  }
  if (!(r->features = tec_ctx_alloc(j->ctx, sizeof *r->features * TUNE_NFEATURES)))
    return j->err = "out of memory", -1;
  for (int i = 0; i < n; i++) r->features[i] = (float)v[i];
  r->nfeatures = n;
  return 0;
}

/* one record line; -1 with j->err */
static int parse_record(jp *j, tune_record *r) {
  memset(r, 0, sizeof *r);
  r->index = -1;
  ws(j);
  if (*j->p != '{') return j->err = "not a JSON object", -1;
  j->p++;
  for (;;) {
    ws(j);
    if (*j->p == '}') break;
    const char *key = jstring(j);
    if (!key) return -1;
    ws(j);
    if (*j->p != ':') return j->err = "expected ':'", -1;
    j->p++;
    ws(j);
    const char **sfield = !strcmp(key, "workload")    ? &r->workload
                          : !strcmp(key, "target")      ? &r->target
                          : !strcmp(key, "template")    ? &r->template_name
                          : !strcmp(key, "config")      ? &r->config
                          : !strcmp(key, "error")       ? &r->error
                          : !strcmp(key, "status")      ? &r->status
                          : !strcmp(key, "timestamp")   ? &r->timestamp
                          : !strcmp(key, "tec_version") ? &r->version
                                                        : NULL;
    double v;
    const char *stage;
    if (sfield) {
      if (!(*sfield = jstring(j))) return -1;
    } else if (!strcmp(key, "stage")) { /* "confirm": measured side by side; else a trial */
      if (!(stage = jstring(j))) return -1;
      r->confirmed = !strcmp(stage, "confirm");
    } else if (!strcmp(key, "anchor_s") || !strcmp(key, "anchor_base_s")) {
      if (jnumber(j, &v)) return -1;
      *(key[7] == 'b' ? &r->anchor_base_s : &r->anchor_s) = v > 0 && v < 1e9 ? v : 0;
    } else if (!strcmp(key, "gflops") || !strcmp(key, "median") || !strcmp(key, "index") ||
               !strcmp(key, "features_version")) {
      if (jnumber(j, &v)) return -1;
      if (key[0] == 'g') r->gflops = v;
      else if (key[0] == 'm') r->median = v;
      else if (key[0] == 'f') r->features_version = v >= 0 && v <= 1e6 ? (int)v : -1; /* -1: not ours */
      else if (v >= -1 && v < 9e18) r->index = (int64_t)v;
      else return j->err = "index out of range", -1;
    } else if (!strcmp(key, "features")) {
      if (jfeatures(j, r)) return -1;
    } else if (!strcmp(key, "costs")) {
      if (jnumbers(j, "costs", r->costs, TUNE_MAX_COSTS, &r->ncosts)) return -1;
      if (r->ncosts > TUNE_MAX_COSTS) r->ncosts = TUNE_MAX_COSTS;
    } else if (jskip(j)) {
      return -1;
    }
    ws(j);
    if (*j->p == ',') j->p++;
    else if (*j->p != '}') return j->err = "expected ',' or '}'", -1;
  }
  j->p++;
  ws(j);
  if (*j->p) return j->err = "text after the object", -1;
  static const char *const need[] = {"workload", "target", "template", "config", "status"};
  const char *have[] = {r->workload, r->target, r->template_name, r->config, r->status};
  for (int i = 0; i < 5; i++)
    if (!have[i]) return j->err = tec_ctx_printf(j->ctx, "no \"%s\" field", need[i]), -1;
  return 0;
}

int tune_records_load(tec_ctx *ctx, const char *path, FILE *warn, tune_record **out, int *n) {
  int skipped;
  return tune_records_load_counted(ctx, path, warn, out, n, &skipped);
}

int tune_records_load_counted(tec_ctx *ctx, const char *path, FILE *warn, tune_record **out, int *n, int *skipped) {
  *out = NULL, *n = 0, *skipped = 0;
  FILE *f = fopen(path, "r");
  if (!f) return tec_ctx_set_error(ctx, "tune: cannot read the records file %s: %s", path, strerror(errno));
  int cap = 0;
  char *line = NULL;
  size_t lcap = 0;
  ssize_t len;
  int lineno = 0, rc = 0;
  while ((len = getline(&line, &lcap, f)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (len == 0) continue;
    tune_record r;
    jp j = {.ctx = ctx, .p = line};
    if (parse_record(&j, &r) != 0) {
      if (warn) fprintf(warn, "%s:%d: skipped: %s\n", path, lineno, j.err ? j.err : "does not parse");
      ++*skipped;
      continue;
    }
    if (*n == cap) {
      int ncap = cap ? 2 * cap : 64;
      tune_record *a = tec_ctx_alloc(ctx, sizeof *a * (size_t)ncap);
      if (!a) {
        rc = tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory reading %s", path);
        break;
      }
      if (*n) memcpy(a, *out, sizeof *a * (size_t)*n);
      *out = a, cap = ncap;
    }
    (*out)[(*n)++] = r;
  }
  int e = errno; /* getline's, when it failed */
  if (rc == 0 && ferror(f)) /* a directory, or a read that failed part way */
    rc = tec_ctx_set_error(ctx, "tune: reading the records file %s failed: %s", path, strerror(e));
  free(line);
  fclose(f);
  return rc;
}

int tune_apply_best(tec_ctx *ctx, const char *records, const char *template_name, const char *problem,
                    const char *target, const tune_space *sp, void *config, const char **warning, int print) {
  if (warning) *warning = NULL;
  memcpy(config, sp->default_config, sp->config_size);
  const tec_target *tg = tec_target_parse(ctx, target);
  return tg ? tune_apply_best_for(ctx, records, template_name, problem, tg, sp, config, warning, print) : -1;
}

int tune_apply_best_for(tec_ctx *ctx, const char *records, const char *template_name, const char *problem,
                        const tec_target *target, const tune_space *sp, void *config, const char **warning,
                        int print) {
  if (warning) *warning = NULL;
  memcpy(config, sp->default_config, sp->config_size);
  const tec_target *tg = target ? target : tec_target_parse(ctx, NULL);
  const char *canon = tune_problem_canon(ctx, problem);
  if (!tg || !canon) return -1;
  const char *tstr = tg->str;
  tec_target_memo memo = {0}; /* records of one file name few targets: each parsed once */
  const char *wl = tec_ctx_printf(ctx, "%s %s", template_name, canon);
  const char *defstr = tune_config_str(ctx, sp, sp->default_config);
  tune_record *recs;
  int n;
  if (tune_records_load(ctx, records, print ? stderr : NULL, &recs, &n) != 0) return -1;
  int best = -1, others = 0;
  const char *other_target = NULL;
  for (int i = 0; i < n; i++) {
    const tune_record *r = &recs[i];
    if (strcmp(r->workload, wl) || strcmp(r->template_name, template_name) || strcmp(r->status, "ok")) continue;
    if (!tec_target_matches(ctx, &memo, r->target, tg)) { /* old spellings match too */
      others++, other_target = r->target;
      continue;
    }
    /* a confirmation (measured side by side) before any trial; the fastest among its kind */
    if (best < 0 || r->confirmed > recs[best].confirmed ||
        (r->confirmed == recs[best].confirmed && r->gflops > recs[best].gflops))
      best = i;
  }
  const char *w = NULL;
  if (best < 0 && others)
    w = tec_ctx_printf(ctx, "tune: no record for %s on target '%s' in %s (%d record%s for other targets such as '%s', never applied); using the default config %s",
                       wl, tstr, records, others, others == 1 ? "" : "s", other_target, defstr);
  else if (best < 0)
    w = tec_ctx_printf(ctx, "tune: no record for %s in %s; using the default config %s", wl, records, defstr);
  else if (tune_config_parse(ctx, sp, recs[best].config, config) != 0) {
    const char *why = tec_ctx_printf(ctx, "%s", tec_ctx_error(ctx));
    tec_ctx_clear_error(ctx);
    memcpy(config, sp->default_config, sp->config_size);
    w = tec_ctx_printf(ctx, "tune: the best record for %s in %s, config '%s', does not fit this template's space (%s); using the default config %s",
                       wl, records, recs[best].config, why, defstr);
  } else {
    return 1;
  }
  if (warning) *warning = w;
  if (print && w) fprintf(stderr, "%s\n", w);
  return 0;
}
