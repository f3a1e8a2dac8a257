#!/bin/sh
# run.sh — AOT on an ARM board, emulated: emit the kernels for TARGET with aot_gen (a host
# program), cross-build libtec_runtime.a with cmake/toolchain-ARCH.cmake, link driver.c with
# the cross gcc and run it under qemu-user. ctest runs it (examples/aot_arm/CMakeLists.txt).
#   run.sh AOT_GEN SOURCE_DIR WORK_DIR ARCH TARGET        ARCH: aarch64 | armv7
set -eu
GEN=$1 SRC=$2 WORK=$3 ARCH=$4 TARGET=$5
case $ARCH in
aarch64) CC=aarch64-linux-gnu-gcc CFLAGS="-mcpu=cortex-a72"
  # with multiarch libc6:arm64 installed, its root (see cmake/toolchain-aarch64.cmake)
  if [ -e /lib/ld-linux-aarch64.so.1 ]; then QEMU="qemu-aarch64 -L /"; else QEMU="qemu-aarch64 -L /usr/aarch64-linux-gnu"; fi ;;
armv7) CC=arm-linux-gnueabihf-gcc QEMU="qemu-arm -L /usr/arm-linux-gnueabihf"
  CFLAGS="-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard" ;;
*) echo "run.sh: unknown ARCH $ARCH (aarch64 | armv7)" >&2; exit 2 ;;
esac
mkdir -p "$WORK"
# the runtime for the board (no LLVM): the static library AOT users link
cmake -S "$SRC" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-$ARCH.cmake" \
  -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
"$GEN" "$TARGET" "$WORK"
file "$WORK/kernels.o" 2>/dev/null || true
# DLPack's header is arch-independent and lives in the build machine's /usr/include
$CC -std=c11 -O2 $CFLAGS -Wall -Werror -idirafter /usr/include -I "$SRC/include" -I "$WORK" \
  -o "$WORK/driver" "$SRC/examples/aot_arm/driver.c" "$WORK/kernels.o" \
  "$WORK/runtime/libtec_runtime.a" -lm -lpthread
$QEMU "$WORK/driver"
