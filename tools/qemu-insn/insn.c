/*
 * insn.c - a QEMU TCG plugin (plugin API version 1, QEMU 7.2) that counts the guest
 * instructions a program executes, classified by disassembly mnemonic.  Written for
 * AArch64 guests under qemu-user, to serve as an "ARM efficiency proxy" (executed-instruction
 * counts, not cycles); tec's copy (tools/qemu-insn) also classifies ARMv7 (A32 and Thumb-2:
 * qemu-arm), whose marker is the same hint (`hint.w #0x71` in Thumb-2, see insn_marker.h).
 *
 * The few plugin API declarations we need are written out below; this file does not include
 * QEMU's header.  Every translated instruction gets one inline 64-bit add into the counter of
 * its class, placed before the instruction (exact, also for blocks left early; an instruction
 * that faults is counted).  Vector FMAs get a second add: their lane count.
 *
 * Classes come from the text of qemu_plugin_insn_disas() (capstone in Debian's QEMU 7.2).
 * Capstone 4 does not decode some ARMv8.1+ encodings (FP16 FMLA, SDOT, FMLAL, BFMLAL, LDAPR,
 * CAS, ...) and prints ".byte ..."; those are classified from the encoding bits instead.
 *
 * Markers: the guest executes `hint #0x71` (an architectural NOP; see insn_marker.h) to
 * delimit regions.  Each executed marker snapshots the counters; at exit the plugin prints
 * one line per segment between consecutive markers (segment i = from marker i to marker i+1,
 * containing exactly one marker instruction), plus the whole-run totals.
 *
 * Plugin arguments (-plugin libinsn.so,arg=value,...):
 *   marker=N      hint immediate used as marker (default 0x71; 0 disables markers)
 *   hot=N         also print the N hottest translation blocks (by executed instructions,
 *                 between the first and last marker if there are >= 2 markers, else whole run)
 *                 with their disassembly
 *   range=A-B     only count instructions with guest address in [A, B) (hex or decimal)
 *   out=FILE      write the report to FILE instead of stderr; out=qemu sends it to QEMU's
 *                 log (qemu_plugin_outs: visible only with -d plugin, or -D logfile)
 *   verbose=1     print the class of each distinct mnemonic seen (for checking the classifier);
 *                 verbose=2 also prints the first guest address of each
 *
 * Report format (one line each, key=value, easy to grep):
 *   insn: seg=all total=... vfma=... vfp=... vother=... vldst=... fpldst=... sldst=...
 *         prfm=... branch=... fpscalar=... other=... vfma_lanes=...
 *   insn: seg=1 ...     (marker 1 -> marker 2), seg=2 ..., and markers=N
 *
 * Not thread-aware: counters are shared by all vCPUs (guest threads) and the inline adds are
 * not atomic, so use single-threaded guests for exact counts.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU plugin API (version 1, as in QEMU 7.2), declared by hand -------------------- */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
  const char *target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op,
                                                void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- classes ------------------------------------------------------------------------ */
enum {
  C_VFMA,     /* fmla/fmls with a vector destination (incl. by-element) */
  C_VFP,      /* other vector FP arithmetic: fadd/fmul/fmax/fmin/fcvt/frint/scvtf... on v registers */
  C_VOTHER,   /* other SIMD instructions: mov/dup/ins/ext/zip/movi/fmov/and/int arith/umov/... */
  C_VLDST,    /* loads/stores of v/q registers: ld1..ld4(r), st1..st4, ldr/str/ldp/stp/ldur q */
  C_FPLDST,   /* loads/stores of b/h/s/d SIMD&FP registers: ldr s0, ldr d0, ldp d8, d9, ... */
  C_SLDST,    /* general-register loads/stores and atomics: ldr x/w, ldp x, ldrb, stlr, cas, ... */
  C_PRFM,     /* prefetches */
  C_BRANCH,   /* b, b.cond, bl, br, blr, ret, cbz/cbnz, tbz/tbnz */
  C_FPSCALAR, /* scalar FP: fadd s0.., fmadd, fcmp, fcvt*, fmov s/d, scvtf, ... */
  C_OTHER,    /* everything else (integer ALU, moves, system, hints) */
  NCLASS
};
static const char *const class_name[NCLASS] = {"vfma", "vfp", "vother", "vldst", "fpldst",
                                               "sldst", "prfm", "branch", "fpscalar", "other"};
