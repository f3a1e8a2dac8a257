#!/bin/sh
# scripts/arm_insn.sh — executed AArch64 (or ARMv7) instructions per call of tec's topi templates (their
# NEON default config) on the layers of shared/tools/qemu-insn, beside XNNPACK's counts from its
# RESULTS.md, in the same conditions: batch 1, padding inside the call, bias and ReLU fused.
#
#   scripts/arm_insn.sh [WORK_DIR]          (default /tmp/tec-arm-insn)
#   TEC_ARM_LAYERS="resnet_c3 mbv1_dw1" scripts/arm_insn.sh ...   (only those rows)
#
# Needs a host build of tec (TEC_BUILD_DIR, default build/: for examples/aot_arm/layers_gen),
# gcc-aarch64-linux-gnu, qemu-user and the qemu-insn plugin sources (QEMU_INSN, default
# tools/qemu-insn, the project's copy: it also classifies ARMv7). layers_gen emits the layers
# for TEC_ARM_TARGET (default rasp4b = aarch64 Cortex-A72 +neon; rasp4b32 / armv7-neon: ARMv7
# under qemu-arm, gcc-arm-linux-gnueabihf, no XNNPACK column; TEC_ARM_FP=f16 or f16acc32: the
# float16 layers, docs/fp16.md, with a target that has +fullfp16,+fp16fml; XNNPACK's f16
# convolution counted live beside them); insn_bench.c links them with the cross-built runtime; each layer
# runs under qemu-aarch64 (qemu-arm) with the plugin (prepare and one warm-up call uncounted, then 3 counted
# calls) and the table shows the third counted call: total, vector FMA, vector ld/st, other, and
# instructions per useful 4-lane FMA (MACs/4), for tec and for XNNPACK (its default AArch64
# kernels, RESULTS.md's `xnnpack` rows).
# TEC_ARM_FP=i8: the int8 rows instead (examples/aot_arm/qlayers_gen: pointwise, 3x3, depthwise,
# the stem and a 256x1024x1024 GEMM on qnn_conv2d / qnn_depthwise / qnn_dense at their defaults,
# NCHW[TEC_ARM_BLOCK]c, default 4, other configs by TEC_ARM_QCONFIG="LAYER:KNOBS ...", for TEC_ARM_TARGET, default a Neoverse N1 with +dotprod; each
# output bit-exact against the host's JIT) beside XNNPACK's qc8 convolution on the same shapes
# counted here (tools/qemu-insn/xnn_qconv_bench.c; the GEMM as a 1x1 convolution over 256
# pixels; its arm64 packages unpacked by scripts/xnn_arm64.sh), per MACs/16 (one sdot's work).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/tec-arm-insn}
BUILD=${TEC_BUILD_DIR:-$ROOT/build}
QI=${QEMU_INSN:-$ROOT/tools/qemu-insn}
TARGET=${TEC_ARM_TARGET:-rasp4b}
# the target's architecture: ARMv7 (rasp4b32, rasp3b, armv7-neon, an armv7 triple) runs under
# qemu-arm, linked by arm-linux-gnueabihf-gcc; everything else is AArch64
case "$TARGET" in
  rasp4b32* | rasp3b* | armv7-neon* | *armv7*)
    ARCH=armv7 TC=toolchain-armv7.cmake CROSS=arm-linux-gnueabihf-gcc QEMU=qemu-arm
    LDSO=/lib/ld-linux-armhf.so.3 SYSROOT=/usr/arm-linux-gnueabihf ;;
  *)
    ARCH=aarch64 TC=toolchain-aarch64.cmake CROSS=aarch64-linux-gnu-gcc QEMU=qemu-aarch64
    LDSO=/lib/ld-linux-aarch64.so.1 SYSROOT=/usr/aarch64-linux-gnu ;;
esac
CALLS=3
mkdir -p "$WORK"
make -s -C "$QI" BUILD="$WORK/qemu-insn" all >&2
cmake -S "$ROOT" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/$TC" \
  -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
