/* asmloops.c — loops and stack accesses in emitted assembly (asmloops.h). */
#include "asmloops.h"
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lines {
  int n;
  char **v;
} lines;

static lines split_lines(const char *s) {
  lines l = {0, NULL};
  int cap = 0;
  while (*s) {
    size_t n = strcspn(s, "\n");
    if (l.n == cap) l.v = realloc(l.v, sizeof(char *) * (size_t)(cap = cap ? 2 * cap : 256));
    l.v[l.n] = malloc(n + 1);
    memcpy(l.v[l.n], s, n);
    l.v[l.n++][n] = '\0';
    s += n + (s[n] == '\n');
  }
  return l;
}

static void free_lines(lines *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

/* A label definition ".LBB0_3:" -> its name in buf; 0 if the line is not one. */
static int label_def(const char *line, char *buf, size_t cap) {
  if (strncmp(line, ".LBB", 4) != 0) return 0;
  size_t n = strcspn(line, ":");
  if (!line[n] || n + 1 > cap) return 0;
  memcpy(buf, line, n);
  buf[n] = '\0';
  return 1;
}

/* The last operand of an instruction line is a label (a branch target): it, else NULL. ARM's
 * b / cb / tb and x86's j (jne, jb, ...) branches. */
static const char *branch_target(const char *line) {
  if (line[0] != '\t' || (line[1] != 'b' && line[1] != 'j' && strncmp(line + 1, "cb", 2) != 0 &&
                          strncmp(line + 1, "tb", 2) != 0))
    return NULL;
  const char *t = strstr(line, ".LBB");
  return t && !strpbrk(t, " ,") ? t : NULL;
}

/* A function's first line "name:" (not a local label): 1 and the name in buf. */
static int func_def(const char *line, char *buf, size_t cap) {
  if (!(isalpha((unsigned char)line[0]) || line[0] == '_')) return 0;
  size_t n = strspn(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
  if (line[n] != ':' || line[n + 1] || n + 1 > cap) return 0;
  memcpy(buf, line, n);
  buf[n] = '\0';
  return 1;
}

/* The innermost loops of l's lines [start, end) into out from *k on. */
static void inner_loops(const lines *l, int start, int end, const char *fn, tu_asm_loop *out,
                        int *k, int max) {
  int lo[256], hi[256], nloop = 0;
  for (int j = start; j < end && nloop < 256; j++) {
    const char *t = branch_target(l->v[j]);
    if (!t) continue;
    char name[64];
    for (int i = start; i < j; i++)
      if (label_def(l->v[i], name, sizeof name) && strcmp(name, t) == 0) {
        lo[nloop] = i, hi[nloop++] = j;
        break;
      }
  }
  for (int a = 0; a < nloop && *k < max; a++) {
    int inner = 1;
    for (int b = 0; b < nloop; b++)
      if (b != a && lo[b] >= lo[a] && hi[b] <= hi[a] && (lo[b] != lo[a] || hi[b] != hi[a]))
        inner = 0;
    if (!inner) continue;
    size_t len = 0;
    for (int i = lo[a]; i <= hi[a]; i++) len += strlen(l->v[i]) + 1;
    tu_asm_loop *r = &out[(*k)++];
    snprintf(r->fn, sizeof r->fn, "%s", fn);
    r->lines = hi[a] - lo[a] + 1;
    char *p = r->text = malloc(len + 1);
    for (int i = lo[a]; i <= hi[a]; i++) p += sprintf(p, "%s\n", l->v[i]);
    *p = '\0';
  }
}

int tu_asm_inner_loops(const char *as, const char *fn, int prefix, tu_asm_loop *out, int max) {
  lines l = split_lines(as);
  int k = 0, start = -1;
  char cur[128];
  for (int i = 0; i < l.n; i++) {
    char name[128];
    if (start < 0 && func_def(l.v[i], name, sizeof name) &&
        (prefix ? strncmp(name, fn, strlen(fn)) == 0 : strcmp(name, fn) == 0)) {
      start = i;
      snprintf(cur, sizeof cur, "%s", name);
    } else if (start >= 0 && strncmp(l.v[i], ".Lfunc_end", 10) == 0) {
      inner_loops(&l, start, i, cur, out, &k, max);
      start = -1;
    }
  }
  free_lines(&l);
  return k;
}

void tu_asm_loops_free(tu_asm_loop *l, int n) {
  for (int i = 0; i < n; i++) free(l[i].text);
}

int tu_count_re(const char *text, const char *re) {
  regex_t rx;
  if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB | REG_NEWLINE) != 0) return -1;
  lines l = split_lines(text);
  int n = 0;
  for (int i = 0; i < l.n; i++) n += regexec(&rx, l.v[i], 0, NULL, 0) == 0;
  free_lines(&l);
  regfree(&rx);
  return n;
}

