#!/bin/sh
# run_arm.sh — the prepare/run pair on an emulated AArch64 board: aot_prepare_gen emits dw.o and
# dw.h for TARGET, the runtime is cross-built, run.c is linked with the cross gcc and run under
# qemu-aarch64 (dw_prepare once, dw_run three times, checked against naive C).
#   run_arm.sh GEN SOURCE_DIR WORK_DIR TARGET
set -eu
GEN=$1 SRC=$2 WORK=$3 TARGET=$4
if [ -e /lib/ld-linux-aarch64.so.1 ]; then QEMU="qemu-aarch64 -L /"; else QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"; fi
mkdir -p "$WORK"
cmake -S "$SRC" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-aarch64.cmake" \
  -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
"$GEN" "$TARGET" "$WORK/dw.o" "$WORK/dw.h"
aarch64-linux-gnu-gcc -std=c11 -O2 -Wall -Werror -idirafter /usr/include -I "$SRC/include" \
  -I "$WORK" -o "$WORK/run" "$SRC/examples/aot_prepare/run.c" "$WORK/dw.o" \
  "$WORK/runtime/libtec_runtime.a" -lm -lpthread
$QEMU "$WORK/run"