/* counters[NCLASS] holds the fp lanes of vector fmla/fmls (4 per .4s, 2 per .2s/.2d, ...) */
#define NCOUNT (NCLASS + 1)
#define I_LANES NCLASS

static uint64_t counters[NCOUNT];

/* ---- options and state ------------------------------------------------------------- */
static long marker_imm = 0x71;
static int hot_n = 0;
static int verbose = 0; /* 1: mnemonics per class; 2: also the first address of each */
static uint64_t range_lo = 0, range_hi = UINT64_MAX;
static char *out_path = NULL;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_MARKS 4096
static uint64_t (*marks)[NCOUNT]; /* snapshots, one per executed marker */
static int n_marks = 0;
static bool marks_overflow = false;

/* per translation-block records (only when hot=N): keyed by (vaddr, n_insns) */
typedef struct tbrec {
  uint64_t vaddr;
  uint32_t n;
  uint64_t count;       /* executions (inline add target) */
  uint64_t at_first;    /* count at the first marker */
  uint64_t at_last;     /* count at the latest marker */
  char **dis;           /* disassembly of each instruction */
  struct tbrec *next;
} tbrec;
#define HBITS 16
static tbrec *htab[1u << HBITS];
static size_t n_tbrec = 0;

/* distinct mnemonics (verbose) */
typedef struct mrec {
  char name[24];
  int cls;
  uint64_t first_va; /* first address seen with this mnemonic */
  struct mrec *next;
} mrec;
static mrec *mlist = NULL;

/* ---- classification ---------------------------------------------------------------- */
static bool is_reg(const char *p, char c) { return p[0] == c && isdigit((unsigned char)p[1]); }

/* Does the operand string mention a vector register (vN...)? */
static bool has_vreg(const char *ops) {
  for (const char *p = ops; *p; p++)
    if (*p == 'v' && isdigit((unsigned char)p[1]) && (p == ops || !isalnum((unsigned char)p[-1]))) return true;
  return false;
}

static int lanes_of(const char *op) {
  /* op points at "vN.<arr>" ; arrangements 2s 4s 2d 4h 8h 1d */
  const char *dot = strchr(op, '.');
  if (!dot || !isdigit((unsigned char)dot[1])) return 1;
  return atoi(dot + 1);
}

static bool starts(const char *s, const char *pre) { return strncmp(s, pre, strlen(pre)) == 0; }

/* Fallback for words the disassembler could not decode (capstone 4, used by Debian's QEMU 7.2,
 * prints ".byte 0x.., 0x.., 0x.., 0x.." for ARMv8.1+ encodings such as FP16 FMLA, SDOT,
 * FMLAL, BFMLAL, LDAPR, CAS).  Classify from the encoding. */
static int classify_word(uint32_t w, int *lanes) {
  int q = (w >> 30) & 1;
  *lanes = 0;
  /* FMLA/FMLS (vector, half precision) and (by element, half precision) */
  if ((w & 0xBFE0FC00u) == 0x0E400C00u || (w & 0xBFE0FC00u) == 0x0EC00C00u ||
      (w & 0xBFC0B400u) == 0x0F001000u) {
    *lanes = q ? 8 : 4;
    return C_VFMA;
  }
  /* FMLAL/FMLSL(2) (vector and by element, fp16 -> fp32), BFMLALB/T (vector and by element) */
  if ((w & 0xBF60FC00u) == 0x0E20EC00u || (w & 0xBF60FC00u) == 0x2E20CC00u ||
      (w & 0xBFC0B400u) == 0x0F800000u || (w & 0xBFC0B400u) == 0x2F808000u) {
    *lanes = q ? 4 : 2;
    return C_VFMA;
  }
  if ((w & 0xBFE0FC00u) == 0x2EC0FC00u || (w & 0xBFC0F400u) == 0x0FC0F000u) {
    *lanes = 4;
    return C_VFMA;
  }
  if ((w & 0x0A000000u) == 0x08000000u) { /* loads and stores: bit 26 = SIMD&FP register */
    if (!((w >> 26) & 1)) return C_SLDST;
    return C_VLDST;
  }
  if ((w & 0x7C000000u) == 0x14000000u ||                                   /* B, BL */
      (w & 0xFF000010u) == 0x54000000u ||                                   /* B.cond */
      (w & 0x7C000000u) == 0x34000000u ||                                   /* CBZ/CBNZ/TBZ/TBNZ */
      (w & 0xFE000000u) == 0xD6000000u)                                     /* BR/BLR/RET (+PAC) */
    return C_BRANCH;
  if ((w & 0x0E000000u) == 0x0E000000u) {                  /* data processing, SIMD & FP */
    if ((w & 0x5E000000u) == 0x1E000000u) return C_FPSCALAR; /* scalar FP (0x1E/0x1F, bit 30 clear) */
    return C_VOTHER;                                         /* dot products, matrix mults, other SIMD */
  }
  return C_OTHER;
}

