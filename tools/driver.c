/* driver.c — the `tec` command's verbs (tec_driver_main): targets, list, print, compile,
 * bench, tune. An OP is a topi template (topi_template_find) or a generator registered with
 * TEC_GENERATOR (driver.h); --shape gives its problem, --config its knobs. Every error is one
 * line on stderr, "tec VERB: what was wrong"; exit status 2 for bad usage (unknown verb, OP,
 * option, key or value, a problem the template refuses), 1 when a build, file or run fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tools/driver_internal.h"

static tec_generator *generators;

void tec_generator_register(tec_generator *g) {
  tec_generator **p = &generators;
  while (*p) p = &(*p)->next; /* registration order */
  g->next = NULL;
  *p = g;
}

tec_generator *drv_generators(void) { return generators; }

static tec_generator *generator_find(const char *name) {
  for (tec_generator *g = generators; g; g = g->next)
    if (!strcmp(g->name, name)) return g;
  return NULL;
}

/* One line: the message with its newlines folded. */
static int fail(int status, const char *verb, const char *msg) {
  fprintf(stderr, "tec%s%s: ", *verb ? " " : "", verb);
  for (const char *c = msg ? msg : "(no message)"; *c; c++) {
    if (*c == '\n') {
      if (c[1]) fputs("; ", stderr);
    } else {
      fputc(*c, stderr);
    }
  }
  fputc('\n', stderr);
  return status;
}

typedef struct drv_opts {
  const char *verb, *op, *shape, *config, *target, *name, *out, *emit, *after, *html;
  int repeat, help, tasks;
  drv_tune_args tune; /* tune's own options (--trials, --tuner, ...) */
} drv_opts;

static const char *const usage_main =
    "usage: tec VERB [OP] [options]  (tec VERB --help for one verb)\n"
    "  targets               the target presets, architectures, CPUs and features\n"
    "  list [OP]             the operators: topi templates and this program's generators;\n"
    "                        with OP: its --shape keys, defaults and legal values\n"
    "  print OP --shape S    the lowered loop program [--config C] [--target T] [--after PASS]\n"
    "  compile OP --shape S --target T -o x.o   object + header [--emit obj,h,asm,ll] [--name N]\n"
    "  bench OP --shape S    JIT-build for the host, prepare once, time run [--repeat N]\n"
    "  tune OP --shape S --records F   measure configs of OP's space [--trials N --tuner T]\n"
    "  net FILE              a network of templates (text, one layer a line): build, run, time\n"
    "                        each layer [--repeat N] [--records F]; --tasks: its tune commands;\n"
    "                        --target T -o DIR: the whole network ahead of time\n"
    "  --auto (print, compile, bench, tune): OP's declaration scheduled by the auto-scheduler\n"
    "                        instead of its template (--records F: the best tuned record)\n";

