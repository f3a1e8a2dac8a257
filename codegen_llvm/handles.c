/* handles.c — the tec_module handles given to users: recycled slots with generations.
 *
 * A handle must say "the module was freed" after tec_module_free, however many modules were
 * built and freed since, yet building and freeing modules over and over must hold O(1)
 * memory. So a handle is not the module's address but a token: a slot index and the slot's
 * generation at the build,
 *     token = (generation << CG_INDEX_BITS | index) + 1      (never 0, never an address)
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
#include "codegen_llvm/codegen.h"
#include "ir/internal.h"

#define CG_CHUNK_BITS 6
#define CG_CHUNK (1u << CG_CHUNK_BITS)
#define CG_INDEX_BITS 18 /* 4096 chunks of 64 slots */
#define CG_NCHUNKS (1u << (CG_INDEX_BITS - CG_CHUNK_BITS))
#define CG_MAX_SLOTS ((1u << CG_INDEX_BITS) - 1) /* so that the token + 1 cannot wrap to 0 */
#define CG_GEN_MASK (UINTPTR_MAX >> CG_INDEX_BITS)

typedef struct cg_slot {
  tec_ctx *owner;  /* the ctx whose module it holds or held; NULL: any ctx may take it */
  void *obj;       /* the live module, NULL when free */
  uintptr_t gen;   /* bumped at each release */
} cg_slot;

static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_slot cg_chunk0[CG_CHUNK];   /* the first 64 slots allocate nothing */
static cg_slot *cg_chunks[CG_NCHUNKS] = {cg_chunk0}; /* written under the lock, read with acquire */
static unsigned cg_nslots;             /* slots made so far (under the lock) */

static cg_slot *cg_slot_at(unsigned i) {
  cg_slot *c = __atomic_load_n(&cg_chunks[i >> CG_CHUNK_BITS], __ATOMIC_ACQUIRE);
  return c ? &c[i & (CG_CHUNK - 1)] : NULL;
}

/* Gives a ctx's free slots to every ctx (its free hook, after its modules' release). */
static void cg_handles_disown(void *arg) {
  pthread_mutex_lock(&cg_lock);
  for (unsigned i = 0; i < cg_nslots; i++) {
    cg_slot *s = cg_slot_at(i);
    if (s->owner != arg) continue;
    if (s->obj) { /* (its module's own hook runs first: not expected) */
      __atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
      __atomic_store_n(&s->obj, NULL, __ATOMIC_RELEASE);
    }
    s->owner = NULL;
  }
  pthread_mutex_unlock(&cg_lock);
}

/* A slot for obj (its own free one, else an unowned one, else a new one): its token, or NULL
 * with an out-of-memory error. */
tec_module *cg_handle_new(tec_ctx *ctx, void *obj) {
  pthread_mutex_lock(&cg_lock);
  unsigned pick = UINT32_MAX, any = UINT32_MAX;
  int owns = 0;
  for (unsigned i = 0; i < cg_nslots; i++) {
    cg_slot *s = cg_slot_at(i);
    owns |= s->owner == ctx;
    if (s->obj) continue;
    if (s->owner == ctx && pick == UINT32_MAX) pick = i;
    if (!s->owner && any == UINT32_MAX) any = i;
  }
  if (pick == UINT32_MAX) pick = any;
  if (pick == UINT32_MAX && cg_nslots < CG_MAX_SLOTS) {
    unsigned c = cg_nslots >> CG_CHUNK_BITS;
    if (!cg_chunks[c]) {
      cg_slot *chunk = calloc(CG_CHUNK, sizeof *chunk); /* kept for the process */
      if (chunk) __atomic_store_n(&cg_chunks[c], chunk, __ATOMIC_RELEASE);
    }
    if (cg_chunks[c]) pick = cg_nslots++;
  }
  /* the first slot a ctx owns: its free hook gives them back when it goes */
  if (pick != UINT32_MAX && !owns && tec_ctx_on_free(ctx, cg_handles_disown, ctx) != 0)
    pick = UINT32_MAX;
  tec_module *token = NULL;
  if (pick != UINT32_MAX) {
    cg_slot *s = cg_slot_at(pick);
    s->owner = ctx;
    __atomic_store_n(&s->obj, obj, __ATOMIC_RELEASE);
    token = (tec_module *)(((s->gen & CG_GEN_MASK) << CG_INDEX_BITS | pick) + 1);
  }
  pthread_mutex_unlock(&cg_lock);
  if (!token)
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_build: out of memory (a module handle)");
  return token;
}

/* The slot a token names, and whether its generation still matches. NULL: never a token. */
static cg_slot *cg_decode(const tec_module *h, int *live) {
  uintptr_t t = (uintptr_t)h - 1;
  unsigned i = (unsigned)(t & ((1u << CG_INDEX_BITS) - 1));
  cg_slot *s = h ? cg_slot_at(i) : NULL;
  if (!s) return NULL;
  *live = __atomic_load_n(&s->obj, __ATOMIC_ACQUIRE) &&
          (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) & CG_GEN_MASK) == t >> CG_INDEX_BITS;
  return s;
}

void *cg_handle_get(const tec_module *h, tec_ctx **ctx) {
  int live = 0;
  cg_slot *s = cg_decode(h, &live);
  *ctx = s ? s->owner : NULL;
  return s && live ? s->obj : NULL;
}

void cg_handle_release(const tec_module *h) {
  pthread_mutex_lock(&cg_lock);
  int live = 0;
  cg_slot *s = cg_decode(h, &live);
  if (s && live) {
    __atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&s->obj, NULL, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&cg_lock);
}
