/* llvm_init.c — LLVM made ready once per process: every target initialized (tec cross-builds
 * for x86-64, AArch64 and ARMv7 from any host) and tec's own LLVM option set.
 */
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "target/internal.h"

static pthread_once_t tgt_init_once = PTHREAD_ONCE_INIT;

/* LLVM's machine scheduler, with its cyclic critical path analysis on (the default), hoists a
 * loop body's loads ahead to shorten the loop-carried path; in a register tile of 31 live
 * AVX-512 vectors (conv2d_nchwc's 14 x 2: 28 accumulators, 2 weights, 1 broadcast) that
 * spills accumulators inside the hot loop (46-54 stack accesses per 448 multiply-adds, LLVM 14
 * and 19), and the tile runs slower than a smaller one. Off, the same tile has no spill and
 * ResNet-18's 128x28x28 -> 256 stride-2 layer runs 162 -> 180 GFLOP/s (1 thread, Xeon family 6
 * model 167); the templates' default tiles elsewhere move within noise (winograd, depthwise,
 * pointwise). The option is LLVM's process-wide state: it is parsed once, on tec's first LLVM
 * use; TEC_LLVM_SCHED_DEFAULT=1 leaves LLVM's defaults alone (for a program that parses LLVM
 * options itself: LLVM refuses an option given twice). */
static void tgt_llvm_options(void) {
  const char *keep = getenv("TEC_LLVM_SCHED_DEFAULT");
  if (keep && strcmp(keep, "1") == 0) return;
  const char *const argv[] = {"tec", "-misched-cyclicpath=false"};
  LLVMParseCommandLineOptions(2, argv, NULL);
}

static void tgt_llvm_init_all(void) {
  /* All targets, not the Native macros: those are fixed by the build machine's llvm-config.h,
   * which is wrong when tec itself is cross-built. */
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers();
  tgt_llvm_options();
}

void tgt_llvm_init(void) { pthread_once(&tgt_init_once, tgt_llvm_init_all); }

