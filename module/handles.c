/* handles.c — the tec_module handles given to users: recycled slots with generations.
 *
 * A handle must say "the module was freed" after tec_module_free, however many modules were
 * built and freed since, yet building and freeing modules over and over must hold O(1)
 * memory. So a handle is not the module's address but a token: a slot index and the slot's
 * generation at the build,
 *     token = (generation << MOD_INDEX_BITS | index) + 1      (never 0, never an address)
 * in one process-wide table of slots. Freeing a module bumps its slot's generation and puts
 * the slot back on the free list, so the slot serves a later module while every older token
 * of it no longer matches. The generation has 64 - 18 = 46 bits on a 64-bit host (a stale
 * token could alias a new module after 2^46 reuses of one slot: never in practice; 14 bits on
 * a 32-bit host).
 *
 * A slot belongs to the ctx that built its module for as long as that ctx lives (a stale
 * token's error goes to its own ctx, never to another's): a free slot is reused only by its
 * owner, and the ctx's free hook gives its slots to the others when it goes. The table grows
 * with the most modules alive at once (chunks of 64 slots, the first static, the others
 * malloc'd and kept for the process; never moved: lookups read them without the lock); a slot
 * is 24 bytes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "module/module.h"
#include "ir/internal.h"

#define MOD_CHUNK_BITS 6
#define MOD_CHUNK (1u << MOD_CHUNK_BITS)
#define MOD_INDEX_BITS 18 /* 4096 chunks of 64 slots */
#define MOD_NCHUNKS (1u << (MOD_INDEX_BITS - MOD_CHUNK_BITS))
#define MOD_MAX_SLOTS ((1u << MOD_INDEX_BITS) - 1) /* so that the token + 1 cannot wrap to 0 */
#define MOD_GEN_MASK (UINTPTR_MAX >> MOD_INDEX_BITS)

typedef struct mod_slot {
  tec_ctx *owner;  /* the ctx whose module it holds or held; NULL: any ctx may take it */
  void *obj;       /* the live module, NULL when free */
  uintptr_t gen;   /* bumped at each release */
} mod_slot;

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static mod_slot mod_chunk0[MOD_CHUNK];   /* the first 64 slots allocate nothing */
static mod_slot *mod_chunks[MOD_NCHUNKS] = {mod_chunk0}; /* written under the lock, read with acquire */
static unsigned mod_nslots;             /* slots made so far (under the lock) */

static mod_slot *mod_slot_at(unsigned i) {
  mod_slot *c = __atomic_load_n(&mod_chunks[i >> MOD_CHUNK_BITS], __ATOMIC_ACQUIRE);
  return c ? &c[i & (MOD_CHUNK - 1)] : NULL;
}

/* Gives a ctx's free slots to every ctx (its free hook, after its modules' release). */
static void mod_handles_disown(void *arg) {
  pthread_mutex_lock(&mod_lock);
  for (unsigned i = 0; i < mod_nslots; i++) {
    mod_slot *s = mod_slot_at(i);
    if (s->owner != arg) continue;
    if (s->obj) { /* (its module's own hook runs first: not expected) */
      __atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
      __atomic_store_n(&s->obj, NULL, __ATOMIC_RELEASE);
    }
    s->owner = NULL;
  }
  pthread_mutex_unlock(&mod_lock);
}

/* A slot for obj (its own free one, else an unowned one, else a new one): its token, or NULL
 * with an out-of-memory error. */
tec_module *mod_handle_new(tec_ctx *ctx, void *obj) {
  pthread_mutex_lock(&mod_lock);
  unsigned pick = UINT32_MAX, any = UINT32_MAX;
  int owns = 0;
  for (unsigned i = 0; i < mod_nslots; i++) {
    mod_slot *s = mod_slot_at(i);
    owns |= s->owner == ctx;
    if (s->obj) continue;
    if (s->owner == ctx && pick == UINT32_MAX) pick = i;
    if (!s->owner && any == UINT32_MAX) any = i;
  }
  if (pick == UINT32_MAX) pick = any;
  if (pick == UINT32_MAX && mod_nslots < MOD_MAX_SLOTS) {
    unsigned c = mod_nslots >> MOD_CHUNK_BITS;
    if (!mod_chunks[c]) {
      mod_slot *chunk = calloc(MOD_CHUNK, sizeof *chunk); /* kept for the process */
      if (chunk) __atomic_store_n(&mod_chunks[c], chunk, __ATOMIC_RELEASE);
    }
    if (mod_chunks[c]) pick = mod_nslots++;
  }
  /* the first slot a ctx owns: its free hook gives them back when it goes */
  if (pick != UINT32_MAX && !owns && tec_ctx_on_free(ctx, mod_handles_disown, ctx) != 0)
    pick = UINT32_MAX;
  tec_module *token = NULL;
  if (pick != UINT32_MAX) {
    mod_slot *s = mod_slot_at(pick);
    s->owner = ctx;
    __atomic_store_n(&s->obj, obj, __ATOMIC_RELEASE);
    token = (tec_module *)(((s->gen & MOD_GEN_MASK) << MOD_INDEX_BITS | pick) + 1);
  }
  pthread_mutex_unlock(&mod_lock);
  if (!token)
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory (a module handle)");
  return token;
}

/* The slot a token names, and whether its generation still matches. NULL: never a token. */
static mod_slot *mod_decode(const tec_module *h, int *live) {
  uintptr_t t = (uintptr_t)h - 1;
  unsigned i = (unsigned)(t & ((1u << MOD_INDEX_BITS) - 1));
  mod_slot *s = h ? mod_slot_at(i) : NULL;
  if (!s) return NULL;
  *live = __atomic_load_n(&s->obj, __ATOMIC_ACQUIRE) &&
          (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) & MOD_GEN_MASK) == t >> MOD_INDEX_BITS;
  return s;
}

void *mod_handle_get(const tec_module *h, tec_ctx **ctx) {
  int live = 0;
  mod_slot *s = mod_decode(h, &live);
  *ctx = s ? s->owner : NULL;
  return s && live ? s->obj : NULL;
}

void mod_handle_release(const tec_module *h) {
  pthread_mutex_lock(&mod_lock);
  int live = 0;
  mod_slot *s = mod_decode(h, &live);
  if (s && live) {
    __atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&s->obj, NULL, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&mod_lock);
}
