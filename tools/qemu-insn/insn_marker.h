/* insn_marker.h - region marker for the qemu-insn plugin (insn.c).
 * INSN_MARK() executes `hint #0x71`, an architectural NOP on AArch64 (harmless on real
 * hardware and without the plugin).  Under `qemu-aarch64 -plugin libinsn.so`, each executed
 * marker snapshots the counters; the report has one line per segment between markers.
 * Typical use: warm up, INSN_MARK(); then { kernel(); INSN_MARK(); } K times -> K segments,
 * each one kernel call (plus the marker instruction itself). */
#ifndef INSN_MARKER_H
#define INSN_MARKER_H
#if defined(__aarch64__)
#define INSN_MARK() __asm__ __volatile__("hint #0x71" ::: "memory")
#elif defined(__arm__) && defined(__thumb2__)
/* ARMv7 Thumb-2: the same hint, 32-bit encoding (a NOP); capstone prints "hint.w #0x71" */
#define INSN_MARK() __asm__ __volatile__(".inst.w 0xf3af8071" ::: "memory")
#elif defined(__arm__)
/* ARMv7 A32: hint #0x71 (a NOP hint) */
#define INSN_MARK() __asm__ __volatile__(".inst 0xe320f071" ::: "memory")
#else
#define INSN_MARK() ((void)0)
#endif
#endif
