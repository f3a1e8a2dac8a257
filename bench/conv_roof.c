/* conv_roof.c — how close each layer of bench/run conv is to its own limit, 1 thread. A layer
 * moves bytes = input + weights + output (fp32) and does FLOP = 2 x multiply-adds; its time
 * is at least
 *
 *   compute  FLOP / FMA peak                 (peak.c)
 *   L3       bytes / read bandwidth from L3  (stream.c, cold: how the round-robin of
 *                                             implementations leaves a layer's buffers)
 *   L2       bytes / read bandwidth from L2  (stream.c, warm 1 MiB: a network whose producer
 *                                             just wrote the input, if it fits)
 *
 * The FMA peak is measured again before the table and the better of the two taken, and a
 * layer's L3 bandwidth is the better of the startup's 16 MiB probe and one at its own size
 * (other tenants only make either slower: a loaded moment would put layers past 100 %).
 * "% roof" is max(compute, L3) / time: the bench's own protocol. Above 100 %: part of the
 * data was still in L2 (small layers: the other implementations' calls did not push it out).
 * Writes are counted as reads (their read-for-ownership; the write-back overlaps later work).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "common.h"
#include "conv_roof.h"
#include "peak.h"
#include "stream.h"

int conv_roof_measure(conv_roof *r, double peak) {
  r->peak = peak;
  r->bw_l2 = bench_read_bw(1u << 20, 0, 200);
  r->bw_l3 = bench_read_bw(16u << 20, 1, 20);
  if (r->bw_l2 <= 0 || r->bw_l3 <= 0) {
    fprintf(stderr, "conv: the bandwidth probe could not allocate its buffers\n");
    return -1;
  }
  printf("read bandwidth, 1 thread (stream.c, best pass): L2 %.1f GB/s (1 MiB, warm), "
         "L3 %.1f GB/s (16 MiB, pushed out of L2 first)\n", r->bw_l2, r->bw_l3);
  return 0;
}

static double layer_bytes(const conv_case *c) {
  const conv_layer *L = c->L;
  double in = (double)(L->c_in * L->h * L->w), out = (double)(L->c_out * c->oh * c->ow),
         w = (double)(L->c_out * (L->c_in / L->groups) * L->k * L->k);
  return 4.0 * (in + w + out);
}

void conv_roof_print(const conv_roof *r_in, const conv_case *cs, int ncase, const double *times,
                     int rounds) {
  /* the FMA peak again: a loaded moment at startup would put compute-bound layers past 100 % */
  conv_roof rr = *r_in, *r = &rr;
  const char *isa = "";
  double again = bench_fma_peak(1, 0.02, 25, &isa);
  if (again > rr.peak) rr.peak = again;
  printf("\nroofline, 1 thread (peak %.1f GFLOP/s: the better of startup's and one measured "
         "now; L2 %.1f GB/s; L3 probed again at each layer's bytes; times: medians over %d "
         "round%s)\n", r->peak, r->bw_l2, rounds,
         rounds > 1 ? "s" : "");
  printf("%-9s %7s %6s %6s  %8s %8s %8s  %-7s  %8s %6s %6s  %8s %6s\n", "layer", "MB", "FLOP/B",
         "L3GB/s", "comp ms", "L2 ms", "L3 ms", "bound", "tec ms", "%roof", "%L2rf", "dnnl ms",
         "%roof");
  double *v = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof *v);
  if (!v) return;
  for (int i = 0; i < ncase; i++) {
    const conv_case *c = &cs[i];
    double bytes = layer_bytes(c), bw3 = bench_read_bw((size_t)bytes, 1, 15);
    if (bw3 < r->bw_l3) bw3 = r->bw_l3; /* the better, as for the peak: load only slows it */
    double tc = c->flops / r->peak * 1e-9, t2 = bytes / r->bw_l2 * 1e-9, t3 = bytes / bw3 * 1e-9;
    double b3 = fmax(tc, t3), b2 = fmax(tc, t2), med[NIMPL];
    for (int m = 0; m < NIMPL; m++) {
      int n = 0;
      for (int k = 0; k < rounds; k++)
        if (times[((size_t)k * ncase + i) * NIMPL + m] > 0)
          v[n++] = times[((size_t)k * ncase + i) * NIMPL + m];
      med[m] = n ? bench_median(v, n) : -1;
    }
    printf("%-9s %7.2f %6.1f %6.1f  %8.4f %8.4f %8.4f  %-7s", c->L->name, bytes * 1e-6,
           c->flops / bytes, bw3, tc * 1e3, t2 * 1e3, t3 * 1e3, tc >= t3 ? "compute" : "L3");
    med[IMPL_TEC] > 0 ? printf("  %8.4f %5.0f%% %5.0f%%", med[IMPL_TEC] * 1e3,
                               100 * b3 / med[IMPL_TEC], 100 * b2 / med[IMPL_TEC])
                      : printf("  %8s %6s %6s", "-", "-", "-");
    med[IMPL_DNNL] > 0 ? printf("  %8.4f %5.0f%%\n", med[IMPL_DNNL] * 1e3, 100 * b3 / med[IMPL_DNNL])
                       : printf("  %8s %6s\n", "-", "-");
  }
  free(v);
}
