/* module.c — tec_build: a module of lowered functions loaded into this process.
 *
 *   functions checked, prepare halves added -> backend->check_target -> each function lowered
 *   for the target (functions.c) -> backend->load -> every entry and raw body looked up once
 *   (so link errors surface here rather than at the first call) -> a handle (handles.c)
 *
 * The module (mod_module) lives in a memory scope of its ctx, with everything its build made;
 * tec_ctx_on_free releases it when the ctx goes, and tec_module_free does it earlier. The user
 * holds a handle, not the module's address: a recycled slot with a generation, so a freed
 * module's handle still says "the module was freed" and repeated build/free cycles hold O(1)
 * memory. Every public entry resolves the handle first. The code itself is the backend's
 * (backend.h); the prepare/run records are prepare.c's.
 */
#include <stdlib.h>
#include <string.h>
#include "module/module.h"

typedef struct mod_fn {
  const char *name;
  tec_packed_fn entry;
  void *raw;
} mod_fn;

typedef struct mod_module {
  tec_ctx *ctx;
  tec_module *handle;       /* the user's (handles.c); NULL until made */
  const tec_backend *be;
  void *code;               /* the backend's loaded code; NULL until loaded */
  int nfn;
  mod_fn *fns;
  int nprep;                /* one record per function given to tec_build (prepare.c) */
  mod_prepared *prep;
  int hooked;               /* its tec_ctx_on_free hook is registered */
  tec_mem_scope *scope;     /* everything tec_build allocated, this struct included */
} mod_module;

/* Disposes everything of a module, its own memory last; the handle is freed first, so a
 * later call on it says the module was freed. */
static void mod_release(void *arg) {
  mod_module *m = arg;
  if (!m) return;
  if (m->handle) mod_handle_release(m->handle);
  if (m->hooked) tec_ctx_forget_on_free(m->ctx, mod_release, m);
  mod_prepared_release(m->prep, m->nprep);
  if (m->code) m->be->release(m->code);
  tec_mem_scope_free(m->scope); /* m with it */
}

/* The live module of a handle; NULL (with "the module was freed" for a freed one's handle,
 * in its ctx and as the runtime's error) otherwise. */
static mod_module *mod_live(const tec_module *h, const char *who) {
  tec_ctx *ctx = NULL;
  mod_module *m = h ? mod_handle_get(h, &ctx) : NULL;
  if (!h) /* no ctx to tell: the run-time error says it (tec_rt_last_error) */
    tec_rt_set_error("%s: the module is NULL (did tec_build fail? its error is in its ctx)", who);
  if (!m && h) {
    if (ctx) tec_ctx_set_error(ctx, "%s: the module was freed", who);
    tec_rt_set_error("%s: the module was freed", who);
  }
  return m;
}

void tec_module_free(tec_module *h) {
  tec_ctx *ctx;
  mod_module *m = h ? mod_handle_get(h, &ctx) : NULL; /* a second free is a no-op */
  mod_release(m);
}

/* Fills m (in its scope, current now); -1 with an error leaves what was made in m for
 * mod_release. */
static int build(tec_ctx *ctx, int nfuncs, lower_func *const *user_funcs,
                 const tec_target *target, const char *text, mod_module *m) {
  int nuser = nfuncs;
  lower_func **funcs = NULL; /* with the prepare half of each split function */
  if (mod_check_funcs(ctx, nfuncs, user_funcs, "tec_build") != 0 ||
      mod_expand_funcs(ctx, nuser, user_funcs, &nfuncs, &funcs) != 0 ||
      mod_check_funcs(ctx, nfuncs, funcs, "tec_build") != 0)
    return -1;
  if (!target) target = tec_target_parse(ctx, text); /* in the module's scope: freed with it */
  if (!target || !(m->be = mod_backend_for(target)) ||
      m->be->check_target(ctx, target, text, 1, "tec_build") != 0)
    return -1;
  mod_fn *fns = tec_ctx_alloc(ctx, sizeof *fns * (size_t)nfuncs);
  if (!fns) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory");
  tec_ir_func *ir = mod_lower_funcs(ctx, nfuncs, funcs, target, "tec_build");
  if (!ir || !(m->code = m->be->load(ctx, nfuncs, ir, target))) return -1;
  m->fns = fns;
  if (mod_prepared_init(ctx, nuser, user_funcs, &m->prep, &m->nprep) != 0) return -1;
  if (!(m->handle = mod_handle_new(ctx, m))) return -1;
  if (tec_ctx_on_free(ctx, mod_release, m) != 0)
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory");
  m->hooked = 1;
  for (int i = 0; i < nfuncs; i++) {
    const char *raw = tec_ctx_printf(ctx, "%s_raw", funcs[i]->name);
    fns[i].name = tec_ctx_strdup(ctx, funcs[i]->name);
    fns[i].entry = (tec_packed_fn)m->be->symbol(m->code, ctx, funcs[i]->name);
    fns[i].raw = fns[i].entry && raw ? m->be->symbol(m->code, ctx, raw) : NULL;
    if (!fns[i].entry || !fns[i].raw) return -1;
    m->nfn = i + 1;
  }
  return 0;
}

static tec_module *build_module(tec_ctx *ctx, int nfuncs, lower_func *const *funcs,
                                const tec_target *target, const char *text) {
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  /* the module and all its build made in one scope, which tec_module_free gives back */
  tec_mem_scope *ms = tec_mem_scope_begin(ctx);
  mod_module *m = ms ? tec_ctx_alloc(ctx, sizeof *m) : NULL;
  if (m) {
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->scope = ms;
  }
  int rc = m ? build(ctx, nfuncs, funcs, target, text, m) : -1;
  tec_mem_scope_end(ms);
  if (!m) tec_mem_scope_free(ms);
  if (tec_err_end(ctx, &sc, rc == 0, "tec_build")) return m->handle;
  mod_release(m); /* failed, or built while something on the way reported an error */
  return NULL;
}

