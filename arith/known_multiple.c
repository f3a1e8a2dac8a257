/* known_multiple.c — arith_gcd, and arith_known_multiple: a positive number known to divide
 * an integer expression, from its constants alone (i*3840 + j*16 -> 16). Codegen aligns vector
 * accesses by it (codegen_mem.c); the stream_store pass checks that a store starts a whole
 * vector (lower/stream_store.c). */
#include "arith/arith.h"

#define KM_CAP ((int64_t)1 << 20) /* known multiples are kept to divisors of this */

int64_t arith_gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

int64_t arith_known_multiple(const ir_expr *e) {
  if (!e) return 1;
  switch (e->kind) {
  case IR_INT_IMM: {
    int64_t v = e->v.i < 0 ? -e->v.i : e->v.i;
    return v == 0 ? KM_CAP : v > KM_CAP ? arith_gcd(v, KM_CAP) : v;
  }
  case IR_ADD:
  case IR_SUB: return arith_gcd(arith_known_multiple(e->a), arith_known_multiple(e->b));
  case IR_MUL: {
    int64_t m = arith_known_multiple(e->a) * arith_known_multiple(e->b); /* each <= 2^20 */
    return m > KM_CAP ? arith_gcd(m, KM_CAP) : m; /* a divisor of m, so still sound */
  }
  case IR_BROADCAST: return arith_known_multiple(e->a);
  default: return 1;
  }
}
