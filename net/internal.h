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

#endif
