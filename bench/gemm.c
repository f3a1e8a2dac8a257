/* gemm.c — square sgemm C = A·B (row-major, float32): tec's best schedule against OpenBLAS
 * cblas_sgemm and oneDNN dnnl_sgemm, same buffers, same thread count, in one run.
 *
 *   usage: printed by main() on a bad option (the options and their defaults, one place)
 *
 * --vs takes schedule options only (schedule_options), applied on top of the main ones.
 * Combinations in which an option would be ignored are refused (check_opts says which).
 * --skip-pack and --hot are experiments whose results are wrong by design (not checked).
 * bench/README.md says what each option does.
 *
 * Per (size, threads): every implementation is called once and checked against a naive
 * double-precision reference on a sample of rows, warmed up, then timed `reps` times
 * (at least 20) round-robin — tec, oneDNN, OpenBLAS, tec, ... — so that the load of this shared
 * machine hits all three alike; the median of each is reported (--stat min: the fastest). Ratios are speed ratios
 * (other's time / tec's time): above 1 means tec is faster.
 *
 * tec's schedule (the --mr/--nr/--kb/--pack knobs; the defaults are the best found, see
 * bench/README.md):
 *
 *   Bp[jo, k, ji] = B[k, jo*nr + ji]        B packed into nr-column panels, [N/nr][K][nr]
 *   C[i, j] = sum_k A[i, k] * Bp[j/nr, k, j%nr]
 *
 *   for jo in N/(nr*jb)       parallel          (jb panels of C and of Bp, --jb: auto_jb)
 *     Bp for these panels, 16-wide copies      (--pack panel; root: all of Bp up front)
 *     for io in M/mr
 *       for js in jb                            (A's mr rows stay in L1 for the next panel)
 *         C.local[mr][nr] = 0                   (cache_write: the accumulator tile)
 *         for ko in K/ku, ki in ku unrolled     (--ku, 8 by default)
 *           for ii in mr      unrolled
 *             for ji in nr    vectorized        C.local[ii, ji] += A[io*mr+ii, k] * Bp[..]
 *         C[io*mr.., (jo*jb+js)*nr..] = C.local (vectorized copy)
 *
 * With --kb > 0 the accumulator is C itself and k is split by kb with k.outer outside the
 * tile loops (no cache_write): the form the DESIGN notes' hand-written kernel uses.
 *
 * OpenBLAS and GNU OpenMP read their settings when they are loaded, so main() re-executes itself
 * once with them (OPENBLAS_CORETYPE=SkylakeX, no OPENBLAS_L2_SIZE, OPENBLAS_THREAD_TIMEOUT=4,
 * GOMP_SPINCOUNT=2000; see reexec_for_openblas): this is the only place they are set, and it
 * works however the program is started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>
#include <dnnl.h>
#include "tec/tec.h"

/* ---------------- options ---------------- */
/* where B is packed: all up front, per panel inside the parallel loop, per k block, or not */
enum { PACK_ROOT, PACK_PANEL, PACK_KBLOCK, PACK_NONE, NPACK };
static const char *const pack_names[NPACK] = {"root", "panel", "kblock", "none"};
/* with --kb: k.outer inside the panel loop (jko), outside it (kji), or row blocks outermost */
enum { ORDER_JKO, ORDER_KJI, ORDER_IKJ, NORDER };
static const char *const order_names[NORDER] = {"jko", "kji", "ikj"};

/* The index of v in names[0..n), or -1 */
static int name_index(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) return i;
  return -1;
}

typedef struct opts {
  int nsizes, sizes[16];
  int nthreads, threads[8];
  int reps;
  int rounds;     /* --rounds: the whole sweep repeated, each round timed on its own */
  int mr, nr, kb;
  int pack;       /* PACK_*: panel: compute_at jo; kblock: compute_at k.outer (kb > 0, order
                     kji: contiguous reads of B's rows); root: whole B up front; none: the tile
                     reads B in place */
  int pack_a;     /* 1: A packed too, Ap[io, k, ii]: each mr-row tile reads one stream */
  int order;      /* ORDER_*, kb > 0: kji: k.outer outside j.outer (B panel block in L1), jko:
                     inside; ikj (with mb): blocks of rows outermost, their C block in L2 */
  int mb;         /* row tiles per block of A kept in L2 (0: none); kb = 0: the blocks are the
                     parallel loop, outside the panels; kb > 0 with --order kji: GotoBLAS */
  int jb;         /* kb = 0: panels per pass over A (jo split by jb; io runs inside, A's rows
                     are reused from L1 for the jb tiles of a row block); 0: as many as fit in
                     512 KiB, 1: none */
  int ku;         /* kb = 0: the tile's k loop unrolled by ku (split, inner unrolled; 0: no);
                     -1 (not given): 8 with kb = 0 (see ku_of) */
  int chunk;      /* C's parallel loop: -1 static ranges, 0 dynamic chunks (automatic size), N > 0
                     dynamic chunks of N iterations (pragma parallel_dynamic) */
  int prefetch;   /* > 0: sch_prefetch of B's panel rows that many k iterations ahead */
  int skip_pack;  /* experiment: pragma debug_skip_region on B's packing (wrong results) */
  int hot;        /* experiment (wrong results): 1: the tile reads A's first mr rows only (A
                     stays in L1), 2: the first 64 rows of its B panel only (B stays in L1), 3:
                     both; what streaming A from L3 and the B panel from L2 cost */
  int pack_rows;  /* whole-B packing walks B's rows (k outer, panels inner): contiguous reads */
  int print_ir;
  int stat_min;   /* --stat min: report the fastest call instead of the median (tuning only) */
  int cpu_clock;  /* time with CLOCK_PROCESS_CPUTIME_ID (tuning on a loaded machine, 1 thread) */
  const char *asm_path, *csv_path;
  const char *vs; /* "--vs 'OPTIONS'": a second tec schedule timed in the same round-robin */
} opts;