static bool parse_byte_word(const char *dis, uint32_t *w) {
  while (*dis == ' ') dis++;
  if (strncmp(dis, ".byte", 5) != 0) return false;
  const char *p = dis + 5;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char *end;
    while (*p == ' ' || *p == ',') p++;
    unsigned long b = strtoul(p, &end, 0);
    if (end == p) return false;
    v |= (uint32_t)(b & 0xff) << (8 * i);
    p = end;
  }
  *w = v;
  return true;
}

/* ARMv7 (A32 / Thumb-2, capstone's spelling): 1 if cond is a condition code */
static bool is_cond(const char *c) {
  static const char *const cc[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                   "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
  for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++)
    if (!strcmp(c, cc[i])) return true;
  return false;
}

/* Does an ARMv7 operand string name a register of kind c (q, d or s) ("q8", "{d16, d17}")? */
static bool has_reg32(const char *ops, char c) {
  for (const char *p = ops; *p; p++)
    if (*p == c && isdigit((unsigned char)p[1]) && (p == ops || !isalnum((unsigned char)p[-1])))
      return true;
  return false;
}

/* ARMv7 mnemonics (mn without a ".w"/".n" width suffix): a class, or -1 if mn is not one of
 * them (AArch64 never spells these: its vector mnemonics do not start with 'v' and its
 * conditional branches are "b.cond"). */
static int classify_a32(const char *mn, const char *ops, int *lanes) {
  char base[32];
  snprintf(base, sizeof base, "%s", mn);
  size_t n = strlen(base);
  if (n > 2 && (!strcmp(base + n - 2, ".w") || !strcmp(base + n - 2, ".n"))) base[n -= 2] = 0;
  /* branches: b, bl, bx, blx, each optionally conditional; table branches */
  const char *c = base + 1;
  if (base[0] == 'b' && is_cond(c)) return C_BRANCH; /* "blt", "bls": b + condition */
  if (base[0] == 'b') {
    if (!strncmp(c, "lx", 2)) c += 2;
    else if (*c == 'l' || *c == 'x') c++;
    if (!*c || is_cond(c)) return C_BRANCH;
  }
  if (!strcmp(base, "tbb") || !strcmp(base, "tbh")) return C_BRANCH;
  if (!strcmp(base, "push") || !strcmp(base, "pop")) return C_SLDST;
  if (!strcmp(base, "pld") || !strcmp(base, "pldw") || !strcmp(base, "pli")) return C_PRFM;
  if (base[0] != 'v') return -1;
  bool q = has_reg32(ops, 'q'), d = has_reg32(ops, 'd'), sreg = has_reg32(ops, 's');
  /* loads and stores of NEON / VFP registers */
  if (starts(base, "vld") || starts(base, "vst") || starts(base, "vpush") || starts(base, "vpop"))
    return (q || d) ? C_VLDST : C_FPLDST;
  bool f32 = strstr(base, ".f32") != NULL, f64 = strstr(base, ".f64") != NULL;
  if ((starts(base, "vfma") || starts(base, "vfms") || starts(base, "vmla") || starts(base, "vmls")) &&
      f32 && (q || d) && !sreg) {
    /* the destination's width: q 4 lanes, d 2 */
    const char *o = ops;
    while (*o == ' ') o++;
    *lanes = *o == 'q' ? 4 : 2;
    return C_VFMA;
  }
  if ((f32 && sreg && !q && !d) || f64) return C_FPSCALAR;
  if (f32) return C_VFP;
  return C_VOTHER;
}

