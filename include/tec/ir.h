/* ir.h — the one IR of tec: expressions and statements, from tensor expressions to the
 * lowered loop program that codegen reads.
 *
 * Semantics (every pass relies on these):
 * - Nodes are immutable and owned by the tec_ctx that made them (arena; freed with the ctx).
 *   A mutator returns the same pointer when nothing changed, so "did a pass change anything"
 *   is a pointer compare.
 * - Index arithmetic is int64 (TEC_INDEX). Signed integer overflow is undefined; passes may
 *   reassociate and fold integer + - * freely. Float arithmetic is never reassociated by tec
 *   (LLVM may contract a*b+c into fma: tec emits llvm.fmuladd for that pattern).
 * - FLOORDIV/FLOORMOD round toward negative infinity (floormod has the divisor's sign): this is
 *   what users get from ir_div/ir_mod on integers. DIV/MOD on integers are C's truncating
 *   forms; only the simplifier introduces them, where it has proved both operands >= 0.
 *   DIV on floats is true division. Division by zero is undefined.
 * - Vectors: a node whose type has lanes > 1 computes that many lanes at once. RAMP(base,
 *   stride) is [base, base+stride, ...]; BROADCAST(x) repeats a scalar. Binary operands have
 *   equal types (constructors check this; an integer immediate meeting a float is converted).
 * - READ and REDUCE exist only before storage flattening; LOAD/STORE only after. PROVIDE and
 *   REALIZE are the multi-dimensional forms of STORE and ALLOCATE.
 * - Variables are compared by pointer; names are for printing only.
 */
#ifndef TEC_IR_H
#define TEC_IR_H

#include <stdint.h>
#include <stdio.h>
#include "tec/dtype.h"

typedef struct tec_ctx tec_ctx;
typedef struct te_tensor te_tensor;
typedef struct ir_expr ir_expr;
typedef struct ir_stmt ir_stmt;

/* Expression kinds. X(KIND, printed name, number of expression children a/b/c). */
#define IR_FOR_EACH_EXPR(X)                                                      \
  X(INT_IMM, "int", 0)      /* v.i: integer or bool constant */                  \
  X(FLOAT_IMM, "float", 0)  /* v.f: floating constant */                         \
  X(VAR, "var", 0)          /* a variable: loop, size, reduce axis or buffer */  \
  X(ADD, "+", 2)            /* a + b */                                          \
  X(SUB, "-", 2)            /* a - b */                                          \
  X(MUL, "*", 2)            /* a * b */                                          \
  X(DIV, "/", 2)            /* float: a / b; int: truncating (operands >= 0) */  \
  X(MOD, "%", 2)            /* int: truncating remainder (operands >= 0) */      \
  X(FLOORDIV, "floordiv", 2) /* int: floor(a / b) */                             \
  X(FLOORMOD, "floormod", 2) /* int: a - b * floor(a / b) */                     \
  X(MIN, "min", 2)          /* smaller of a, b */                                \
  X(MAX, "max", 2)          /* larger of a, b */                                 \
  X(EQ, "==", 2)            /* comparisons: bool result */                       \
  X(NE, "!=", 2)                                                                 \
  X(LT, "<", 2)                                                                  \
  X(LE, "<=", 2)                                                                 \
  X(GT, ">", 2)                                                                  \
  X(GE, ">=", 2)                                                                 \
  X(AND, "&&", 2)           /* bool and (both sides evaluated) */                \
  X(OR, "||", 2)            /* bool or */                                        \
  X(NOT, "!", 1)            /* bool not */                                       \
  X(SELECT, "select", 3)    /* a ? b : c; loads of the untaken arm do not happen */ \
  X(CAST, "cast", 1)        /* a converted to the node's type */                 \
  X(CALL, "call", 0)        /* intrinsic (v.i = ir_intrinsic) over args */       \
  X(READ, "read", 0)        /* tensor[args]: before flattening */                \
  X(REDUCE, "reduce", 2)    /* combine a over axes (args) where b (or NULL) */   \
  X(LOAD, "load", 3)        /* a = buffer var, b = index, c = predicate/NULL */  \
  X(RAMP, "ramp", 2)        /* a = base, b = stride, lanes in type */            \
  X(BROADCAST, "broadcast", 1) /* a repeated, lanes in type */                   \
  X(LET, "let", 2)          /* let var = a in b */