static int parse_list(const char *s, int *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0) return -1;
    out[n++] = (int)v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

/* The schedule options: what --vs may contain (everything else says what is run and how it
 * is timed). One list, so an option added later is refused inside --vs until it is put here. */
static const char *const schedule_options[] = {"--mr", "--nr", "--jb", "--kb", "--mb", "--pack",
                                               "--packa", "--order", "--ku", "--prefetch",
                                               "--chunk", "--skip-pack", "--hot", "--pack-rows"};
#define NSCHEDULE_OPTIONS (sizeof schedule_options / sizeof *schedule_options)

/* Applies argv[1..argc) to *o (which holds defaults or another option set). schedule_only: the
 * options of --vs, which may contain schedule_options only. */
static int apply_opts(int argc, char **argv, opts *o, int schedule_only) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int is_schedule = 0;
    for (size_t r = 0; r < NSCHEDULE_OPTIONS; r++) is_schedule |= !strcmp(a, schedule_options[r]);
    if (schedule_only && !is_schedule) {
      fprintf(stderr, "gemm: %s inside --vs: --vs takes schedule options only (", a);
      for (size_t r = 0; r < NSCHEDULE_OPTIONS; r++)
        fprintf(stderr, "%s%s", r ? ", " : "", schedule_options[r]);
      fprintf(stderr, ")\n");
      return -1;
    }
    int has = v != NULL && strncmp(a, "--", 2) == 0;
    if (!strcmp(a, "--print-ir")) {
      o->print_ir = 1;
      continue;
    }
    if (!has) {
      fprintf(stderr, "gemm: %s: unknown option or missing value\n", a);
      return -1;
    }
    i++;
    if (!strcmp(a, "--csv")) o->csv_path = v;
    else if (!strcmp(a, "--vs")) o->vs = v;
    else if (!strcmp(a, "--asm")) o->asm_path = v;
    else if (!strcmp(a, "--sizes")) {
      if ((o->nsizes = parse_list(v, o->sizes, 16)) < 1) return -1;
    } else if (!strcmp(a, "--threads")) {
      if ((o->nthreads = parse_list(v, o->threads, 8)) < 1) return -1;
    } else if (!strcmp(a, "--reps")) o->reps = atoi(v);
    else if (!strcmp(a, "--rounds")) o->rounds = atoi(v);
    else if (!strcmp(a, "--mr")) o->mr = atoi(v);
    else if (!strcmp(a, "--nr")) o->nr = atoi(v);
    else if (!strcmp(a, "--kb")) o->kb = atoi(v);
    else if (!strcmp(a, "--mb")) o->mb = atoi(v);
    else if (!strcmp(a, "--skip-pack")) o->skip_pack = atoi(v);
    else if (!strcmp(a, "--hot")) {
      if (strcmp(v, "a") && strcmp(v, "b") && strcmp(v, "ab")) return -1;
      o->hot = (strchr(v, 'a') ? 1 : 0) | (strchr(v, 'b') ? 2 : 0);
    }
    else if (!strcmp(a, "--ku")) o->ku = atoi(v);
    else if (!strcmp(a, "--prefetch")) o->prefetch = atoi(v);
    else if (!strcmp(a, "--chunk")) o->chunk = atoi(v);
    else if (!strcmp(a, "--jb")) o->jb = atoi(v);
    else if (!strcmp(a, "--pack-rows")) o->pack_rows = atoi(v);
    else if (!strcmp(a, "--stat")) {
      if (strcmp(v, "median") && strcmp(v, "min")) return -1;
      o->stat_min = !strcmp(v, "min");
    } else if (!strcmp(a, "--clock")) {
      if (strcmp(v, "wall") && strcmp(v, "cpu")) return -1;
      o->cpu_clock = !strcmp(v, "cpu");
    }
    else if (!strcmp(a, "--packa")) o->pack_a = atoi(v);
    else if (!strcmp(a, "--order")) {
      if ((o->order = name_index(v, order_names, NORDER)) < 0) return -1;
    } else if (!strcmp(a, "--pack")) {
      if ((o->pack = name_index(v, pack_names, NPACK)) < 0) return -1;
    } else {
      fprintf(stderr, "gemm: unknown option '%s'\n", a);
      return -1;
    }
  }
  if (o->reps < 20) o->reps = 20; /* the floor the benchmark promises */
  if (o->mr < 1 || o->nr < 1 || o->kb < 0 || o->mb < 0 || o->jb < 0 || o->chunk < -1 ||
      o->ku < -1 || o->rounds < 1 || o->rounds > 100)
    return -1;
  return 0;
}

/* The k unrolling in effect: --ku as given, else 8 for the register tile (--kb 0) and none
 * for the k-blocked forms, which do not take it. */
static int ku_of(const opts *o) { return o->ku >= 0 ? o->ku : o->kb == 0 ? 8 : 0; }

