#!/bin/sh
# run_arm.sh — the extern_sgemm program on AArch64, emulated: extern_sgemm --emit writes the
# object (which calls user_sgemm by name) and its header; the cross gcc links driver_arm.c (a
# plain-C user_sgemm and the check) with libtec_runtime.a; qemu-aarch64 runs it.
#   run_arm.sh EXTERN_SGEMM SOURCE_DIR WORK_DIR
set -eu
GEN=$1 SRC=$2 WORK=$3
CC=aarch64-linux-gnu-gcc
if [ -e /lib/ld-linux-aarch64.so.1 ]; then QEMU="qemu-aarch64 -L /"; else QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"; fi
mkdir -p "$WORK"
cmake -S "$SRC" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-aarch64.cmake" \
  -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
"$GEN" 100 --n 48 --k 40 --tile 16 --emit "$WORK" >/dev/null
$CC -std=c11 -O2 -mcpu=cortex-a72 -Wall -Werror -idirafter /usr/include -I "$SRC/include" -I "$WORK" \
  -o "$WORK/driver" "$SRC/examples/extern_sgemm/driver_arm.c" "$WORK/extern_gemm.o" \
  "$WORK/runtime/libtec_runtime.a" -lm -lpthread
$QEMU "$WORK/driver"