static int classify(const char *dis, int *lanes) {
  char mn[32];
  size_t i = 0;
  uint32_t word;
  *lanes = 0;
  if (parse_byte_word(dis, &word)) return classify_word(word, lanes);
  while (*dis == ' ' || *dis == '\t') dis++;
  while (dis[i] && dis[i] != ' ' && dis[i] != '\t' && i < sizeof mn - 1) {
    mn[i] = (char)tolower((unsigned char)dis[i]);
    i++;
  }
  mn[i] = 0;
  const char *ops = dis + i;
  while (*ops == ' ' || *ops == '\t') ops++;
  const char *op0 = ops;
  if (*op0 == '{') op0++;
  while (*op0 == ' ') op0++;

  int a32 = classify_a32(mn, ops, lanes);
  if (a32 >= 0) return a32;
  /* branches */
  if (!strcmp(mn, "b") || !strcmp(mn, "bl") || !strcmp(mn, "br") || !strcmp(mn, "blr") || !strcmp(mn, "ret") ||
      starts(mn, "b.") || !strcmp(mn, "cbz") || !strcmp(mn, "cbnz") || !strcmp(mn, "tbz") || !strcmp(mn, "tbnz") ||
      starts(mn, "braa") || starts(mn, "brab") || starts(mn, "blraa") || starts(mn, "blrab") || starts(mn, "retaa") ||
      starts(mn, "retab"))
    return C_BRANCH;
  if (starts(mn, "prfm") || starts(mn, "prfum")) return C_PRFM;
  /* loads / stores (ld*, st*, atomics cas*, swp*) */
  if (starts(mn, "ld") || starts(mn, "st") || starts(mn, "cas") || starts(mn, "swp")) {
    if (is_reg(op0, 'v') || is_reg(op0, 'q')) return C_VLDST;
    if (is_reg(op0, 'b') || is_reg(op0, 'h') || is_reg(op0, 's') || is_reg(op0, 'd')) return C_FPLDST;
    return C_SLDST;
  }
  bool vdest = is_reg(op0, 'v');
  if ((!strcmp(mn, "fmla") || !strcmp(mn, "fmls")) && vdest) {
    *lanes = lanes_of(op0);
    return C_VFMA;
  }
  if (has_vreg(ops)) {
    if ((mn[0] == 'f' && !starts(mn, "fmov")) || !strcmp(mn, "scvtf") || !strcmp(mn, "ucvtf")) return C_VFP;
    return C_VOTHER;
  }
  if (mn[0] == 'f' || !strcmp(mn, "scvtf") || !strcmp(mn, "ucvtf")) return C_FPSCALAR;
  return C_OTHER;
}

static bool is_marker(const char *dis) {
  while (*dis == ' ') dis++;
  size_t n = !strncmp(dis, "hint.w", 6) ? 6 : 4; /* "hint.w": Thumb-2 (ARMv7) */
  if (strncmp(dis, "hint", 4) != 0 || (dis[n] != ' ' && dis[n] != '\t')) return false;
  const char *p = strchr(dis, '#');
  if (!p) return false;
  return strtol(p + 1, NULL, 0) == marker_imm;
}

/* ---- callbacks ---------------------------------------------------------------------- */
static void marker_cb(unsigned int vcpu, void *udata) {
  (void)vcpu;
  (void)udata;
  pthread_mutex_lock(&lock);
  if (n_marks < MAX_MARKS) {
    memcpy(marks[n_marks], counters, sizeof counters);
    n_marks++;
  } else {
    marks_overflow = true;
  }
  if (hot_n) {
    for (size_t b = 0; b < (1u << HBITS); b++)
      for (tbrec *r = htab[b]; r; r = r->next) {
        if (n_marks == 1) r->at_first = r->count;
        r->at_last = r->count;
      }
  }
  pthread_mutex_unlock(&lock);
}

