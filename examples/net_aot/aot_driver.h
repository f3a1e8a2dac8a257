/* aot_driver.h — what driver.c (fp32), qdriver.c (int8) and gen.c share: the qemu-insn plugin's
 * marker and the seeded image (the generator net_aot_gen's expected.txt is computed on). */
#ifndef NET_AOT_DRIVER_H
#define NET_AOT_DRIVER_H

/* `hint #0x71`: an architectural NOP the plugin counts as a segment boundary (AArch64 only) */
#if defined(__aarch64__)
#define MARK() __asm__ __volatile__("hint #0x71" ::: "memory")
#else
#define MARK() ((void)0)
#endif

/* the per-layer hook: a marker after each layer */
static inline void mark(int layer) {
  (void)layer;
  MARK();
}

/* count floats in [-1, 1) from seed (the drivers' image: 7) */
static inline void seeded_image(float *x, long count, unsigned seed) {
  unsigned s = seed;
  for (long i = 0; i < count; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
}
#endif
