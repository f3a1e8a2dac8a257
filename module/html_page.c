/* html_page.c — tec_html's page: three panes side by side, self-contained (inline CSS and a
 * little script, no network).
 *   program   the printed program; each loop a foldable <details> whose summary carries tags
 *             for what made it (split, fuse, parallel, vectorize, unroll) and a link to the
 *             first assembly block made from it (#a<line>)
 *   LLVM IR   the optimized IR; each instruction tagged with the loop line of its !dbg
 *   assembly  instructions grouped into blocks by their .loc line; the hot loop (the innermost
 *             loop with the most instructions) has its vector instructions highlighted
 * Clicking a loop highlights its IR and assembly. On load the script checks that every link
 * has its target and writes the result into #check (what the browser test reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "module/html.h"

typedef struct text_lines {
  int n;
  const char **s; /* line starts (not terminated) */
  int *len;
} text_lines;

static int split_lines(tec_ctx *ctx, const char *t, text_lines *out) {
  int n = 0;
  for (const char *p = t; *p; p++) n += *p == '\n';
  n++;
  out->s = tec_ctx_alloc(ctx, sizeof *out->s * (size_t)n);
  out->len = tec_ctx_alloc(ctx, sizeof *out->len * (size_t)n);
  if (!out->s || !out->len) return tec_ctx_set_error(ctx, "tec_html: out of memory");
  out->n = 0;
  for (const char *p = t; *p;) {
    const char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    out->s[out->n] = p, out->len[out->n++] = (int)l;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static void esc(FILE *o, const char *s, int n) {
  for (int i = 0; i < n && s[i]; i++) switch (s[i]) {
      case '<': fputs("&lt;", o); break;
      case '>': fputs("&gt;", o); break;
      case '&': fputs("&amp;", o); break;
      case '"': fputs("&quot;", o); break;
      default: fputc(s[i], o);
    }
}

static const char *skip_ws(const char *s, int *n) {
  while (*n > 0 && (*s == ' ' || *s == '\t')) s++, (*n)--;
  return s;
}

/* An assembly line's kind: 1 instruction, 2 label, 0 directive or comment. */
static int asm_kind(const char *s, int n) {
  s = skip_ws(s, &n);
  if (n == 0 || *s == '#' || (*s == '/' && n > 1 && s[1] == '/') || *s == ';' || *s == '@') return 0;
  if (s[n - 1] == ':') return 2;
  return *s == '.' ? 0 : 1;
}

/* A vector instruction: packed x86 (zmm/ymm, or a packed-single/double mnemonic) or NEON. */
static int is_vector(const char *s, int n) {
  char b[256];
  snprintf(b, sizeof b, "%.*s", n < 255 ? n : 255, s);
  if (strstr(b, "zmm") || strstr(b, "ymm") || strstr(b, ".4s") || strstr(b, ".8h") || strstr(b, ".16b") ||
      strstr(b, ".2d") || strstr(b, ".f32\tq") || strstr(b, ".f32 q"))
    return 1;
  const char *m = skip_ws(b, &(int){(int)strlen(b)});
  size_t ml = strcspn(m, " \t");
  return ml > 3 && (!strncmp(m + ml - 2, "ps", 2) || !strncmp(m + ml - 2, "pd", 2)) && strstr(b, "xmm");
}

/* The .loc line of an assembly directive, or -1 if it is not one. */
static int loc_line(const char *s, int n) {
  s = skip_ws(s, &n);
  int file, line;
  if (n < 5 || strncmp(s, ".loc", 4) || (s[4] != ' ' && s[4] != '\t')) return -1;
  return sscanf(s + 4, "%d %d", &file, &line) == 2 ? line : -1;
}

/* What made a loop, from its printed name and kind: "split fuse parallel ..." into out. */
static const char *tags(const char *line, int n, int kind, char out[64]) {
  char b[512];
  snprintf(b, sizeof b, "%.*s", n < 511 ? n : 511, line);
  char *close = strchr(b, ',');
  if (close) *close = 0;
  out[0] = 0;
  if (strstr(b, ".outer") || strstr(b, ".inner")) strcat(out, "split ");
  if (strstr(b, ".fused")) strcat(out, "fuse ");
  if (kind == 1) strcat(out, "parallel ");
  if (kind == 2) strcat(out, "vectorize ");
  if (kind == 3) strcat(out, "unroll ");
  if (!out[0]) strcat(out, "axis ");
  return out;
}

static const char *const style =
    "body{margin:0;font:13px monospace;display:flex;height:100vh}"
    ".pane{flex:1;overflow:auto;border-left:1px solid #ccc;padding:4px;white-space:pre}"
    ".pane h2{font:bold 14px sans-serif;margin:2px 0 6px}"
    "details{margin-left:0}summary{cursor:pointer}summary.hot{background:#fff3c4}"
    ".tag{font:10px sans-serif;background:#dde;border-radius:3px;padding:0 3px;margin-left:4px}"
    ".go{font:10px sans-serif;margin-left:6px}"
    ".b{border-left:3px solid #9ab;margin:2px 0;padding-left:3px}.lit{background:#e4f0ff}"
    ".vec{color:#a40000;font-weight:bold}.dim{color:#888}#check{font:11px sans-serif;color:#555}";

static const char *const script =
    "function lit(l){document.querySelectorAll('.lit').forEach(e=>e.classList.remove('lit'));"
    "var f=null;document.querySelectorAll('[data-line=\"'+l+'\"]').forEach(e=>{if(e.tagName!=='DETAILS'){"
    "e.classList.add('lit');if(!f&&e.closest('#asm'))f=e;}});if(f)f.scrollIntoView({block:'center'});}"
    "document.querySelectorAll('summary').forEach(s=>s.addEventListener('click',ev=>{if(ev.target.tagName==='A')return;"
    "lit(s.parentNode.dataset.line);}));"
    "var links=document.querySelectorAll('a.go'),ok=0;links.forEach(a=>{if(document.getElementById(a.getAttribute('href').slice(1)))ok++;});"
    "var c=document.getElementById('check');c.textContent='panes '+document.querySelectorAll('.pane').length+"
    "', loops '+document.querySelectorAll('details.loop').length+', links '+ok+'/'+links.length+"
    "', hot vector instructions '+document.querySelectorAll('#asm .vec').length;"
    "var h=document.querySelector('summary.hot');if(h){lit(h.parentNode.dataset.line);h.scrollIntoView({block:'center'});"
    "var a=document.querySelector('#asm .lit .vec');if(a)a.scrollIntoView({block:'center'});"
    "var r=document.querySelector('#ir .lit');if(r)r.scrollIntoView({block:'center'});}";

int html_page_write(tec_ctx *ctx, const html_page *pg, const char *path) {
  text_lines P, I, A;
  if (split_lines(ctx, pg->program, &P) || split_lines(ctx, pg->ir_text, &I) || split_lines(ctx, pg->asm_text, &A))
    return -1;
  int *loop_at = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2)), *end = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2));
  int *count = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2)), *aline = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(A.n + 1));
  int *stack = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2));
  if (!loop_at || !end || !count || !aline || !stack) return tec_ctx_set_error(ctx, "tec_html: out of memory");
  for (int i = 0; i <= P.n + 1; i++) loop_at[i] = -1, end[i] = i, count[i] = 0;
  for (int k = 0; k < pg->nloops; k++)
    if (pg->loops[k].line >= 1 && pg->loops[k].line <= P.n) loop_at[pg->loops[k].line] = k;
  int sp = 0; /* each "{" line's matching "}" */
  for (int i = 1; i <= P.n; i++) {
    int n = P.len[i - 1];
    const char *s = skip_ws(P.s[i - 1], &n);
    if (n && *s == '}' && sp) end[stack[--sp]] = i;
    if (n && s[n - 1] == '{') stack[sp++] = i;
  }
  for (int i = 0, cur = 0; i < A.n; i++) { /* each instruction's printed line */
    int l = loc_line(A.s[i], A.len[i]);
    if (l >= 0) cur = l;
    aline[i] = asm_kind(A.s[i], A.len[i]) == 1 ? cur : -1;
    if (aline[i] > 0 && aline[i] <= P.n) count[aline[i]]++;
  }
  /* the hot loop: of the innermost loops outside a prepare function, the one whose
   * instructions times the trip counts around them (constant extents) are the most */
  int hot = 0, in_prepare = 0;
  double best = -1, *trips = tec_ctx_alloc(ctx, sizeof(double) * (size_t)(P.n + 2));
  if (!trips) return tec_ctx_set_error(ctx, "tec_html: out of memory");
  sp = 0;
  for (int i = 1; i <= P.n; i++) {
    int n = P.len[i - 1];
    const char *s = skip_ws(P.s[i - 1], &n);
    if (!strncmp(s, "func ", 5)) in_prepare = strstr(s, "_prepare(") != NULL;
    double outer = sp ? trips[stack[sp - 1]] : 1;
    if (n && *s == '}' && sp) sp--;
    trips[i] = outer;
    if (n && s[n - 1] == '{') {
      long long a, b;
      char v[256];
      if (loop_at[i] >= 0 && sscanf(s, "for (%255[^,], %lld, %lld)", v, &a, &b) == 3 && b > 0) trips[i] = outer * (double)b;
      stack[sp++] = i;
    }
    if (loop_at[i] < 0 || in_prepare) continue;
    int inner = 0;
    for (int j = i + 1; j < end[i] && !inner; j++) inner = loop_at[j] >= 0;
    if (!inner && count[i] * trips[i] > best) hot = i, best = count[i] * trips[i];
  }
  FILE *o = fopen(path, "w");
  if (!o) return tec_ctx_set_error(ctx, "tec_html: cannot write %s", path);
  fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>", o);
  esc(o, pg->title, (int)strlen(pg->title));
  fprintf(o, "</title><style>%s</style></head><body>\n<div class=\"pane\" id=\"program\"><h2>", style);
  esc(o, pg->title, (int)strlen(pg->title));
  fputs(" — the program</h2><div id=\"check\">(the page's script has not run)</div>", o);
  sp = 0;
  for (int i = 1; i <= P.n; i++) {
    int n = P.len[i - 1];
    const char *s = skip_ws(P.s[i - 1], &n);
    if (loop_at[i] >= 0 && n && s[n - 1] == '{') {
      int target = 0; /* its own first block, else the first of a line inside it */
      for (int j = i; j < end[i] && !target; j++) target = count[j] ? j : 0;
      fprintf(o, "<details open class=\"loop\" id=\"p%d\" data-line=\"%d\"><summary%s>", i, i, i == hot ? " class=\"hot\"" : "");
      esc(o, P.s[i - 1], P.len[i - 1]);
      char tb[64];
      const char *t = tags(s, n, pg->loops[loop_at[i]].kind, tb);
      for (const char *w = t; *w;) {
        size_t wl = strcspn(w, " ");
        fprintf(o, "<span class=\"tag\">%.*s</span>", (int)wl, w);
        w += wl + (w[wl] == ' ');
      }
      if (target) fprintf(o, "<a class=\"go\" href=\"#a%d\">asm</a>", target);
      fputs("</summary>", o);
      stack[sp++] = 1;
      continue;
    }
    fputs("<div>", o);
    esc(o, P.s[i - 1], P.len[i - 1]);
    fputs("</div>", o);
    if (n && *s == '}' && sp && stack[--sp]) fputs("</details>", o);
    if (n && s[n - 1] == '{') stack[sp++] = 0;
  }
  while (sp--) fputs(stack[sp] ? "</details>" : "", o);
  fputs("</div>\n<div class=\"pane\" id=\"ir\"><h2>LLVM IR (optimized)</h2>", o);
  int nmsg = 0; /* the entry checks' message strings, one line for all */
  for (int i = 0; i < I.n; i++) nmsg += !strncmp(I.s[i], "@msg", 4);
  if (nmsg) fprintf(o, "<div class=\"dim\">; (%d constants @msg...: the checked entry's error messages)</div>", nmsg);
  for (int i = 0; i < I.n; i++) { /* !N = !DILocation(line: L ...) and uses of !dbg !N */
    if ((I.len[i] && I.s[i][0] == '!') || !strncmp(I.s[i], "@msg", 4)) continue;
    char b[64];
    const char *d = NULL;
    for (const char *p = I.s[i]; p && p < I.s[i] + I.len[i]; p++)
      if (!strncmp(p, "!dbg !", 6)) {
        d = p;
        break;
      }
    int line = 0;
    if (d) {
      int id = atoi(d + 6);
      snprintf(b, sizeof b, "!%d = !DILocation(line: ", id);
      const char *def = strstr(pg->ir_text, b);
      line = def ? atoi(def + strlen(b)) : 0;
    }
    if (line) fprintf(o, "<div data-line=\"%d\">", line);
    else fputs("<div>", o);
    esc(o, I.s[i], d ? (int)(d - I.s[i]) - (d - I.s[i] >= 2 && d[-2] == ',' ? 2 : 0) : I.len[i]);
    fputs("</div>", o);
  }
  fputs("</div>\n<div class=\"pane\" id=\"asm\"><h2>assembly (", o);
  esc(o, pg->target, (int)strlen(pg->target) < 80 ? (int)strlen(pg->target) : 80);
  fputs(")</h2>", o);
  /* blocks: runs of instructions of one line (a label ends one); each line's largest block,
   * the loop's body proper, is the one its link names (id a<line>) */
  int *bstart = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2)), *bsize = tec_ctx_alloc(ctx, sizeof(int) * (size_t)(P.n + 2));
  if (!bstart || !bsize) return fclose(o), tec_ctx_set_error(ctx, "tec_html: out of memory");
  memset(bsize, 0, sizeof(int) * (size_t)(P.n + 2));
  for (int i = 0, open = -1, start = 0, size = 0; i <= A.n; i++) {
    int k = i < A.n ? asm_kind(A.s[i], A.len[i]) : 2;
    if (k == 0) continue;
    if (k == 2 || aline[i] != open) {
      if (open > 0 && open <= P.n && size > bsize[open]) bsize[open] = size, bstart[open] = start;
      open = -1;
    }
    if (k == 1 && open < 0) open = aline[i], start = i, size = 0;
    if (k == 1) size++;
  }
  int open = -1;
  for (int i = 0; i < A.n; i++) {
    int k = asm_kind(A.s[i], A.len[i]);
    if (k == 0) continue;
    int l = aline[i];
    if (k == 2 || l != open) {
      if (open >= 0) fputs("</div>", o);
      open = -1;
    }
    if (k == 1 && open < 0) {
      open = l;
      if (l > 0 && l <= P.n && bsize[l] && bstart[l] == i)
        fprintf(o, "<div class=\"b\" id=\"a%d\" data-line=\"%d\">", l, l);
      else
        fprintf(o, "<div class=\"b\" data-line=\"%d\">", l);
    }
    int vec = k == 1 && l == hot && hot && is_vector(A.s[i], A.len[i]);
    fputs(vec ? "<div class=\"vec\">" : k == 2 ? "<div class=\"dim\">" : "<div>", o);
    esc(o, A.s[i], A.len[i]);
    fputs("</div>", o);
  }
  if (open >= 0) fputs("</div>", o);
  fprintf(o, "</div>\n<script>%s</script></body></html>\n", script);
  if (fclose(o) != 0) return tec_ctx_set_error(ctx, "tec_html: cannot write %s", path);
  return 0;
}