/* Statement kinds. X(KIND, printed name). */
#define IR_FOR_EACH_STMT(X)                                                      \
  X(FOR, "for")          /* for var in [a, a+b): body, with for_kind */          \
  X(STORE, "store")      /* var(buffer)[a] = b, where c (predicate) or NULL */   \
  X(PROVIDE, "provide")  /* tensor[args] = a: before flattening */               \
  X(REALIZE, "realize")  /* tensor lives over args (min,extent pairs): body */   \
  X(ALLOCATE, "allocate") /* var(buffer) of a elements of type: body */          \
  X(SEQ, "seq")          /* seq[0]; seq[1]; ... */                               \
  X(IF, "if")            /* if a then body else else_body (or NULL) */          \
  X(LET_STMT, "let")     /* let var = a in body */                              \
  X(ATTR, "attr")        /* annotation key = a (str in name) around body */      \
  X(EVALUATE, "evaluate") /* evaluate a for its effect (calls) */               \
  X(PRODUCE, "produce")  /* marks the computation of tensor: body */                \
  X(ASSERT, "assert")    /* unless a holds: fail with the printf message name (%lld of b, \
                          * c: int64 or NULL) and return -1 (the entry's argument checks) */

typedef enum ir_expr_kind {
#define IR_X(k, s, n) IR_##k,
  IR_FOR_EACH_EXPR(IR_X)
#undef IR_X
  IR_EXPR_KIND_COUNT
} ir_expr_kind;

typedef enum ir_stmt_kind {
#define IR_X(k, s) IR_S_##k,
  IR_FOR_EACH_STMT(IR_X)
#undef IR_X
  IR_STMT_KIND_COUNT
} ir_stmt_kind;

