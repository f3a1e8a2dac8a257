/* gen.c — ahead of time: lowers the depthwise spatial-pack operator (32 channels, 14x14,
 * 3x3, pad 1) and writes its object file and header for a target. The constant kernel's
 * packing becomes dw_prepare, the per-call work dw_run.
 *   usage: aot_prepare_gen TARGET OUT.o OUT.h      (TARGET: "llvm" for this machine) */
#include <stdio.h>
#include "tec/tec.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s TARGET OUT.o OUT.h\n", argv[0]);
    return 2;
  }
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d p = {.n = 1, .c_in = 32, .h = 14, .w = 14, .c_out = 32, .kh = 3, .kw = 3,
                   .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 32,
                   .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
  int bits = tec_target_vector_bits(ctx, argv[1]); /* 512 with AVX-512, 128 on NEON */
  topi_dw_spatial_pack_config cfg = {.vc = bits >= 128 ? bits / 32 : 4, .tile_h = 2, .tile_w = 4,
                                     .parallel = 0};
  topi_decl d;
  topi_op op;
  lower_func *f = NULL;
  int rc = topi_declare(ctx, "dw_spatial_pack", &p, &d) ||
           topi_schedule(&d, &cfg, tec_target_parse(ctx, argv[1]), &op);
  if (rc == 0) f = tec_lower(op.sched, "dw", op.nargs, op.args);
  if (!f || tec_emit(ctx, 1, &f, argv[1], TEC_EMIT_OBJECT, argv[2]) ||
      tec_emit(ctx, 1, &f, argv[1], TEC_EMIT_HEADER, argv[3])) {
    fprintf(stderr, "aot_prepare_gen: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  printf("aot_prepare_gen: wrote %s and %s (%s and %s)\n", argv[2], argv[3], f->prepare->name,
         f->name);
  tec_ctx_free(ctx);
  return 0;
}
