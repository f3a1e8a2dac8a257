/* space.h — the knob space: the one type a template declares its knobs in, a user or an
 * auto-scheduler builds a space of, and the tuner enumerates (AutoTVM's ConfigSpace).
 *
 *   knob     a name and its legal values, each an "entity" of one or more int64s: an int (a
 *            field of a config struct, or a categorical choice with labels), a split's factors,
 *            a permutation, per-axis annotations. Each knob has a default value.
 *   config   one value per knob, numbered in mixed radix: knob 0 fastest,
 *              index = v0 + n0 * (v1 + n1 * (v2 + ...))   (vk: knob k's value number, nk: its count)
 *            The numbering is the records' (tune.h): an index written by a tuner names the
 *            same config as long as the knobs and their values are the same.
 *   struct   a space may carry a config struct (a template's topi_*_config): its int knobs
 *            bound to int64_t fields by offset (tune_define_field), its default config in
 *            default_config; tune_space_config decodes an index into the struct and
 *            tune_space_index encodes one back.
 *   rule     an optional rule across knobs (AutoTVM's multi_filter) on the config struct: the
 *            configs it refuses keep their index but are not in the space; the tuners skip them.
 *            A config written by hand may still use any legal knob values (tune_space_check
 *            does not apply the rule).
 *
 *   tune_space sp;                       // a template's: topi_space_of fills one
 *   tune_space_init(ctx, &sp, "mine", sizeof(my_config));
 *   tune_define_field(&sp, "tile", "columns per tile", offsetof(my_config, tile), 3,
 *                     (int64_t[]){4, 8, 16}, 8);
 *   int64_t i = tune_space_default_index(&sp);          // 1
 *   my_config c;
 *   tune_space_config(&sp, i, &c);                      // c.tile == 8
 *   tune_config_str(ctx, &sp, &c);                      // "tile=8"
 *
 * Everything a space holds lives in its ctx's arena (freed with the ctx). Errors: -1 (or NULL)
 * with a message in the ctx naming the knob, what was wrong and what is legal.
 */
#ifndef TEC_SPACE_H
#define TEC_SPACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tec/ir.h"

typedef enum tune_knob_kind {
  TUNE_KNOB_INT,      /* one value (a config field, or a categorical knob's choice number) */
  TUNE_KNOB_SPLIT,    /* `width` factors, outermost first (the first is the outer extent) */
  TUNE_KNOB_REORDER,  /* a permutation of 0..width-1: the new order of the axes */
  TUNE_KNOB_ANNOTATE  /* per axis a tune_ann value */
} tune_knob_kind;

typedef enum tune_split_policy {
  TUNE_SPLIT_FACTORS, /* every tuple of factors whose product is the extent */
  TUNE_SPLIT_POWER2,  /* inner factors powers of two, their product <= extent; outer: the rest
                         (ceil), so the split may leave a tail */
  TUNE_SPLIT_LIST     /* the candidate tuples given (inner factors; outer computed, ceil) */
} tune_split_policy;

typedef enum tune_ann {
  TUNE_ANN_NONE = 1,      /* the loop as it is */
  TUNE_ANN_UNROLL = 2,    /* sch_unroll */
  TUNE_ANN_VECTORIZE = 4, /* sch_vectorize (at most one axis of an annotate knob) */
  TUNE_ANN_PARALLEL = 8   /* sch_parallel (at most one axis of an annotate knob) */
} tune_ann;

/* The offset of a knob bound to no config field. */
#define TUNE_KNOB_UNBOUND ((size_t)-1)

typedef struct tune_knob {
  const char *name;        /* "ow_tile" */
  const char *doc;         /* one line, or NULL */
  tune_knob_kind kind;
  int width;               /* int64s per value */
  int64_t nvalues;
  const int64_t *values;   /* nvalues * width; an int knob's ascending when bound to a field */
  const char *const *labels; /* categorical knob: a label per value (NULL otherwise) */
  int64_t def;             /* the default value's number (0..nvalues-1) */
  size_t offset;           /* an int knob bound to an int64_t field of the config struct: its
                              offsetof; TUNE_KNOB_UNBOUND otherwise */
} tune_knob;

typedef struct tune_space {
  tec_ctx *ctx;
  const char *name;        /* who, in messages ("dense"; NULL: "tune space") */
  int nknobs, cap;
  tune_knob *knobs;
  size_t config_size;      /* bytes of the config struct (0: none) */
  void *default_config;    /* config_size bytes: the default config (NULL when none) */
  /* The rule across knobs (NULL: none): 1 if the config struct is in the space. */
  int (*rule)(const void *rule_data, const void *config);
  const void *rule_data;
  const char *rule_doc;    /* the rule in one line, for printouts (NULL if none) */
  int64_t pruned;          /* configs of the knobs' product the rule refuses */
} tune_space;

/* A space in sp (a struct of the caller's; its contents in ctx's arena): name for messages
 * (NULL: "tune space"), a config struct of config_size bytes (0: none; its default zeroed
 * until the knobs set theirs). 0, or -1 on out of memory. tune_space_new: the same, the
 * struct in the arena too (no name, no config struct); NULL with an error. */
int tune_space_init(tec_ctx *ctx, tune_space *sp, const char *name, size_t config_size);
tune_space *tune_space_new(tec_ctx *ctx);