static const char *verb_help(const char *verb) {
  if (!strcmp(verb, "targets"))
    return "usage: tec targets\n  Lists the target presets (boards), then per architecture the -mcpu\n"
           "  names and -mattr features --target accepts, and the host target.\n";
  if (!strcmp(verb, "list"))
    return "usage: tec list [OP]\n  Lists the operators: topi templates with their --shape keys, then the\n"
           "  generators linked into this program. With OP (a template): each --shape key with\n"
           "  its default (\"required\" when it has none) and its legal values, an example, and the\n"
           "  --config knobs of the example's space on this host.\n";
  if (!strcmp(verb, "print"))
    return "usage: tec print OP --shape KEY=V,... [--config KNOB=V,...] [--target T] [--after PASS] [--html F]\n"
           "  Prints the lowered loop program of OP for the problem (and its prepare function).\n"
           "  --config sets knobs on the target's default config (tec list shows them).\n"
           "  --auto [--records F]: the auto-scheduler's schedule instead of the template's (the\n"
           "  instant mode, or the best record tuned with tec tune --auto), printed as C calls too.\n"
           "  --after PASS also prints the program after every lowering pass whose name\n"
           "  contains PASS (TEC_DUMP_IR), before the final program.\n"
           "  --html FILE also writes a page beside it: the program with foldable loops, the LLVM IR\n"
           "  and the assembly, each loop linked to its instructions (tec_html; open it in a browser).\n";
  if (!strcmp(verb, "compile"))
    return "usage: tec compile OP --shape KEY=V,... --target T -o FILE.o [--emit obj,h,asm,ll]\n"
           "                   [--config KNOB=V,...] [--name NAME]\n"
           "  Writes OP ahead of time for target T: the object FILE.o and the header FILE.h by\n"
           "  default; asm -> FILE.s, ll -> FILE.ll. The function is NAME (default OP): NAME and\n"
           "  NAME_raw, or NAME_prepare/NAME_run when constants are packed once. Link the object\n"
           "  with libtec_runtime.a built for T and -lpthread -lm.\n";
  if (!strcmp(verb, "bench"))
    return "usage: tec bench OP --shape KEY=V,... [--config KNOB=V,...] [--repeat N] [--target T]\n"
           "  JIT-builds OP for the host, runs prepare once on random data, then times N runs\n"
           "  (default 20) and prints the median and fastest (and GFLOP/s for conv and dense).\n"
           "  --auto [--records F]: OP auto-scheduled (instant, or the best tuned record).\n";
  if (!strcmp(verb, "tune"))
    return "usage: tec tune OP --shape KEY=V,... --records FILE [--trials N]\n"
           "                [--tuner grid|random|anneal|xgb]\n"
           "                [--seed S] [--csv FILE] [--svg FILE] [--repeat N] [--timeout SEC]\n"
           "                [--build-timeout SEC] [--min-repeat-ms MS] [--transfer FILE] [--confirm N]\n"
           "                [--auto]\n"
           "  Measures N configs (default 64) of OP's knob space on the host, the default first:\n"
           "  (--auto: the space the auto-scheduler's rules generate for OP's declaration, its\n"
           "  default the instant schedule; the chosen schedule is printed as C calls)\n"
           "  each built, prepared once, run --repeat times (default 5, at most 16) after a warm-up,\n"
           "  its output checked against the default's; a run over --timeout seconds (default 1)\n"
           "  is a time-out; a build over --build-timeout seconds (default 60) is killed and is a\n"
           "  build error. --min-repeat-ms MS: each timed run repeats the call until it lasts MS\n"
           "  (the cost is the mean; default 0: one call), steadier for layers of a few microseconds;\n"
           "  with it each timed run also times the default config beside the candidate and\n"
           "  scales the cost by its speed there (anchored: a slow spell of the machine cancels).\n"
           "  Every trial is appended to FILE as one JSON line (tec print/bench\n"
           "  --config takes the best config it prints); --csv writes the trials, --svg a plot of\n"
           "  the best GFLOP/s so far. Then the N fastest configs and the default (--confirm N,\n"
           "  default 8, 0: none; not with --remote) are measured again side by side, 32 rounds\n"
           "  timing each in turn: the fastest by its median over the rounds is the best printed,\n"
           "  recorded with \"stage\":\"confirm\" (apply-best prefers those records). The same\n"
           "  --seed gives the same trial order (grid, random; anneal, annealing on the measured\n"
           "  speeds, and xgb, the cost model, also follow the measurements).\n"
           "  --transfer FILE  (xgb) the cost model first learns from FILE's records of other\n"
           "     workloads of OP on this target (their features), so the first batch is its own,\n"
           "     not random; it may be the --records file of a network tuned layer by layer\n"
           "  --remote [USER@]HOST[:PORT][,...]  measure on those hosts over ssh instead (BatchMode:\n"
           "     keys or an agent), in parallel, for --target (default: the host's); each candidate\n"
           "     built here (--remote-cc CC, --remote-runtime libtec_runtime.a for the target),\n"
           "     copied to a temporary directory there, run, removed (docs/tuning.md)\n"
           "  --remote-run-prefix 'WORDS'  run the program behind them (qemu-aarch64 -L DIR)\n"
           "  --ssh-option KEY=VALUE        passed as ssh -o KEY=VALUE (repeatable, at most 16)\n";
  if (!strcmp(verb, "net"))
    return "usage: tec net FILE [--repeat N] [--records F]\n"
           "       tec net FILE --tasks\n"
           "       tec net FILE --target T -o DIR [--records F]\n"
           "  FILE is a network of topi templates as text (include/tec/net.h, net_parse), one\n"
           "  layer a line, values named by the layer writing them (\"input\": the image):\n"
           "    input c=3 h=32 w=32\n"
           "    conv c1 in=input oc=16 k=3 stride=2 act=relu    (depthwise=1, res=VALUE)\n"
           "    maxpool p1 in=c1 k=3 stride=2 pad=1\n"
           "    gpool gap in=p1\n"
           "    dense fc in=gap n=10\n"
           "    softmax prob in=fc\n"
           "  Builds every layer on its template (the default config, or the best record of its\n"
           "  workload in --records F), packs the weights once (seeded), runs a seeded image N\n"
           "  times (default 20) and prints each layer's median time and the top-5 outputs.\n"
           "  --tasks prints one `tec tune` command per distinct layer workload instead: the\n"
           "  records they write are what --records F applies. -o DIR writes net_layers.o/.h,\n"
           "  net_model.c/.h and params.bin for --target T (link with libtec_runtime.a).\n";
  return NULL;
}

