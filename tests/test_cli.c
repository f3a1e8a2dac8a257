/* test_cli.c — the `tec` command and a generator program (examples/generator/gen_ops), run as
 * processes: each verb on good input (outputs checked), bad input (exit status 2 and one line
 * on stderr naming what was wrong), --help of every verb, and `tec compile` of a convolution
 * linked with a small C program (tests/cli/conv_main.c) whose numbers are checked against a
 * naive convolution. TEC_CLI, TEC_GEN, TEC_RUNTIME_LIB and TEC_CLI_SRC come from CMake. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tec/tune.h"
#include "testutil.h"

static char dir[64];
static char *out_text, *err_text;

/* Runs "PROG ARGS" (under TEC_TEST_RUN in cross builds) with stdout and stderr captured in
 * out_text / err_text; the exit status. */
static int run(const char *prog, const char *args) {
  const char *emu = getenv("TEC_TEST_RUN") ? getenv("TEC_TEST_RUN") : "";
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s %s %s > out.txt 2> err.txt", dir, emu, prog, args);
  int st = system(cmd);
  free(out_text), free(err_text);
  char path[128];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  out_text = tu_read_file(path, NULL);
  snprintf(path, sizeof path, "%s/err.txt", dir);
  err_text = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(out_text);
  ck_assert_ptr_nonnull(err_text);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static void setup(void) {
  strcpy(dir, "/tmp/tec_cli_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_cli: could not remove %s\n", dir);
  free(out_text), free(err_text);
  out_text = err_text = NULL;
}

#define CONV "conv2d_nchwc --shape c=16,h=10,w=9,oc=16,k=3,pad=1,in=NCHW8c,out=NCHW8c,act=relu"

START_TEST(targets_and_list) {
  ck_assert_int_eq(run(TEC_CLI, "targets"), 0);
  tu_assert_contains(out_text, "rasp4b       llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon");
  tu_assert_contains(out_text, "armv7a (");
  tu_assert_contains(out_text, " cortex-a53");
  tu_assert_contains(out_text, "host (\"llvm\"): llvm -mtriple=");
  { /* the host's CPU named, with its facts, as the value has them */
    tec_ctx *ctx = tec_ctx_new();
    const tec_target *h = tec_target_parse(ctx, NULL);
    ck_assert_ptr_nonnull(h);
    tu_assert_contains(out_text, tec_ctx_printf(ctx, "host CPU: -mcpu=%s (%s, %d-bit vectors, %d vector registers; tec "
                                                     "features:", *h->cpu ? h->cpu : "generic", h->arch_name,
                                                h->vector_bits, h->vector_regs));
    tec_ctx_free(ctx);
  }
  ck_assert_str_eq(err_text, "");
  ck_assert_int_eq(run(TEC_CLI, "list"), 0);
  for (int i = 0; i < topi_template_count(); i++) tu_assert_contains(out_text, topi_template_at(i)->name);
  tu_assert_contains(out_text, "generators: none linked in");
}
END_TEST

START_TEST(help) {
  static const char *const verbs[] = {"targets", "list", "print", "compile", "bench", "tune"};
  for (int i = 0; i < 6; i++) {
    char args[64], want[64];
    snprintf(args, sizeof args, "%s --help", verbs[i]);
    snprintf(want, sizeof want, "usage: tec %s", verbs[i]);
    ck_assert_int_eq(run(TEC_CLI, args), 0);
    tu_assert_contains(out_text, want);
  }
  ck_assert_int_eq(run(TEC_CLI, "--help"), 0);
  tu_assert_contains(out_text, "usage: tec VERB");
  ck_assert_int_eq(run(TEC_CLI, ""), 2); /* no verb: the usage on stderr */
  tu_assert_contains(err_text, "usage: tec VERB");
}
END_TEST

START_TEST(print_conv) {
  ck_assert_int_eq(run(TEC_CLI, "print " CONV), 0);
  tu_assert_contains(out_text, "// conv2d_nchwc ow_tile=");
  tu_assert_contains(out_text, "func conv2d_nchwc_prepare(kernel: float32[16, 16, 3, 3], kernel_p: float32[");
  tu_assert_contains(out_text, "func conv2d_nchwc_run(data: float32[1, 2, 10, 9, 8], out: float32[1, 2, 10, 9, 8]");
  /* dilation 2 along h only: the 3x3 kernel spans 5x3, the output (10 + 2 - 5) + 1 = 8 rows */
  ck_assert_int_eq(run(TEC_CLI, "print " CONV ",dilation_h=2"), 0);
  tu_assert_contains(out_text, "func conv2d_nchwc_run(data: float32[1, 2, 10, 9, 8], out: float32[1, 2, 8, 9, 8]");
  ck_assert_int_eq(run(TEC_CLI, "print " CONV " --config ow_tile=3,parallel=0 --name c3"), 0);
  tu_assert_contains(out_text, "ow_tile=3 ");
  tu_assert_contains(out_text, "parallel=0");
  tu_assert_contains(out_text, "func c3_run(");
  assert_not_contains(out_text, " parallel {");
  ck_assert_int_eq(run(TEC_CLI, "print " CONV " --after storage_flatten"), 0);
  tu_assert_contains(out_text, "---- after storage_flatten ----");
  ck_assert_ptr_nonnull(strstr(out_text, "func conv2d_nchwc_run(")); /* the final program after the dumps */
  ck_assert_str_eq(err_text, "");
}
END_TEST

/* Pooling, softmax and the residual add take their own --shape keys (they were read as dense's
 * m n k into another problem struct): the argument shapes show the problem arrived whole. */
START_TEST(print_other_ops) {
  ck_assert_int_eq(run(TEC_CLI, "print pool2d --shape c=16,h=8,w=8,k=3,stride=2,pad=1,"
                                "in=NCHW16c,out=NCHW16c"), 0);
  tu_assert_contains(out_text, "func pool2d(in: float32[1, 1, 8, 8, 16], out: float32[1, 1, 4, 4, 16]");
  /* a port's keys: ONNX SAME_UPPER with an even kernel keeps 7x7; ceil_mode, dilation and an
   * end padding: h (9 - 5) / 2 rounded up + 1 = 3, w (9 + 1 - 3) / 2 rounded up + 1 = 5 */
  ck_assert_int_eq(run(TEC_CLI, "print pool2d --shape c=3,h=7,w=7,k=2,stride=1,auto_pad=same_upper,mode=avg"), 0);
  tu_assert_contains(out_text, "func pool2d(in: float32[1, 3, 7, 7], out: float32[1, 3, 7, 7]");
  ck_assert_int_eq(run(TEC_CLI, "print pool2d --shape c=3,h=9,w=9,k=3,stride=2,ceil_mode=1,"
                                "dilation_h=2,pad_right=1"), 0);
  tu_assert_contains(out_text, "func pool2d(in: float32[1, 3, 9, 9], out: float32[1, 3, 3, 5]");
  /* batched matmul, b transposed (attention's Q·Kᵀ) */
  ck_assert_int_eq(run(TEC_CLI, "print batch_matmul --shape batch=3,m=5,n=7,k=4,tb=1"), 0);
  tu_assert_contains(out_text, "func batch_matmul(a: float32[3, 5, 4], b: float32[3, 7, 4], out: float32[3, 5, 7]");
  ck_assert_int_eq(run(TEC_CLI, "print global_pool --shape c=32,h=7,w=7,mode=avg,"
                                "in=NCHW16c,out=NCHW"), 0);
  tu_assert_contains(out_text, "func global_pool(in: float32[1, 2, 7, 7, 16], out: float32[1, 32, 1, 1]");
  ck_assert_int_eq(run(TEC_CLI, "print softmax --shape m=2,n=10"), 0);
  tu_assert_contains(out_text, "func softmax(in: float32[2, 10], out: float32[2, 10]");
  ck_assert_int_eq(run(TEC_CLI, "print eltwise_add --shape c=20,h=4,w=4,layout=NCHW16c,act=relu"), 0);
  tu_assert_contains(out_text, "func eltwise_add(a: float32[1, 2, 4, 4, 16], b: float32[1, 2, 4, 4, 16], "
                               "out: float32[1, 2, 4, 4, 16]");
}
END_TEST

/* The depthwise + pointwise block: its --shape keys, its config, both weights' packing in
 * prepare; a block whose pointwise does not read the depthwise's output is refused. */
START_TEST(print_dw_pw) {
  ck_assert_int_eq(run(TEC_CLI, "print dw_pw_fused --shape c=32,h=8,w=8,oc=24,stride=2,"
                                "bias=1,act=relu6 --config fused=2,ow_tile=4"), 0);
  tu_assert_contains(out_text, "// dw_pw_fused fused=2 ow_tile=4 ");
  tu_assert_contains(out_text, "func dw_pw_fused_prepare(dw_kernel: float32[32, 1, 3, 3], "
                               "dw_bias: float32[32], pw_kernel: float32[24, 32, 1, 1], "
                               "pw_bias: float32[24], dw_kernel_p: float32[2, 3, 3, 16]");
  tu_assert_contains(out_text, "func dw_pw_fused_run(data: float32[1, 2, 8, 8, 16], "
                               "out: float32[1, 2, 4, 4, 16]");
  ck_assert_str_eq(err_text, "");
  ck_assert_int_eq(run(TEC_CLI, "print dw_pw_fused"), 2);
  tu_assert_contains(err_text, "dw_pw_fused needs --shape with the keys n c h w oc k stride "
                               "layout out bias act");
  ck_assert_int_eq(run(TEC_CLI, "print dw_pw_fused --shape c=32,h=8,w=8,oc=24,residual=1"), 2);
  tu_assert_contains(err_text, "--shape: unknown key 'residual'; the keys are n c h w oc k stride "
                               "layout out bias act"); /* the block takes none */
}
END_TEST

/* tec list OP: each key with its default ("required" when none) and legal values, and an
 * example. Every template's example — its required keys, every other key at its default — is a
 * problem the template accepts (conv2d_nchwc's default output layout was NCHW, which it
 * refused). */
START_TEST(list_op_defaults) {
  ck_assert_int_eq(run(TEC_CLI, "list conv2d_nchwc"), 0);
  tu_assert_contains(out_text, "conv2d_nchwc: conv2d ");
  tu_assert_contains(out_text, "  c                  required   input channels, >= 1\n");
  tu_assert_contains(out_text, "  out                NCHW16c    NCHW, NHWC, NCHW<x>c");
  tu_assert_contains(out_text, "  act                none       none, relu, relu6\n");
  ck_assert_int_eq(run(TEC_CLI, "list depthwise_nchwc"), 0);
  tu_assert_contains(out_text, "  groups             c          ");
  for (int i = 0; i < topi_template_count(); i++) {
    const char *name = topi_template_at(i)->name;
    char args[512], want[128];
    snprintf(args, sizeof args, "list %s", name);
    ck_assert_int_eq(run(TEC_CLI, args), 0);
    ck_assert_str_eq(err_text, "");
    tu_assert_contains(out_text, "for the example on this host:\nspace: "); /* its knobs */
    snprintf(want, sizeof want, "e.g. tec print %s --shape ", name);
    const char *eg = strstr(out_text, want);
    ck_assert_msg(eg != NULL, "tec list %s: no example in\n%s", name, out_text);
    eg += strlen("e.g. tec ");
    snprintf(args, sizeof args, "%.*s", (int)strcspn(eg, "\n"), eg);
    ck_assert_msg(run(TEC_CLI, args) == 0, "tec %s (its defaults) refused: %s", args, err_text);
    snprintf(want, sizeof want, "func %s", name);
    tu_assert_contains(out_text, want);
  }
}
END_TEST

/* Bad usage: status 2, one line on stderr starting "tec VERB: " and naming the problem. */
START_TEST(bad_usage) {
  static const struct { const char *args, *want; } cases[] = {
      {"frob", "tec: unknown verb 'frob'; the verbs are targets, list, print"},
      {"print", "tec print: needs an OP"},
      {"print nope --shape c=1", "tec print: unknown operator 'nope'; the operators are conv2d_nchwc, "},
      {"print conv2d_nchwc", "tec print: conv2d_nchwc needs --shape with the keys n c h w oc"},
      {"print conv2d_nchwc --shape c=16,zz=3", "unknown key 'zz'; the keys are n c h w oc"},
      {"print conv2d_nchwc --shape c=16,h=x", "--shape: h=x is not an integer"},
      {"print conv2d_nchwc --shape c=16,h", "--shape: 'h' is not key=value"},
      {"print conv2d_nchwc --shape c=1,c=2", "'c' given twice"},
      {"print conv2d_nchwc --shape c=16,h=8,w=8,oc=16,act=tanh", "act=tanh; the activations are none, relu, relu6"},
      {"print conv2d_nchwc --shape c=16,h=8,w=8,oc=16,out=NCHW", "conv2d_nchwc cannot compute this problem: output layout NCHW"},
      {"print conv2d_nchwc --shape c=16,h=8,oc=16", "--shape: w is missing (conv2d_nchwc: input width, >= 1); e.g. --shape c=16,h=14,w=14,oc=32"},
      {"print dense --shape m=4,n=4", "--shape: k is missing (dense: the reduction, >= 1)"},
      {"list nope", "tec list: unknown operator 'nope'; the operators are conv2d_nchwc, "},
      {"targets dense", "tec targets: takes no operator or options"},
      {"list dense --shape m=1", "tec list: takes no operator or options"},
      {"print " CONV ",dilation=-1", "conv2d_nchwc: dilation must be >= 1 (0 is read as 1; got -1x-1)"},
      {"print conv2d_nchwc --shape c=16,h=8,w=8,oc=16,in=NCHWx", "--shape: in=NCHWx: topi_layout_parse: unknown layout 'NCHWx' (legal: NCHW, NHWC"},
      {"print conv2d_nchwc --shape c=16,h=8,w=8,oc=16,in=NCHW16c+mx", "--shape: in=NCHW16c+mx: topi_layout_parse: unknown layout 'NCHW16c+mx'"},
      {"print pool2d --shape c=16,h=8,w=8,k=3,pad=1,in=NCHW16c+m1,out=NCHW16c", "pool2d cannot compute this problem: pool2d: input layout NCHW16c+m1 has a margin of 1; pool2d takes margin 0 only"},
      {"print " CONV " --config ow_tile=999", "knob 'ow_tile' = 999 is not legal"},
      {"print " CONV " --config frob=1", "no knob 'frob' (knobs: ow_tile"},
      {"print " CONV " --bogus", "unknown option '--bogus' (tec print --help lists the options)"},
      {"print " CONV " --shape", "--shape needs a value"},
      {"print " CONV " extra", "unexpected argument 'extra'"},
      {"print " CONV " --emit asm", "--emit is an option of tec compile"},
      {"compile " CONV " -o x.o", "needs --target"},
      {"compile " CONV " --target llvm", "needs -o FILE.o"},
      {"compile " CONV " --target foo -o x.o", "target 'foo': unknown target kind 'foo'"},
      {"compile " CONV " --target rasp4b -o x.o --emit obj,pdf", "--emit 'pdf'; the kinds are obj, h, asm, ll"},
      {"bench " CONV " --repeat 0", "--repeat needs a count from 1 to 1000000, not 0"},
      {"bench " CONV " --after x", "--after is an option of tec print"},
      {"bench " CONV " --target rasp4b32", "cannot run on this host"}, /* armv7: on x86 and AArch64 hosts */
      {"tune " CONV, "tec tune: needs --records FILE"},
      {"tune " CONV " --records r.jsonl --tuner foo", "tec tune: --tuner 'foo'; the tuners are grid, random, anneal, xgb"},
      {"tune " CONV " --records r.jsonl --tuner xgb", "tec tune: --tuner xgb: this tec is built without XGBoost (install libxgboost-dev"},
      {"tune " CONV " --records r.jsonl --trials 0", "tec tune: --trials needs an integer from 1 to 1000000, not 0"},
      {"tune " CONV " --records r.jsonl --timeout x", "tec tune: --timeout needs seconds from 1e-06 to 3600, not x"},
      {"tune " CONV " --records r.jsonl --config ow_tile=3", "tec tune: takes OP, --shape, --records"},
      {"tune " CONV " --records r.jsonl --target rasp4b", "tec tune: measures on this machine; --target 'rasp4b' is not the host"},
      {"tune " CONV " --records r.jsonl --ssh-option Port=22", "tec tune: --remote-run-prefix, --remote-cc, --remote-runtime and --ssh-option go with --remote HOSTS"},
      {"tune " CONV " --records r.jsonl --remote box:99999", "tec tune: tune: remote host 'box:99999': the port must be 1 to 65535 ([user@]host[:port])"},
      {"tune " CONV " --records r.jsonl --remote -oProxyCommand=x", "tec tune: tune: remote host '-oProxyCommand=x': a host name may hold"},
      {"tune " CONV " --records r.jsonl --remote box --ssh-option BatchMode", "tec tune: tune: ssh option 'BatchMode': each is Key=Value"},
      {"tune " CONV " --records r.jsonl --remote box --target rasp4b", "tec tune: --remote for target 'llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon' needs --remote-runtime FILE"},
      {"tune " CONV " --records r.jsonl --min-repeat-ms -1", "tec tune: --min-repeat-ms needs milliseconds from 0 to 10000, not -1"},
      {"tune " CONV " --records r.jsonl --min-repeat-ms 2000", "tec tune: --min-repeat-ms 2000 is longer than the time-out (--timeout, 1000 ms)"},
      {"bench " CONV " --min-repeat-ms 2", "tec bench: --trials, --tuner, --records, --transfer, --seed, --csv, --svg, --timeout, --build-timeout, --min-repeat-ms, --confirm, --remote* and --ssh-option are options of tec tune"},
      {"bench " CONV " --trials 3", "tec bench: --trials, --tuner, --records, --transfer, --seed, --csv, --svg, --timeout, --build-timeout, --min-repeat-ms, --confirm, --remote* and --ssh-option are options of tec tune"},
      {"bench " CONV " --confirm 2", "tec bench: --trials, --tuner, --records, --transfer, --seed"},
      {"tune " CONV " --records r.jsonl --confirm 17", "tec tune: --confirm needs an integer from 0 to 16, not 17"},
      {"tune " CONV " --records r.jsonl --confirm 2 --remote h --remote-runtime x.a", "tec tune: --confirm with --remote: the confirmation measures"},
      {"bench " CONV " --transfer t.jsonl", "tec bench: --trials, --tuner, --records, --transfer, --seed"},
      {"tune " CONV " --records r.jsonl --tuner random --transfer t.jsonl",
       "tec tune: --transfer is for --tuner xgb (the cost model learns from other workloads' records); tuner random does not learn"},
      {"targets extra", "tec targets: takes no operator or options"},
      {"print " CONV " --auto --config ow_tile=3", "tec print: --config sets a template's knobs; with --auto the schedule is the auto-scheduler's"},
      {"bench dense --shape m=8,n=16,k=4 --auto --records /nonexistent/r.jsonl", "tec bench: tune: cannot read the records file /nonexistent/r.jsonl"},
      {"print softmax --shape m=2,n=10,k=3", "--shape: unknown key 'k'; the keys are m n"},
      {"print pool2d --shape c=16,h=8,w=8,k=3,mode=min", "--shape: mode=min; the modes are max, avg"},
      {"print batch_matmul --shape m=4,n=4,k=4,ta=2", "--shape: ta=2, tb=0; legal: 0, 1"},
      {"print batch_matmul --shape m=4,n=4", "--shape: k is missing (batch_matmul: the reduction, >= 1)"},
      {"print pool2d --shape c=3,h=7,w=7,k=2,dilation=0", "--shape: dilation 0x0; a dilation is >= 1 (1: none)"},
      {"print pool2d --shape c=3,h=7,w=7,k=2,ceil_mode=2", "--shape: ceil_mode=2; legal: 0, 1"},
      {"print pool2d --shape c=3,h=7,w=7,k=2,auto_pad=same", "--shape: auto_pad=same; legal: notset, same_upper, same_lower, valid"},
      {"print pool2d --shape c=3,h=7,w=7,k=2,auto_pad=same_lower,pad=1", "--shape: auto_pad=same_lower sets the paddings: leave out pad"},
      {"print pool2d --shape c=3,h=7,w=7,k=3,pad_bottom=3", "pool2d: height: padding 0 before, 3 after must be >= 0 and smaller than the window's extent 3"},
      {"print eltwise_add --shape c=16,h=4,w=4,bias=1", "--shape: unknown key 'bias'; the keys are n c h w layout act"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (strstr(cases[i].args, "--tuner xgb") && tune_have_xgb()) continue; /* built with the cost model */
    ck_assert_msg(run(TEC_CLI, cases[i].args) == 2, "tec %s: status not 2 (stderr: %s)", cases[i].args, err_text);
    tu_assert_contains(err_text, cases[i].want);
    ck_assert_msg(lines(err_text) == 1, "tec %s: %d lines on stderr:\n%s", cases[i].args, lines(err_text), err_text);
    ck_assert_msg(strncmp(err_text, "tec", 3) == 0, "%s", err_text);
  }
}
END_TEST

/* compile for the host, link the object with conv_main.c and the runtime, check the numbers;
 * compile for rasp4b with every output kind: NEON in the assembly, the prepare/run pair in the
 * header. */
START_TEST(compile_link_run) {
  ck_assert_int_eq(run(TEC_CLI, "compile " CONV " --name conv --target rasp4b -o arm/conv.o --emit obj,h,asm,ll"), 1);
  tu_assert_contains(err_text, "arm/conv.o"); /* no such directory: a failure naming the file */
  ck_assert_int_eq(lines(err_text), 1);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "mkdir -p %s/arm", dir);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_int_eq(run(TEC_CLI, "compile " CONV " --name conv --target rasp4b -o arm/conv.o --emit obj,h,asm,ll"), 0);
  ck_assert_str_eq(out_text, "arm/conv.o\narm/conv.h\narm/conv.s\narm/conv.ll\n");
  snprintf(cmd, sizeof cmd, "%s/arm/conv.s", dir);
  char *as = tu_read_file(cmd, NULL);
  tu_assert_contains(as, "fmla\tv");
  free(as);
  snprintf(cmd, sizeof cmd, "%s/arm/conv.h", dir);
  char *h = tu_read_file(cmd, NULL);
  tu_assert_contains(h, "int32_t conv_prepare_raw(float *kernel, float *kernel_p);");
  tu_assert_contains(h, "int32_t conv_run_raw(float *data, float *out, float *kernel_p);");
  free(h);
  snprintf(cmd, sizeof cmd, "%s/arm/conv.ll", dir);
  char *ll = tu_read_file(cmd, NULL);
  tu_assert_contains(ll, "target triple = \"aarch64");
  free(ll);

  const char *cc = getenv("TEC_TEST_CC") ? getenv("TEC_TEST_CC") : "cc";
  snprintf(cmd, sizeof cmd, "%s --version > /dev/null 2>&1", cc);
  if (system(cmd) != 0) return; /* no C compiler for this machine: nothing to link */
  ck_assert_int_eq(run(TEC_CLI, "compile " CONV " --name conv --target llvm -o conv.o"), 0);
  ck_assert_str_eq(out_text, "conv.o\nconv.h\n");
  const char *san = tu_san_flags(); /* the runtime library's sanitizers, if any */
  snprintf(cmd, sizeof cmd, "cd %s && %s -std=c11 -O1 -Wall -Werror %s -I. -o conv %s/cli/conv_main.c conv.o %s -lpthread -lm",
           dir, cc, san, TEC_CLI_SRC, TEC_RUNTIME_LIB);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_int_eq(run("./conv", ""), 0);
  tu_assert_contains(out_text, "conv: max error ");
}
END_TEST

START_TEST(bench_conv) {
  ck_assert_int_eq(run(TEC_CLI, "bench " CONV " --repeat 3"), 0);
  tu_assert_contains(out_text, "conv2d_nchwc: median ");
  tu_assert_contains(out_text, "over 3 runs (first call ");
  tu_assert_contains(out_text, ", with prepare)");
  tu_assert_contains(out_text, " GFLOP/s\n");
  ck_assert_int_eq(run(TEC_CLI, "bench dense --shape m=16,n=32,k=8 --repeat 2"), 0);
  tu_assert_contains(out_text, "dense: median ");
  /* margins: the whole buffers allocated, the input's ring zeroed */
  ck_assert_int_eq(run(TEC_CLI, "bench conv2d_nchwc --shape c=16,h=8,w=8,oc=16,k=3,pad=1,"
                                "in=NCHW16c+m1,out=NCHW16c --repeat 2"), 0);
  tu_assert_contains(out_text, "conv2d_nchwc: median ");
  ck_assert_int_eq(run(TEC_CLI, "bench depthwise_nchwc --shape c=32,h=8,w=8,groups=32,k=3,pad=1,"
                                "in=NCHW16c+m1,out=NCHW16c+m1,residual=1 --repeat 2"), 0);
  tu_assert_contains(out_text, "depthwise_nchwc: median ");
  ck_assert_int_eq(run(TEC_CLI, "bench dw_pw_fused --shape c=32,h=8,w=8,oc=24,layout=NCHW16c+m1,"
                                "out=NCHW8c+m1 --repeat 2"), 0);
  tu_assert_contains(out_text, "dw_pw_fused: median ");
  /* an int8 template by name, its quantization params in the text; tuned (int8 arguments
   * filled, every trial's int8 output compared with the default config's) */
  ck_assert_int_eq(run(TEC_CLI, "bench qnn_conv2d --shape c=32,h=8,w=8,oc=32,k=3,pad=1,stride=2,"
                                "bias=1,act=relu6,in_scale=0.05,in_zp=-3,out_scale=0.04,out_zp=-128 "
                                "--repeat 2"), 0);
  tu_assert_contains(out_text, "qnn_conv2d: median ");
  ck_assert_int_eq(run(TEC_CLI, "bench qnn_dense --shape m=4,n=32,k=20,in_scale=0.5 --repeat 2"), 0);
  tu_assert_contains(out_text, "qnn_dense: median ");
  ck_assert_int_eq(run(TEC_CLI, "list"), 0);
  tu_assert_contains(out_text, "qnn_conv2d");
  tu_assert_contains(out_text, "in_scale in_zp out_scale out_zp");
  ck_assert_int_ne(run(TEC_CLI, "bench qnn_conv2d --shape c=32,h=8,w=8,oc=32,in_scale=-1"), 0);
  tu_assert_contains(err_text, "in_scale=-1; a scale is a finite number > 0");
  ck_assert_int_eq(run(TEC_CLI, "tune qnn_dense --shape m=4,n=32,k=20,in_scale=0.5,out_scale=0.25 "
                                "--trials 4 --repeat 1 --seed 3 --records q.jsonl"), 0);
  tu_assert_contains(out_text, ": 4 ok, 0 build errors, 0 run errors, 0 wrong, 0 time-outs;");
}
END_TEST

/* tec net: a network as text run layer by layer; its tune commands; emitted ahead of time;
 * a bad line refused with its number (status 2). */
START_TEST(net_file) {
  char path[160];
  snprintf(path, sizeof path, "%s/small.net", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("input c=3 h=16 w=16\nconv c1 in=input oc=8 k=3 stride=2 act=relu\n"
        "conv c2 in=c1 oc=8 k=3 res=c1 act=relu\ngpool gap in=c2\ndense fc in=gap n=4\n", f);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(run(TEC_CLI, "net small.net --repeat 2"), 0);
  tu_assert_contains(out_text, "c2                 conv2d_nchwc");
  tu_assert_contains(out_text, "total: median ");
  tu_assert_contains(out_text, "top-5: class ");
  ck_assert_int_eq(run(TEC_CLI, "net small.net --tasks"), 0);
  ck_assert_int_eq(lines(out_text), 4); /* c1 and c2 differ (residual): four workloads */
  tu_assert_contains(out_text, "tec tune conv2d_nchwc --shape n=1,c=8,h=8,w=8,oc=8,kh=3,kw=3,stride_h=1,");
  ck_assert_int_eq(run(TEC_CLI, "net small.net --target llvm -o ."), 0);
  long size = 0;
  char hpath[160];
  snprintf(hpath, sizeof hpath, "%s/net_model.h", dir);
  char *h = tu_read_file(hpath, &size);
  ck_assert_ptr_nonnull(h);
  tu_assert_contains(h, "int net_model_run(const float *image, float *logits, float *probs);");
  free(h);
  f = fopen(path, "a");
  ck_assert_ptr_nonnull(f);
  fputs("softmax sm in=c1\n", f);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(run(TEC_CLI, "net small.net"), 2);
  tu_assert_contains(err_text, "tec net: net_parse: line 6: net_softmax: layer 'sm' reads value 1 as [batch][c]");
  ck_assert_int_eq(run(TEC_CLI, "net small.net -o ."), 2);
  tu_assert_contains(err_text, "tec net: -o DIR needs --target");
}
END_TEST

/* tec tune: a few trials of a small dense layer; the records, the CSV and the plot written. */
START_TEST(tune_dense) {
  ck_assert_int_eq(run(TEC_CLI, "tune dense --shape m=16,n=32,k=8 --trials 3 --repeat 1 --seed 2 --records r.jsonl "
                                "--csv t.csv --svg t.svg"), 0);
  tu_assert_contains(out_text, "tune dense k=8,m=16,n=32 on the host (-mcpu="); /* not its features */
  assert_not_contains(out_text, "-mattr");
  tu_assert_contains(out_text, "space: 6 knobs, ");
  tu_assert_contains(out_text, "3 trials in ");
  tu_assert_contains(out_text, ": 3 ok, 0 build errors, 0 run errors, 0 wrong, 0 time-outs; records in r.jsonl\n");
  tu_assert_contains(out_text, "best: mr=");
  tu_assert_contains(err_text, "tune: 3/3 trials, best ");
  char path[128];
  snprintf(path, sizeof path, "%s/r.jsonl", dir);
  char *rec = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(rec);
  ck_assert_int_eq(lines(rec), 3 + 3); /* the trials, then the 3 configs confirmed side by side */
  tu_assert_contains(rec, "{\"workload\":\"dense k=8,m=16,n=32\",\"target\":\"llvm -mtriple=");
  tu_assert_contains(rec, ",\"stage\":\"confirm\"");
  free(rec);
  snprintf(path, sizeof path, "%s/t.csv", dir);
  char *csv = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(csv);
  ck_assert_int_eq(lines(csv), 1 + 3 + 3);
  free(csv);
  snprintf(path, sizeof path, "%s/t.svg", dir);
  char *svg = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(svg);
  tu_assert_contains(svg, "<polyline");
  free(svg);
}
END_TEST

/* Progress a log can read: tec tune's stderr into a pipe (not a terminal) gets the progress
 * line while the trials run, every MIN to MAX seconds (TEC_TUNE_PROGRESS=0.05,0.2 here, 10,30
 * by default), each in the documented format, the last one at the end; a bad setting is said. */
START_TEST(tune_progress_in_a_pipe) {
  ck_assert_int_eq(run("TEC_TUNE_PROGRESS=0.05,0.2 " TEC_CLI, "tune dense --shape m=16,n=32,k=8 --trials 6 "
                                                              "--repeat 1 --confirm 0 --records r.jsonl 2>&1 | cat"), 0);
  int before_end = 0, last_done = 0;
  double last_elapsed = 0;
  for (const char *l = out_text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    int done, total;
    double best, elapsed, eta;
    if (sscanf(l, "tune: %d/%d trials, best %lf GFLOP/s, elapsed %lf s, ETA %lf s", &done, &total, &best,
               &elapsed, &eta) != 5)
      continue;
    ck_assert_int_eq(total, 6);
    ck_assert_msg(done >= last_done && done <= 6 && elapsed >= last_elapsed && best >= 0 && eta >= 0,
                  "a progress line out of order: %.80s", l);
    before_end += done < 6;
    last_done = done, last_elapsed = elapsed;
  }
  ck_assert_msg(before_end >= 1, "no progress line before the end:\n%s", out_text);
  ck_assert_int_eq(last_done, 6); /* the last one: every trial */
  /* a setting that is not MIN,MAX: said, and the default used */
  ck_assert_int_eq(run("TEC_TUNE_PROGRESS=fast " TEC_CLI, "tune dense --shape m=16,n=32,k=8 --trials 1 --repeat 1 "
                                                         "--confirm 0 --records r.jsonl"), 0);
  tu_assert_contains(err_text, "tune: warning: TEC_TUNE_PROGRESS='fast' is not MIN,MAX seconds");
  tu_assert_contains(err_text, "tune: 1/1 trials, best ");
}
END_TEST

/* --auto: the declaration auto-scheduled; tune searches the generated space, its records key
 * the program's structural hash, print and bench apply them. */
START_TEST(tune_auto) {
  ck_assert_int_eq(run(TEC_CLI, "tune dense --shape m=16,n=32,k=24,bt=0 --auto --trials 3 --repeat 1 --seed 2 "
                                "--confirm 1 --records a.jsonl"), 0);
  tu_assert_contains(out_text, "tune auto h=");
  tu_assert_contains(out_text, "acc.tile_i");
  tu_assert_contains(out_text, ": 3 ok, 0 build errors, 0 run errors, 0 wrong, 0 time-outs; records in a.jsonl\n");
  tu_assert_contains(out_text, "tec bench dense --shape m=16,n=32,k=24,bt=0 --auto --records a.jsonl\n");
  tu_assert_contains(out_text, "sch_compute_at(s_acc, s_out, "); /* the chosen schedule as C calls */
  char path[128];
  snprintf(path, sizeof path, "%s/a.jsonl", dir);
  char *rec = tu_read_file(path, NULL);
  ck_assert_ptr_nonnull(rec);
  tu_assert_contains(rec, "\"template\":\"auto\"");
  free(rec);
  ck_assert_int_eq(run(TEC_CLI, "print dense --shape m=16,n=32,k=24,bt=0 --auto --records a.jsonl"), 0);
  tu_assert_contains(out_text, "// dense auto acc.tile_i=");
  tu_assert_contains(out_text, "// the schedule as C calls:\n");
  ck_assert_int_eq(run(TEC_CLI, "bench dense --shape m=16,n=32,k=24,bt=0 --auto --repeat 2"), 0);
  tu_assert_contains(out_text, "GFLOP/s");
  /* another problem: no record of its program, the instant schedule with the reason */
  ck_assert_int_eq(run(TEC_CLI, "print dense --shape m=16,n=32,k=25,bt=0 --auto --records a.jsonl"), 0);
  tu_assert_contains(err_text, "no record for auto h=");
  tu_assert_contains(out_text, "// dense auto acc.tile_i=");
}
END_TEST

/* The generator program: its operators beside the templates, the same verbs and errors. */
START_TEST(generator) {
  ck_assert_int_eq(run(TEC_GEN, "list"), 0);
  tu_assert_contains(out_text, "  axpy ");
  tu_assert_contains(out_text, "  rowsum ");
  tu_assert_contains(out_text, "conv2d_nchwc");
  ck_assert_int_eq(run(TEC_GEN, "print axpy --shape n=20,lanes=8"), 0);
  tu_assert_contains(out_text, "func axpy(x: float32[20], y: float32[20], out: float32[20])");
  tu_assert_contains(out_text, "for (i.outer, 0, 2)");
  tu_assert_contains(out_text, "out[ramp(16, 1, 4)]"); /* the tail of 20 = 2 * 8 + 4 */
  ck_assert_int_eq(run(TEC_GEN, "print axpy --shape n=20,lanez=8"), 2);
  tu_assert_contains(err_text, "tec print: --shape: unknown key 'lanez'; the keys are n lanes a\n");
  ck_assert_int_eq(run(TEC_GEN, "print axpy --shape n=0"), 2);
  tu_assert_contains(err_text, "axpy: n and lanes must be >= 1 (n=0, lanes=4)");
  ck_assert_int_eq(run(TEC_GEN, "print axpy --shape n=8 --config x=1"), 2);
  tu_assert_contains(err_text, "--config: generator axpy declares no knobs (tec_gen_knob)");
  ck_assert_int_eq(run(TEC_GEN, "tune axpy --shape n=8 --records r.jsonl"), 2);
  tu_assert_contains(err_text, "generator axpy declares no knobs to tune (tec_gen_knob in the generator, as "
                               "AutoTVM's cfg.define_knob); --auto tunes the auto-scheduler's space");
  ck_assert_int_eq(run(TEC_GEN, "compile axpy --shape n=64 --target rasp4b -o axpy.o --emit asm"), 0);
  ck_assert_str_eq(out_text, "axpy.s\n");
  ck_assert_int_eq(run(TEC_GEN, "bench rowsum --shape m=64,n=48 --repeat 3"), 0);
  tu_assert_contains(out_text, "rowsum: median ");
  assert_not_contains(out_text, "with prepare");
}
END_TEST

/* A generator outside the library (tests/support/gen_tune_ops.c) with its own knobs: tuned
 * from a pipe with progress lines before the end, every candidate checked against the default;
 * its records keyed by the hash of its te program, so an edited compute takes none; the knob
 * API's misuse and bad --config values named; --auto schedules its program instead. */
START_TEST(generator_tune) {
  ck_assert_int_eq(run("TEC_TUNE_PROGRESS=0.01,0.05 " TEC_GEN_TUNE, "tune blur --shape h=32,w=40 --trials 6 --repeat 1 "
                                                                   "--confirm 0 --seed 3 --records r.jsonl 2>&1 | cat"), 0);
  tu_assert_contains(out_text, "tune blur h=32,w=40,te=");
  tu_assert_contains(out_text, "space: 3 knobs, 24 configs");
  tu_assert_contains(out_text, "6 trials in ");
  tu_assert_contains(out_text, ": 6 ok, 0 build errors, 0 run errors, 0 wrong, 0 time-outs");
  const char *end = strstr(out_text, "6 trials in "), *first = strstr(out_text, "tune: 1/6 trials, best ");
  ck_assert_msg(first && first < end, "no progress line before the end:\n%s", out_text);
  const char *best = strstr(out_text, "best: rows=");
  ck_assert_ptr_nonnull(best);
  char cfg[64];
  ck_assert_int_eq(sscanf(best, "best: %63[^\n]", cfg), 1);
  tu_assert_contains(out_text, "gen_tune_ops bench blur --shape h=32,w=40 --config rows=");
  /* the records apply to the same program ... */
  ck_assert_int_eq(run(TEC_GEN_TUNE, "print blur --shape h=32,w=40 --records r.jsonl"), 0);
  char line[96];
  snprintf(line, sizeof line, "// blur %s\n", cfg);
  ck_assert_msg(!strncmp(out_text, line, strlen(line)), "expected %s, got %.80s", line, out_text);
  ck_assert_str_eq(err_text, "");
  /* ... not to an edited compute (same name, shape and knobs): the defaults, and why */
  ck_assert_int_eq(run("TEC_TEST_BLUR_EDIT=1 " TEC_GEN_TUNE, "print blur --shape h=32,w=40 --records r.jsonl"), 0);
  tu_assert_contains(out_text, "// blur rows=8 vec=8 at=1\n");
  tu_assert_contains(err_text, "blur: no record for blur h=32,w=40,te=");
  tu_assert_contains(err_text, "(6 records of blur for other programs, shapes or targets); the knobs' defaults are used");
  /* nor to another shape */
  ck_assert_int_eq(run(TEC_GEN_TUNE, "print blur --shape h=32,w=48 --records r.jsonl"), 0);
  tu_assert_contains(err_text, "blur: no record for blur h=32,w=48,te=");
  ck_assert_int_eq(run(TEC_GEN_TUNE, "print blur --shape h=8,w=8 --config rows=4,at=0"), 0);
  tu_assert_contains(out_text, "// blur rows=4 vec=8 at=0\n");
  /* refused, each with its reason: bad --config values, --config with --records, a misused
   * knob (named before what the generator said after it) */
  static const struct { const char *args, *msg; } bad[] = {
      {"print blur --config rows=3", "blur: knob 'rows' = 3 is not legal for this problem and target (legal: 1, 4, 8, 16)"},
      {"print blur --config zz=3", "no knob 'zz' (knobs: rows, vec, at)"},
      {"print blur --config rows=4 --records r.jsonl", "--config and --records both choose the knobs' values: give one"},
      {"print bad", "tec_gen_knob: knob 'v': the default 3 is not one of its 2 values"},
      {"tune bad --records r2.jsonl", "tec_gen_knob: knob 'v': the default 3 is not one of its 2 values"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_msg(run(TEC_GEN_TUNE, bad[i].args) == 2, "%s: not refused", bad[i].args);
    tu_assert_contains(err_text, bad[i].msg);
  }
  /* --auto: the generator's program, scheduled by the auto-scheduler */
  ck_assert_int_eq(run(TEC_GEN_TUNE, "print blur --shape h=32,w=40 --auto"), 0);
  tu_assert_contains(out_text, "// blur auto (instant)");
  tu_assert_contains(out_text, "sch_compute_at(s_blur_x, s_out, ");
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("cli");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, targets_and_list);
  tcase_add_test(tc, help);
  tcase_add_test(tc, print_conv);
  tcase_add_test(tc, print_dw_pw);
  tcase_add_test(tc, print_other_ops);
  tcase_add_test(tc, bad_usage);
  tcase_add_test(tc, list_op_defaults);
  tcase_add_test(tc, compile_link_run);
  tcase_add_test(tc, bench_conv);
  tcase_add_test(tc, tune_dense);
  tcase_add_test(tc, tune_progress_in_a_pipe);
  tcase_add_test(tc, tune_auto);
  tcase_add_test(tc, generator);
  tcase_add_test(tc, generator_tune);
  tcase_add_test(tc, net_file);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
