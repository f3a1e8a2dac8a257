/* ctx.c — the tec context: an arena that owns every node, tensor, schedule and lowered
 * program made in it, the recorded error (message and kind) with a count of every error
 * reported, and cleanup hooks for outside resources. One tec_ctx_free() releases everything.
 *
 * Errors (the rule is in te.h): the slot keeps the first error; a compile call opens a scope
 * (tec_err_begin) that sets the older error aside, so the call's own first error lands in the
 * slot, and tec_err_end puts the older one back unless the call failed with its own. Whether
 * a call failed is its own business: the count of reported errors, compared before and after,
 * says whether its work reported one, whatever an earlier ignored call left in the slot. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "tec/te.h"
#include "ir/internal.h"

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

/* A memory scope (ir/internal.h): blocks of its own, freed together. */
struct tec_mem_scope {
  tec_ctx *ctx;
  arena_block *blocks;
  size_t bytes;                       /* held in its blocks */
  struct tec_mem_scope *up;           /* the scope allocations went to before it */
  struct tec_mem_scope *prev, *next;  /* the ctx's live scopes */
};

struct tec_ctx {
  arena_block *blocks;
  tec_mem_scope *cur;   /* where allocations go now (NULL: blocks) */
  tec_mem_scope *live;  /* every scope not freed yet */
  size_t bytes;         /* held in arena blocks, scopes included */
  char *error;          /* malloc'd (or no_room); first error since the last clear or scope */
  tec_error_kind kind;  /* its kind (TEC_ERR_NONE without one) */
  unsigned long nerrors;  /* errors reported so far, recorded in the slot or not */
  unsigned long error_at; /* nerrors when the slot's error was reported */
  char *older;          /* the error set aside by the outermost open scope, or NULL */
  tec_error_kind older_kind;
  int depth;            /* open error scopes */
  free_hook *hooks;
  long budget;          /* allocations left before failing (-1: unlimited) */
  int next_id;
  /* notes of the compile calls in progress: the strings in the arena, the array malloc'd (a
   * note made inside a lowering's memory scope must not leave the array in that scope: the
   * scope is freed with a failed lowering, or with tec_lower_free) */
  const char **notes;
  int nnotes, cap_notes;
  int strict;           /* tec_ctx_set_strict */
};

/* What the slot holds when the message itself cannot be allocated. */
static char no_room[] = "out of memory (recording an error message)";

static void drop(char **msg) {
  if (*msg != no_room) free(*msg);
  *msg = NULL;
}

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
  while (ctx->live) tec_mem_scope_free(ctx->live);
  drop(&ctx->error);
  drop(&ctx->older);
  free(ctx->notes);
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

/* Inside a compile call the older error still counts as "an earlier failure" for the NULL
 * arguments it explains (the call's own error, if any, comes first). */
const char *tec_ctx_error(const tec_ctx *ctx) {
  if (!ctx) return "no context";
  return ctx->error ? ctx->error : ctx->older;
}

tec_error_kind tec_ctx_error_kind(const tec_ctx *ctx) {
  if (!ctx) return TEC_ERR_USER;
  return ctx->error ? ctx->kind : ctx->older ? ctx->older_kind : TEC_ERR_NONE;
}

void tec_ctx_clear_error(tec_ctx *ctx) {
  if (!ctx) return;
  drop(&ctx->error);
  drop(&ctx->older);
  ctx->kind = ctx->older_kind = TEC_ERR_NONE;
}

static int set_error_v(tec_ctx *ctx, tec_error_kind kind, const char *fmt, va_list ap) {
  if (!ctx) return -1;
  ctx->nerrors++;
  if (ctx->error) return -1; /* the first error of the call (or of the chain) stays */
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *msg = n < 0 ? NULL : malloc((size_t)n + 1);
  if (msg) vsnprintf(msg, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  ctx->error = msg ? msg : no_room;
  ctx->kind = msg ? (kind == TEC_ERR_NONE ? TEC_ERR_USER : kind) : TEC_ERR_OOM;
  ctx->error_at = ctx->nerrors;
  return -1;
}

int tec_ctx_set_error(tec_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(ctx, TEC_ERR_USER, fmt, ap);
  va_end(ap);
  return -1;
}

int tec_ctx_set_error_kind(tec_ctx *ctx, tec_error_kind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(ctx, kind, fmt, ap);
  va_end(ap);
  return -1;
}

unsigned long tec_ctx_error_count(const tec_ctx *ctx) { return ctx ? ctx->nerrors : 0; }

void tec_ctx_error_rollback(tec_ctx *ctx, unsigned long mark) {
  if (!ctx || ctx->nerrors <= mark) return;
  if (ctx->error && ctx->error_at > mark) {
    drop(&ctx->error);
    ctx->kind = TEC_ERR_NONE;
  }
  ctx->nerrors = mark;
}

void tec_err_begin(tec_ctx *ctx, tec_err_scope *sc) {
  sc->start = ctx->nerrors;
  if (ctx->depth++ > 0) return; /* nested: the outermost call's first error stays first */
  ctx->older = ctx->error;
  ctx->older_kind = ctx->kind;
  ctx->error = NULL;
  ctx->kind = TEC_ERR_NONE;
}

int tec_err_end(tec_ctx *ctx, tec_err_scope *sc, int ok, const char *who) {
  int reported = ctx->nerrors != sc->start;
  if (!ok && !reported && !tec_ctx_error(ctx))
    tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL, "%s failed without saying why (a bug in tec)",
                           who);
  ok = ok && !reported;
  if (--ctx->depth > 0) return ok;
  if (ctx->older && (ok || !ctx->error)) {
    /* a success (or a failure that only propagated an earlier one): the older error is
     * still the first of the chain */
    drop(&ctx->error);
    ctx->error = ctx->older;
    ctx->kind = ctx->older_kind;
  } else {
    drop(&ctx->older); /* the call failed with its own error: that is what it reports */
  }
  ctx->older = NULL;
  ctx->older_kind = TEC_ERR_NONE;
  return ok;
}

