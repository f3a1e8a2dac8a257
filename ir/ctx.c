/* ctx.c — the tec context: an arena that owns every node, tensor, schedule and lowered
 * program made in it, the first error message, and cleanup hooks for outside resources.
 * One tec_ctx_free() releases everything. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "tec/te.h"

typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} arena_block;

typedef struct free_hook {
  struct free_hook *next;
  void (*fn)(void *);
  void *arg;
} free_hook;

struct tec_ctx {
  arena_block *blocks;
  char *error;          /* malloc'd; first error since the last clear */
  free_hook *hooks;
  long budget;          /* allocations left before failing (-1: unlimited) */
  int next_id;
};

int tec_ctx_next_id(tec_ctx *ctx);
int tec_ctx_next_id(tec_ctx *ctx) { return ++ctx->next_id; }

tec_ctx *tec_ctx_new(void) {
  tec_ctx *c = calloc(1, sizeof *c);
  if (c) c->budget = -1;
  return c;
}

void tec_ctx_free(tec_ctx *ctx) {
  if (!ctx) return;
  while (ctx->hooks) {
    free_hook *h = ctx->hooks;
    ctx->hooks = h->next;
    h->fn(h->arg);
    free(h);
  }
  while (ctx->blocks) {
    arena_block *b = ctx->blocks;
    ctx->blocks = b->next;
    free(b);
  }
  free(ctx->error);
  free(ctx);
}

int tec_ctx_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg) {
  if (!ctx || !fn) return -1;
  free_hook *h = malloc(sizeof *h);
  if (!h) return -1;
  h->fn = fn;
  h->arg = arg;
  h->next = ctx->hooks;
  ctx->hooks = h;
  return 0;
}

/* Removes a hook registered with (fn, arg); used when a resource is freed early. */
void tec_ctx_forget_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg);
void tec_ctx_forget_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg) {
  for (free_hook **p = &ctx->hooks; *p; p = &(*p)->next) {
    if ((*p)->fn == fn && (*p)->arg == arg) {
      free_hook *h = *p;
      *p = h->next;
      free(h);
      return;
    }
  }
}

const char *tec_ctx_error(const tec_ctx *ctx) { return ctx ? ctx->error : "no context"; }

void tec_ctx_clear_error(tec_ctx *ctx) {
  if (!ctx) return;
  free(ctx->error);
  ctx->error = NULL;
}

int tec_ctx_set_error(tec_ctx *ctx, const char *fmt, ...) {
  if (!ctx || ctx->error) return -1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  ctx->error = malloc((size_t)n + 1);
  if (!ctx->error) return -1;
  va_start(ap, fmt);
  vsnprintf(ctx->error, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return -1;
}

void tec_ctx_set_alloc_budget(tec_ctx *ctx, long budget) {
  if (ctx) ctx->budget = budget;
}

void *tec_ctx_alloc(tec_ctx *ctx, size_t bytes) {
  if (!ctx) return NULL;
  if (ctx->budget == 0) {
    tec_ctx_set_error(ctx, "out of memory: the context's allocation budget is exhausted");
    return NULL;
  }
  if (ctx->budget > 0) ctx->budget--;
  bytes = (bytes + 15) & ~(size_t)15;
  if (bytes == 0) bytes = 16;
  arena_block *b = ctx->blocks;
  if (!b || b->cap - b->used < bytes) {
    size_t cap = bytes > 60000 ? bytes : 60000;
    b = malloc(sizeof *b + cap);
    if (!b) {
      tec_ctx_set_error(ctx, "out of memory allocating %zu bytes", bytes);
      return NULL;
    }
    b->used = 0;
    b->cap = cap;
    /* a huge block goes behind the current one so the current one keeps filling */
    if (ctx->blocks && cap > 60000) {
      b->next = ctx->blocks->next;
      ctx->blocks->next = b;
    } else {
      b->next = ctx->blocks;
      ctx->blocks = b;
    }
  }
  void *p = b->data + b->used;
  b->used += bytes;
  memset(p, 0, bytes);
  return p;
}

const char *tec_ctx_strdup(tec_ctx *ctx, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = tec_ctx_alloc(ctx, n);
  if (d) memcpy(d, s, n);
  return d;
}

const char *tec_ctx_printf(tec_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *d = tec_ctx_alloc(ctx, (size_t)n + 1);
  if (!d) return NULL;
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}