/* Refuses the combinations in which an option would be silently ignored. what: "" or "--vs ". */
static int check_opts(const opts *o, const char *what) {
  const char *err = NULL;
  if (o->pack == PACK_KBLOCK && !(o->kb > 0 && o->order == ORDER_KJI))
    err = "--pack kblock needs --kb > 0 and --order kji";
  else if (o->order != ORDER_JKO && o->kb == 0)
    err = "--order is only for --kb > 0";
  else if (o->ku > 1 && o->kb > 0)
    err = "--ku is only for --kb 0";
  else if (o->jb && (o->kb > 0 || o->mb > 0))
    err = "--jb is only for --kb 0 without --mb";
  else if (o->mb > 0 && o->kb == 0 && o->pack == PACK_PANEL)
    err = "--mb with --kb 0 puts the panels inside the row blocks: --pack panel would pack B "
          "again for every block (use --pack root or none)";
  else if (o->mb > 0 && o->kb > 0 && o->order == ORDER_JKO)
    err = "--mb with --kb > 0 needs --order kji or ikj";
  else if (o->order == ORDER_IKJ &&
           !(o->mb > 0 && (o->pack == PACK_ROOT || o->pack == PACK_NONE)))
    err = "--order ikj needs --mb > 0 and --pack root or none";
  else if (o->pack_rows && (o->pack == PACK_KBLOCK || o->pack == PACK_NONE))
    err = "--pack-rows does not go with --pack kblock or none";
  else if (o->skip_pack && o->pack == PACK_NONE)
    err = "--skip-pack needs a packing stage (not --pack none)";
  if (err) fprintf(stderr, "gemm: %sschedule: %s\n", what, err);
  return err ? -1 : 0;
}

static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.nsizes = 4, .sizes = {256, 512, 1024, 2048}, .nthreads = 2, .threads = {1, 2},
              .reps = 20, .rounds = 1, .mr = 6, .nr = 64, .kb = 0, .pack = PACK_PANEL,
              .ku = -1, .chunk = -1};
  return apply_opts(argc, argv, o, 0) || check_opts(o, "") ? -1 : 0;
}

/* --vs 'OPTIONS': the main option set with OPTIONS (schedule options only) applied on top. */
static int parse_vs(const opts *main_o, opts *vs) {
  static char buf[512];
  char *tok[64] = {"gemm"};
  int n = 1;
  snprintf(buf, sizeof buf, "%s", main_o->vs);
  for (char *t = strtok(buf, " \t"); t && n < 64; t = strtok(NULL, " \t")) tok[n++] = t;
  *vs = *main_o;
  vs->print_ir = 0, vs->asm_path = NULL; /* IR and assembly: the main schedule's */
  return apply_opts(n, tok, vs, 1) || check_opts(vs, "--vs ") ? -1 : 0;
}

/* jb = 0 (--kb 0, no --mb): as many panels per pass over A as fit in 512 KiB (K*nr floats
 * each: half of Zen 5's 1 MiB L2, a quarter of this Xeon's 2 MiB; more measured no faster on
 * either), leaving at least 4 steps of the parallel loop (the threads need work to share) */
static int64_t auto_jb(int64_t n, int64_t nr) {
  int64_t panels = (n + nr - 1) / nr, jb = ((int64_t)512 << 10) / (n * nr * 4);
  while (jb > 1 && (panels % jb || panels / jb < 4)) jb--;
  return jb < 1 ? 1 : jb;
}

/* The schedule options that take effect, for the header: "mr=6 nr=64 jb=auto(...) ..." */
static void describe_schedule(const opts *o, char *buf, size_t size) {
  int len = snprintf(buf, size, "mr=%d nr=%d", o->mr, o->nr);
#define ADD(...)                                                                                   \
  do {                                                                                             \
    if (len >= 0 && (size_t)len < size) len += snprintf(buf + len, size - (size_t)len, __VA_ARGS__); \
  } while (0)
  if (o->kb == 0 && o->mb == 0 && o->jb) ADD(" jb=%d", o->jb);
  if (o->kb == 0 && o->mb == 0 && !o->jb) {
    ADD(" jb=auto(");
    for (int si = 0; si < o->nsizes; si++)
      ADD("%s%d:%lld", si ? " " : "", o->sizes[si], (long long)auto_jb(o->sizes[si], o->nr));
    ADD(")");
  }
  if (o->kb) ADD(" kb=%d order=%s", o->kb, order_names[o->order]);
  if (o->mb) ADD(" mb=%d", o->mb);
  if (o->kb == 0 && ku_of(o) > 1) ADD(" ku=%d", ku_of(o));
  if (o->prefetch) ADD(" prefetch=%d", o->prefetch);
  if (o->chunk == 0) ADD(" chunks=auto");
  if (o->chunk > 0) ADD(" chunks=%d", o->chunk);
  ADD(" pack=%s", pack_names[o->pack]);
  if (o->pack_rows) ADD(" pack-rows");
  if (o->pack_a) ADD(" packa");
  if (o->skip_pack) ADD(" skip-pack (results wrong by design)");
  if (o->hot) ADD(" hot=%s%s (results wrong by design)", o->hot & 1 ? "a" : "", o->hot & 2 ? "b" : "");
#undef ADD
}

/* ---------------- tec: declaration and schedule ---------------- */
typedef struct gemm_decl {
  te_tensor *a, *b, *ap, *bp;
  const ir_expr *k;
  int64_t mr, nr, n;
  int hot; /* opts.hot */
} gemm_decl;

/* load, or 0 where idx >= n (the tail of the last tile when tile does not divide n). The select
 * needs no clamp of idx: its untaken arm's loads never happen (include/tec/ir.h). */
