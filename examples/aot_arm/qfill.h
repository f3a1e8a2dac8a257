/* qfill.h — the seeded arguments of qlayers_gen's int8 layers, shared by the generator (which
 * runs each layer JIT-compiled on the host over them for the expected output) and the C it
 * generates for the target (qlayers.c): the same values on both sides, element type by DLPack
 * code and bits. int8: [-128, 127] (constants, the weights: [-127, 127]); int32 (bias):
 * [-1000, 1000]; f32 (per-channel scales): 0.002 * (1 + j / 7), j in 0..6. */
#ifndef QFILL_H
#define QFILL_H
#include <stdint.h>

static inline void ql_fill(void *p, int is_float, int bits, int is_const, long n, unsigned seed) {
  unsigned s = seed * 2654435761u + 12345u;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    unsigned r = s >> 8;
    if (is_float) ((float *)p)[i] = 0.002f * (1.0f + (float)(r % 7) / 7.0f);
    else if (bits == 32) ((int32_t *)p)[i] = (int32_t)(r % 2001) - 1000;
    else if (is_const) ((int8_t *)p)[i] = (int8_t)((int)(r % 255) - 127);
    else ((int8_t *)p)[i] = (int8_t)((int)(r % 256) - 128);
  }
}

/* FNV-1a over n bytes: the output's fingerprint */
static inline uint32_t ql_hash(const void *p, long n) {
  uint32_t h = 2166136261u;
  for (long i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 16777619u;
  return h;
}
#endif
