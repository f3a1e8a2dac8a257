/* entry_checks.c — lower_entry_checks: the checked entry `int32_t name(DLTensor *const *args,
 * int32_t nargs)` as an IR program of asserts (a build-time pass; codegen_llvm/entry.c only
 * translates it and the final call of name_raw).
 *
 * In this order, each failure calling tec_rt_check_fail with a message naming the function,
 * the argument and what was found and expected, then returning -1:
 *   1. nargs, the argument array;
 *   2. per argument: non-NULL, kDLCPU, ndim, dtype (bool is {kDLUInt, 8} or kDLBool; a
 *      mismatch names the common dtypes), lanes, a shape;
 *   3. size variables: each bound (let) from its first occurrence (argument order, then
 *      dimension order) as an extent a*v + b with integer constants a >= 1, b (v, 8*m, m + 1,
 *      2*n + 3): v = (extent - b) / a, which must be a whole size >= 0 (a refusal names the
 *      legal extents: "expected (m*8) for a size m >= 0: 0, 8, 16, ..."). A size used only in
 *      shapes that do not determine it (n / 4, m*n) is refused (lower_size_sites, at
 *      tec_lower): another argument's dimension must bind it;
 *   4. per argument: every other extent against its value under the bound sizes, data
 *      non-NULL, a byte count (extents times the element's bytes) that fits an int64;
 *   5. the reads whose bounds the sizes decide (lower_func.read_checks, read_bounds.c:
 *      "tensor 'A' is read at 8 in dimension 0 by 'B', which is beyond the max (7)");
 *   6. the path: when every argument is compact row-major (strides NULL or compact; extent-1
 *      dimensions any) with data + byte_offset TEC_ALIGN-aligned (dl_arg compact, what the
 *      kernel is compiled for), no argument the function writes (a computed tensor) may
 *      overlap another argument's bytes (name_raw declares its buffers noalias; read-only
 *      arguments may share memory), then `attr entry_call` (0) calls the kernel on them as
 *      they are. Otherwise `attr entry_call` (1): any strides (negative, zero for inputs,
 *      padded rows), byte_offset and alignment, through tec_rt_call_strided
 *      (runtime/strided.c), which hands the kernel compact aligned copies of those that are
 *      not and writes the written ones back;
 * An argument with a margin (te_tensor_set_margin) is checked as its buffer: extents
 * shape + before + after (te_buffer_shape), the messages saying so ("expected 30 (28 +
 * margin 1 + 1)"), and a size bound from such an extent subtracts the margin (n + 2: n =
 * extent - 2).
 * `attr entry_call` 0 is the call of name_raw(data + byte_offset ..., sizes ...).
 *
 *   assert((dl_arg(0, 0, 0) == 2), "f: expected 2 arguments, got %lld", dl_arg(0, 0, 0))
 *   assert((dl_arg(2, 0, 0) != 0), "f: argument 0 ('A') is NULL")  ...
 *   let n = dl_arg(9, 0, 0) in { assert((n >= 0), ...) ... attr entry_call ... }
 */
#include <string.h>
#include "lower/passes.h"
#include "arith/arith.h"
#include "tec/runtime.h"

typedef struct ec_state {
  tec_ctx *ctx;
  const lower_func *f;
  int n, cap;
  const ir_stmt **items;     /* the current sequence */
  int oom;
} ec_state;

static const ir_expr *dl(ec_state *st, ir_dl_field fd, int i, int d) {
  return ir_dl_arg(st->ctx, fd, i, d);
}
static void add(ec_state *st, const ir_stmt *s) {
  if (!s || tec_grow(st->ctx, (void **)&st->items, &st->cap, st->n + 1, sizeof *st->items)) {
    st->oom = 1;
    return;
  }
  st->items[st->n++] = s;
}
static void check(ec_state *st, const ir_expr *ok, const char *msg, const ir_expr *a,
                  const ir_expr *b) {
  add(st, ir_assert(ok, msg, a, b));
}
static const ir_expr *i64(ec_state *st, int64_t v) { return ir_int(st->ctx, v); }