/* Intrinsics a CALL may name (v.i). */
typedef enum ir_intrinsic {
  IR_INTRIN_EXP,   /* e^x */
  IR_INTRIN_LOG,   /* natural log */
  IR_INTRIN_SQRT,  /* square root */
  IR_INTRIN_TANH,  /* hyperbolic tangent */
  IR_INTRIN_FABS,  /* absolute value (float) */
  IR_INTRIN_POW,   /* x^y */
  IR_INTRIN_FLOOR, /* round down */
  IR_INTRIN_CEIL,  /* round up */
  IR_INTRIN_FMA,   /* a*b+c, fused or not (llvm.fmuladd) */
  IR_INTRIN_PREFETCH, /* prefetch(t[args]): a hint to bring the cache line holding the element
                       * closer (llvm.prefetch); no value, no fault, no effect on results.
                       * Its argument is a READ (a LOAD after flattening); make it with
                       * ir_prefetch and use it in an EVALUATE statement. */
  IR_INTRIN_LIKELY,   /* likely(cond): cond itself (bool in, bool out, any lanes), marking a
                       * condition that holds on most iterations, such as a padding test.
                       * Loop partitioning splits loops at the thresholds of its conjuncts
                       * (comparisons linear in a loop variable) and drops them from the
                       * clean middle part; an unmarked select is never partitioned. Make
                       * it with ir_likely. */
  IR_INTRIN_DL_ARG,   /* dl_arg(field, i, d): int64 read of the checked entry's arguments
                       * (ir_dl_field; i: the argument, d: the dimension; pointers as their
                       * address). Only in the entry program lower/entry_checks.c builds; make
                       * it with ir_dl_arg. */
  IR_INTRIN_EXTERN,   /* extern_call(...): the call of an extern stage's C function (te_extern);
                       * `tensor` is the stage's output. Before lowering it is the stage's
                       * body, over one read of each input (what it reads, for the passes that
                       * look); lower/extern_nest.c makes the real call over the stage's region,
                       * lower/extern_call.c its operands after flattening (layout there). Made
                       * with ir_extern_call only. */
  IR_INTRIN_ROUND_EVEN, /* round to the nearest integer, ties to even (llvm.roundeven; IEEE
                         * roundToIntegralTiesToEven, whatever the rounding mode): the
                         * requantization of the int8 templates (docs/quantized.md) */
  IR_INTRIN_DOT4,     /* dot4(acc, a, b): the 8-bit dot product into int32 lanes that
                       * sch_tensorize makes (lower/tensorize.c). acc: int32 x L; a, b: int8
                       * or uint8 (each its own), 4L lanes (lane l reads elements 4l..4l+3)
                       * or 4 lanes (one group every lane shares). Lane l of the result is
                       *   acc[l] + sum_{q<4} int32(a[4l+q]) * int32(b[4l+q])
                       * exactly (int32 wraps as every tec int32 sum). A 4th argument, a
                       * constant layout (ir_dot4_t), reads a (bit 0) or b (bit 1) as [4][L]:
                       * a[q*L + l] in place of a[4l+q]. Layout bit 2 (ir_dot4_lane): a
                       * holds G groups of 4 (4G bytes, G = 2 or 4) and group g = layout >> 3
                       * is shared by every lane (AArch64: sdot by element). Codegen picks the
                       * instruction from the target's features (codegen_dot.c). Make it with
                       * ir_dot4. */
  IR_INTRIN_MMLA,     /* mmla(acc, a, b): a 2x2 int32 block plus the product of a's 2 rows
                       * by b's 2 columns of 8 bytes (sch_tensorize; AArch64 smmla):
                       *   acc[2i+j] + sum_{k<8} int32(a[8i+k]) * int32(b[8j+k])
                       * acc: int32 x 4; a, b: int8 or uint8 x 16. Make it with ir_mmla. */
  IR_INTRIN_ZIP_LO,   /* zip_lo(a, b): the low halves of a and b interleaved,
                       * [a0, b0, a1, b1, ..., a(L/2-1), b(L/2-1)]; a and b of one type, L
                       * lanes, L even. Pure data movement (shufflevector: zip1 on AArch64,
                       * unpcklps / vpermt2ps on x86). lower/transpose_block.c makes it. */
  IR_INTRIN_ZIP_HI,   /* zip_hi(a, b): the high halves interleaved, [a(L/2), b(L/2), ...] */
  IR_INTRIN_COUNT
} ir_intrinsic;

/* What dl_arg reads: the entry's (DLTensor **args, int32 nargs) and args[i]'s fields. */
typedef enum ir_dl_field {
  IR_DL_NARGS, IR_DL_ARGS, IR_DL_TENSOR, IR_DL_DEVICE, IR_DL_NDIM, IR_DL_CODE, IR_DL_BITS,
  IR_DL_LANES, IR_DL_SHAPE_PTR, IR_DL_SHAPE, IR_DL_STRIDES_PTR, IR_DL_STRIDE, IR_DL_DATA,
  IR_DL_OFFSET, IR_DL_COMPACT /* 1 if args[i] is compact and aligned (tec_rt_dl_compact) */,
  IR_DL_FIELD_COUNT
} ir_dl_field;

/* How a reduction combines (v.i of a REDUCE). */
typedef enum ir_combiner {
  IR_COMB_SUM,  /* identity 0 */
  IR_COMB_PROD, /* identity 1 */
  IR_COMB_MAX,  /* identity: lowest value of the type */
  IR_COMB_MIN,  /* identity: highest value of the type */
  IR_COMB_USER  /* a te_reducer (the REDUCE's `reducer`): value `value_index` of a tuple of
                 * reductions that combine together (te_reduce; lowered by schedule_ops.c) */
} ir_combiner;

/* Kind of a FOR loop. */
typedef enum ir_for_kind {
  IR_FOR_SERIAL,     /* plain loop */
  IR_FOR_PARALLEL,   /* iterations run on the thread pool */
  IR_FOR_VECTORIZED, /* becomes vector code (constant extent) */
  IR_FOR_UNROLLED    /* fully unrolled (constant extent) */
} ir_for_kind;

