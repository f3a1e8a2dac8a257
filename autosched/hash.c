/* hash.c — the structural hash that keys the tuned mode's records: FNV-1a over every tensor of
 * the program in topological order (its name, op kind, dtype, constness, shape, the ranges of
 * its data and reduce axes, and its body: node kinds, types, constants bit for bit, variable
 * names, the tensors read), then the estimates of its symbolic sizes and the thread count the
 * rules plan for. Editing a constant, an index, a shape or a dtype in the compute changes it,
 * so a record tuned for the old program is never applied to the new one; renaming nothing
 * and re-declaring the same program gives the same hash in any process. */
#include <string.h>
#include "autosched/tuned.h"

static void h_i64(uint64_t *h, int64_t v) { te_hash_bytes(h, &v, sizeof v); }

uint64_t as_program_hash(const as_prog *p) {
  uint64_t h = 0xcbf29ce484222325ull;
  te_hash_str(&h, "tec-autosched-1");
  te_tensor **ts = tec_ctx_alloc(p->ctx, (size_t)(p->n ? p->n : 1) * sizeof *ts);
  if (!ts) return 0; /* out of memory: a hash no record has */
  for (int i = 0; i < p->n; i++) ts[i] = p->st[i].t;
  te_hash_tensors(&h, p->n, ts, p->nout, p->outs);
  int ne = p->opt ? p->opt->nestimates : 0;
  for (int k = 0; k < ne; k++) {
    te_hash_str(&h, p->opt->estimates[k].name);
    h_i64(&h, p->opt->estimates[k].value);
  }
  h_i64(&h, p->threads);
  return h;
}