static const ir_expr *zero_past(tec_ctx *ctx, const ir_expr *idx, int64_t n, int64_t tile,
                                const ir_expr *load) {
  if (n % tile == 0) return load;
  return ir_select(ir_lt(idx, ir_int(ctx, n)), load, ir_float(ctx, 0.0));
}

/* Ap[io, k, ii] = A[io*mr + ii, k], zero past A's last row */
static const ir_expr *pack_a_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm_decl *g = user;
  const ir_expr *r = ir_add(ir_mul(i[0], ir_int(ctx, g->mr)), i[2]);
  return zero_past(ctx, r, g->n, g->mr, TE_AT(g->a, r, i[1]));
}

/* Bp[jo, k, ji] = B[k, jo*nr + ji], zero past B's last column */
static const ir_expr *pack_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm_decl *g = user;
  const ir_expr *j = ir_add(ir_mul(i[0], ir_int(ctx, g->nr)), i[2]);
  return zero_past(ctx, j, g->n, g->nr, TE_AT(g->b, i[1], j));
}

/* C[i, j] = sum_k A[i, k] * Bp[j / nr, k, j % nr]. --hot (wrong by design): A's row i % mr
 * (the first tile's rows, always in L1), B's row k % 64 of the panel (64 rows in L1). */
static const ir_expr *gemm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm_decl *g = user;
  const ir_expr *nr = ir_int(ctx, g->nr), *mr = ir_int(ctx, g->mr);
  const ir_expr *bk = g->hot & 2 ? ir_floormod(g->k, ir_int(ctx, 64)) : g->k;
  const ir_expr *ai = g->hot & 1 ? ir_floormod(i[0], mr) : i[0];
  const ir_expr *b = g->bp ? TE_AT(g->bp, ir_floordiv(i[1], nr), bk, ir_floormod(i[1], nr))
                           : TE_AT(g->b, bk, i[1]);
  const ir_expr *a = g->ap ? TE_AT(g->ap, ir_floordiv(ai, mr), g->k, ir_floormod(ai, mr))
                           : TE_AT(g->a, ai, g->k);
  return te_sum(ir_mul(a, b), 1, &g->k, NULL);
}

#define TRY(ctx, x)                                                      \
  do {                                                                   \
    if ((x) != 0) {                                                      \
      fprintf(stderr, "gemm: schedule: %s\n", tec_ctx_error(ctx));       \
      return NULL;                                                       \
    }                                                                    \
  } while (0)

static const char *const pack_axis_names[3] = {"jo", "k", "ji"};
static const char *const pack_a_axis_names[3] = {"io", "k", "ii"};

/* B's packing stage: --pack-rows (panel or root) walks B row by row (k outside the panels),
 * each of its rows read once per packing step; root packs all of B up front, in parallel over
 * its rows or panels; the copy moves 16 floats (one zmm) at a time along a panel's columns */
static int schedule_packing(sch_stage *sp, const opts *o) {
  sch_iter *pk = sch_leaf_named(sp, "k"), *pjo = sch_leaf_named(sp, "jo");
  sch_iter *pj = sch_leaf_named(sp, "ji"), *po;
  if (o->pack_rows && sch_reorder(sp, 2, (sch_iter *[]){pk, pjo})) return -1;
  if (o->pack == PACK_ROOT && sch_parallel(sp, o->pack_rows ? pk : pjo)) return -1;
  if (o->nr % 16 == 0 && o->nr > 16 && sch_split(sp, pj, 16, &po, &pj)) return -1;
  if (sch_vectorize(sp, pj)) return -1;
  /* what the packing costs: drop it (TVM's debug_skip_region experiment) */
  if (o->skip_pack && sch_pragma(sp, sp->leaf[0], "debug_skip_region", NULL)) return -1;
  return 0;
}

/* C's parallel loop: static ranges, or dynamic chunks (--chunk) */
static int par_loop(tec_ctx *ctx, sch_stage *sc, sch_iter *it, const opts *o) {
  if (sch_parallel(sc, it)) return -1;
  if (o->chunk < 0) return 0;
  return sch_pragma(sc, it, "parallel_dynamic", ir_int(ctx, o->chunk));
}

