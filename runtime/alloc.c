/* alloc.c — the one allocation hook of the runtime.
 *
 * Contract (runtime.h): tec_rt_alloc(n) returns a TEC_ALIGN-aligned block of at least n bytes
 * rounded up to TEC_ALIGN (vector code may read, never write, up to the rounded end), or NULL
 * with a message in tec_rt_last_error(). A user hook must honour the alignment; a block that
 * does not is returned to the hook and the allocation fails rather than corrupting memory.
 * tec_rt_alloc(0) returns a valid TEC_ALIGN-byte block, so "no elements" is never NULL.
 */
#include <stdint.h>
#include <stdlib.h>
#include "tec/runtime.h"

static void *rt_default_alloc(size_t bytes, void *user) {
  (void)user;
  return aligned_alloc(TEC_ALIGN, bytes);
}

static void rt_default_free(void *p, void *user) {
  (void)user;
  free(p);
}

static tec_rt_alloc_fn rt_alloc_fn = rt_default_alloc;
static tec_rt_free_fn rt_free_fn = rt_default_free;
static void *rt_alloc_user;

void tec_rt_set_allocator(tec_rt_alloc_fn alloc, tec_rt_free_fn free_fn, void *user) {
  if (!alloc || !free_fn) { /* either missing: back to the default pair */
    rt_alloc_fn = rt_default_alloc;
    rt_free_fn = rt_default_free;
    rt_alloc_user = NULL;
    return;
  }
  rt_alloc_fn = alloc;
  rt_free_fn = free_fn;
  rt_alloc_user = user;
}

void *tec_rt_alloc(size_t bytes) {
  if (bytes > SIZE_MAX - (TEC_ALIGN - 1)) {
    tec_rt_set_error("tec_rt_alloc: %zu bytes is too large", bytes);
    return NULL;
  }
  size_t rounded = (bytes + (TEC_ALIGN - 1)) & ~(size_t)(TEC_ALIGN - 1);
  if (rounded == 0) rounded = TEC_ALIGN;
  void *p = rt_alloc_fn(rounded, rt_alloc_user);
  if (!p) {
    tec_rt_set_error("tec_rt_alloc: out of memory allocating %zu bytes", rounded);
    return NULL;
  }
  if ((uintptr_t)p % TEC_ALIGN != 0) {
    rt_free_fn(p, rt_alloc_user);
    tec_rt_set_error("tec_rt_alloc: the allocator hook returned %p, which is not %d-byte "
                     "aligned", p, TEC_ALIGN);
    return NULL;
  }
  return p;
}

void tec_rt_free(void *p) {
  if (p) rt_free_fn(p, rt_alloc_user);
}