/* the i-th (0 ..) comma-separated operand of an instruction line, into buf ("" if none) */
static void operand(const char *line, int i, char *buf, size_t cap) {
  const char *p = strchr(line + 1, '\t');
  buf[0] = '\0';
  if (!p) return;
  p++;
  for (; i > 0 && p; i--) {
    p = strchr(p, ',');
    if (p) p++;
  }
  if (!p) return;
  while (*p == ' ') p++;
  size_t n = strcspn(p, ",");
  if (n + 1 > cap) n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  while (n && buf[n - 1] == ' ') buf[--n] = '\0';
}

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

tu_stack_access tu_asm_stack_access(const char *loop) {
  tu_stack_access r = {0, 0, 0, 0};
  char derived[16][8];
  int nd = 0;
  lines l = split_lines(loop);
  for (int i = 0; i < l.n; i++) {
    const char *s = l.v[i];
    if (s[0] != '\t') continue;
    char mn[32], dst[64], src[64];
    size_t m = strcspn(s + 1, "\t");
    if (m >= sizeof mn) continue;
    memcpy(mn, s + 1, m);
    mn[m] = '\0';
    int vec = mn[0] == 'v' || (s[1 + m] && strchr("qdsb", s[2 + m]) && isdigit((unsigned char)s[3 + m]));
    int push = !strcmp(mn, "push") || !strcmp(mn, "vpush"), pop = !strcmp(mn, "pop") || !strcmp(mn, "vpop");
    int load = pop || has_prefix(mn, "ld") || has_prefix(mn, "vld") || has_prefix(mn, "vldr") ||
               has_prefix(mn, "vldm");
    int store = push || has_prefix(mn, "st") || has_prefix(mn, "vst");
    if (load || store) {
      const char *b = strchr(s, '[');
      char base[16] = "";
      if (b) sscanf(b + 1, "%15[a-z0-9]", base);
      else if (!push && !pop) { /* ldm/vldm r0!, {...} */
        operand(s, 0, base, sizeof base);
        base[strcspn(base, "!")] = '\0';
      }
      int on_stack = push || pop || !strcmp(base, "sp");
      for (int d = 0; d < nd && !on_stack; d++) on_stack = !strcmp(base, derived[d]);
      if (on_stack) {
        if (vec) load ? r.vec_loads++ : r.vec_stores++;
        else load ? r.gpr_loads++ : r.gpr_stores++;
      }
      continue;
    }
    /* a register set from sp ("add r2, sp, #64", "mov r2, sp") is a stack address until
     * written again */
    operand(s, 0, dst, sizeof dst);
    operand(s, 1, src, sizeof src);
    for (int d = 0; d < nd; d++)
      if (!strcmp(dst, derived[d])) {
        if (d != nd - 1) strcpy(derived[d], derived[nd - 1]);
        nd--;
        break;
      }
    if (!strcmp(src, "sp") && (!strcmp(mn, "add") || !strcmp(mn, "sub") || !strcmp(mn, "mov")) &&
        nd < 16 && strlen(dst) < sizeof derived[0])
      strcpy(derived[nd++], dst);
  }
  free_lines(&l);
  return r;
}
