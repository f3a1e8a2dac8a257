/* driver.h — the `tec` command's verbs for your own operators (a generator, as in Halide).
 *
 * A generator file declares and schedules operators and registers each with TEC_GENERATOR;
 * linked with libtec_driver.a (which holds main) and libtec, it becomes a command with the
 * same verbs as `tec` (print, compile, bench, tune, list, targets), its operators beside the
 * topi templates (--auto: the generator's program scheduled by the auto-scheduler instead):
 *
 *   static lower_func *scale(tec_ctx *ctx, const char *name, const tec_gen_params *p) {
 *     int64_t n = tec_gen_int(p, "n", 1024);   // --shape n=4096
 *     ... te_placeholder / te_compute / sch_* ...
 *     return tec_lower(s, name, 2, (te_tensor *[]){X, Y});
 *   }
 *   TEC_GENERATOR(scale, "y = 2 x, split and vectorized", scale)
 *
 *   cc my_ops.c -ltec_driver -ltec -o my_ops       (or tec::driver + tec::tec in CMake)
 *   ./my_ops compile scale --shape n=4096 --target rasp4b -o scale.o     (+ scale.h)
 *
 * The generator reads its parameters from --shape "key=value,..." (tec_gen_int/tec_gen_str;
 * a key the generator never reads is an error after it returns, so typos are caught) and the
 * target from tec_gen_target. It returns NULL with an error in the ctx to refuse.
 */
#ifndef TEC_DRIVER_H
#define TEC_DRIVER_H

#include "tec/tec.h"

typedef struct tec_gen_params tec_gen_params;

/* The integer parameter key, or dflt if --shape does not give it; a value that is not an
 * integer is recorded as an error (reported after the generator returns) and dflt returned. */
int64_t tec_gen_int(const tec_gen_params *p, const char *key, int64_t dflt);
/* The text of parameter key, or dflt. */
const char *tec_gen_str(const tec_gen_params *p, const char *key, const char *dflt);
/* A tuning knob (AutoTVM's cfg.define_knob): one of nvals integer values, dflt among them.
 * Returns the value to build with: dflt, or the value --config "name=v,..." gives it, or under
 * `OP tune` the candidate's. The knobs a generator declares form its space: `my_ops tune OP
 * --records F` searches it (records keyed by OP, --shape and the hash of the te program, so an
 * edited compute never takes an old record) and prints the best as a --config. A generator
 * must declare the same knobs in the same order on every run; a misuse (a duplicate name, a
 * default not among the values) is reported after it returns. */
int64_t tec_gen_knob(const tec_gen_params *p, const char *name, int nvals, const int64_t *vals, int64_t dflt);
/* The operator's floating-point operations per call (e.g. 2 m n k for a matrix multiply), so
 * bench and tune report GFLOP/s; without it they report times only. */
void tec_gen_flops(const tec_gen_params *p, double flops);
/* The --target string (NULL: the host). */
const char *tec_gen_target(const tec_gen_params *p);

typedef lower_func *(*tec_gen_fn)(tec_ctx *ctx, const char *name, const tec_gen_params *p);

typedef struct tec_generator {
  const char *name; /* the OP of the verbs, a C identifier */
  const char *doc;  /* one line, for `list` */
  tec_gen_fn fn;
  struct tec_generator *next;
} tec_generator;

/* Adds g to the driver's list (TEC_GENERATOR does it before main). */
void tec_generator_register(tec_generator *g);

#define TEC_GENERATOR(ident, doc_, fn_)                                                    \
  static tec_generator tec_generator_##ident = {#ident, doc_, fn_, 0};                    \
  __attribute__((constructor)) static void tec_generator_reg_##ident(void) {               \
    tec_generator_register(&tec_generator_##ident);                                       \
  }

/* The verbs: tec_driver_main(argc, argv) with argv[1] the verb. Returns the exit status: 0,
 * 1 when a build, file or run fails, 2 for bad usage (one line on stderr). */
int tec_driver_main(int argc, char **argv);

#endif