/* Builds tec's GEMM for n x n x n; the packed function in *fn. NULL on error. */
static tec_module *tec_gemm_build(tec_ctx *ctx, int64_t n, const opts *o, tec_packed_fn *fn) {
  int64_t mr = o->mr, nr = o->nr;
  if (o->kb && n % o->kb) {
    fprintf(stderr, "gemm: n=%lld must be a multiple of kb=%d\n", (long long)n, o->kb);
    return NULL;
  }
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  gemm_decl *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return NULL;
  *g = (gemm_decl){.a = A, .b = B, .mr = mr, .nr = nr, .n = n, .hot = o->hot,
                   .k = te_reduce_axis_n(ctx, "k", n)};
  if (o->pack_a)
    g->ap = te_compute(ctx, &(te_compute_decl){.name = "Ap", .ndim = 3,
                                               .shape = TE_SHAPE(ctx, (n + mr - 1) / mr, n, mr),
                                               .body = pack_a_body, .user = g,
                                               .axis_names = pack_a_axis_names});
  if (o->pack != PACK_NONE)
    g->bp = te_compute(ctx, &(te_compute_decl){.name = "Bp", .ndim = 3,
                                             .shape = TE_SHAPE(ctx, (n + nr - 1) / nr, n, nr),
                                             .body = pack_body, .user = g,
                                             .axis_names = pack_axis_names});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, n, n),
                                                    .body = gemm_body, .user = g});
  sch_schedule *s = sch_create(ctx, 1, &C);
  if (!s) return NULL;
  sch_stage *sp = g->bp ? sch_stage_of(s, g->bp) : NULL;
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  if (o->kb == 0) {
    te_tensor *CL = sch_cache_write(s, C, "local");
    if (!CL) TRY(ctx, -1);
    sch_stage *sc = sch_stage_of(s, C), *sl = sch_stage_of(s, CL);
    TRY(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), mr, nr, &io, &jo, &ii, &ji));
    sch_iter *at = io;
    if (o->mb > 0) { /* blocks of mb row tiles: their A rows stay in L2 across all panels */
      sch_iter *ib, *io2;
      TRY(ctx, sch_split(sc, io, o->mb, &ib, &io2));
      TRY(ctx, sch_reorder(sc, 5, (sch_iter *[]){ib, jo, io2, ii, ji}));
      TRY(ctx, par_loop(ctx, sc, ib, o));
      at = io2;
    } else {
      int64_t jb = o->jb ? o->jb : auto_jb(n, nr);
      if (jb > 1) { /* jb panels share one pass over A: jo2, io, js */
        sch_iter *js;
        TRY(ctx, sch_split(sc, jo, jb, &jo, &js));
        TRY(ctx, sch_reorder(sc, 5, (sch_iter *[]){jo, io, js, ii, ji}));
        TRY(ctx, par_loop(ctx, sc, jo, o));
        at = js;
      } else {
        TRY(ctx, sch_reorder(sc, 4, (sch_iter *[]){jo, io, ii, ji}));
        TRY(ctx, par_loop(ctx, sc, jo, o));
      }
    }
    TRY(ctx, sch_vectorize(sc, ji));
    TRY(ctx, sch_compute_at(sl, sc, at));
    sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
    if (ku_of(o) > 1) {
      sch_iter *lki;
      TRY(ctx, sch_split(sl, lk, ku_of(o), &lk, &lki)); /* lk: k.outer from here */
      TRY(ctx, sch_reorder(sl, 4, (sch_iter *[]){lk, lki, li, lj}));
      TRY(ctx, sch_unroll(sl, lki));
    } else {
      TRY(ctx, sch_reorder(sl, 3, (sch_iter *[]){lk, li, lj}));
    }
    TRY(ctx, sch_unroll(sl, li));
    TRY(ctx, sch_vectorize(sl, lj));
    if (o->prefetch) /* the panel's row k + prefetch (k.outer with --ku), at every k */
      TRY(ctx, sch_prefetch(sl, g->bp ? g->bp : B, lk, o->prefetch));
    if (o->pack == PACK_PANEL) TRY(ctx, sch_compute_at(sp, sc, jo));
    if (g->ap) {
      sch_stage *sa = sch_stage_of(s, g->ap);
      TRY(ctx, sch_parallel(sa, sch_axis(sa, 0)));
      TRY(ctx, sch_unroll(sa, sch_axis(sa, 2)));
    }
  } else {
    sch_stage *sc = sch_stage_of(s, C);
    TRY(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), mr, nr, &io, &jo, &ii, &ji));
    TRY(ctx, sch_split(sc, sch_reduce_axis(sc, 0), o->kb, &ko, &ki));
    sch_iter *ib, *io2;
    if (o->order == ORDER_IKJ) { /* a block of rows of C stays in L2 across the k blocks */
      TRY(ctx, sch_split(sc, io, o->mb, &ib, &io2));
      TRY(ctx, sch_reorder(sc, 7, (sch_iter *[]){ib, ko, jo, io2, ki, ii, ji}));
    } else if (o->mb > 0) { /* kji, GotoBLAS order: an A block in L2, a B micro-panel in L1 */
      TRY(ctx, sch_split(sc, io, o->mb, &ib, &io2));
      TRY(ctx, sch_reorder(sc, 7, (sch_iter *[]){ko, ib, jo, io2, ki, ii, ji}));
    } else if (o->order == ORDER_KJI)
      TRY(ctx, sch_reorder(sc, 6, (sch_iter *[]){ko, jo, io, ki, ii, ji}));
    else
      TRY(ctx, sch_reorder(sc, 6, (sch_iter *[]){jo, ko, io, ki, ii, ji}));
    TRY(ctx, sch_unroll(sc, ii));
    TRY(ctx, sch_vectorize(sc, ji));
    if (o->prefetch) TRY(ctx, sch_prefetch(sc, g->bp ? g->bp : B, ki, o->prefetch));
    TRY(ctx, par_loop(ctx, sc, o->order == ORDER_IKJ ? ib : jo, o));
    if (o->pack == PACK_KBLOCK) {
      TRY(ctx, sch_compute_at(sp, sc, ko));
      TRY(ctx, sch_parallel(sp, sch_leaf_named(sp, "jo")));
    } else if (o->pack == PACK_PANEL) {
      TRY(ctx, sch_compute_at(sp, sc, jo));
    }
    if (g->ap) { /* Ap[M/mr][K][mr]: mr rows unrolled per k */
      sch_stage *sa = sch_stage_of(s, g->ap);
      if (o->order == ORDER_IKJ) /* the A block of mb tiles x kb, per k block */
        TRY(ctx, sch_compute_at(sa, sc, ko));
      else if (o->mb > 0) /* kji, GotoBLAS: the A block (mb tiles x kb) packed into L2 */
        TRY(ctx, sch_compute_at(sa, sc, ib));
      else if (o->order == ORDER_KJI) /* the A block of one k.outer step */
        TRY(ctx, sch_compute_at(sa, sc, ko));
      else /* jko: all of A up front, in parallel */
        TRY(ctx, sch_parallel(sa, sch_axis(sa, 0)));
      TRY(ctx, sch_unroll(sa, sch_axis(sa, 2)));
    }
  }
  if (sp) TRY(ctx, schedule_packing(sp, o));
  lower_func *f = tec_lower(s, "tec_gemm", 3, (te_tensor *[]){A, B, C});
  if (!f) TRY(ctx, -1);
  if (o->print_ir) tec_lower_print(stdout, f);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  if (!m) TRY(ctx, -1);
  if (o->asm_path) {
    FILE *out = fopen(o->asm_path, "w");
    if (out) fputs(tec_module_asm(m), out), fclose(out);
  }
  *fn = tec_module_get(m, "tec_gemm");
  return *fn ? m : NULL;
}

