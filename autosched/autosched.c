/* autosched.c — tec_autoschedule, the instant mode: analyze the program, let the rules decide
 * a choice per stage (in a fixed order: leave, inline, tile, rfactor, attach, loops; each rule
 * takes the stages still undecided that it applies to), apply the choices to a fresh schedule
 * of the same outputs and lower it; a refusal gives the stage it names a plainer choice and the
 * schedule is made again. The schedule that lowers is replayed onto the user's (its trace is
 * then the user's trace: printable, editable C). No measurement: deterministic. */
#include <string.h>
#include <time.h>
#include "autosched/internal.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the stage a refusal's message names (the longest name found, quoted or not), or -1 */
static int stage_named_in(const as_prog *p, const char *msg) {
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; msg && i < p->n; i++) {
    const as_stage *a = &p->st[i];
    if (a->is_input || a->ch.kind == TEC_AS_LEAVE) continue;
    size_t l = strlen(a->t->name);
    const char *hit = strstr(msg, a->t->name);
    while (hit) { /* a whole name: not part of a longer identifier */
      char before = hit > msg ? hit[-1] : ' ', after = hit[l];
      int word = !(before == '_' || (before >= 'a' && before <= 'z') ||
                   (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9')) &&
                 !(after == '_' || (after >= 'a' && after <= 'z') ||
                   (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9'));
      if (word) break;
      hit = strstr(hit + 1, a->t->name);
    }
    if (hit && l > best_len) best = i, best_len = l;
  }
  return best;
}

int as_check_options(tec_ctx *ctx, const tec_autosched_options *opt) {
  if (opt && (opt->nestimates < 0 || (opt->nestimates > 0 && !opt->estimates)))
    return tec_ctx_set_error(ctx,
                             "tec_autoschedule: options.nestimates is %d with estimates %s; "
                             "give 0, or a count and an array",
                             opt->nestimates, opt->estimates ? "set" : "NULL");
  if (opt && opt->threads < 0)
    return tec_ctx_set_error(ctx,
                             "tec_autoschedule: options.threads is %d; give 0 (the "
                             "runtime's count) or a count >= 1",
                             opt->threads);
  return 0;
}

int as_check_args(tec_ctx *ctx, const char *who, sch_schedule *s,
                  const tec_autosched_options *opt) {
  const sch_trace *tr = sch_get_trace(s);
  if (sch_trace_len(tr) > 0)
    return tec_ctx_set_error(ctx,
                             "%s: the schedule already has %d primitive%s applied; the "
                             "auto-scheduler starts from an unscheduled program (a fresh "
                             "sch_create)",
                             who, sch_trace_len(tr), sch_trace_len(tr) == 1 ? "" : "s");
  return as_check_options(ctx, opt);
}

int as_prepare(as_prog *p, const char *target) {
  tec_ctx *ctx = p->ctx;
  /* a candidate's copy of a prepared program comes with the target's answers */
  if (!p->lanes && as_target_query(ctx, target, &p->lanes, &p->regs, &p->llc)) return -1;
  te_tensor **ts;
  p->n = te_topo_order(ctx, p->nout, p->outs, &ts);
  if (p->n < 0) return -1;
  size_t bytes = sizeof *p->st * (size_t)(p->n ? p->n : 1);
  p->st = tec_ctx_alloc(ctx, bytes);
  p->pristine = tec_ctx_alloc(ctx, bytes);
  p->args = tec_ctx_alloc(ctx, sizeof *p->args * (size_t)(p->n + p->nout));
  if (!p->st || !p->pristine || !p->args) return -1;
  p->nargs = 0;
  for (int i = 0; i < p->n; i++) {
    p->st[i].t = ts[i];
    p->st[i].nred = ts[i]->op == TE_COMPUTE ? ts[i]->nreduce : 0;
    if (ts[i]->op == TE_PLACEHOLDER && !ts[i]->scan_of) /* a scan's state is no argument */
      p->args[p->nargs++] = ts[i];
  }
  for (int o = 0; o < p->nout; o++) p->args[p->nargs++] = p->outs[o];
  if (as_estimates(p) || as_analyze(p)) return -1;
  memcpy(p->pristine, p->st, bytes);
  return 0;
}

/* s lowered and its trace replayed (a stage with two loops of one name cannot be named):
 * 0 when both are made (the lowered function into *out, or freed when out is NULL); 1 when
 * tec_lower refused, 2 when the trace does not replay, the error in p->ctx */
static int lower_replay(as_prog *p, sch_schedule *s, lower_func **out) {
  lower_func *f = tec_lower(s, "autosched_check", p->nargs, p->args);
  if (!f) return 1;
  sch_schedule *again = sch_create(p->ctx, p->nout, p->outs);
  int made = again && !sch_trace_replay(again, sch_get_trace(s));
  if (made && out) *out = f;
  else tec_lower_free(f);
  return made ? 0 : 2;
}

/* The failure of a schedule that named stage i, asked of the schedule: when i is in a pair
 * (rule_with.c), the choices are applied again without that pair, lowered and replayed; if
 * that schedule is made, the pairing was what failed (AS_FAIL_WITH). */
static as_fail pair_failed(as_prog *p, int i) {
  tec_ctx *ctx = p->ctx;
  int k = p->st[i].with_to ? i : -1; /* the later stage of i's pair: it holds with_to */
  for (int j = 0; k < 0 && j < p->n; j++)
    if (p->st[j].with_to == i + 1) k = j;
  if (k < 0) return AS_FAIL_OTHER;
  int keep = p->st[k].with_to, bad;
  as_fail f2;
  p->st[k].with_to = 0;
  sch_schedule *s = sch_create(ctx, p->nout, p->outs);
  int made = s && !as_apply(p, s, &bad, &f2) && !lower_replay(p, s, NULL);
  p->st[k].with_to = keep;
  tec_ctx_clear_error(ctx);
  return made ? AS_FAIL_WITH : AS_FAIL_OTHER;
}

void as_decide(as_prog *p) {
  memcpy(p->st, p->pristine, sizeof *p->st * (size_t)(p->n ? p->n : 1));
  as_decide_leave(p);
  as_decide_inline(p);
  as_decide_tile(p);
  as_decide_rfactor(p);
  as_decide_attach(p);
  as_decide_loops(p);
  as_decide_fold(p);
  as_decide_stream(p);
  as_decide_with(p);
}

sch_schedule *as_schedule(as_prog *p, int *ntries, lower_func **out) {
  tec_ctx *ctx = p->ctx;
  sch_schedule *fresh = NULL;
  int tries = 0, max_tries = 3 * p->n + 4;
  if (out) *out = NULL;
  for (;;) {
    if (++tries > max_tries) {
      tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                             "internal error: tec_autoschedule: no schedule lowered after %d "
                             "tries",
                             max_tries);
      return NULL;
    }
    fresh = sch_create(ctx, p->nout, p->outs);
    if (!fresh) return NULL;
    int bad = -1;
    as_fail fail = AS_FAIL_OTHER;
    const char *why = NULL;
    if (as_apply(p, fresh, &bad, &fail)) {
      why = as_fmt(p, "a primitive refused the choice: %s", tec_ctx_error(ctx));
    } else {
      int r = lower_replay(p, fresh, out);
      if (!r) break;
      why = as_fmt(p, "%s: %s", r == 2 ? "its trace does not replay" : "tec_lower refused the schedule",
                   tec_ctx_error(ctx));
      bad = stage_named_in(p, tec_ctx_error(ctx));
      tec_ctx_clear_error(ctx);
      if (bad >= 0) fail = pair_failed(p, bad);
    }
    tec_ctx_clear_error(ctx);
    if (bad >= 0 && !as_fallback(p, bad, why, fail)) continue;
    /* nobody named, or nothing plainer for it: every stage one step plainer */
    int moved = 0;
    for (int i = p->n - 1; i >= 0; i--)
      if (!p->st[i].is_input && p->st[i].ch.kind != TEC_AS_LEAVE)
        moved |= !as_fallback(p, i, why, fail);
    if (!moved) {
      tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                             "internal error: tec_autoschedule: even the unscheduled program "
                             "does not lower: %s",
                             why);
      return NULL;
    }
  }
  if (ntries) *ntries = tries;
  return fresh;
}

static int run(as_prog *p, const char *target, tec_autosched_report *rep, double t0) {
  if (as_prepare(p, target)) return -1;
  as_decide(p);
  int tries = 0;
  sch_schedule *fresh = as_schedule(p, &tries, NULL);
  if (!fresh || sch_trace_replay(p->s, sch_get_trace(fresh))) return -1;
  double secs = now_seconds() - t0;
  return rep ? as_report(p, p->s, tries, secs, rep) : 0;
}

int tec_autoschedule(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                     tec_autosched_report *rep) {
  double t0 = now_seconds();
  if (rep) *rep = (tec_autosched_report){0};
  if (!s) {
    if (rep) rep->text = "tec_autoschedule: the schedule is NULL (no ctx to hold an error)";
    return -1;
  }
  tec_ctx *ctx = sch_schedule_ctx(s);
  /* an error the caller left in the ctx is put back afterwards: this call's own refusals
   * (tried choices) must not mix with it */
  const char *prior = tec_ctx_error(ctx);
  tec_error_kind prior_kind = tec_ctx_error_kind(ctx);
  if (prior) prior = tec_ctx_strdup(ctx, prior);
  tec_ctx_clear_error(ctx);
  as_prog p = {.ctx = ctx, .s = s, .opt = opt};
  int rc = as_check_args(ctx, "tec_autoschedule", s, opt);
  if (!rc) {
    p.threads = opt && opt->threads ? opt->threads : tec_rt_get_num_threads();
    p.nout = sch_schedule_noutput(s);
    p.outs = tec_ctx_alloc(ctx, sizeof *p.outs * (size_t)(p.nout ? p.nout : 1));
    if (!p.outs) rc = -1;
    for (int o = 0; !rc && o < p.nout; o++) p.outs[o] = sch_schedule_output(s, o);
    if (!rc) rc = run(&p, target, rep, t0);
  }
  if (rc) {
    if (!tec_ctx_error(ctx))
      tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                             "internal error: tec_autoschedule failed without a message");
    return -1;
  }
  if (prior) tec_ctx_set_error_kind(ctx, prior_kind, "%s", prior);
  return 0;
}
