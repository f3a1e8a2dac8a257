/* driver_net.c — `tec net FILE`: a network of topi templates read from text (net_parse,
 * include/tec/net.h), then run and timed layer by layer (net_report), listed as one `tec tune`
 * command per distinct layer workload (--tasks: the records they write are what --records
 * applies), or emitted ahead of time for a target (-o DIR: net_emit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tec/net.h"
#include "tools/driver_internal.h"

static int net_fail_msg(int status, const char *msg) {
  fprintf(stderr, "tec net: %s\n", msg);
  return status;
}

/* one line per distinct workload: the command that tunes it */
static int print_tasks(const net *n) {
  tec_ctx *ctx = tec_ctx_new();
  if (!ctx) return net_fail_msg(1, "out of memory");
  const char *seen[NET_MAX_LAYERS];
  int nseen = 0;
  for (int i = 0; i < n->nlayers; i++) {
    char shape[512];
    const net_layer *L = &n->layers[i];
    const char *wl = tec_ctx_printf(ctx, "%s %s", L->tmpl, net_layer_shape(n, i, shape, sizeof shape));
    int k = 0;
    while (k < nseen && strcmp(seen[k], wl)) k++;
    if (k < nseen || !wl) continue;
    seen[nseen++] = wl;
    printf("tec tune %s --shape %s --records RECORDS   # %s\n", L->tmpl, shape, L->name);
  }
  tec_ctx_free(ctx);
  return 0;
}

int drv_net(const char *file, int repeat, const char *records, int tasks, const char *target, const char *out) {
  if (!file) return net_fail_msg(2, "needs FILE, the network as text (tec net --help)");
  if (tasks && (out || records)) return net_fail_msg(2, "--tasks prints the tune commands; it takes no -o or --records");
  if (!out && target) return net_fail_msg(2, "--target goes with -o DIR (the network runs here otherwise)");
  if (out && !target) return net_fail_msg(2, "-o DIR needs --target (\"llvm\" for this machine; tec targets)");
  long size = 0;
  char *text = NULL;
  FILE *f = fopen(file, "rb");
  if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (text = malloc((size_t)size + 1)) && fread(text, 1, (size_t)size, f) == (size_t)size)
    text[size] = 0;
  else
    free(text), text = NULL;
  if (f) fclose(f);
  if (!text) {
    char m[600];
    snprintf(m, sizeof m, "cannot read %s", file);
    return net_fail_msg(2, m);
  }
  net_options o = {.seed = 1, .records = records};
  if (out) { /* the target's float lanes as the channel block */
    tec_ctx *c = tec_ctx_new();
    int bits = c ? tec_target_vector_bits(c, target) : -1;
    if (bits < 0) {
      int rc = net_fail_msg(2, c ? tec_ctx_error(c) : "out of memory");
      tec_ctx_free(c), free(text);
      return rc;
    }
    tec_ctx_free(c);
    o.block = bits >= 128 ? bits / 32 : 4;
  }
  char err[600];
  net *n = net_parse(&o, text, err, sizeof err);
  free(text);
  if (!n) return net_fail_msg(2, err);
  int status = 0;
  if (tasks) {
    status = print_tasks(n);
  } else if (out) {
    int64_t np = 0;
    if (net_emit(n, target, out, "tec net", file, &np) != 0) status = net_fail_msg(1, net_error(n));
    else printf("%s/net_layers.o, .h, net_model.c, .h, params.bin (%lld floats): %d layers for %s\n", out,
                (long long)np, n->nlayers, target);
  } else if (net_report(n, repeat ? repeat : 20, stdout) != 0) {
    status = net_fail_msg(1, net_error(n));
  }
  net_free(n);
  return status;
}
