/* tuned.h — what the tuned mode's files share (space.c, tuned.c, hash.c): the generated space
 * with the stage and the as_tuned field of each knob, and the program's structural hash. */
#ifndef TEC_AUTOSCHED_TUNED_H
#define TEC_AUTOSCHED_TUNED_H

#include "autosched/internal.h"
#include "tec/tune.h"

typedef struct as_space {
  as_prog *p;
  tune_space *sp;
  int nknobs, cap; /* knobs defined (one int64_t of the config each) */
  int nmap;        /* entries of map: a knob shared by a class of stages has one per stage */
  int share;       /* 1: stages of one class share their knobs (a space past 2^62 otherwise) */
  int dropped;     /* knobs left out (the rules' choice kept): the space would pass 2^62 */
  struct as_knob_map {
    int stage;    /* index into p->st */
    size_t field; /* offsetof(as_tuned, ...) */
    int knob;     /* the knob (config slot) whose value it takes */
  } *map;
} as_space;

/* space.c: the space of p's program (p prepared; p->st left with the instant choices), in
 * p->ctx. 0 or -1 with an error. */
int as_space_build(as_prog *p, tune_space *sp, as_space *S);
/* config index's values per stage (ctx's arena). 0 or -1 with an error. */
int as_space_values(const as_space *S, tec_ctx *ctx, int64_t index, as_tuned **out);
void as_tuned_unset(as_tuned *t);

/* clone.c: the program of outs[0..nout) copied into dst (node for node, tensors, reducers);
 * copy[o] the copies of the outputs. 0 or -1 (out of memory). */
int as_clone_program(tec_ctx *dst, int nout, te_tensor *const *outs, te_tensor **copy);

/* hash.c: the structural hash of the program (every tensor's name, kind, dtype, shape, axes'
 * ranges, body), the estimates and the thread count the rules plan for */
uint64_t as_program_hash(const as_prog *p);

#endif
