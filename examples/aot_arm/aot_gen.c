/* aot_gen.c — ahead of time for an ARM board: writes the NEON GEMM micro-kernel and the
 * depthwise 3x3 of arm_kernels.c as an object file, assembly and a C header for a target.
 *
 *   aot_gen TARGET OUTDIR            kernels.o kernels.s kernels.h (gemm: 64x96x128,
 *                                    dw: 32 channels of 14x16) for the driver (driver.c)
 * (The qemu-insn layers as topi templates: layers_gen.c.)
 *
 * TARGET is any tec target string: "rasp4b", "armv7-neon", "llvm -mtriple=... -mattr=...".
 * The tile sizes follow the target: lanes = tec_target_vector_bits / 32; AArch64 has 32
 * vector registers (a 4 x 4-vector GEMM tile), ARMv7 16 (4 x 2 vectors).
 */
#include <stdio.h>
#include <string.h>
#include "arm_kernels.h"

static int emit_all(tec_ctx *ctx, int n, lower_func **fs, const tec_target *target, const char *dir,
                    const char *base) {
  static const struct { tec_emit_kind kind; const char *ext; } out[] = {
      {TEC_EMIT_OBJECT, "o"}, {TEC_EMIT_ASM, "s"}, {TEC_EMIT_HEADER, "h"}};
  for (int i = 0; i < 3; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, base, out[i].ext);
    if (tec_emit_for(ctx, n, fs, target, out[i].kind, path) != 0) return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: aot_gen TARGET OUTDIR\n");
    return 2;
  }
  const char *target = argv[1], *dir = argv[2];
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *tg = tec_target_parse(ctx, target); /* once */
  if (!tg) {
    fprintf(stderr, "aot_gen: %s\n", tec_ctx_error(ctx));
    return 1;
  }
  int bits = tg->vector_bits, lanes = bits / 32 > 0 ? bits / 32 : 1;
  int wide = tg->arch == TEC_ARCH_AARCH64; /* 32 vector registers */
  int nr = lanes * (wide ? 4 : 2), cb = lanes * (wide ? 2 : 1);
  lower_func *fs[2];
  int n = 2;
  fs[0] = ak_gemm(ctx, "gemm", 64, 96, 128, 4, nr);
  fs[1] = ak_dwconv3x3(ctx, "dw", 32, 14, 16, 4, cb);
  for (int i = 0; i < n; i++)
    if (!fs[i]) {
      fprintf(stderr, "aot_gen: %s\n", tec_ctx_error(ctx));
      return 1;
    }
  if (emit_all(ctx, n, fs, tg, dir, "kernels") != 0) {
    fprintf(stderr, "aot_gen: %s\n", tec_ctx_error(ctx));
    return 1;
  }
  printf("aot_gen: %s (%d-bit vectors, gemm tile 4x%d, depthwise 4x%d) -> %s\n", tg->str, bits,
         nr, cb, dir);
  tec_ctx_free(ctx);
  return 0;
}