void tec_ctx_set_alloc_budget(tec_ctx *ctx, long budget) {
  if (ctx) ctx->budget = budget;
}

void *tec_ctx_alloc(tec_ctx *ctx, size_t bytes) {
  if (!ctx) return NULL;
  if (ctx->budget == 0) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM,
                           "out of memory: the context's allocation budget is exhausted");
    return NULL;
  }
  if (ctx->budget > 0) ctx->budget--;
  bytes = (bytes + 15) & ~(size_t)15;
  if (bytes == 0) bytes = 16;
  arena_block **head = ctx->cur ? &ctx->cur->blocks : &ctx->blocks;
  arena_block *b = *head;
  if (!b || b->cap - b->used < bytes) {
    /* a scope starts small: a lowering of a small program needs little */
    size_t want = ctx->cur && !*head ? 16384 : 60000;
    size_t cap = bytes > want ? bytes : want;
    b = malloc(sizeof *b + cap);
    if (!b) {
      tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "out of memory allocating %zu bytes", bytes);
      return NULL;
    }
    b->used = 0;
    b->cap = cap;
    ctx->bytes += sizeof *b + cap;
    if (ctx->cur) ctx->cur->bytes += sizeof *b + cap;
    /* a huge block goes behind the current one so the current one keeps filling */
    if (*head && cap > want) {
      b->next = (*head)->next;
      (*head)->next = b;
    } else {
      b->next = *head;
      *head = b;
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

/* ---- notes (ir/internal.h) and strict mode (te.h) ---- */
int tec_ctx_note(tec_ctx *ctx, const char *fmt, ...) {
  if (!ctx) return -1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *d = n < 0 ? NULL : tec_ctx_alloc(ctx, (size_t)n + 1);
  if (!d) return -1;
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  for (int i = 0; i < ctx->nnotes; i++)
    if (strcmp(ctx->notes[i], d) == 0) return 0; /* said already */
  if (ctx->nnotes == ctx->cap_notes) {
    int cap = ctx->cap_notes ? 2 * ctx->cap_notes : 8;
    const char **grown = realloc(ctx->notes, sizeof *grown * (size_t)cap);
    if (!grown)
      return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "out of memory (a note)");
    ctx->notes = grown;
    ctx->cap_notes = cap;
  }
  ctx->notes[ctx->nnotes++] = d;
  return 0;
}

int tec_ctx_note_mark(const tec_ctx *ctx) { return ctx ? ctx->nnotes : 0; }

int tec_ctx_notes_take(tec_ctx *ctx, int mark, const char *const **out) {
  *out = NULL;
  if (!ctx || mark < 0 || mark >= ctx->nnotes) return 0;
  int n = ctx->nnotes - mark;
  const char **copy = tec_ctx_alloc(ctx, sizeof *copy * (size_t)n);
  if (!copy) return -1;
  memcpy(copy, ctx->notes + mark, sizeof *copy * (size_t)n);
  ctx->nnotes = mark;
  *out = copy;
  return n;
}

void tec_ctx_set_strict(tec_ctx *ctx, int on) {
  if (ctx) ctx->strict = on != 0;
}

int tec_ctx_strict(const tec_ctx *ctx) {
  const char *env = getenv("TEC_STRICT");
  return (ctx && ctx->strict) || (env && *env && strcmp(env, "0") != 0);
}
/* ---- memory scopes ---- */
tec_mem_scope *tec_mem_scope_begin(tec_ctx *ctx) {
  if (!ctx) return NULL;
  tec_mem_scope *sc = calloc(1, sizeof *sc);
  if (!sc) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "out of memory (a memory scope)");
    return NULL;
  }
  sc->ctx = ctx;
  sc->up = ctx->cur;
  sc->next = ctx->live;
  if (ctx->live) ctx->live->prev = sc;
  ctx->live = sc;
  ctx->cur = sc;
  return sc;
}

void tec_mem_scope_end(tec_mem_scope *sc) {
  if (sc && sc->ctx->cur == sc) sc->ctx->cur = sc->up;
}

void tec_mem_scope_free(tec_mem_scope *sc) {
  if (!sc) return;
  tec_ctx *ctx = sc->ctx;
  tec_mem_scope_end(sc);
  for (tec_mem_scope *o = ctx->live; o; o = o->next) /* a scope opened inside it */
    if (o->up == sc) o->up = sc->up;
  if (ctx->cur == sc) ctx->cur = sc->up;
  if (sc->prev) sc->prev->next = sc->next;
  else ctx->live = sc->next;
  if (sc->next) sc->next->prev = sc->prev;
  while (sc->blocks) {
    arena_block *b = sc->blocks;
    sc->blocks = b->next;
    free(b);
  }
  ctx->bytes -= sc->bytes;
  free(sc);
}

size_t tec_ctx_arena_bytes(const tec_ctx *ctx) { return ctx ? ctx->bytes : 0; }

const char *tec_ctx_fmt_escape(tec_ctx *ctx, const char *s) {
  if (!s) return "?";
  if (!strchr(s, '%')) return s;
  size_t n = strlen(s), k = 0;
  char *r = tec_ctx_alloc(ctx, 2 * n + 1);
  if (!r) return "?";
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') r[k++] = '%';
    r[k++] = s[i];
  }
  r[k] = 0;
  return r;
}
