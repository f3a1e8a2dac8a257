/* alloc.c — the one allocation hook of the runtime.
 *
 * Contract (runtime.h): tec_rt_alloc(n) returns a TEC_ALIGN-aligned block of at least n bytes
 * rounded up to TEC_ALIGN (vector code may read, never write, up to the rounded end), or NULL
 * with a message in tec_rt_last_error(). A user hook must honour the alignment; a block that
 * does not is returned to the hook and the allocation fails rather than corrupting memory.
 * tec_rt_alloc(0) returns a valid TEC_ALIGN-byte block, so "no elements" is never NULL. The
 * default allocator refuses a block larger than the machine's physical memory.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "tec/runtime.h"

/* The default pair keeps a few large freed blocks for reuse: generated code allocates its big
 * temporaries (packed panels, padded inputs) on every call, and handing them back to the
 * kernel each time costs page faults on every call. Each block carries its size in a
 * TEC_ALIGN-byte header in front of it; each cache slot keeps a copy of its block's size, so a
 * search never touches the blocks themselves. */
#define RT_CACHE_SLOTS 16
#define RT_CACHE_MIN ((size_t)64 << 10)   /* smaller blocks: malloc keeps them itself */
#define RT_CACHE_MAX ((size_t)256 << 20)  /* bytes kept at most */

static pthread_mutex_t rt_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_slot {
  void *p;  /* a cached block, or NULL */
  size_t n; /* rt_block_size(p), 0 for an empty slot */
} rt_cache[RT_CACHE_SLOTS];
static size_t rt_cache_bytes;
static pthread_once_t rt_cache_once = PTHREAD_ONCE_INIT;
static int rt_cache_registered; /* set once (rt_cache_register): 1 drained at exit, -1 no cache */

static size_t rt_block_size(void *p) { return *(size_t *)((char *)p - TEC_ALIGN); }

static void rt_cache_drain(void) {
  pthread_mutex_lock(&rt_cache_lock);
  for (int i = 0; i < RT_CACHE_SLOTS; i++) {
    if (rt_cache[i].p) free((char *)rt_cache[i].p - TEC_ALIGN);
    rt_cache[i] = (struct rt_slot){NULL, 0};
  }
  rt_cache_bytes = 0;
  pthread_mutex_unlock(&rt_cache_lock);
}

/* Blocks are kept only if the cache is drained at exit, so leak checkers see nothing. */
static void rt_cache_register(void) { rt_cache_registered = atexit(rt_cache_drain) == 0 ? 1 : -1; }

static void *rt_default_alloc(size_t bytes, void *user) {
  (void)user;
  if (bytes >= RT_CACHE_MIN) { /* a cached block of this size, or up to a quarter larger */
    struct rt_slot best = {NULL, 0};
    pthread_mutex_lock(&rt_cache_lock);
    int slot = -1;
    for (int i = 0; i < RT_CACHE_SLOTS; i++) { /* an empty slot has size 0 < bytes */
      size_t n = rt_cache[i].n;
      if (n >= bytes && n - bytes <= bytes / 4 && (slot < 0 || n < rt_cache[slot].n)) slot = i;
    }
    if (slot >= 0) {
      best = rt_cache[slot];
      rt_cache[slot] = (struct rt_slot){NULL, 0};
      rt_cache_bytes -= best.n;
    }
    pthread_mutex_unlock(&rt_cache_lock);
    if (best.p) return best.p;
  }
  if (bytes > SIZE_MAX - TEC_ALIGN) return NULL;
  /* more than the machine's memory (a schedule's storage_align can ask for that): refused
   * here, the same with or without overcommit or a sanitizer's allocator (which would abort) */
  if (bytes >= ((size_t)1 << 32)) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && bytes / (size_t)page >= (size_t)pages) return NULL;
  }
  char *base = aligned_alloc(TEC_ALIGN, bytes + TEC_ALIGN);
  if (!base) return NULL;
  *(size_t *)base = bytes;
  return base + TEC_ALIGN;
}

static void rt_default_free(void *p, void *user) {
  (void)user;
  size_t n = rt_block_size(p);
  if (n >= RT_CACHE_MIN && n <= RT_CACHE_MAX) {
    pthread_once(&rt_cache_once, rt_cache_register);
    pthread_mutex_lock(&rt_cache_lock);
    int slot = -1;
    for (int i = 0; i < RT_CACHE_SLOTS && slot < 0; i++)
      if (!rt_cache[i].n) slot = i;
    if (slot >= 0 && rt_cache_registered == 1 && rt_cache_bytes + n <= RT_CACHE_MAX) {
      rt_cache[slot] = (struct rt_slot){p, n};
      rt_cache_bytes += n;
      p = NULL;
    }
    pthread_mutex_unlock(&rt_cache_lock);
  }
  if (p) free((char *)p - TEC_ALIGN);
}

static tec_rt_alloc_fn rt_alloc_fn = rt_default_alloc;
static tec_rt_free_fn rt_free_fn = rt_default_free;
static void *rt_alloc_user;

void tec_rt_set_allocator(tec_rt_alloc_fn alloc, tec_rt_free_fn free_fn, void *user) {
  rt_cache_drain(); /* blocks of the old default pair go back to the system */
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