/* ---------------- the three implementations ---------------- */
enum { IMPL_TEC, IMPL_DNNL, IMPL_OPENBLAS, IMPL_TEC_VS, NIMPL };
static const char *impl_name[NIMPL] = {"tec", "onednn", "openblas", "tec-vs"};

typedef struct problem {
  int64_t n;
  float *a, *b, *c;
  DLTensor ta, tb, tc;
  tec_packed_fn tec, tec_vs; /* tec_vs: the --vs schedule, or NULL */
  double *ref;               /* check(): the sampled rows' exact values, then their magnitudes */
} problem;

static int run_impl(problem *p, int impl) {
  int n = (int)p->n;
  switch (impl) {
  case IMPL_TEC:
  case IMPL_TEC_VS: {
    DLTensor *args[3] = {&p->ta, &p->tb, &p->tc};
    if ((impl == IMPL_TEC ? p->tec : p->tec_vs)(args, 3) != 0) {
      fprintf(stderr, "gemm: tec: %s\n", tec_rt_last_error());
      return -1;
    }
    return 0;
  }
  case IMPL_DNNL:
    if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, p->a, n, p->b, n, 0.0f, p->c, n) != dnnl_success) {
      fprintf(stderr, "gemm: dnnl_sgemm failed\n");
      return -1;
    }
    return 0;
  case IMPL_OPENBLAS:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, p->a, n, p->b, n,
                0.0f, p->c, n);
    return 0;
  }
  return -1;
}

/* Max relative error of C against a double-precision reference on a sample of rows (the
 * reference computed on the first call, kept in p->ref). -1 if it cannot be computed. */
static double check(problem *p) {
  int64_t n = p->n, step = n > 128 ? n / 32 : 1, rows = (n + step - 1) / step;
  if (!p->ref) {
    if (!(p->ref = malloc(sizeof(double) * (size_t)(2 * rows * n)))) return -1;
    double *acc = p->ref, *mag = p->ref + rows * n;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < n; j++) {
        acc[r * n + j] = mag[r * n + j] = 0;
        for (int64_t k = 0; k < n; k++) {
          double t = (double)p->a[r * step * n + k] * p->b[k * n + j];
          acc[r * n + j] += t;
          mag[r * n + j] += fabs(t);
        }
      }
  }
  const double *acc = p->ref, *mag = p->ref + rows * n;
  double worst = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) {
      double e = fabs(acc[r * n + j] - p->c[r * step * n + j]) / (1.0 + mag[r * n + j]);
      if (e > worst) worst = e;
    }
  return worst;
}

static void set_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("TEC_NUM_THREADS", buf, 1);
  tec_rt_set_num_threads(t);
  openblas_set_num_threads(t);
  omp_set_num_threads(t); /* Debian's oneDNN is built on GNU OpenMP */
}

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void) {
  struct timespec t;
  clock_gettime(bench_clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* One (size, threads) row: every implementation checked (first round only) and warmed up,
 * then timed round-robin so machine load hits all alike; med gets each one's median (or
 * minimum). 0, 1 if a result was wrong (med filled), -1 if a call failed (med not filled). */
static int measure(problem *p, const opts *o, const opts *vs, int nimpl, int t, int check_first,
                   double *med) {
  int64_t n = p->n;
  int status = 0;
  set_threads(t);
  double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int impl = 0; impl < nimpl; impl++) {
    if (check_first) {
      memset(p->c, 0, sizeof(float) * (size_t)(n * n));
      if (run_impl(p, impl)) return -1;
      double err = check(p);
      if (err < 0) {
        fprintf(stderr, "gemm: out of memory for the reference\n");
        return -1;
      }
      int wrong_by_design = (impl == IMPL_TEC && (o->skip_pack || o->hot)) ||
                            (impl == IMPL_TEC_VS && (vs->skip_pack || vs->hot)); /* experiments */
      if (err > 1e-5 && !wrong_by_design) {
        fprintf(stderr, "gemm: %s n=%lld threads=%d: WRONG, relative error %g\n",
                impl_name[impl], (long long)n, t, err);
        status = 1;
      }
    }
    for (int w = 0; w < 2; w++) run_impl(p, impl);
  }
  /* more reps for small sizes */
  int reps = o->reps;
  double est = flops / 100e9; /* seconds per call at ~100 GFLOP/s */
  while (reps < 400 && reps * est < 0.25) reps *= 2;
  double *ts = malloc(sizeof(double) * (size_t)(reps * nimpl)); /* ts[impl * reps + r] */
  if (!ts) {
    fprintf(stderr, "gemm: out of memory\n");
    return -1;
  }
  for (int r = 0; r < reps; r++)
    for (int impl = 0; impl < nimpl; impl++) {
      double t0 = now();
      run_impl(p, impl);
      ts[impl * reps + r] = now() - t0;
    }
  for (int impl = 0; impl < nimpl; impl++) {
    double *x = ts + impl * reps;
    qsort(x, (size_t)reps, sizeof(double), cmp_double);
    med[impl] = o->stat_min ? x[0]
                : reps % 2  ? x[reps / 2]
                            : 0.5 * (x[reps / 2 - 1] + x[reps / 2]);
  }
  free(ts);
  return status;
}