if [ -e $LDSO ]; then QEMU_L=/; else QEMU_L=$SYSROOT; fi
if [ "${TEC_ARM_FP:-f32}" = i8 ]; then
  TARGET=${TEC_ARM_TARGET:-llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+neon,+dotprod}
  cmake --build "$BUILD" --target qlayers_gen >/dev/null
  # shellcheck disable=SC2086 # TEC_ARM_QCONFIG: LAYER:KNOBS words
  "$BUILD/examples/aot_arm/qlayers_gen" "$TARGET" "$WORK" "${TEC_ARM_BLOCK:-4}" ${TEC_ARM_QCONFIG:-} >&2
  $CROSS -std=c11 -O2 -Wall -idirafter /usr/include -I "$ROOT/include" -I "$WORK" -I "$QI" \
    -I "$ROOT/examples/aot_arm" -o "$WORK/qinsn_bench" "$ROOT/examples/aot_arm/qinsn_bench.c" \
    "$WORK/qlayers.c" "$WORK/qlayers.o" "$WORK/runtime/libtec_runtime.a" -lm -lpthread
  have_xnn=0 # XNNPACK's packages are AArch64's: fetched only there
  if [ $ARCH = aarch64 ]; then . "$ROOT/scripts/xnn_arm64.sh"; fi
  if [ $have_xnn = 1 ]; then xnn_build xnn_qconv_bench; fi
  echo "int8, $TARGET, NCHW${TEC_ARM_BLOCK:-4}c, 1 thread: executed AArch64 instructions per call (the third counted call)"
  echo "| layer | template (config) | tec insns/call | MACs/16 | tec insns/(MACs/16) | XNNPACK insns/call | XNNPACK insns/(MACs/16) | tec / XNNPACK | check |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
  for layer in $(sed -n 's/^  {"\([a-z0-9_]*\)".*/\1/p' "$WORK/qlayers.c"); do
    case " ${TEC_ARM_LAYERS:-$layer} " in *" $layer "*) ;; *) continue ;; esac
    rm -f "$WORK/$layer.insn"
    if ! TEC_NUM_THREADS=1 $QEMU -L $QEMU_L -plugin "$WORK/qemu-insn/libinsn.so,hot=2,out=$WORK/$layer.insn" \
      "$WORK/qinsn_bench" $layer $CALLS >"$WORK/$layer.out"; then
      echo "| $layer | FAILED: $(tail -1 "$WORK/$layer.out" 2>/dev/null) | | | | | | | |"
      continue
    fi
    xnn=0
    if [ $have_xnn = 1 ]; then xnn=$(xnn_count xnn_qconv_bench "$WORK/$layer.xnn" $layer $CALLS); fi
    xnn=${xnn:-0}
    tec=$(sed -n "s/^insn: seg=$CALLS total=\([0-9]*\) .*/\1/p" "$WORK/$layer.insn")
    macs=$(sed -n 's/.* macs=\([0-9]*\)$/\1/p' "$WORK/$layer.out")
    tmpl=$(sed -n "s/^$layer: \([a-z0-9_]*\) \(.*\), $CALLS calls.*/\1 (\2)/p" "$WORK/$layer.out")
    check=$(sed -n 's/.*check \([A-Z]*\) .*/\1/p' "$WORK/$layer.out")
    awk -v l=$layer -v t="$tmpl" -v tec=$tec -v x=$xnn -v m=$macs -v ck="$check" '
      function c(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
      BEGIN { m16 = m / 16
        printf "| %s | %s | %s | %s | %.3f | %s | %s | %s | %s |\n", l, t, c(tec), c(m16), tec / m16,
          x ? c(x) : "-", x ? sprintf("%.3f", x / m16) : "-", x ? sprintf("%.3f", tec / x) : "-", ck }'
  done
  exit 0
fi
cmake --build "$BUILD" --target layers_gen >/dev/null
"$BUILD/examples/aot_arm/layers_gen" "$TARGET" "$WORK" "${TEC_ARM_FP:-f32}" >&2
$CROSS -std=c11 -O2 -Wall -idirafter /usr/include -I "$ROOT/include" -I "$WORK" \
  -I "$QI" -o "$WORK/insn_bench" "$ROOT/examples/aot_arm/insn_bench.c" "$WORK/tec_layers.o" \
  "$WORK/runtime/libtec_runtime.a" -lm -lpthread
# float16: XNNPACK's f16 convolution counted here, live (RESULTS.md has only its fp32 rows)
FP=${TEC_ARM_FP:-f32} have_xnn=0
if [ $FP != f32 ] && [ $ARCH = aarch64 ]; then
  . "$ROOT/scripts/xnn_arm64.sh"
  if [ $have_xnn = 1 ]; then xnn_build xnn_conv_bench; fi
fi
echo "| layer | template (config) | tec insns/call | vector FMA | vector ld/st | other | MACs/4 | tec insns/(MACs/4) | XNNPACK insns/(MACs/4) | check |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
# the layers layers_gen emitted (a template missing from this tec is not in its table)
for layer in $(sed -n 's/^  {"\([a-z0-9_]*\)".*/\1/p' "$WORK/tec_layers_meta.h"); do
  # TEC_ARM_LAYERS="resnet_c3 mbv1_dw_mid__dw_spatial_pack": only those rows
  case " ${TEC_ARM_LAYERS:-$layer} " in *" $layer "*) ;; *) continue ;; esac
  rm -f "$WORK/$layer.insn" "$WORK/$layer.out"
  # single-threaded: the plugin's counters are not atomic
  if ! TEC_NUM_THREADS=1 $QEMU -L $QEMU_L \
    -plugin "$WORK/qemu-insn/libinsn.so,hot=2,out=$WORK/$layer.insn" \
    "$WORK/insn_bench" $layer $CALLS >"$WORK/$layer.out" ||
    ! grep -q "^insn: seg=$CALLS " "$WORK/$layer.insn"; then
    echo "| $layer | FAILED: $(tail -1 "$WORK/$layer.out" 2>/dev/null) | | | | | | | | |"
    continue
  fi
  macs=$(sed -n 's/.* macs=\([0-9]*\)$/\1/p' "$WORK/$layer.out")
  base=${layer%%__*} # resnet_c3__winograd: the layer resnet_c3 by another template
  xnn=-
  if [ $FP != f32 ]; then # XNNPACK f16 (its own accumulation: f16), live
    if [ $have_xnn = 1 ]; then
      xnn=$(xnn_count xnn_conv_bench "$WORK/$base.xnn16" $base $CALLS f16 |
        awk -v m=$macs '{ printf "%.3f", $1 / (m / 4) }')
    fi
    xnn=${xnn:--}
  elif [ $ARCH = aarch64 ]; then # XNNPACK's counts are AArch64's
    xnn=$(awk -F'|' -v l=" $base " '$2 == l && $3 == " xnnpack " { gsub(/ /, "", $9); print $9; exit }' "$QI/RESULTS.md")
  fi
  tmpl=$(sed -n "s/^$layer: \([a-z0-9_]*\) \(.*\), $CALLS calls.*/\1 (\2)/p" "$WORK/$layer.out")
  check=$(sed -n 's/.*check \([A-Z]*\) (max abs error \([^ ]*\).*/\1 (\2)/p' "$WORK/$layer.out")
  grep "^insn: seg=$CALLS " "$WORK/$layer.insn" | awk -v layer=$layer -v macs=$macs -v check="$check" \
    -v xnn="$xnn" -v tmpl="$tmpl" '
    function c(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
    { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      ldst = v["vldst"] + v["fpldst"]; other = v["total"] - v["vfma"] - ldst
      printf "| %s | %s | %s | %s | %s | %s | %s | %.3f | %s | %s |\n", layer, tmpl, c(v["total"]),
        c(v["vfma"]), c(ldst), c(other), c(macs / 4), v["total"] / (macs / 4), xnn, check
    }'
done
