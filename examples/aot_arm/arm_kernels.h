/* arm_kernels.h — two kernels scheduled for 128-bit NEON through the schedule API, shared by
 * the AOT example (aot_gen.c), the NEON instruction checks (tests/test_neon.c) and the
 * instruction counts (scripts/arm_insn.sh).
 *
 * GEMM micro-kernel, C[M, N] = A[M, K] * B[K, N] (row-major; a 1x1 convolution in NCHW is
 * this with A = weights [K_out, C_in], B = input [C_in, H*W]):
 *
 *     C tiled mr x nr ----+            for io, jo:                 (C)
 *     CL = cache_write(C) |              for k:                    (CL, compute_at jo)
 *                         |                for i in mr (unrolled):
 *                         +-->               CL[i, 0:nr] += A[i, k] * B[k, 0:nr]   vector
 *                                        C[io*mr + i, jo*nr + 0:nr] = CL[i, 0:nr]  vector
 *
 * Depthwise 3x3, stride 1, NHWC, input already zero-padded by one pixel:
 *     Out[h, w, c] = sum over ry, rx of In[h + ry, w + rx, c] * Wt[ry, rx, c]
 *   Out's w split by wt, c by cb (vectorized); the accumulator OL (cache_write) holds a
 *   wt x cb tile, computed at c.outer, with ry, rx outermost and w unrolled inside.
 */
#ifndef TEC_ARM_KERNELS_H
#define TEC_ARM_KERNELS_H

#include "tec/tec.h"

/* mr rows unrolled, nr columns vectorized (a multiple of the lanes). M % mr == 0 and
 * N % nr == 0 keep the hot loop free of guards. Arguments: A, B, C. */
lower_func *ak_gemm(tec_ctx *ctx, const char *name, int64_t M, int64_t N, int64_t K, int mr,
                    int nr);
/* In [H+2, W+2, C], Wt [3, 3, C], Out [H, W, C]; wt output columns unrolled, cb channels
 * vectorized (W % wt == 0, C % cb == 0). Arguments: In, Wt, Out. */
lower_func *ak_dwconv3x3(tec_ctx *ctx, const char *name, int64_t C, int64_t H, int64_t W,
                         int wt, int cb);

#endif