static void print_header(const opts *o) {
  printf("%-10s %3s  %9s %9s %9s  %7s %7s %7s  %8s %8s", "workload", "thr", "tec ms",
         "onednn ms", "oblas ms", "tec GF", "dnnl GF", "oblas GF", "tec/dnnl", "tec/oblas");
  printf(o->vs ? " %9s %8s\n" : "\n", "vs ms", "tec/vs");
}

static void print_row(const opts *o, int nimpl, int64_t n, int t, const double *med,
                      FILE *csv) {
  double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int impl = 0; csv && impl < nimpl; impl++)
    fprintf(csv, "gemm%lld,%d,%s,%.4f,%.2f\n", (long long)n, t, impl_name[impl],
            med[impl] * 1e3, flops / med[impl] * 1e-9);
  char wl[32];
  snprintf(wl, sizeof wl, "gemm%lld", (long long)n);
  printf("%-10s %3d  %9.3f %9.3f %9.3f  %7.1f %7.1f %7.1f  %7.2fx %7.2fx", wl, t,
         med[IMPL_TEC] * 1e3, med[IMPL_DNNL] * 1e3, med[IMPL_OPENBLAS] * 1e3,
         flops / med[IMPL_TEC] * 1e-9, flops / med[IMPL_DNNL] * 1e-9,
         flops / med[IMPL_OPENBLAS] * 1e-9, med[IMPL_DNNL] / med[IMPL_TEC],
         med[IMPL_OPENBLAS] / med[IMPL_TEC]);
  if (o->vs) printf(" %9.3f %7.2fx", med[IMPL_TEC_VS] * 1e3, med[IMPL_TEC_VS] / med[IMPL_TEC]);
  printf("\n");
  fflush(stdout);
}

/* --rounds R > 1: each ratio's spread over the rounds, min / median / max */
static void print_spread(const opts *o, int nimpl, double ratio[][16][8][3]) {
  static const char *const what[3] = {"tec/dnnl", "tec/oblas", "tec/vs"};
  printf("\nover %d rounds, min / median / max:\n%-10s %3s", o->rounds, "workload", "thr");
  for (int w = 0; w < nimpl - 1; w++) printf("  %20s", what[w]);
  printf("\n");
  for (int si = 0; si < o->nsizes; si++)
    for (int ti = 0; ti < o->nthreads; ti++) {
      char wl[32];
      snprintf(wl, sizeof wl, "gemm%d", o->sizes[si]);
      printf("%-10s %3d", wl, o->threads[ti]);
      for (int w = 0; w < nimpl - 1; w++) {
        double v[100];
        for (int r = 0; r < o->rounds; r++) v[r] = ratio[r][si][ti][w];
        qsort(v, (size_t)o->rounds, sizeof(double), cmp_double);
        int h = o->rounds / 2;
        double mid = o->rounds % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
        printf("  %6.2f %6.2f %6.2f", v[0], mid, v[o->rounds - 1]);
      }
      printf("\n");
    }
}

/* The one place the libraries' environment is set (bench/run only execs this program). It is
 * read when the libraries load, so the process re-executes itself once with it:
 * - OPENBLAS_CORETYPE=SkylakeX and no OPENBLAS_L2_SIZE: OpenBLAS picks its kernel when loaded,
 *   and this environment forces Haswell, which leaves AVX-512 unused on
 *   these AVX-512 machines (Zen 5, Xeon);
 * - OPENBLAS_THREAD_TIMEOUT=4 and GOMP_SPINCOUNT=2000 (unless already set): idle worker threads
 *   stop spinning soon after a call, or they take a core from the next implementation in the
 *   round-robin (OpenBLAS spins 2^28 cycles by default, GNU OpenMP 300000 pauses). 2000 pauses
 *   is what tec's own workers spin (RT_SPIN, runtime/parallel.c): the same budget for both. */
