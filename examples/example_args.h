/* example_args.h — the example programs' command lines: `--help`, named options (`--n 512` or
 * `--n=512`) and, for the scripts and tests written before the names, the same values given in
 * order without names (`matmul 128`). Values outside an option's range are refused with the
 * range. Header-only: each example lists its options in a table and calls ex_args_parse. */
#ifndef TEC_EXAMPLE_ARGS_H
#define TEC_EXAMPLE_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { EX_INT, EX_REAL, EX_WORD } ex_kind;

typedef struct ex_opt {
  const char *name; /* --name */
  ex_kind kind;
  void *value;      /* int64_t *, double * or const char ** holding the default */
  double lo, hi;    /* the legal range (EX_INT, EX_REAL) */
  const char *help;
} ex_opt;

static void ex_args_usage(FILE *f, const char *prog, const char *about, const ex_opt *o, int n) {
  fprintf(f, "usage: %s", prog);
  for (int i = 0; i < n; i++) fprintf(f, " [--%s %s]", o[i].name, o[i].kind == EX_WORD ? "WORD" : "N");
  fprintf(f, "\n       %s", prog);
  for (int i = 0; i < n; i++) fprintf(f, " [%s", o[i].name);
  for (int i = 0; i < n; i++) fputc(']', f);
  fprintf(f, "   (the same values in order)\n%s\noptions:\n", about);
  for (int i = 0; i < n; i++) {
    fprintf(f, "  --%-10s %s (default ", o[i].name, o[i].help);
    if (o[i].kind == EX_INT) fprintf(f, "%lld; %.0f to %.0f)\n", (long long)*(int64_t *)o[i].value, o[i].lo, o[i].hi);
    else if (o[i].kind == EX_REAL) fprintf(f, "%g; %g to %g)\n", *(double *)o[i].value, o[i].lo, o[i].hi);
    else fprintf(f, "%s)\n", *(const char **)o[i].value);
  }
  fprintf(f, "  --help       this text\n");
}

/* One value into option o; 0, or -1 with the reason on stderr. */
static int ex_args_set(const char *prog, const ex_opt *o, const char *text) {
  char *end = NULL;
  errno = 0;
  if (o->kind == EX_WORD) {
    *(const char **)o->value = text;
    return 0;
  }
  double v = o->kind == EX_INT ? (double)strtoll(text, &end, 10) : strtod(text, &end);
  if (!*text || *end || errno) {
    fprintf(stderr, "%s: --%s takes %s, got '%s'\n", prog, o->name, o->kind == EX_INT ? "an integer" : "a number",
            text);
    return -1;
  }
  if (v < o->lo || v > o->hi) {
    fprintf(stderr, "%s: --%s must be in [%g, %g], got %s\n", prog, o->name, o->lo, o->hi, text);
    return -1;
  }
  if (o->kind == EX_INT) *(int64_t *)o->value = strtoll(text, NULL, 10);
  else *(double *)o->value = v;
  return 0;
}

/* Parses argv into the table. Returns 0 to go on, 1 when --help was printed (exit 0), 2 on a bad
 * command line (the reason and the usage on stderr). */
static int ex_args_parse(const char *about, int argc, char **argv, const ex_opt *o, int n) {
  const char *prog = argc > 0 ? argv[0] : "example";
  const char *slash = strrchr(prog, '/');
  prog = slash ? slash + 1 : prog;
  int positional = 0;
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      ex_args_usage(stdout, prog, about, o, n);
      return 1;
    }
    if (strncmp(arg, "--", 2)) { /* a value in order */
      if (positional >= n) {
        fprintf(stderr, "%s: unexpected argument '%s' (at most %d values)\n", prog, arg, n);
        ex_args_usage(stderr, prog, about, o, n);
        return 2;
      }
      if (ex_args_set(prog, &o[positional++], arg)) return 2;
      continue;
    }
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    int k = 0;
    while (k < n && !(strlen(o[k].name) == len && !strncmp(o[k].name, arg + 2, len))) k++;
    if (k == n) {
      fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
      ex_args_usage(stderr, prog, about, o, n);
      return 2;
    }
    const char *val = eq ? eq + 1 : a + 1 < argc ? argv[++a] : NULL;
    if (!val) {
      fprintf(stderr, "%s: --%s needs a value\n", prog, o[k].name);
      return 2;
    }
    if (ex_args_set(prog, &o[k], val)) return 2;
  }
  return 0;
}

#endif