/* bytes of one element of t (lanes included) */
static int64_t elem_bytes(const te_tensor *t) {
  return (int64_t)tec_dtype_bytes(tec_dtype_scalar(t->type)) * (t->type.lanes ? t->type.lanes : 1);
}

static const char *dl_name(tec_ctx *ctx, int code, int bits) {
  static const char *names[] = {"int", "uint", "float", "handle", "bfloat"};
  if (code >= 0 && code < 5) return tec_ctx_printf(ctx, "%s%d", names[code], bits);
  return tec_ctx_printf(ctx, "(code %d, bits %d)", code, bits);
}

/* The dtype check: on mismatch, a message naming the dtype found when it is a common one. */
static void check_dtype(ec_state *st, int i, const char *pre, tec_dtype want) {
  tec_ctx *ctx = st->ctx;
  int ec = want.code == TEC_BOOL ? kDLUInt : want.code, eb = want.code == TEC_BOOL ? 8 : want.bits;
  const char *wname = want.code == TEC_BOOL ? "bool (uint8)" : dl_name(ctx, ec, eb);
  const ir_expr *code = dl(st, IR_DL_CODE, i, 0), *bits = dl(st, IR_DL_BITS, i, 0);
  const ir_expr *ok = ir_and(ir_eq(code, i64(st, ec)), ir_eq(bits, i64(st, eb)));
  if (want.code == TEC_BOOL) /* a newer DLPack's kDLBool (6) byte is fine too */
    ok = ir_or(ok, ir_and(ir_eq(code, i64(st, 6)), ir_eq(bits, i64(st, 8))));
  static const int known[][2] = {{0, 8},  {0, 16}, {0, 32}, {0, 64}, {1, 8},  {1, 16},
                                 {1, 32}, {1, 64}, {2, 16}, {2, 32}, {2, 64}, {4, 16}};
  int nk = (int)(sizeof known / sizeof known[0]);
  const ir_stmt **named = tec_ctx_alloc(ctx, sizeof *named * (size_t)(nk + 1));
  if (!named) {
    st->oom = 1;
    return;
  }
  const ir_expr *no = ir_bool(ctx, 0);
  for (int k = 0; k < nk; k++)
    named[k] = ir_if(ir_and(ir_eq(code, i64(st, known[k][0])), ir_eq(bits, i64(st, known[k][1]))),
                     ir_assert(no, tec_ctx_printf(ctx, "%s has dtype %s, expected %s", pre,
                                                  dl_name(ctx, known[k][0], known[k][1]), wname),
                               NULL, NULL),
                     NULL);
  named[nk] = ir_assert(no, tec_ctx_printf(ctx, "%s has dtype (code %%lld, bits %%lld), "
                                                "expected %s", pre, wname),
                        code, bits);
  add(st, ir_if(ir_not(ok), ir_seq(ctx, nk + 1, named), NULL));
}

/* 1 when e is a*v + b with integer constants a >= 1 and b (v, 8*m, m + 1, 2*n + 3): the
 * extent then gives v = (e - b) / a, when e - b is a multiple of a and >= 0. */
static int affine_in(tec_ctx *ctx, const ir_expr *e, const ir_expr *v, int64_t *a, int64_t *b) {
  if (e == v) {
    *a = 1, *b = 0;
    return 1;
  }
  if (!ir_uses_var(e, v)) return 0;
  arith_linear l;
  arith_linear_init(&l, ctx, TEC_I64);
  arith_linear_add_expr(&l, e, 1);
  int ok = !l.oom && l.n == 1 && l.t[0].e == v && l.t[0].coef >= 1;
  if (ok) *a = l.t[0].coef, *b = l.c;
  arith_linear_free(&l);
  return ok;
}