static void reexec_for_openblas(char **argv) {
  const char *ct = getenv("OPENBLAS_CORETYPE");
  if (ct && !strcmp(ct, "SkylakeX") && !getenv("OPENBLAS_L2_SIZE") &&
      getenv("OPENBLAS_THREAD_TIMEOUT") && getenv("GOMP_SPINCOUNT"))
    return;
  if (getenv("TEC_BENCH_REEXEC")) return; /* once only */
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  unsetenv("OPENBLAS_L2_SIZE");
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  setenv("GOMP_SPINCOUNT", "2000", 0); /* = tec's RT_SPIN */
  setenv("TEC_BENCH_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "gemm: re-exec with OPENBLAS_CORETYPE=SkylakeX failed: %s\n", strerror(errno));
}

int main(int argc, char **argv) {
  reexec_for_openblas(argv);
  opts o;
  if (parse_opts(argc, argv, &o)) {
    fprintf(stderr,
            "usage: gemm [--csv FILE] [--sizes 256,512,...] [--threads 1,2] [--reps N] [--rounds 1]\n"
            "            [--stat median|min] [--clock wall|cpu] [--print-ir] [--asm FILE]\n"
            "            [--mr 6] [--nr 64] [--jb 0] [--kb 0] [--mb 0] [--ku 8] [--prefetch 0]\n"
            "            [--chunk -1] [--pack panel|root|kblock|none] [--packa 0|1]\n"
            "            [--order jko|kji|ikj]\n"
            "            [--pack-rows 0|1] [--skip-pack 0|1] [--hot a|b|ab]\n"
            "            [--vs 'SCHEDULE OPTIONS']  (a second tec schedule, same run)\n"
            "  --jb: --kb 0 without --mb only; --mb with --kb > 0: --order kji or ikj;\n"
            "  --order ikj: --kb, --mb, --pack root or none; --pack kblock: --kb > 0\n"
            "  --order kji; --pack-rows: not with kblock or none; --skip-pack: not with none\n");
    return 2;
  }
  opts vs = o; /* the --vs schedule (read only when --vs is given) */
  if (o.vs && parse_vs(&o, &vs)) {
    fprintf(stderr, "gemm: bad --vs '%s'\n", o.vs);
    return 2;
  }
  int nimpl = o.vs ? NIMPL : IMPL_TEC_VS; /* tec-vs only with --vs */
  if (o.cpu_clock) bench_clock = CLOCK_PROCESS_CPUTIME_ID;
  FILE *csv = NULL;
  if (o.csv_path) {
    csv = fopen(o.csv_path, "w");
    if (!csv) {
      fprintf(stderr, "gemm: cannot write %s: %s\n", o.csv_path, strerror(errno));
      return 1;
    }
    fprintf(csv, "workload,threads,impl,%s_ms,gflops\n", o.stat_min ? "min" : "median");
  }
  printf("OpenBLAS core: %s (config: %s)\n", openblas_get_corename(), openblas_get_config());
  const dnnl_version_t *dv = dnnl_version();
  printf("oneDNN %d.%d.%d (cpu runtime %s)\n", dv->major, dv->minor, dv->patch,
         dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
  char sched[256];
  describe_schedule(&o, sched, sizeof sched);
  printf("tec schedule: %s; reps>=%d, %s of %s time, ratio = other/tec time\n", sched, o.reps,
         o.stat_min ? "minimum" : "medians", o.cpu_clock ? "process CPU" : "wall-clock");
  if (o.vs) {
    describe_schedule(&vs, sched, sizeof sched);
    printf("tec-vs schedule: %s ('%s' on top of tec's; tec/vs = vs time / tec time)\n", sched,
           o.vs);
  }

  /* every size's buffers and modules first (JIT once per size), then the rounds */
  problem probs[16];
  tec_ctx *ctxs[16];
  for (int si = 0; si < o.nsizes; si++) {
    int64_t n = o.sizes[si];
    problem *p = &probs[si];
    ctxs[si] = tec_ctx_new();
    *p = (problem){.n = n};
    int64_t shape[2] = {n, n};
    if (!ctxs[si] || tec_dl_alloc(&p->ta, TEC_F32, 2, shape) ||
        tec_dl_alloc(&p->tb, TEC_F32, 2, shape) || tec_dl_alloc(&p->tc, TEC_F32, 2, shape)) {
      fprintf(stderr, "gemm: %s\n", tec_rt_last_error());
      return 1;
    }
    p->a = p->ta.data, p->b = p->tb.data, p->c = p->tc.data;
    unsigned seed = 12345;
    for (int64_t i = 0; i < n * n; i++) {
      seed = seed * 1103515245u + 12345u;
      p->a[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
      seed = seed * 1103515245u + 12345u;
      p->b[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    if (!tec_gemm_build(ctxs[si], n, &o, &p->tec) ||
        (o.vs && !tec_gemm_build(ctxs[si], n, &vs, &p->tec_vs))) {
      fprintf(stderr, "gemm: tec build for %lld: %s\n", (long long)n,
              tec_ctx_error(ctxs[si]) ? tec_ctx_error(ctxs[si]) : "(see above)");
      return 1;
    }
    o.print_ir = 0, o.asm_path = NULL; /* only for the first size */
  }
  /* ratio[round][size][threads]: tec/oneDNN, tec/OpenBLAS, tec/vs speed ratios */
  static double ratio[100][16][8][3];
  int status = 0;
  for (int round = 0; round < o.rounds; round++) {
    printf("\n");
    if (o.rounds > 1) printf("round %d of %d\n", round + 1, o.rounds);
    print_header(&o);
    for (int si = 0; si < o.nsizes; si++)
      for (int ti = 0; ti < o.nthreads; ti++) {
        double med[NIMPL];
        int rc = measure(&probs[si], &o, &vs, nimpl, o.threads[ti], round == 0, med);
        if (rc < 0) return 1; /* a call failed: its message is above */
        status |= rc;
        print_row(&o, nimpl, probs[si].n, o.threads[ti], med, csv);
        ratio[round][si][ti][0] = med[IMPL_DNNL] / med[IMPL_TEC];
        ratio[round][si][ti][1] = med[IMPL_OPENBLAS] / med[IMPL_TEC];
        ratio[round][si][ti][2] = o.vs ? med[IMPL_TEC_VS] / med[IMPL_TEC] : 0;
      }
  }
  if (o.rounds > 1) print_spread(&o, nimpl, ratio);
  for (int si = 0; si < o.nsizes; si++) {
    tec_dl_free(&probs[si].ta), tec_dl_free(&probs[si].tb), tec_dl_free(&probs[si].tc);
    free(probs[si].ref);
    tec_ctx_free(ctxs[si]);
  }
  if (csv) fclose(csv);
  return status;
}
