/* asmloops.h — loops in emitted assembly, for the suites that read tec's code (test_neon,
 * test_arm_tiles, test_qnn_x86_asm): a loop is a label and a backward branch to it (ARM's or
 * x86's) inside one function ("fn:" .. ".Lfunc_end"), found without LLVM's verbose comments;
 * an innermost loop contains no other. Also: lines matching a regex, and the stack accesses
 * of a loop (ARM syntax). */
#ifndef TEC_ASMLOOPS_H
#define TEC_ASMLOOPS_H

typedef struct tu_asm_loop {
  char fn[128]; /* the function it is in */
  char *text;   /* its lines, label .. backward branch (malloc'd) */
  int lines;
} tu_asm_loop;

/* The innermost loops of the functions named fn (exact) or, if prefix, starting with fn, into
 * out (at most max); returns how many. */
int tu_asm_inner_loops(const char *as, const char *fn, int prefix, tu_asm_loop *out, int max);
void tu_asm_loops_free(tu_asm_loop *l, int n);
/* Lines of text matching the extended regex re (-1 if re does not compile). */
int tu_count_re(const char *text, const char *re);

/* Loads and stores whose address is the stack pointer or a register set from it ("add r2,
 * sp, #64" then "vld1.64 {d16, d17}, [r2:128]", ARMv7's way to reach a spilled q register),
 * push/pop included; ARMv7 and AArch64 syntax. */
typedef struct tu_stack_access {
  int vec_loads, vec_stores; /* of vector / FP registers (spilled tiles) */
  int gpr_loads, gpr_stores; /* of general registers */
} tu_stack_access;
tu_stack_access tu_asm_stack_access(const char *loop);

#endif