/* Kind of a variable (VAR's v.i). */
typedef enum ir_var_kind {
  IR_VAR_INDEX,  /* a loop or data-parallel axis variable */
  IR_VAR_SIZE,   /* a symbolic size, bound from the actual tensors */
  IR_VAR_REDUCE, /* a reduction axis */
  IR_VAR_BUFFER, /* the data pointer of a buffer (type handle) */
  IR_VAR_LET     /* bound by LET / LET_STMT */
} ir_var_kind;

struct ir_expr {
  ir_expr_kind kind;
  tec_dtype type;
  tec_ctx *ctx;                 /* owner */
  const ir_expr *a, *b, *c;     /* children, meaning by kind (see the list above) */
  int nargs;                    /* CALL/READ arguments; REDUCE axes */
  const ir_expr *const *args;
  union {
    int64_t i;                  /* INT_IMM value; CALL intrinsic; REDUCE combiner; VAR kind */
    double f;                   /* FLOAT_IMM value */
  } v;
  const char *name;             /* VAR name; CALL intrinsic name */
  const ir_expr *var;           /* LET: the bound variable */
  const te_tensor *tensor;      /* READ: the tensor read */
  const ir_expr *dom_min, *dom_extent; /* VAR of an axis: its declared range (or NULL) */
  const struct te_reducer *reducer; /* REDUCE with IR_COMB_USER: the reducer */
  int value_index;              /* REDUCE with IR_COMB_USER: which of its values this is */
  int id;                       /* unique per ctx (VAR: for printing) */
};

struct ir_stmt {
  ir_stmt_kind kind;
  tec_ctx *ctx;
  const ir_expr *var;           /* FOR loop var; STORE/ALLOCATE buffer var; LET var;
                                   ATTR buffer_reuse: the buffer renamed away */
  const ir_expr *a, *b, *c;     /* meaning by kind (see the list above) */
  const ir_stmt *body;          /* FOR/REALIZE/ALLOCATE/LET/ATTR/PRODUCE body; IF then */
  const ir_stmt *else_body;     /* IF else, or NULL */
  int n;                        /* SEQ length; PROVIDE/REALIZE number of args */
  const ir_stmt *const *seq;    /* SEQ items */
  const ir_expr *const *args;   /* PROVIDE indices; REALIZE (min, extent) pairs: 2*n */
  const te_tensor *tensor;      /* PROVIDE/REALIZE/PRODUCE */
  tec_dtype type;               /* ALLOCATE element type */
  ir_for_kind for_kind;         /* FOR */
  const char *name;             /* ATTR key */
};

/* ---- names ---- */
const char *ir_expr_kind_name(ir_expr_kind k);
const char *ir_stmt_kind_name(ir_stmt_kind k);
const char *ir_intrinsic_name(ir_intrinsic i);
const char *ir_for_kind_name(ir_for_kind k);

/* ---- expression constructors ----
 * Each validates its operands. A NULL operand yields NULL without a new error (so a chain of
 * calls can be checked once at the end); a type error records a message in the ctx
 * (tec_ctx_error) and returns NULL. */
