/* conv_roof.h — the roofline of each layer of bench/run conv (bench/conv_roof.c). */
#ifndef TEC_BENCH_CONV_ROOF_H
#define TEC_BENCH_CONV_ROOF_H

#include "conv.h"

/* What bounds one thread: the FMA peak (peak.c) and the read bandwidths (stream.c) from L2
 * (a 1 MiB buffer just read) and from L3 (the buffer pushed out of L2 first). */
typedef struct conv_roof {
  double peak;  /* GFLOP/s */
  double bw_l2; /* GB/s */
  double bw_l3; /* GB/s, at 16 MiB; per layer the probe runs again at the layer's bytes */
} conv_roof;

/* Measures the bandwidths (peak is given) and prints them on one line. 0, or -1 if memory is
 * short (printed). */
int conv_roof_measure(conv_roof *r, double peak);

/* Per layer of cs[0..ncase) that tec ran: its bytes (input + weights + output, fp32), FLOP per
 * byte, the three bounds (compute, all bytes from L2, all from L3), then the median over the
 * rounds of each implementation's time with 1 thread (times[(round * ncase + i) * NIMPL + m],
 * <= 0: did not run) as a share of the L3 roofline, max(compute, L3), and of the L2 one. The
 * compute bound uses the better of r->peak and the FMA peak measured again here. */
void conv_roof_print(const conv_roof *r, const conv_case *cs, int ncase, const double *times,
                     int rounds);

#endif