static void first_size_var(ir_visitor *vis, const ir_expr *e) {
  const ir_expr **found = vis->user;
  if (e->kind == IR_VAR && e->v.i == IR_VAR_SIZE && !*found) *found = e;
  ir_visit_expr_default(vis, e);
}

/* passes.h */
int lower_size_sites(const lower_func *lf, const char *who, lower_size_site *site) {
  tec_ctx *ctx = lf->ctx;
  for (int k = 0; k < lf->nsize; k++) {
    const ir_expr *v = lf->size_vars[k];
    site[k].arg = -1;
    int uarg = -1, udim = -1; /* the first shape that uses v without binding it */
    for (int i = 0; i < lf->nargs && site[k].arg < 0; i++)
      for (int d = 0; d < lf->args[i]->ndim && site[k].arg < 0; d++) {
        const ir_expr *e = te_buffer_shape(lf->args[i])[d];
        if (affine_in(ctx, e, v, &site[k].a, &site[k].b))
          site[k].arg = i, site[k].dim = d;
        else if (uarg < 0 && ir_uses_var(e, v))
          uarg = i, udim = d;
      }
    if (site[k].arg >= 0) continue;
    const char *vn = tec_ctx_fmt_escape(ctx, v->name ? v->name : "?");
    if (uarg < 0)
      return tec_ctx_set_error(ctx, "%s: size variable '%s' of '%s' is not the extent of any "
                                    "argument's dimension, so the arguments cannot bind it",
                               who, vn, lf->name);
    const ir_expr *e = te_buffer_shape(lf->args[uarg])[udim];
    const ir_expr *other = NULL;
    ir_visitor vis;
    ir_visitor_init(&vis, &other);
    vis.expr[IR_VAR] = first_size_var;
    for (const ir_expr *x = e;;) { /* another size variable in the shape, if any */
      other = NULL;
      ir_visit_expr(&vis, x);
      if (other != v) break;
      x = ir_substitute(x, 1, &v, (const ir_expr *[]){ir_int(ctx, 1)});
    }
    return tec_ctx_set_error(ctx, "%s: size variable '%s' of '%s' cannot be bound from the "
                                  "arguments' shapes: it appears in argument %d ('%s') shape[%d] "
                                  "= %s, which does not give one value of '%s'%s; give an "
                                  "argument a dimension of extent %s, or a*%s + b with integer "
                                  "constants a >= 1 and b (such as 8*%s or %s + 1)",
                             who, vn, lf->name, uarg, tec_ctx_fmt_escape(ctx, lf->args[uarg]->name),
                             udim, tec_ctx_fmt_escape(ctx, ir_expr_str(e)), vn,
                             other ? " (it uses other sizes too)" : "", vn, vn, vn, vn);
  }
  return 0;
}

/* " + margin 1 + 2" for a dimension with a margin, else "". */
static const char *margin_note(tec_ctx *ctx, const te_tensor *t, int d) {
  int64_t b = te_margin(t, d, 0), a = te_margin(t, d, 1);
  const char *s = b || a ? tec_ctx_printf(ctx, " + margin %lld + %lld", (long long)b, (long long)a)
                         : "";
  return s ? s : ""; /* (out of memory: the message without it) */
}

/* e's text without the outer parentheses: "8*m", not "(8*m)" */
static const char *bare_str(tec_ctx *ctx, const ir_expr *e) {
  const char *es = tec_ctx_fmt_escape(ctx, ir_expr_str(e));
  size_t len = es ? strlen(es) : 0;
  int wrapped = len > 1 && es[0] == '(' && es[len - 1] == ')';
  const char *s = tec_ctx_printf(ctx, "%.*s", (int)(wrapped ? len - 2 : len), es ? es + wrapped : "");
  return s ? s : "";
}

static int site_at(const lower_func *lf, const lower_size_site *site, int i, int d) {
  for (int k = 0; k < lf->nsize; k++)
    if (site[k].arg == i && site[k].dim == d) return k;
  return -1;
}
static int size_index(const lower_func *lf, const ir_expr *e) {
  for (int k = 0; k < lf->nsize; k++)
    if (lf->size_vars[k] == e) return k;
  return -1;
}

