/* html.c — tec_html: what the page shows, gathered. The function is printed as tec_lower_print
 * prints it, noting the line each loop starts on; the module's IR functions are built with
 * those lines (tec_ir_func.lines), so the backend gives every instruction the line of its
 * innermost loop; the assembly and the LLVM IR are emitted through the backend into temporary
 * files and read back; html_page.c writes the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lower/passes.h"
#include "module/html.h"
#include "module/module.h"

typedef struct loops_seen {
  tec_ctx *ctx;
  html_loop *l;
  int n, cap, oom;
} loops_seen;

static void on_loop(void *user, const ir_stmt *loop, int line) {
  loops_seen *s = user;
  if (tec_grow(s->ctx, (void **)&s->l, &s->cap, s->n + 1, sizeof *s->l)) {
    s->oom = 1;
    return;
  }
  s->l[s->n++] = (html_loop){loop->var, (int)loop->for_kind, line};
}

/* path's whole text (arena), or NULL with an error */
static char *slurp(tec_ctx *ctx, const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return tec_ctx_set_error(ctx, "tec_html: cannot read back %s", path), NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *b = n >= 0 ? tec_ctx_alloc(ctx, (size_t)n + 1) : NULL;
  size_t got = b ? fread(b, 1, (size_t)n, fp) : 0;
  fclose(fp);
  if (!b) return tec_ctx_set_error(ctx, "tec_html: out of memory"), NULL;
  b[got] = 0;
  return b;
}

/* The backend's text of kind for ir (a temporary file, removed). NULL with an error. */
static char *emitted(tec_ctx *ctx, int n, const tec_ir_func *ir, const tec_target *t, tec_backend_file kind) {
  const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[512];
  snprintf(path, sizeof path, "%s/tec_html_XXXXXX", dir);
  int fd = mkstemp(path);
  if (fd < 0) return tec_ctx_set_error(ctx, "tec_html: cannot make a temporary file in %s", dir), NULL;
  close(fd);
  char *text = mod_backend_for(t)->emit(ctx, n, ir, t, kind, path) == 0 ? slurp(ctx, path) : NULL;
  remove(path);
  return text;
}

/* The line of "func NAME(" in the printed text (1-based), or 1. */
static int func_line(const char *text, const char *name) {
  size_t nl = strlen(name);
  int line = 1;
  for (const char *p = text; *p; line++) {
    if (!strncmp(p, "func ", 5) && !strncmp(p + 5, name, nl) && p[5 + nl] == '(') return line;
    const char *e = strchr(p, '\n');
    if (!e) break;
    p = e + 1;
  }
  return 1;
}

static int html(tec_ctx *ctx, lower_func *f, const tec_target *t, const char *path) {
  if (!f) return tec_ctx_set_error(ctx, "tec_html: no function (NULL)");
  if (!path || !*path) return tec_ctx_set_error(ctx, "tec_html: no output path");
  if (!t || mod_backend_for(t)->check_target(ctx, t, NULL, 0, "tec_html") != 0) return -1;
  lower_func **funcs;
  int n;
  if (mod_check_funcs(ctx, 1, &f, "tec_html") != 0 || mod_expand_funcs(ctx, 1, &f, &n, &funcs) != 0) return -1;
  html_page pg = {0};
  loops_seen seen = {ctx, NULL, 0, 0, 0};
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return tec_ctx_set_error(ctx, "tec_html: out of memory");
  lower_print_lines(m, f, on_loop, &seen);
  fclose(m);
  pg.program = buf ? tec_ctx_strdup(ctx, buf) : NULL;
  free(buf);
  if (seen.oom || !pg.program) return tec_ctx_set_error(ctx, "tec_html: out of memory");
  pg.loops = seen.l, pg.nloops = seen.n;
  tec_ir_func *ir = mod_lower_funcs(ctx, n, funcs, t, "tec_html");
  tec_ir_lines *lines = ir ? tec_ctx_alloc(ctx, sizeof *lines * (size_t)n) : NULL;
  const ir_expr **vars = lines ? tec_ctx_alloc(ctx, sizeof *vars * (size_t)(seen.n + 1)) : NULL;
  int *at = vars ? tec_ctx_alloc(ctx, sizeof *at * (size_t)(seen.n + 1)) : NULL;
  if (!at) return ir ? tec_ctx_set_error(ctx, "tec_html: out of memory") : -1;
  for (int i = 0; i < seen.n; i++) vars[i] = seen.l[i].var, at[i] = seen.l[i].line;
  for (int i = 0; i < n; i++) {
    lines[i] = (tec_ir_lines){tec_ctx_printf(ctx, "%s.tec", f->user_name ? f->user_name : f->name),
                              func_line(pg.program, ir[i].name), seen.n, vars, at};
    ir[i].lines = &lines[i];
  }
  pg.asm_text = emitted(ctx, n, ir, t, TEC_BACKEND_ASM);
  pg.ir_text = pg.asm_text ? emitted(ctx, n, ir, t, TEC_BACKEND_IR) : NULL;
  if (!pg.ir_text) return -1;
  pg.title = f->user_name ? f->user_name : f->name;
  pg.target = t->str;
  return html_page_write(ctx, &pg, path);
}

int tec_html(tec_ctx *ctx, lower_func *f, const char *target, const char *path) {
  if (!ctx) return -1;
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  int rc = html(ctx, f, tec_target_parse(ctx, target), path);
  return tec_err_end(ctx, &sc, rc == 0, "tec_html") ? 0 : -1;
}