static tbrec *tb_lookup(uint64_t vaddr, uint32_t n, bool *fresh) {
  uint64_t h = (vaddr >> 2) * 0x9E3779B97F4A7C15ull;
  size_t b = (size_t)(h >> (64 - HBITS));
  for (tbrec *r = htab[b]; r; r = r->next)
    if (r->vaddr == vaddr && r->n == n) {
      *fresh = false;
      return r;
    }
  tbrec *r = calloc(1, sizeof *r);
  r->vaddr = vaddr;
  r->n = n;
  r->next = htab[b];
  htab[b] = r;
  n_tbrec++;
  *fresh = true;
  return r;
}

static void note_mnemonic(const char *dis, int cls, uint64_t va) {
  char mn[24];
  size_t i = 0;
  while (*dis == ' ') dis++;
  while (dis[i] && dis[i] != ' ' && i < sizeof mn - 1) {
    mn[i] = dis[i];
    i++;
  }
  mn[i] = 0;
  for (mrec *m = mlist; m; m = m->next)
    if (!strcmp(m->name, mn) && m->cls == cls) return;
  mrec *m = calloc(1, sizeof *m);
  memcpy(m->name, mn, sizeof mn);
  m->cls = cls;
  m->first_va = va;
  m->next = mlist;
  mlist = m;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  pthread_mutex_lock(&lock);
  tbrec *rec = NULL;
  bool fresh = false;
  if (hot_n) {
    rec = tb_lookup(qemu_plugin_tb_vaddr(tb), (uint32_t)n, &fresh);
    if (fresh) rec->dis = calloc(n ? n : 1, sizeof(char *));
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &rec->count, 1);
  }
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    uint64_t va = qemu_plugin_insn_vaddr(insn);
    char *dis = qemu_plugin_insn_disas(insn);
    const char *d = dis ? dis : "?";
    if (marker_imm && is_marker(d))
      qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_cb, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (va >= range_lo && va < range_hi) {
      int lanes;
      int cls = classify(d, &lanes);
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &counters[cls], 1);
      if (lanes) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &counters[I_LANES],
                                                            (uint64_t)lanes);
      if (verbose) note_mnemonic(d, cls, va);
    }
    if (fresh) {
      rec->dis[i] = dis;
      dis = NULL;
    }
    free(dis);
  }
  pthread_mutex_unlock(&lock);
}

/* ---- report ------------------------------------------------------------------------- */
static FILE *out_fp = NULL;
static bool use_qemu_log = false;
static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (out_fp)
    fputs(buf, out_fp);
  else if (use_qemu_log)
    qemu_plugin_outs(buf); /* QEMU's log: shown only with -d plugin (or -D file) */
  else
    fputs(buf, stderr);
}

static void emit_counts(const char *seg, const uint64_t *c) {
  char line[1024];
  uint64_t tot = 0;
  for (int k = 0; k < NCLASS; k++) tot += c[k];
  int o = snprintf(line, sizeof line, "insn: seg=%s total=%" PRIu64, seg, tot);
  for (int k = 0; k < NCLASS; k++) o += snprintf(line + o, sizeof line - o, " %s=%" PRIu64, class_name[k], c[k]);
  snprintf(line + o, sizeof line - o, " vfma_lanes=%" PRIu64 "\n", c[I_LANES]);
  emit("%s", line);
}

static int cmp_hot(const void *a, const void *b) {
  const tbrec *x = *(tbrec *const *)a, *y = *(tbrec *const *)b;
  uint64_t wx = x->at_last * x->n, wy = y->at_last * y->n; /* at_last holds the weight here */
  return (wx < wy) - (wx > wy);
}