const ir_stmt *lower_entry_checks(const lower_func *lf, const char *who) {
  tec_ctx *ctx = lf->ctx;
  const char *fname = lf->name;
  int n = lf->nargs;
  ec_state st = {.ctx = ctx, .f = lf};
  lower_size_site *site = tec_ctx_alloc(ctx, sizeof *site * (size_t)(lf->nsize + 1));
  const char **pre = tec_ctx_alloc(ctx, sizeof *pre * (size_t)(n + 1));
  const ir_expr **nbytes = tec_ctx_alloc(ctx, sizeof *nbytes * (size_t)(n + 1));
  if (!site || !pre || !nbytes || lower_size_sites(lf, who, site)) return NULL;

  /* 1. the argument list */
  const ir_expr *nargs = dl(&st, IR_DL_NARGS, 0, 0);
  check(&st, ir_eq(nargs, i64(&st, n)),
        tec_ctx_printf(ctx, "%s: expected %d argument%s, got %%lld", fname, n, n == 1 ? "" : "s"),
        nargs, NULL);
  if (n > 0)
    check(&st, ir_ne(dl(&st, IR_DL_ARGS, 0, 0), i64(&st, 0)),
          tec_ctx_printf(ctx, "%s: the argument array is NULL", fname), NULL, NULL);

  /* 2. each tensor's header */
  for (int i = 0; i < n; i++) {
    const te_tensor *t = lf->args[i];
    pre[i] = tec_ctx_printf(ctx, "%s: argument %d ('%s')", fname, i,
                            tec_ctx_fmt_escape(ctx, t->name));
    check(&st, ir_ne(dl(&st, IR_DL_TENSOR, i, 0), i64(&st, 0)),
          tec_ctx_printf(ctx, "%s is NULL", pre[i]), NULL, NULL);
    const ir_expr *dev = dl(&st, IR_DL_DEVICE, i, 0);
    check(&st, ir_eq(dev, i64(&st, kDLCPU)),
          tec_ctx_printf(ctx, "%s is on device type %%lld, expected kDLCPU (%d)", pre[i], kDLCPU),
          dev, NULL);
    const ir_expr *nd = dl(&st, IR_DL_NDIM, i, 0);
    check(&st, ir_eq(nd, i64(&st, t->ndim)),
          tec_ctx_printf(ctx, "%s has ndim %%lld, expected %d", pre[i], t->ndim), nd, NULL);
    check_dtype(&st, i, pre[i], t->type);
    const ir_expr *lanes = dl(&st, IR_DL_LANES, i, 0);
    int want_lanes = t->type.lanes ? t->type.lanes : 1;
    check(&st, ir_eq(lanes, i64(&st, want_lanes)),
          tec_ctx_printf(ctx, "%s has %%lld lanes per element, expected %d", pre[i], want_lanes),
          lanes, NULL);
    if (t->ndim > 0)
      check(&st, ir_ne(dl(&st, IR_DL_SHAPE_PTR, i, 0), i64(&st, 0)),
            tec_ctx_printf(ctx, "%s has a NULL shape", pre[i]), NULL, NULL);
  }
  const ir_stmt *head = ir_seq(ctx, st.n, st.items);
  st.n = 0;

  /* 4. extents, strides, data (inside 3's lets) */
  for (int i = 0; i < n; i++) {
    const te_tensor *t = lf->args[i];
    const ir_expr **act = tec_ctx_alloc(ctx, sizeof *act * (size_t)(t->ndim + 1));
    if (!act) return NULL;
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *e = te_buffer_shape(t)[d]; /* the shape, plus a margin if t has one */
      const char *mg = margin_note(ctx, t, d);
      int k = size_index(lf, e), ks = site_at(lf, site, i, d);
      if (ks >= 0 && site[ks].a == 1 && site[ks].b == 0) {
        act[d] = e; /* the size variable itself, bound from here */
        continue;
      }
      act[d] = dl(&st, IR_DL_SHAPE, i, d);
      if (!act[d]) return NULL; /* out of memory (the arena said so) */
      if (ks >= 0) continue; /* a*v + b, checked where v is bound */
      const ir_expr *want = e->type.bits != 64 ? ir_cast(TEC_I64, e) : e;
      const char *why;
      if (ir_is_const_int(e, NULL))
        why = *mg ? tec_ctx_printf(ctx, " (%s%s)", bare_str(ctx, t->shape[d]), mg) : "";
      else if (k >= 0)
        why = tec_ctx_printf(ctx, " (%s, bound by argument %d '%s')",
                             tec_ctx_fmt_escape(ctx, lf->size_vars[k]->name), site[k].arg,
                             tec_ctx_fmt_escape(ctx, lf->args[site[k].arg]->name));
      else /* " (8*m)", not " ((8*m))" */
        why = tec_ctx_printf(ctx, " (%s%s)", bare_str(ctx, t->shape[d]), mg);
      check(&st, ir_eq(act[d], want),
            tec_ctx_printf(ctx, "%s shape[%d] is %%lld, expected %%lld%s", pre[i], d, why),
            act[d], want);
    }
    /* the byte count fits an int64 (a dimension of 0 makes it 0): checked one dimension at a
     * time, so no product is formed before it is known to fit */
    const ir_expr *zero = NULL, *bytes = i64(&st, elem_bytes(t));
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *ad = act[d]->type.bits != 64 ? ir_cast(TEC_I64, act[d]) : act[d];
      const ir_expr *z = ir_eq(ad, i64(&st, 0));
      zero = zero ? ir_or(zero, z) : z;
    }
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *ad = act[d]->type.bits != 64 ? ir_cast(TEC_I64, act[d]) : act[d];
      const ir_expr *room = ir_floordiv(i64(&st, INT64_MAX), ir_max(ad, i64(&st, 1)));
      check(&st, ir_or(zero, ir_le(bytes, room)),
            tec_ctx_printf(ctx, "%s has more than 2^63 - 1 bytes (shape[%d] is %%lld); a tensor "
                                "must fit in memory", pre[i], d),
            ad, NULL);
      bytes = ir_mul(bytes, ad);
    }
    nbytes[i] = bytes;
    check(&st, ir_ne(dl(&st, IR_DL_DATA, i, 0), i64(&st, 0)),
          tec_ctx_printf(ctx, "%s has NULL data", pre[i]), NULL, NULL);
  }
  /* 5. reads the sizes decide (read_bounds.c): inside the shape for the sizes passed */
  if (lf->read_checks) add(&st, lf->read_checks);
  /* 6. compact and aligned: no argument the function writes overlaps another (the raw form
   * declares every buffer noalias; empty buffers overlap nothing), the kernel on the
   * arguments as they are; else the strided path */
  const ir_stmt *const *before = st.items;
  int nbefore = st.n;
  st.items = NULL, st.n = st.cap = 0;
  const ir_expr *compact = NULL;
  for (int i = 0; i < n; i++) {
    const ir_expr *c = ir_ne(dl(&st, IR_DL_COMPACT, i, 0), i64(&st, 0));
    compact = compact ? ir_and(compact, c) : c;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j || lf->args[i]->op != TE_COMPUTE ||
          (j < i && lf->args[j]->op == TE_COMPUTE)) /* a pair of written ones: once */
        continue;
      const ir_expr *si = ir_add(dl(&st, IR_DL_DATA, i, 0), dl(&st, IR_DL_OFFSET, i, 0));
      const ir_expr *sj = ir_add(dl(&st, IR_DL_DATA, j, 0), dl(&st, IR_DL_OFFSET, j, 0));
      const ir_expr *ok = ir_or(ir_or(ir_eq(nbytes[i], i64(&st, 0)), ir_eq(nbytes[j], i64(&st, 0))),
                                ir_or(ir_le(ir_add(si, nbytes[i]), sj), ir_le(ir_add(sj, nbytes[j]), si)));
      check(&st, ok,
            tec_ctx_printf(ctx, "%s: argument %d ('%s') overlaps argument %d ('%s') in memory; "
                                "the function writes '%s' and assumes no argument overlaps "
                                "another: pass separate buffers", fname, i,
                           tec_ctx_fmt_escape(ctx, lf->args[i]->name), j,
                           tec_ctx_fmt_escape(ctx, lf->args[j]->name),
                           tec_ctx_fmt_escape(ctx, lf->args[i]->name)),
            NULL, NULL);
    }
  add(&st, ir_attr("entry_call", i64(&st, 0), ir_evaluate(i64(&st, 0))));
  if (st.oom) return NULL;
  const ir_stmt *fast = ir_seq(ctx, st.n, st.items);
  const ir_stmt *strided = ir_attr("entry_call", i64(&st, 1), ir_evaluate(i64(&st, 0)));
  st.items = (const ir_stmt **)before, st.n = st.cap = nbefore;
  add(&st, n ? ir_if(compact, fast, strided) : fast);
  if (st.oom) return NULL;
  const ir_stmt *rest = ir_seq(ctx, st.n, st.items);

  /* 3. the size variables, outermost first */
  for (int k = lf->nsize - 1; k >= 0 && rest; k--) {
    int i = site[k].arg, d = site[k].dim;
    int64_t a = site[k].a, b = site[k].b;
    const ir_expr *v = lf->size_vars[k], *ext = dl(&st, IR_DL_SHAPE, i, d);
    const char *vn = tec_ctx_fmt_escape(ctx, v->name);
    const char *mg = margin_note(ctx, lf->args[i], d);
    if (*mg) /* "(n + 2), n + margin 1 + 1," */
      mg = tec_ctx_printf(ctx, ", %s%s,", bare_str(ctx, lf->args[i]->shape[d]), mg);
    if (!mg) return NULL;
    if (a == 1 && b == 0) {
      const ir_stmt *items[2] = {
          ir_assert(ir_ge(v, i64(&st, 0)),
                    tec_ctx_printf(ctx, "%s shape[%d] is %%lld, expected a size >= 0 (%s)",
                                   pre[i], d, vn),
                    v, NULL),
          rest};
      rest = ir_let_stmt(v, ext, ir_seq(ctx, 2, items));
      continue;
    }
    /* extent = a*v + b: v = (extent - b) / a, when that is a whole size >= 0 */
    const ir_expr *off = b ? ir_sub(ext, i64(&st, b)) : ext;
    const ir_expr *ok = ir_ge(off, i64(&st, 0));
    if (b < 0) ok = ir_and(ok, ir_ge(ext, i64(&st, 0))); /* m - 1: an extent is >= 0 too */
    if (a > 1) ok = ir_and(ok, ir_eq(ir_floormod(off, i64(&st, a)), i64(&st, 0)));
    int64_t first = b >= 0 ? b : b + a * ((a - 1 - b) / a); /* the least legal extent */
    const char *legal =
        a > 1 ? tec_ctx_printf(ctx, "%lld, %lld, %lld, ...", (long long)first,
                               (long long)(first + a), (long long)(first + 2 * a))
              : tec_ctx_printf(ctx, "%lld or more", (long long)first);
    const ir_stmt *chk = ir_assert(
        ok, tec_ctx_printf(ctx, "%s shape[%d] is %%lld, expected %s%s for a size %s >= 0: %s",
                           pre[i], d, tec_ctx_fmt_escape(ctx, ir_expr_str(te_buffer_shape(lf->args[i])[d])),
                           mg, vn, legal),
        ext, NULL);
    rest = ir_seq2(chk, ir_let_stmt(v, a > 1 ? ir_floordiv(off, i64(&st, a)) : off, rest));
  }
  return rest ? ir_seq2(head, rest) : NULL;
}
