#!/bin/sh
# scripts/arm_insn.sh — executed AArch64 instructions per call of tec's NEON kernels on the
# layers of shared/tools/qemu-insn (its RESULTS.md has XNNPACK's counts for the same layers).
#
#   scripts/arm_insn.sh [WORK_DIR]          (default /tmp/tec-arm-insn)
#
# Needs a host build of tec (TEC_BUILD_DIR, default build/: for examples/aot_arm/aot_gen),
# gcc-aarch64-linux-gnu, qemu-user and the qemu-insn plugin sources (QEMU_INSN, default
# ../shared/tools/qemu-insn). Emits the kernels for TEC_ARM_TARGET (default rasp4b =
# aarch64 Cortex-A72 +neon), links them with the cross-built runtime, runs each layer under
# qemu-aarch64 with the plugin (1 warm-up + 3 counted calls) and prints a markdown table of
# the third counted call: total, vector FMA, vector ld/st, other (same classes as RESULTS.md).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/tec-arm-insn}
BUILD=${TEC_BUILD_DIR:-$ROOT/build}
QI=${QEMU_INSN:-$ROOT/../shared/tools/qemu-insn}
TARGET=${TEC_ARM_TARGET:-rasp4b}
CALLS=3
mkdir -p "$WORK"
[ -x "$BUILD/examples/aot_arm/aot_gen" ] || cmake --build "$BUILD" --target aot_gen >/dev/null
make -s -C "$QI" BUILD="$WORK/qemu-insn" all >&2
cmake -S "$ROOT" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-aarch64.cmake" \
  -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
"$BUILD/examples/aot_arm/aot_gen" "$TARGET" "$WORK" layers >&2
aarch64-linux-gnu-gcc -std=c11 -O2 -Wall -idirafter /usr/include -I "$ROOT/include" -I "$WORK" \
  -I "$QI" -o "$WORK/insn_bench" "$ROOT/examples/aot_arm/insn_bench.c" "$WORK/tec_layers.o" \
  "$WORK/runtime/libtec_runtime.a" -lm -lpthread
# single-threaded (the plugin's counters are not atomic; tec kernels here are serial anyway)
echo "| layer | tec insns/call | vector FMA | vector ld/st | other | MACs/4 | insns/(MACs/4) | check |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for layer in mbv1_dw_mid mbv1_dw1 mbv1_pw_mid; do
  TEC_NUM_THREADS=1 qemu-aarch64 -L /usr/aarch64-linux-gnu \
    -plugin "$WORK/qemu-insn/libinsn.so,hot=2,out=$WORK/$layer.insn" \
    "$WORK/insn_bench" $layer $CALLS >"$WORK/$layer.out"
  case $layer in
  mbv1_dw_mid) macs=$((28 * 28 * 256 * 9)) ;;
  mbv1_dw1) macs=$((112 * 112 * 32 * 9)) ;;
  mbv1_pw_mid) macs=$((28 * 28 * 256 * 256)) ;;
  esac
  check=$(sed -n 's/.*check \([A-Z]*\) (max abs error \([^ ]*\).*/\1 (\2)/p' "$WORK/$layer.out")
  grep "^insn: seg=$CALLS " "$WORK/$layer.insn" | awk -v layer=$layer -v macs=$macs -v check="$check" '
    function c(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
    { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      ldst = v["vldst"] + v["fpldst"]; other = v["total"] - v["vfma"] - ldst
      printf "| %s | %s | %s | %s | %s | %s | %.3f | %s |\n", layer, c(v["total"]), c(v["vfma"]),
        c(ldst), c(other), c(macs / 4), v["total"] / (macs / 4), check
    }'
done