static void at_exit(qemu_plugin_id_t id, void *udata) {
  (void)id;
  (void)udata;
  pthread_mutex_lock(&lock);
  if (out_path && !strcmp(out_path, "qemu"))
    use_qemu_log = true;
  else if (out_path && !(out_fp = fopen(out_path, "w")))
    fprintf(stderr, "insn: cannot open %s, writing to stderr\n", out_path);
  emit_counts("all", counters);
  emit("insn: markers=%d%s\n", n_marks, marks_overflow ? " (overflow: later markers ignored)" : "");
  for (int m = 0; m + 1 < n_marks; m++) {
    uint64_t d[NCOUNT];
    for (int k = 0; k < NCOUNT; k++) d[k] = marks[m + 1][k] - marks[m][k];
    char seg[16];
    snprintf(seg, sizeof seg, "%d", m + 1);
    emit_counts(seg, d);
  }
  if (hot_n) {
    tbrec **v = malloc(sizeof(tbrec *) * (n_tbrec ? n_tbrec : 1));
    size_t nv = 0;
    uint64_t sum = 0;
    for (size_t b = 0; b < (1u << HBITS); b++)
      for (tbrec *r = htab[b]; r; r = r->next) {
        r->at_last = n_marks >= 2 ? r->at_last - r->at_first : r->count; /* reuse as weight */
        sum += r->at_last * r->n;
        v[nv++] = r;
      }
    qsort(v, nv, sizeof *v, cmp_hot);
    emit("insn: hot blocks (%s), %zu distinct blocks, %" PRIu64 " insns\n",
         n_marks >= 2 ? "first..last marker" : "whole run", nv, sum);
    for (size_t i = 0; i < nv && i < (size_t)hot_n; i++) {
      tbrec *r = v[i];
      if (!r->at_last) break;
      emit("insn: hot #%zu vaddr=0x%" PRIx64 " ninsns=%u execs=%" PRIu64 " insns=%" PRIu64 " share=%.2f%%\n", i + 1,
           r->vaddr, r->n, r->at_last, r->at_last * r->n, sum ? 100.0 * (double)(r->at_last * r->n) / (double)sum : 0.0);
      for (uint32_t j = 0; j < r->n && j < 96; j++) emit("insn:     %s\n", r->dis[j] ? r->dis[j] : "?");
    }
    free(v);
  }
  if (verbose) {
    for (int k = 0; k < NCLASS; k++) {
      char line[4096];
      int o = snprintf(line, sizeof line, "insn: class %s:", class_name[k]);
      for (mrec *m = mlist; m; m = m->next)
        if (m->cls == k && o < (int)sizeof line - 48)
          o += snprintf(line + o, sizeof line - o, verbose > 1 ? " %s@0x%" PRIx64 : " %s", m->name, m->first_va);
      emit("%s\n", line);
    }
  }
  if (out_fp) fclose(out_fp);
  out_fp = NULL;
  pthread_mutex_unlock(&lock);
}

static bool parse_u64(const char *s, uint64_t *v) {
  char *end;
  *v = strtoull(s, &end, 0);
  return end != s;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                                               char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    if (!eq) {
      fprintf(stderr, "insn: bad argument '%s'\n", a);
      return -1;
    }
    size_t kl = (size_t)(eq - a);
    const char *v = eq + 1;
    if (kl == 6 && !strncmp(a, "marker", 6)) {
      marker_imm = strtol(v, NULL, 0);
    } else if (kl == 3 && !strncmp(a, "hot", 3)) {
      hot_n = atoi(v);
    } else if (kl == 7 && !strncmp(a, "verbose", 7)) {
      verbose = atoi(v);
    } else if (kl == 3 && !strncmp(a, "out", 3)) {
      out_path = strdup(v);
    } else if (kl == 5 && !strncmp(a, "range", 5)) {
      const char *dash = strchr(v, '-');
      char lo[64];
      size_t ll = dash ? (size_t)(dash - v) : 0;
      if (!dash || ll >= sizeof lo) {
        fprintf(stderr, "insn: range must be A-B\n");
        return -1;
      }
      memcpy(lo, v, ll);
      lo[ll] = 0;
      if (!parse_u64(lo, &range_lo) || !parse_u64(dash + 1, &range_hi)) {
        fprintf(stderr, "insn: bad range '%s'\n", v);
        return -1;
      }
    } else {
      fprintf(stderr, "insn: unknown argument '%s'\n", a);
      return -1;
    }
  }
  marks = calloc(MAX_MARKS, sizeof *marks);
  if (!marks) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
