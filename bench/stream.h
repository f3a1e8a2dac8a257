/* stream.h — the memory side of a roofline: how fast one thread reads a buffer of a given size
 * from where a bench's call finds it (bench/stream.c). peak.h is the compute side. */
#ifndef TEC_BENCH_STREAM_H
#define TEC_BENCH_STREAM_H

#include <stddef.h>

/* GB/s (1e9 bytes/s) at which one thread reads `bytes` (rounded down to 512) with 512-bit (or
 * 256-bit) loads into 8 independent sums: the best of `tries` passes. cold = 0: the buffer
 * was just read (a buffer within L2 is read from L2); cold = 1: before every pass a separate
 * 8 MiB buffer is read, which pushes ours out of L2 into L3, as the round-robin of
 * `bench/run conv` does to every implementation's input. -1 if memory is short. */
double bench_read_bw(size_t bytes, int cold, int tries);

#endif