/* Parses argv[2..]: the OP positional and the options. 0, or 2 after printing the error. */
static int parse_opts(int argc, char **argv, drv_opts *o) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { o->help = 1; continue; }
    if (!strcmp(a, "--auto")) { o->tune.autosched = 1; continue; }
    if (!strcmp(a, "--tasks")) { o->tasks = 1; continue; }
    if (!strcmp(a, "--shape")) slot = &o->shape;
    else if (!strcmp(a, "--config")) slot = &o->config;
    else if (!strcmp(a, "--target")) slot = &o->target;
    else if (!strcmp(a, "--name")) slot = &o->name;
    else if (!strcmp(a, "-o")) slot = &o->out;
    else if (!strcmp(a, "--emit")) slot = &o->emit;
    else if (!strcmp(a, "--after")) slot = &o->after;
    else if (!strcmp(a, "--html")) slot = &o->html;
    else if (!strcmp(a, "--tuner")) slot = &o->tune.tuner;
    else if (!strcmp(a, "--records")) slot = &o->tune.records;
    else if (!strcmp(a, "--transfer")) slot = &o->tune.transfer;
    else if (!strcmp(a, "--csv")) slot = &o->tune.csv;
    else if (!strcmp(a, "--svg")) slot = &o->tune.svg;
    else if (!strcmp(a, "--remote")) slot = &o->tune.remote;
    else if (!strcmp(a, "--remote-run-prefix")) slot = &o->tune.remote_prefix;
    else if (!strcmp(a, "--remote-cc")) slot = &o->tune.remote_cc;
    else if (!strcmp(a, "--remote-runtime")) slot = &o->tune.remote_runtime;
    else if (!strcmp(a, "--ssh-option")) {
      if (i + 1 >= argc) return fail(2, o->verb, "--ssh-option needs KEY=VALUE");
      if (o->tune.nssh == 16) return fail(2, o->verb, "--ssh-option: at most 16");
      o->tune.ssh[o->tune.nssh++] = argv[++i];
      continue;
    }
    else if (!strcmp(a, "--min-repeat-ms")) {
      char *end = NULL;
      double v = i + 1 < argc ? strtod(argv[i + 1], &end) : -1;
      if (!end || *end || !(v >= 0 && v <= 10000)) {
        char m[200];
        snprintf(m, sizeof m, "--min-repeat-ms needs milliseconds from 0 to 10000%s%s", i + 1 < argc ? ", not " : "",
                 i + 1 < argc ? argv[i + 1] : "");
        return fail(2, o->verb, m);
      }
      o->tune.min_repeat_ms = v;
      i++;
      continue;
    }
    else if (!strcmp(a, "--trials") || !strcmp(a, "--seed") || !strcmp(a, "--timeout") ||
             !strcmp(a, "--build-timeout") || !strcmp(a, "--confirm")) {
      char *end = NULL;
      double v = i + 1 < argc ? strtod(argv[i + 1], &end) : 0;
      int is_int = strcmp(a, "--timeout") != 0 && strcmp(a, "--build-timeout") != 0;
      double lo = !strcmp(a, "--seed") || !strcmp(a, "--confirm") ? 0 : !strcmp(a, "--trials") ? 1 : 1e-6;
      double hi = !strcmp(a, "--seed") ? 4294967295.0 : !strcmp(a, "--trials") ? 1000000 : !strcmp(a, "--confirm") ? 16 : 3600;
      if (!end || *end || !(v >= lo && v <= hi) || (is_int && v != (double)(long long)v)) {
        char m[200];
        snprintf(m, sizeof m, is_int ? "%s needs an integer from %.0f to %.0f%s%s" : "%s needs seconds from %g to %g%s%s", a,
                 lo, hi, i + 1 < argc ? ", not " : "", i + 1 < argc ? argv[i + 1] : "");
        return fail(2, o->verb, m);
      }
      if (a[2] == 't' && a[3] == 'r') o->tune.trials = (int)v;
      else if (a[2] == 's') o->tune.seed = (unsigned)v, o->tune.seed_set = 1;
      else if (a[2] == 'b') o->tune.build_timeout = v;
      else if (a[2] == 'c') o->tune.confirm = (int)v, o->tune.confirm_set = 1;
      else o->tune.timeout = v;
      i++;
      continue;
    }
    else if (!strcmp(a, "--repeat")) {
      char *end = NULL;
      long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
      if (!end || *end || v < 1 || v > 1000000) {
        char m[160];
        snprintf(m, sizeof m, "--repeat needs a count from 1 to 1000000%s%s", i + 1 < argc ? ", not " : "",
                 i + 1 < argc ? argv[i + 1] : "");
        return fail(2, o->verb, m);
      }
      o->repeat = (int)v, i++;
      continue;
    } else if (a[0] == '-') {
      char m[200];
      snprintf(m, sizeof m, "unknown option '%s' (tec %s --help lists the options)", a, o->verb);
      return fail(2, o->verb, m);
    } else if (!o->op) {
      o->op = a;
      continue;
    } else {
      char m[200];
      snprintf(m, sizeof m, "unexpected argument '%s' (one OP, then options)", a);
      return fail(2, o->verb, m);
    }
    if (i + 1 >= argc) {
      char m[120];
      snprintf(m, sizeof m, "%s needs a value", a);
      return fail(2, o->verb, m);
    }
    *slot = argv[++i];
  }
  return 0;
}