tec_module *tec_build(tec_ctx *ctx, int nfuncs, lower_func *const *funcs, const char *target) {
  return ctx ? build_module(ctx, nfuncs, funcs, NULL, target) : NULL;
}

tec_module *tec_build_for(tec_ctx *ctx, int nfuncs, lower_func *const *funcs,
                          const tec_target *target) {
  return ctx ? build_module(ctx, nfuncs, funcs, target, NULL) : NULL;
}

static const mod_fn *mod_find(const tec_module *h, const char *name, const char *who) {
  mod_module *m = mod_live(h, who);
  if (!m) return NULL;
  for (int i = 0; i < m->nfn; i++)
    if (name && strcmp(m->fns[i].name, name) == 0) return &m->fns[i];
  const char *have = "";
  for (int i = 0; i < m->nfn; i++)
    have = tec_ctx_printf(m->ctx, "%s%s%s", have, i ? ", " : "", m->fns[i].name);
  const char *hint = "";
  for (int i = 0; name && i < m->nfn; i++) {
    size_t n = strlen(name);
    if (strncmp(m->fns[i].name, name, n) == 0 && strcmp(m->fns[i].name + n, "_run") == 0)
      hint = tec_ctx_printf(m->ctx, "; '%s' was split into %s_prepare and %s_run (constant "
                                    "precompute): call it with tec_module_run", name, name, name);
  }
  tec_ctx_set_error(m->ctx, "%s: the module has no function '%s' (it has: %s)%s", who,
                    name ? name : "(null)", have ? have : "?", hint);
  return NULL;
}

tec_packed_fn tec_module_get(tec_module *m, const char *name) {
  const mod_fn *fn = mod_find(m, name, "tec_module_get");
  return fn ? fn->entry : NULL;
}

void *tec_module_get_raw(tec_module *h, const char *name) {
  size_t n = name ? strlen(name) : 0;
  tec_ctx *ctx;
  mod_module *m = h ? mod_handle_get(h, &ctx) : NULL;
  if (m && n > 4 && strcmp(name + n - 4, "_raw") == 0) { /* "f_raw" is accepted too */
    for (int i = 0; i < m->nfn; i++)
      if (strlen(m->fns[i].name) == n - 4 && strncmp(m->fns[i].name, name, n - 4) == 0)
        return m->fns[i].raw;
  }
  const mod_fn *fn = mod_find(h, name, "tec_module_get_raw");
  return fn ? fn->raw : NULL;
}

const char *tec_module_llvm_ir(tec_module *h) {
  mod_module *m = mod_live(h, "tec_module_llvm_ir");
  return m ? m->be->text(m->code, m->ctx, 0, "tec_module_llvm_ir") : NULL;
}

const char *tec_module_asm(tec_module *h) {
  mod_module *m = mod_live(h, "tec_module_asm");
  return m ? m->be->text(m->code, m->ctx, 1, "tec_module_asm") : NULL;
}

int32_t tec_call(tec_packed_fn fn, int32_t nargs, DLTensor *const *args) {
  if (!fn) return tec_rt_set_error("tec_call: the function is NULL (did tec_module_get fail?)");
  return fn(args, nargs);
}

/* ---- the prepare/run split (prepare.c), by the name given to tec_lower ---- */

/* The record of name, and the module's entries of its halves (NULL: none). */
static mod_prepared *mod_split(tec_module *h, const char *name, const char *who,
                               tec_packed_fn *run, tec_packed_fn *prep) {
  mod_module *m = mod_live(h, who);
  if (!m) return NULL;
  mod_prepared *p = mod_prepared_find(m->prep, m->nprep, name);
  if (!p) {
    tec_ctx_set_error(m->ctx, "%s: the module has no function '%s' (give the name passed to "
                              "tec_lower)", who, name ? name : "(null)");
    tec_rt_set_error("%s: the module has no function '%s'", who, name ? name : "(null)");
    return NULL;
  }
  const lower_func *f = mod_prepared_func(p);
  *run = *prep = NULL;
  for (int i = 0; i < m->nfn; i++) {
    if (strcmp(m->fns[i].name, f->name) == 0) *run = m->fns[i].entry;
    if (f->prepare && strcmp(m->fns[i].name, f->prepare->name) == 0) *prep = m->fns[i].entry;
  }
  return p;
}

int32_t tec_module_bind_constants(tec_module *m, const char *name, int32_t nargs,
                                  DLTensor *const *args) {
  tec_packed_fn run, prep;
  mod_prepared *p = mod_split(m, name, "tec_module_bind_constants", &run, &prep);
  return p ? mod_prepared_bind(p, prep, nargs, args) : -1;
}

int32_t tec_module_run(tec_module *m, const char *name, int32_t nargs, DLTensor *const *args) {
  tec_packed_fn run, prep;
  mod_prepared *p = mod_split(m, name, "tec_module_run", &run, &prep);
  return p ? mod_prepared_run(p, run, prep, nargs, args) : -1;
}

int64_t tec_module_prepare_count(tec_module *m, const char *name) {
  tec_packed_fn run, prep;
  mod_prepared *p = mod_split(m, name, "tec_module_prepare_count", &run, &prep);
  return p ? mod_prepared_count(p) : -1;
}
