/* html.h — tec_html's two halves (module/html.c gathers, module/html_page.c writes). */
#ifndef TEC_MODULE_HTML_H
#define TEC_MODULE_HTML_H

#include "tec/build.h"

typedef struct html_loop {
  const ir_expr *var;
  int kind; /* ir_for_kind */
  int line; /* where it starts in the printed program (1-based) */
} html_loop;

typedef struct html_page {
  const char *title, *target;
  const char *program;        /* tec_lower_print's text */
  const html_loop *loops;
  int nloops;
  const char *ir_text;        /* optimized LLVM IR with !dbg lines */
  const char *asm_text;       /* assembly with .loc lines */
} html_page;

/* Writes the page to path. 0 or -1 with an error. */
int html_page_write(tec_ctx *ctx, const html_page *pg, const char *path);

#endif
