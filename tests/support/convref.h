/* convref.h — independent references for the convolution templates' tests: a naive conv2d
 * (groups, stride, padding, dilation, bias, residual, relu/relu6; double accumulation) on plain NCHW
 * arrays, NCHW <-> NCHW[x]c / NHWC copies written directly in C (not through tec), and a driver
 * that runs a topi template on a problem with seeded data and returns the max error against the
 * reference. */
#ifndef TEC_CONVREF_H
#define TEC_CONVREF_H

#include "tec/tec.h"

/* The output size: floor((h + 2 pad - (kh - 1) * dilation - 1) / stride) + 1. */
void cr_out_hw(const topi_conv2d *p, int64_t *oh, int64_t *ow);
/* out[n][co][oy][ox] (NCHW) = act(conv(x, w) + bias[co] + res[...]); bias/res may be NULL. */
void cr_conv2d(const topi_conv2d *p, const float *x, const float *w, const float *bias,
               const float *res, float *out);
/* Layouts with a margin m (topi.h): the buffer [..][h + 2m][w + 2m][..], the activation in
 * its interior; to_layout zeroes the ring, from_layout reads the interior. */
/* Number of floats of an (n, c, h, w) activation stored in layout l (its buffer). */
int64_t cr_numel(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w);
/* Plain NCHW -> layout l (zero channels past c), and back. */
void cr_to_layout(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src,
                  float *dst);
void cr_from_layout(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src,
                    float *dst);
/* A fresh tensor of layout l holding the NCHW array src (src NULL: NaN everywhere, to see what
 * is never written); free with tec_dl_free. */
DLTensor cr_make(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src);
/* The elements of the margin's ring of buf (layout l, an (n, c, h, w) activation) that are
 * not NaN: 0 when what cr_make(.., NULL) filled with NaN was left alone. */
int64_t cr_ring_written(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w,
                        const float *buf);
/* The buffer shape of layout l (margin included), into shape (4 or 5 dims); returns ndim. */
int cr_shape(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, int64_t *shape);

/* Runs template `name` on p with config (NULL: the space's default) for the host: declares,
 * schedules, lowers, builds, calls it twice (prepare, then run) on seeded data, and compares
 * with cr_conv2d. Also asserts that the padded channels of the output are zero and, when the
 * kernel is packed by the template, that the packing is in prepare. Returns the max error
 * (relative, tu_max_err); fails the test on any error. */
double cr_check_template(const char *name, const topi_conv2d *p, const void *config);

#endif
