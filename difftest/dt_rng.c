/* dt_rng.c — the tester's random numbers: splitmix64, seeded per (seed, case) so any case can
 * be replayed alone and runs do not depend on the C library's rand(). */
#include "difftest/dt_internal.h"

dt_rng dt_rng_make(uint64_t seed, uint64_t stream) {
  dt_rng r = {seed * 0x9E3779B97F4A7C15ull ^ (stream + 0x632BE59BD9B4E019ull) * 0xD1B54A32D192ED03ull};
  dt_rng_next(&r);
  return r;
}

uint64_t dt_rng_next(dt_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t dt_rng_int(dt_rng *r, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + (int64_t)(dt_rng_next(r) % (uint64_t)(hi - lo + 1));
}

int dt_rng_chance(dt_rng *r, int percent) { return (int)(dt_rng_next(r) % 100) < percent; }