/* ---- knob constructors (AutoTVM's define_*) ----
 * Each returns the knob's index, or -1 with an error (a duplicate name, an extent < 1, parts
 * < 1 or > 8, an empty candidate list, a tuple whose product exceeds the extent, a knob with no
 * legal value, a space past 2^62 configs). Each knob's default is its first value, except
 * field's (def). split: `parts` factors of `extent` by policy (cands: ncands tuples of parts-1
 * inner factors, TUNE_SPLIT_LIST only). reorder: the permutations of naxes axes (all of them
 * in lexicographic order when ncands is 0, else the ncands given, each naxes long). annotate:
 * per axis one of the choices in allowed[axis] (a mask of tune_ann), at most one axis
 * vectorized and one parallel. knob: a categorical choice among nvals labels, or nvals ints
 * (labels NULL). field: an int knob bound to the int64_t field at offset of the config struct,
 * the values ascending, def (one of them) written into the default config. */
int tune_define_split(tune_space *sp, const char *name, int64_t extent, int parts,
                      tune_split_policy policy, int ncands, const int64_t *cands);
int tune_define_reorder(tune_space *sp, const char *name, int naxes, int ncands,
                        const int *cands);
int tune_define_annotate(tune_space *sp, const char *name, int naxes, const unsigned *allowed);
int tune_define_knob(tune_space *sp, const char *name, int nvals, const int64_t *vals,
                     const char *const *labels);
int tune_define_field(tune_space *sp, const char *name, const char *doc, size_t offset,
                      int nvalues, const int64_t *values, int64_t def);
/* The rule (after the knobs): rule reads only the knobs in knob_mask (bit k: knob k) of a
 * config struct; the refused configs are counted by enumerating those knobs' values (the
 * others at their default). -1 with an error if the space has no config struct, if the rule
 * refuses the default config, or the knobs are too many to count. */
int tune_space_set_rule(tune_space *sp, unsigned knob_mask,
                        int (*rule)(const void *rule_data, const void *config),
                        const void *rule_data, const char *doc);

/* ---- indices ---- */
/* The knob named name (-1 if none). */
int tune_space_find(const tune_space *sp, const char *name);
/* The index range: the knobs' product (saturates at INT64_MAX). Indices are mixed radix over
 * it, the refused ones included (they keep their numbers). */
int64_t tune_space_range(const tune_space *sp);
/* Number of configs in the space: the range less the ones the rule refuses (sp->pruned). */
int64_t tune_space_size(const tune_space *sp);
/* 1 if index is in range and its config is in the space (the rule, if any, accepts it). */
int tune_space_allows(const tune_space *sp, int64_t index);
/* Config index <-> per-knob value numbers (knob 0 fastest). decode: -1 if out of range;
 * encode: -1 if a number is out of its knob's range. */
int tune_space_decode(const tune_space *sp, int64_t index, int64_t *knob_idx);
int64_t tune_space_encode(const tune_space *sp, const int64_t *knob_idx);
/* The default config's index: every knob at its default value. */
int64_t tune_space_default_index(const tune_space *sp);
/* The entity of knob k in config `index` (width int64s), NULL if out of range. */
const int64_t *tune_space_get(const tune_space *sp, int64_t index, int knob);

/* ---- the config struct ---- */
/* The index-th config written into config (config_size bytes: the default config with the
 * bound knobs' values): 0 if it is in the space, 1 if the rule refuses it (config written
 * anyway), -1 if index is out of range. */
int tune_space_config(const tune_space *sp, int64_t index, void *config);
/* The reverse: the index of config (the bound knobs' values; unbound knobs at their default),
 * or -1 if a bound knob holds a value outside its legal ones. */
int64_t tune_space_index(const tune_space *sp, const void *config);
/* Bound knob k's field of config. */
int64_t tune_config_get(const tune_space *sp, const void *config, int knob);
void tune_config_set(const tune_space *sp, void *config, int knob, int64_t value);
/* 0 if every bound knob of config holds one of its legal values, else -1 with "<name>: knob
 * 'k' = v is not legal for this problem and target (legal: ...)". */
int tune_space_check(tec_ctx *ctx, const tune_space *sp, const void *config);
/* 1 if config is in the space: the rule, if any, accepts it. */
int tune_space_allows_config(const tune_space *sp, const void *config);

/* ---- text ---- */
/* "tile_x=[4,16] order=[1,0,2] unroll=[none,unroll] mr=6 where=cache" (arena; NULL if out of
 * range): config index's values. tune_config_str: the same for a config struct's bound
 * knobs ("ow_tile=14 oc_tiles=2 ..."). */
const char *tune_space_config_str(tec_ctx *ctx, const tune_space *sp, int64_t index);
const char *tune_config_str(tec_ctx *ctx, const tune_space *sp, const void *config);
/* The reverse: "knob=value" pairs separated by spaces or commas (a value as printed: 6, a
 * label, [4,16], [none,unroll]), the knobs not named at their default. tune_space_parse gives
 * the index; tune_config_parse writes the config struct (the default config, the named knobs
 * set; every bound knob checked as tune_space_check). -1 with an error naming the bad pair
 * (not knob=value; an unknown knob: the knob names; a value that is not legal: the legal
 * values). Neither applies the rule. */
int tune_space_parse(tec_ctx *ctx, const tune_space *sp, const char *text, int64_t *index);
int tune_config_parse(tec_ctx *ctx, const tune_space *sp, const char *text, void *config);
/* Prints each knob (name, kind, number of values, the first few) and the size (with the
 * configs the rule pruned and the rule, if any). */
void tune_space_print(FILE *out, const tune_space *sp);

#endif