static int unknown_op(tec_ctx *ctx, const char *op) {
  char list[1024] = "";
  for (int i = 0; i < topi_template_count(); i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", topi_template_at(i)->name);
  for (tec_generator *q = generators; q; q = q->next)
    snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", q->name);
  return tec_ctx_set_error(ctx, "unknown operator '%s'; the operators are %s", op, list);
}

/* The topi template OP and its problem from --shape (the template applies to it). -1 with an
 * error in ctx. */
static int op_problem(tec_ctx *ctx, const drv_opts *o, const topi_template **out, topi_problem *prob) {
  const topi_template *t = topi_template_find(o->op);
  if (!t) return unknown_op(ctx, o->op);
  if (!o->shape) return tec_ctx_set_error(ctx, "%s needs --shape with the keys %s (tec list %s: defaults, legal values)", t->name, topi_problem_key_names(ctx, t), t->name);
  if (topi_problem_parse(ctx, t, o->shape, prob) != 0) return -1;
  const char *why = NULL;
  if (t->applies && !t->applies(ctx, prob, &why))
    return tec_ctx_set_error(ctx, "%s cannot compute this problem: %s", t->name, why ? why : "(no reason given)");
  *out = t;
  return 0;
}

/* The OP lowered for the options: a generator's function or a topi template's with its
 * config (*cfg_str: the config as text, NULL for generators; *flops: 0 if unknown; *tmpl and
 * *prob: the template and its problem, *tmpl NULL for generators). NULL with an error in ctx. */
static lower_func *op_lower(tec_ctx *ctx, const drv_opts *o, const char **cfg_str, double *flops,
                            const topi_template **tmpl, topi_problem *prob, const char **trace_c) {
  const char *name = o->name ? o->name : o->op;
  tec_gen_params p;
  *cfg_str = NULL;
  *flops = 0;
  *tmpl = NULL;
  if (drv_params_parse(ctx, o->shape, &p) != 0) return NULL;
  p.target = o->target;
  tec_generator *g = generator_find(o->op);
  if (g) {
    if (o->config && o->tune.autosched) {
      tec_ctx_set_error(ctx, "--config sets the generator's knobs; with --auto the schedule is the "
                             "auto-scheduler's (--records F: the best tuned record)");
      return NULL;
    }
    return drv_gen_lower(ctx, g, name, o->shape, o->target, o->config, o->tune.autosched, o->tune.records,
                         cfg_str, trace_c, flops);
  }
  const topi_template *t;
  if (op_problem(ctx, o, &t, prob) != 0) return NULL;
  if (t->problem_kind == TOPI_PROBLEM_CONV2D) *flops = topi_conv2d_flops(&prob->conv);
  if (t->problem_kind == TOPI_PROBLEM_DENSE) *flops = 2.0 * prob->dense.m * prob->dense.n * prob->dense.k;
  if (t->problem_kind == TOPI_PROBLEM_BATCH_MATMUL)
    *flops = 2.0 * prob->bmm.batch * prob->bmm.m * prob->bmm.n * prob->bmm.k;
  /* int8: the same count of multiplies and adds (printed as GFLOP/s: integer operations) */
  if (t->problem_kind == TOPI_PROBLEM_QCONV2D) *flops = topi_conv2d_flops(&prob->qconv.conv);
  if (t->problem_kind == TOPI_PROBLEM_QDENSE) *flops = 2.0 * prob->qdense.m * prob->qdense.n * prob->qdense.k;
  if (o->tune.autosched) { /* the declaration, auto-scheduled (driver_auto.c) */
    if (o->config) {
      tec_ctx_set_error(ctx, "--config sets a template's knobs; with --auto the schedule is the "
                             "auto-scheduler's (--records F: the best tuned record)");
      return NULL;
    }
    *tmpl = t;
    return drv_auto_lower(ctx, t, prob, o->target, o->tune.records, name, cfg_str, trace_c);
  }
  tune_space sp;
  const tec_target *tg = tec_target_parse(ctx, o->target); /* once for space and schedule */
  if (!tg || t->space(ctx, prob, tg, &sp) != 0) return NULL;
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  if (!cfg) return NULL;
  if (o->config) {
    if (tune_config_parse(ctx, &sp, o->config, cfg) != 0) return NULL;
  } else {
    memcpy(cfg, sp.default_config, sp.config_size);
  }
  topi_decl d;
  topi_op op;
  if (t->declare(ctx, prob, &d) != 0 || t->schedule(&d, cfg, tg, &op) != 0) return NULL;
  *cfg_str = tune_config_str(ctx, &sp, cfg);
  *tmpl = t;
  return tec_lower(op.sched, name, op.nargs, op.args);
}

int drv_targets(void);
int drv_list(void);
int drv_compile(tec_ctx *ctx, lower_func *f, const char *target, const char *out, const char *emit);
int drv_bench(tec_ctx *ctx, lower_func *f, const char *target, int repeat, double flops,
              const topi_template *t, const void *problem);

/* tec tune: the template's problem, then tools/driver_tune.c. */
static int run_tune(drv_opts *o) {
  if (o->config || o->name || o->after || o->emit || o->out)
    return fail(2, "tune", "takes OP, --shape, --records, --transfer, --trials, --tuner, --seed, --csv, --svg, --repeat, --timeout, --build-timeout, --min-repeat-ms, --confirm, --target");
  if (!o->tune.records) return fail(2, "tune", "needs --records FILE (the JSON lines every trial is appended to)");
  tec_ctx *ctx = tec_ctx_new();
  if (!ctx) return fail(1, "tune", "out of memory");
  const tec_generator *g = generator_find(o->op);
  if (g) { /* its knobs' space or the auto-scheduler's: driver_gen.c */
    int st = drv_gen_tune(ctx, g, o->shape, o->target, o->repeat, &o->tune);
    tec_ctx_free(ctx);
    return st;
  }
  const topi_template *t = NULL;
  topi_problem prob;
  int status;
  if (op_problem(ctx, o, &t, &prob) != 0)
    status = fail(2, "tune", tec_ctx_error(ctx));
  else
    status = drv_tune(ctx, t, &prob, o->shape, o->target, o->repeat, &o->tune);
  tec_ctx_free(ctx);
  return status;
}

static int run_verb(drv_opts *o) {
  const char *v = o->verb;
  if (!o->op) {
    char m[160];
    snprintf(m, sizeof m, "needs an OP (tec list shows them; tec %s --help)", v);
    return fail(2, v, m);
  }
  if (strcmp(v, "tune") && (o->tune.tuner || (o->tune.records && !o->tune.autosched && !generator_find(o->op)) || o->tune.transfer || o->tune.csv || o->tune.svg || o->tune.trials ||
                            o->tune.seed_set || o->tune.timeout > 0 || o->tune.build_timeout > 0 || o->tune.min_repeat_ms >= 0 ||
                            o->tune.confirm_set || o->tune.remote || o->tune.remote_prefix ||
                            o->tune.remote_cc || o->tune.remote_runtime || o->tune.nssh))
    return fail(2, v, "--trials, --tuner, --records, --transfer, --seed, --csv, --svg, --timeout, --build-timeout, --min-repeat-ms, --confirm, --remote* and --ssh-option are "
                      "options of tec tune");
  if (!strcmp(v, "tune")) return run_tune(o);
  if (!strcmp(v, "compile") && (!o->out || !o->target))
    return fail(2, v, !o->out ? "needs -o FILE.o" : "needs --target (\"llvm\" for the host; tec targets lists presets)");
  if (strcmp(v, "print") && o->after) return fail(2, v, "--after is an option of tec print");
  if (strcmp(v, "print") && o->html) return fail(2, v, "--html is an option of tec print");
  if (strcmp(v, "compile") && o->emit) return fail(2, v, "--emit is an option of tec compile");
  tec_ctx *ctx = tec_ctx_new();
  if (!ctx) return fail(1, v, "out of memory");
  int status = 0;
  const char *cfg;
  double flops;
  const topi_template *t;
  topi_problem prob;
  if (o->after) {
    fflush(stdout);
    setenv("TEC_DUMP_IR", o->after, 1);
  }
  int saved = -1;
  if (o->after) saved = dup(2), dup2(1, 2); /* the pass dumps go to stderr: print them in order */
  const char *trace_c = NULL;
  lower_func *f = op_lower(ctx, o, &cfg, &flops, &t, &prob, &trace_c);
  if (o->after) fflush(stderr), dup2(saved, 2), close(saved), unsetenv("TEC_DUMP_IR");
  if (!f) {
    status = fail(2, v, tec_ctx_error(ctx));
  } else if (!strcmp(v, "print")) {
    if (cfg) printf("// %s %s\n", o->op, cfg);
    if (trace_c) printf("// the schedule as C calls:\n%s", trace_c);
    tec_lower_print(stdout, f);
    if (o->html && tec_html(ctx, f, o->target, o->html) != 0) status = fail(1, v, tec_ctx_error(ctx));
    else if (o->html) fprintf(stderr, "wrote %s\n", o->html);
  } else if (!strcmp(v, "compile")) {
    status = drv_compile(ctx, f, o->target, o->out, o->emit);
  } else {
    status = drv_bench(ctx, f, o->target, o->repeat ? o->repeat : 20, flops, t, &prob);
  }
  tec_ctx_free(ctx);
  return status;
}

/* tec list OP: a template's keys; a generator's line */
static int list_op(const char *op) {
  const topi_template *t = topi_template_find(op);
  if (t) return drv_list_op(t);
  for (tec_generator *q = generators; q; q = q->next)
    if (!strcmp(q->name, op)) {
      printf("%s: %s\n--shape keys: the ones the generator reads (tec print %s names them)\n", q->name,
             q->doc ? q->doc : "", q->name);
      return 0;
    }
  tec_ctx *ctx = tec_ctx_new();
  unknown_op(ctx, op);
  int rc = fail(2, "list", ctx ? tec_ctx_error(ctx) : "out of memory");
  tec_ctx_free(ctx);
  return rc;
}

static const char *prog_name = "tec";
const char *drv_prog(void) { return prog_name; }

int tec_driver_main(int argc, char **argv) {
  if (argc > 0 && argv[0] && *argv[0]) {
    const char *slash = strrchr(argv[0], '/');
    prog_name = slash ? slash + 1 : argv[0];
  }
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(usage_main, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  drv_opts o = {.verb = argv[1], .tune = {.min_repeat_ms = -1}};
  const char *help = verb_help(o.verb);
  if (!help) {
    char m[200];
    snprintf(m, sizeof m, "unknown verb '%s'; the verbs are targets, list, print, compile, bench, tune, net", o.verb);
    return fail(2, "", m);
  }
  if (parse_opts(argc, argv, &o) != 0) return 2;
  if (o.help) return fputs(help, stdout), 0;
  if (o.tasks && strcmp(o.verb, "net")) return fail(2, o.verb, "--tasks is an option of tec net");
  if (!strcmp(o.verb, "net")) {
    if (o.shape || o.config || o.name || o.emit || o.after || o.html || o.tune.autosched || o.tune.tuner || o.tune.transfer ||
        o.tune.csv || o.tune.svg || o.tune.trials || o.tune.seed_set || o.tune.timeout > 0 || o.tune.build_timeout > 0 ||
        o.tune.min_repeat_ms >= 0 || o.tune.confirm_set || o.tune.remote || o.tune.remote_prefix || o.tune.remote_cc ||
        o.tune.remote_runtime || o.tune.nssh)
      return fail(2, "net", "takes FILE, --repeat, --records, --tasks, --target and -o");
    return drv_net(o.op, o.repeat, o.tune.records, o.tasks, o.target, o.out);
  }
  if (!strcmp(o.verb, "targets") || !strcmp(o.verb, "list")) {
    if ((o.op && !strcmp(o.verb, "targets")) || o.shape || o.config || o.target || o.name || o.out || o.emit || o.after || o.html || o.repeat ||
        o.tune.tuner || o.tune.records || o.tune.transfer || o.tune.csv || o.tune.svg || o.tune.trials || o.tune.seed_set || o.tune.timeout > 0 || o.tune.build_timeout > 0 ||
        o.tune.min_repeat_ms >= 0 || o.tune.confirm_set || o.tune.remote || o.tune.remote_prefix || o.tune.remote_cc || o.tune.remote_runtime || o.tune.nssh)
      return fail(2, o.verb, "takes no operator or options");
    if (o.op) return list_op(o.op);
    return !strcmp(o.verb, "targets") ? drv_targets() : drv_list();
  }
  return run_verb(&o);
}
