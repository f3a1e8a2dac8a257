/* topi/problem_kv.h — the "key=value,..." reader under a problem's text (problem_text.c) and
 * the `tec` command's generator parameters (tools/driver_params.c). Not installed. */
#ifndef TEC_TOPI_PROBLEM_KV_H
#define TEC_TOPI_PROBLEM_KV_H

#include "tec/te.h"

#define TOPI_KV_MAX 32
typedef struct topi_kv {
  tec_ctx *ctx;
  const char *what, *sep; /* the messages' prefix ("--shape", ": "), or "" */
  int n;
  const char *key[TOPI_KV_MAX], *val[TOPI_KV_MAX];
  int used[TOPI_KV_MAX];
  const char *bad;    /* the first value topi_kv_int could not read */
  int nasked;
  const char *asked[TOPI_KV_MAX]; /* the keys asked for, for messages */
} topi_kv;

/* text ("key=value" pairs, commas or spaces between) into *p: 0, or -1 with an error in ctx
 * (not key=value, a key given twice, too many pairs). what prefixes every message
 * ("--shape: 'c16' is not key=value"; NULL: none). */
int topi_kv_parse(tec_ctx *ctx, const char *what, const char *text, topi_kv *p);
/* key's value (marked read), or dflt when not given; a value that is not an integer is
 * reported by topi_kv_finish */
int64_t topi_kv_int(const topi_kv *p, const char *key, int64_t dflt);
const char *topi_kv_str(const topi_kv *p, const char *key, const char *dflt);
/* -1 with an error if a value was bad or a key was never read (legal: the keys, for the
 * message; NULL: the keys asked for) */
int topi_kv_finish(const topi_kv *p, const char *legal);

#endif
