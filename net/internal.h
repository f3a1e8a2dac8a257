/* internal.h — what net/'s files share (not installed). */
#ifndef TEC_NET_INTERNAL_H
#define TEC_NET_INTERNAL_H

#include "tec/net.h"

/* Writes the message (printf format) into n->err; returns -1. */
int net_fail(net *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* margins.c: every value's margin (unless options.no_margins), the layers' problems given
 * their values' layouts. */
void net_set_margins(net *n);
/* auto_decl.c: convolution p as plain te compute in its layouts (the arguments as template t's
 * declaration has them), for the auto-scheduler. 0, or -1 with an error in ctx. */
int net_auto_declare_conv(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                          topi_decl *out);
/* auto_wino.c: a 3x3 stride-1 convolution as Winograd F(m x m, 3 x 3) in plain te compute;
 * net_auto_winograd_m: m (4 or 2) when the rule takes Winograd for p, else 0 (direct) */
int64_t net_auto_winograd_m(const topi_conv2d *p);
int net_auto_declare_winograd(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                              topi_decl *out);
/* the fully connected layer likewise, its weights transposed once (constants) */
int net_auto_declare_dense(tec_ctx *ctx, const topi_template *t, const topi_dense *p,
                           topi_decl *out);
/* auto.c: layer i declared and scheduled by the auto-scheduler (options.autosched) for target,
 * in n's ctx: instant, or the best record of options.records. 0, or -1 with net_error(). */
int net_auto_instantiate(net *n, int i, const char *who, const tec_target *target, topi_op *op);
/* emit.c, for emit.c and qnet_emit.c: the generated C call `  if (F_raw(...)) return -1;` of
 * f, a layer's run function or its prepare half (run: the run function, whose user_args and
 * packed tensors name f's arguments): user argument k printed by user(o, k, u), packed tensor
 * k as pk<layer>_<k>. */
void net_emit_call(FILE *o, const lower_func *f, const lower_func *run, int layer,
                   void (*user)(FILE *o, int k, void *u), void *u);
/* The elements of a constant-shaped tensor (0 when a dimension is not constant). */
int64_t net_emit_numel(const te_tensor *t);

#endif
