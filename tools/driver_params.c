/* driver_params.c — a generator's --shape parameters (tec_gen_int / tec_gen_str, unread keys
 * refused afterwards) over topi's key=value reader (topi/problem_kv.c). A topi template's
 * --shape is a problem's text: topi_problem_parse (topi/problem_text.c). */
#include <string.h>
#include "tools/driver_internal.h"

int drv_params_parse(tec_ctx *ctx, const char *text, tec_gen_params *p) {
  memset(p, 0, sizeof *p); /* the target and the knobs' state: none yet */
  return topi_kv_parse(ctx, "--shape", text, &p->kv);
}

int64_t tec_gen_int(const tec_gen_params *p, const char *key, int64_t dflt) {
  return topi_kv_int(&p->kv, key, dflt);
}

const char *tec_gen_str(const tec_gen_params *p, const char *key, const char *dflt) {
  return topi_kv_str(&p->kv, key, dflt);
}

const char *tec_gen_target(const tec_gen_params *p) { return p->target; }

int drv_params_finish(const tec_gen_params *p, const char *legal) { return topi_kv_finish(&p->kv, legal); }
