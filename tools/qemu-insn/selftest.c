/* selftest.c - a known instruction mix between two markers, to check the plugin's classes;
 * AArch64, or ARMv7 (Thumb-2, tec's addition: `make check-a32`, the second half below).
 * Build: aarch64-linux-gnu-gcc -O1 -march=armv8.2-a+fp16+dotprod+rcpc selftest.c -o selftest
 * Run:   qemu-aarch64 -L /usr/aarch64-linux-gnu -plugin libinsn.so,out=st.insn ./selftest
 * It prints the line the plugin must report for segment 1 (`make check` compares them).
 * Per loop iteration (40 instructions):
 *   vfma 5 (lanes 4+4+2+8+4; the two fp16 ones are not decoded by capstone 4 -> encoding fallback)
 *   vfp 5, vother 5 (incl. SDOT: fallback), vldst 8, fpldst 4, sldst 5 (incl. LDAPR: fallback),
 *   prfm 1, branch 2, fpscalar 2, other 3 (2 + the loop's subs)
 * Outside the loop: mov (other) and one of the two markers (other).
 */
#include <stdint.h>
#include <stdio.h>

#define N 1000

int main(void) {
  static float src[64] __attribute__((aligned(64)));
  static float dst[64] __attribute__((aligned(64)));
  for (int i = 0; i < 64; i++) src[i] = (float)i;
  float *a = src, *b = dst;
#if defined(__aarch64__)
  __asm__ __volatile__(
      "hint #0x71\n\t"
      "mov x15, #1000\n" /* = N */
      "1:\n\t"
      /* vfma */
      "fmla v0.4s, v1.4s, v2.4s\n\t"
      "fmla v0.4s, v1.4s, v2.s[1]\n\t"
      "fmls v3.2s, v1.2s, v2.2s\n\t"
      "fmla v4.8h, v5.8h, v6.8h\n\t"
      "fmla v4.4h, v5.4h, v6.h[3]\n\t"
      /* vfp */
      "fadd v7.4s, v7.4s, v16.4s\n\t"
      "fmax v7.4s, v7.4s, v16.4s\n\t"
      "fmul v7.4s, v17.4s, v18.s[0]\n\t"
      "fcvtzs v19.4s, v7.4s\n\t"
      "scvtf v19.4s, v19.4s\n\t"
      /* vother */
      "dup v20.4s, v0.s[0]\n\t"
      "mov v21.16b, v20.16b\n\t"
      "ext v21.16b, v20.16b, v21.16b, #4\n\t"
      "sdot v22.4s, v23.16b, v24.16b\n\t"
      "fmov v25.4s, #1.0\n\t"
      /* vldst */
      "ld1 {v26.4s, v27.4s}, [%0]\n\t"
      "ldr q28, [%0]\n\t"
      "ldp q29, q30, [%0]\n\t"
      "st1 {v26.4s}, [%1]\n\t"
      "str q28, [%1]\n\t"
      "ld1r {v31.4s}, [%0]\n\t"
      "ld4 {v26.4s, v27.4s, v28.4s, v29.4s}, [%0]\n\t"
      "ldur q30, [%0, #4]\n\t"
      /* fpldst */
      "ldr d25, [%0]\n\t"
      "ldr s26, [%0]\n\t"
      "str d25, [%1]\n\t"
      "ldp d27, d28, [%0]\n\t"
      /* sldst */
      "ldr x9, [%0]\n\t"
      "ldp x10, x11, [%0]\n\t"
      "str w9, [%1]\n\t"
      "ldrb w12, [%0]\n\t"
      "ldapr w13, [%0]\n\t"
      /* prfm */
      "prfm pldl1keep, [%0, #64]\n\t"
      /* branch (1 here + the loop's b.ne) */
      "b 2f\n"
      "2:\n\t"
      /* fpscalar */
      "fmadd s29, s30, s31, s29\n\t"
      "fadd d30, d30, d31\n\t"
      /* other (2 here + the loop's subs) */
      "add x12, x12, #1\n\t"
      "eor x14, x14, x14\n\t"
      "subs x15, x15, #1\n\t"
      "b.ne 1b\n\t"
      "hint #0x71\n\t"
      :
      : "r"(a), "r"(b)
      : "memory", "cc", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "v0", "v1", "v2", "v3", "v4", "v5", "v6",
        "v7", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",
        "v30", "v31");
  printf("insn: seg=1 total=%d vfma=%d vfp=%d vother=%d vldst=%d fpldst=%d sldst=%d prfm=%d branch=%d "
         "fpscalar=%d other=%d vfma_lanes=%d\n",
         40 * N + 2, 5 * N, 5 * N, 5 * N, 8 * N, 4 * N, 5 * N, 1 * N, 2 * N, 2 * N, 3 * N + 2, 22 * N);
#else
/* ARMv7: arm-linux-gnueabihf-gcc -O1 -mfpu=neon-vfpv4 selftest.c, under qemu-arm. Per loop
 * iteration (30 instructions): vfma 3 (lanes 4+4+2), vfp 3, vother 3, vldst 6, fpldst 2,
 * sldst 5, prfm 1, branch 2, fpscalar 2, other 3 (2 + the loop's subs); outside the loop the
 * counter's mov and one of the two markers (hint.w #0x71), both other. */
  __asm__ __volatile__(
      ".inst.w 0xf3af8071\n\t" /* INSN_MARK() (insn_marker.h), inside: nothing between */
      "mov r12, #1000\n" /* = N */
      "1:\n\t"
      /* vfma */
      "vfma.f32 q0, q1, q2\n\t"
      "vmla.f32 q0, q1, d4[1]\n\t"
      "vfma.f32 d0, d1, d2\n\t"
      /* vfp */
      "vadd.f32 q3, q3, q8\n\t"
      "vmax.f32 q3, q3, q8\n\t"
      "vmul.f32 d6, d7, d8\n\t"
      /* vother */
      "vdup.32 q9, d0[0]\n\t"
      "vmov q10, q9\n\t"
      "vext.8 q10, q9, q10, #4\n\t"
      /* vldst */
      "vld1.32 {d16, d17}, [%0]\n\t"
      "vst1.32 {d16, d17}, [%1]\n\t"
      "vld1.32 {d18[], d19[]}, [%0]\n\t"
      "vldr d20, [%0]\n\t"
      "vpush {d8}\n\t"
      "vpop {d8}\n\t"
      /* fpldst */
      "vldr s0, [%0]\n\t"
      "vstr s0, [%1]\n\t"
      /* sldst */
      "ldr r2, [%0]\n\t"
      "str r2, [%1]\n\t"
      "ldrd r2, r3, [%0]\n\t"
      "push {r4}\n\t"
      "pop {r4}\n\t"
      /* prfm */
      "pld [%0, #64]\n\t"
      /* branch (1 here + the loop's bne) */
      "b 2f\n"
      "2:\n\t"
      /* fpscalar */
      "vadd.f32 s1, s2, s3\n\t"
      "vmul.f64 d5, d6, d7\n\t"
      /* other (2 here + the loop's subs) */
      "add r2, r2, #1\n\t"
      "eor r3, r3, r3\n\t"
      "subs r12, r12, #1\n\t"
      "bne 1b\n\t"
      ".inst.w 0xf3af8071\n\t"
      :
      : "r"(a), "r"(b)
      : "memory", "cc", "r2", "r3", "r12", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8",
        "d16", "d17", "d18", "d19", "d20", "d21");
  printf("insn: seg=1 total=%d vfma=%d vfp=%d vother=%d vldst=%d fpldst=%d sldst=%d prfm=%d branch=%d "
         "fpscalar=%d other=%d vfma_lanes=%d\n",
         30 * N + 2, 3 * N, 3 * N, 3 * N, 6 * N, 2 * N, 5 * N, 1 * N, 2 * N, 2 * N, 3 * N + 2, 10 * N);
#endif
  return 0;
}