const ir_expr *ir_int(tec_ctx *ctx, int64_t v);                 /* int64 immediate */
const ir_expr *ir_int_t(tec_ctx *ctx, tec_dtype t, int64_t v);  /* immediate of type t */
const ir_expr *ir_float(tec_ctx *ctx, double v);                /* float32 immediate */
const ir_expr *ir_float_t(tec_ctx *ctx, tec_dtype t, double v); /* immediate of type t */
const ir_expr *ir_bool(tec_ctx *ctx, int v);
const ir_expr *ir_var(tec_ctx *ctx, const char *name, tec_dtype t, ir_var_kind kind);
const ir_expr *ir_add(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_sub(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_mul(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_div(const ir_expr *a, const ir_expr *b);      /* float: /, int: floordiv */
const ir_expr *ir_mod(const ir_expr *a, const ir_expr *b);      /* int: floormod */
const ir_expr *ir_floordiv(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_floormod(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_truncdiv(const ir_expr *a, const ir_expr *b); /* DIV (int, >= 0 operands) */
const ir_expr *ir_truncmod(const ir_expr *a, const ir_expr *b); /* MOD */
const ir_expr *ir_min(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_max(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_eq(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_ne(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_lt(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_le(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_gt(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_ge(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_and(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_or(const ir_expr *a, const ir_expr *b);
const ir_expr *ir_not(const ir_expr *a);
const ir_expr *ir_select(const ir_expr *cond, const ir_expr *t, const ir_expr *f);
const ir_expr *ir_cast(tec_dtype t, const ir_expr *a);
const ir_expr *ir_call(tec_ctx *ctx, ir_intrinsic fn, int nargs, const ir_expr *const *args);
/* prefetch(access): access is a scalar READ or LOAD of the element whose line to prefetch */
const ir_expr *ir_prefetch(const ir_expr *access);
/* likely(cond): cond (bool) marked as true on most iterations (see IR_INTRIN_LIKELY) */
const ir_expr *ir_likely(const ir_expr *cond);
/* dl_arg(field, arg, dim) (see IR_INTRIN_DL_ARG) */
const ir_expr *ir_dl_arg(tec_ctx *ctx, ir_dl_field field, int arg, int dim);
/* extern_call over args (any number), of type t, for the extern stage whose output is t_out
 * (see IR_INTRIN_EXTERN). */
const ir_expr *ir_extern_call(tec_ctx *ctx, const te_tensor *t_out, tec_dtype t, int nargs,
                              const ir_expr *const *args);
/* dot4(acc, a, b) (see IR_INTRIN_DOT4): NULL with an error naming the operand and the rule
 * when the types or lanes do not fit. */
const ir_expr *ir_dot4(const ir_expr *acc, const ir_expr *a, const ir_expr *b);
/* dot4 with operands in the transposed layout: bit 0 of `layout` (a), bit 1 (b): the operand's
 * 4L bytes are [4][L] (lane l's group q at element q*L + l: L consecutive lanes of 4
 * consecutive rows, e.g. 4 pixels of a channel block), not [L][4]. A 4th argument (the
 * constant layout) when not 0; layout 0 is ir_dot4. */
const ir_expr *ir_dot4_t(const ir_expr *acc, const ir_expr *a, const ir_expr *b, int layout);
/* dot4 with a's group `group` shared by every lane: a holds 2 or 4 groups of 4 bytes (8 or 16
 * lanes; one 8- or 16-byte read), lane l is acc[l] + sum_{q<4} a[4*group+q] * b[4l+q]. The
 * layout constant 4 | group << 3 (see IR_INTRIN_DOT4); b as ir_dot4's (4L lanes, or 4). */
const ir_expr *ir_dot4_lane(const ir_expr *acc, const ir_expr *a, const ir_expr *b, int group);
/* mmla(acc, a, b) (see IR_INTRIN_MMLA), checked like ir_dot4. */
const ir_expr *ir_mmla(const ir_expr *acc, const ir_expr *a, const ir_expr *b);
/* zip_lo(a, b) when hi is 0, zip_hi(a, b) otherwise (see IR_INTRIN_ZIP_LO): NULL with an error
 * unless a and b are vectors of one type and an even lane count. */
const ir_expr *ir_zip(const ir_expr *a, const ir_expr *b, int hi);
/* The condition c if e is likely(c), else NULL. */
const ir_expr *ir_likely_arg(const ir_expr *e);
const ir_expr *ir_exp(const ir_expr *a);
const ir_expr *ir_log(const ir_expr *a);
const ir_expr *ir_sqrt(const ir_expr *a);
const ir_expr *ir_tanh(const ir_expr *a);
const ir_expr *ir_fabs(const ir_expr *a);
const ir_expr *ir_round_even(const ir_expr *a); /* float: nearest integer, ties to even */
const ir_expr *ir_read(tec_ctx *ctx, const te_tensor *t, int nargs, const ir_expr *const *idx);
const ir_expr *ir_reduce(ir_combiner comb, const ir_expr *src, int naxes,
                         const ir_expr *const *axes, const ir_expr *cond);
/* A reduction like `like` (its combiner, the reducer and value of IR_COMB_USER, and its init)
 * over new parts: what a pass that rewrites a reduction's source, axes or condition builds. A
 * pass that rewrites the output's variables rewrites the init too (ir_reduce_set_init). */
const ir_expr *ir_reduce_like(const ir_expr *like, const ir_expr *src, int naxes,
                              const ir_expr *const *axes, const ir_expr *cond);
/* red (a REDUCE) with its running value starting at init instead of the combiner's identity
 * (TVM's init=; NULL: the identity). The REDUCE keeps init in `c`; te_reduce_init checks it. */
const ir_expr *ir_reduce_set_init(const ir_expr *red, const ir_expr *init);
const ir_expr *ir_load(tec_dtype t, const ir_expr *buf, const ir_expr *index,
                       const ir_expr *pred);
const ir_expr *ir_ramp(const ir_expr *base, const ir_expr *stride, int lanes);
const ir_expr *ir_broadcast(const ir_expr *a, int lanes);
const ir_expr *ir_let(const ir_expr *var, const ir_expr *value, const ir_expr *body);
/* Same kind as e with new children (a, b, c, args); used by mutators. */
const ir_expr *ir_expr_with(const ir_expr *e, const ir_expr *a, const ir_expr *b,
                            const ir_expr *c, const ir_expr *const *args);

/* Checked downcast-style queries. */
int ir_is_const_int(const ir_expr *e, int64_t *out); /* 1 if e is an INT_IMM (or broadcast of one) */
int ir_is_const_float(const ir_expr *e, double *out);
int ir_is_zero(const ir_expr *e);
int ir_is_one(const ir_expr *e);
/* The identity of a combiner for type t. */
const ir_expr *ir_combiner_identity(tec_ctx *ctx, ir_combiner comb, tec_dtype t);
/* comb(x, y) as an expression. */
const ir_expr *ir_combine(ir_combiner comb, const ir_expr *x, const ir_expr *y);

/* ---- statement constructors (NULL in, NULL out) ---- */
const ir_stmt *ir_for(const ir_expr *var, const ir_expr *min, const ir_expr *extent,
                      ir_for_kind kind, const ir_stmt *body);
const ir_stmt *ir_store(const ir_expr *buf, const ir_expr *index, const ir_expr *value,
                        const ir_expr *pred);
const ir_stmt *ir_provide(const te_tensor *t, int nargs, const ir_expr *const *idx,
                          const ir_expr *value);
const ir_stmt *ir_realize(const te_tensor *t, int ndim, const ir_expr *const *min_extent,
                          const ir_stmt *body);
const ir_stmt *ir_allocate(const ir_expr *buf, tec_dtype t, const ir_expr *size,
                           const ir_stmt *body);
const ir_stmt *ir_seq(tec_ctx *ctx, int n, const ir_stmt *const *items); /* flattens, drops NULL */
const ir_stmt *ir_seq2(const ir_stmt *a, const ir_stmt *b);
const ir_stmt *ir_if(const ir_expr *cond, const ir_stmt *then_s, const ir_stmt *else_s);
const ir_stmt *ir_let_stmt(const ir_expr *var, const ir_expr *value, const ir_stmt *body);
const ir_stmt *ir_attr(const char *key, const ir_expr *value, const ir_stmt *body);
/* attr buffer_reuse = buf around body: storage reuse (storage_rewrite.c) renamed the buffer
 * `was` to `buf` in body, which now holds what `was` held; inert, printed as
 * `// buf now holds was`. */
#define IR_ATTR_BUFFER_REUSE "buffer_reuse"
const ir_stmt *ir_attr_buffer_reuse(const ir_expr *buf, const ir_expr *was, const ir_stmt *body);
const ir_stmt *ir_evaluate(const ir_expr *value);
const ir_stmt *ir_produce(const te_tensor *t, const ir_stmt *body);
/* assert(cond, msg, a, b): msg a printf format with a %lld for each of a, b given (int64). */
const ir_stmt *ir_assert(const ir_expr *cond, const char *msg, const ir_expr *a,
                         const ir_expr *b);
/* Shallow copy of s with new children; used by mutators. */
const ir_stmt *ir_stmt_with(const ir_stmt *s, const ir_expr *a, const ir_expr *b,
                            const ir_expr *c, const ir_stmt *body, const ir_stmt *else_body,
                            const ir_stmt *const *seq, const ir_expr *const *args);

/* ---- printing: stable text, the debug dump and the test oracle ---- */
void ir_print_expr(FILE *f, const ir_expr *e);
void ir_print_stmt(FILE *f, const ir_stmt *s);
/* Display names for variables (a lowered function's loops: lower/loop_names.c): vars[i]
 * prints as names[i]; a variable not listed prints as its own name. */
typedef struct ir_print_names {
  int n;
  const ir_expr *const *vars;
  const char *const *names;
  /* called before each loop is printed (NULL: not), e.g. to note the line it starts on */
  void (*on_for)(void *user, const ir_stmt *loop);
  void *user;
} ir_print_names;
void ir_print_stmt_names(FILE *f, const ir_stmt *s, const ir_print_names *nm);
/* Text in the ctx's arena. */
const char *ir_expr_str(const ir_expr *e);
const char *ir_stmt_str(const ir_stmt *s);

/* ---- mutators and visitors ----
 * A table of function pointers, one per kind, each defaulting to "recurse into children and
 * rebuild only if one changed". A pass overrides the slots it cares about and calls
 * ir_mutate_* for children. */
typedef struct ir_mutator ir_mutator;
struct ir_mutator {
  const ir_expr *(*expr[IR_EXPR_KIND_COUNT])(ir_mutator *m, const ir_expr *e);
  const ir_stmt *(*stmt[IR_STMT_KIND_COUNT])(ir_mutator *m, const ir_stmt *s);
  tec_ctx *ctx;
  void *user;
};
void ir_mutator_init(ir_mutator *m, tec_ctx *ctx, void *user);
const ir_expr *ir_mutate_expr(ir_mutator *m, const ir_expr *e);  /* NULL-safe dispatch */
const ir_stmt *ir_mutate_stmt(ir_mutator *m, const ir_stmt *s);
const ir_expr *ir_mutate_expr_default(ir_mutator *m, const ir_expr *e); /* children only */
const ir_stmt *ir_mutate_stmt_default(ir_mutator *m, const ir_stmt *s);

typedef struct ir_visitor ir_visitor;
struct ir_visitor {
  void (*expr[IR_EXPR_KIND_COUNT])(ir_visitor *v, const ir_expr *e);
  void (*stmt[IR_STMT_KIND_COUNT])(ir_visitor *v, const ir_stmt *s);
  void *user;
};
void ir_visitor_init(ir_visitor *v, void *user);
void ir_visit_expr(ir_visitor *v, const ir_expr *e);   /* NULL-safe dispatch */
void ir_visit_stmt(ir_visitor *v, const ir_stmt *s);
void ir_visit_expr_default(ir_visitor *v, const ir_expr *e);
void ir_visit_stmt_default(ir_visitor *v, const ir_stmt *s);

/* ---- small utilities used by many passes ---- */
/* Replace each vars[i] (by pointer) with values[i] in e / s. */
const ir_expr *ir_substitute(const ir_expr *e, int n, const ir_expr *const *vars,
                             const ir_expr *const *values);
const ir_stmt *ir_substitute_stmt(const ir_stmt *s, int n, const ir_expr *const *vars,
                                  const ir_expr *const *values);
/* 1 if var occurs in e. */
int ir_uses_var(const ir_expr *e, const ir_expr *var);
int ir_stmt_uses_var(const ir_stmt *s, const ir_expr *var);
/* Structural equality (variables by pointer). */
int ir_expr_equal(const ir_expr *a, const ir_expr *b);

#endif
