/* peak.h — what a bench measures about the machine before it measures code: the CPU's model
 * name and the speed of a register-only FMA loop (the FMA peak a bench reports "% of"). */
#ifndef TEC_BENCH_PEAK_H
#define TEC_BENCH_PEAK_H

#include <stddef.h>

/* "AMD EPYC (family 26 model 2)" from /proc/cpuinfo into buf; "unknown CPU" if unreadable. */
void bench_cpu_model(char *buf, size_t size);

/* GFLOP/s (2 per FMA lane) of `threads` threads each running independent FMA chains held in
 * registers, all at once, for about `seconds`: the best of `tries` (on a machine shared with
 * other work, the best short try is the one that found the cores free). *isa gets the
 * instruction set used: "AVX-512" (16 chains of 16-lane vfmadd231ps), else "AVX2+FMA"
 * (16 chains of 8 lanes), else "scalar". Returns -1 if the threads cannot be started. */
double bench_fma_peak(int threads, double seconds, int tries, const char **isa);

#endif
