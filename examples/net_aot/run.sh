#!/bin/sh
# run.sh — a whole network ahead of time, built and run for TARGET and compared with the host:
# net_aot_gen emits the layers (one object + header) and net_model.c for TARGET plus the logits
# of the same network JIT-compiled on this machine (expected.txt); net_model.c, the layers and
# driver.c are linked into a plain C program with libtec_runtime.a (the host's, or for an
# AArch64 target one cross-built here), run (under qemu-aarch64 for AArch64) and its logits
# compared with expected.txt (max |a - b| / max |b| <= 1e-4).
#   run.sh GEN SOURCE_DIR WORK_DIR TARGET NET SIZE WIDTH [HOST_RUNTIME_LIB]
#   TARGET: "llvm" (this machine: HOST_RUNTIME_LIB and cc) or an AArch64 target ("rasp4b")
# NET_AOT_INT8=1: the network's int8 twin instead (net_aot_gen --int8: qnet_model.c,
# qnet_layers.o, qparams.bin, qdriver.c), its int8 logits compared bit for bit.
# NET_AOT_LDFLAGS: extra flags for the driver's final link (the sanitizer build's runtime library
# is instrumented: -fsanitize=address,undefined).
set -eu
GEN=$1 SRC=$2 WORK=$3 TARGET=$4 NET=$5 SIZE=$6 WIDTH=$7
P=net DRIVER=driver.c PARAMS=params.bin FLAG=
if [ "${NET_AOT_INT8:-0}" = 1 ]; then P=qnet DRIVER=qdriver.c PARAMS=qparams.bin FLAG=--int8; fi
mkdir -p "$WORK"
# shellcheck disable=SC2086 # FLAG: empty or one word
"$GEN" $FLAG "$TARGET" "$WORK" "$NET" "$SIZE" "$WIDTH" expect
if [ "$TARGET" = llvm ]; then
  CC=cc RT=$8 RUN=
else
  if [ -e /lib/ld-linux-aarch64.so.1 ]; then RUN="qemu-aarch64 -L /"; else RUN="qemu-aarch64 -L /usr/aarch64-linux-gnu"; fi
  cmake -S "$SRC" -B "$WORK/runtime" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-aarch64.cmake" \
    -DTEC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$WORK/runtime" --target tec_runtime >/dev/null
  CC="aarch64-linux-gnu-gcc -idirafter /usr/include" RT=$WORK/runtime/libtec_runtime.a
fi
# the network as one object: the layers and their prepare/run pair
$CC -std=c11 -O2 -Wall -Werror -I "$SRC/include" -I "$WORK" -c "$WORK/${P}_model.c" -o "$WORK/${P}_model.o"
$CC -r -o "$WORK/net.o" "$WORK/${P}_layers.o" "$WORK/${P}_model.o"
# shellcheck disable=SC2086 # NET_AOT_LDFLAGS: several words
$CC -std=c11 -O2 -Wall -Werror -I "$SRC/include" -I "$WORK" -o "$WORK/driver" \
  "$SRC/examples/net_aot/$DRIVER" "$WORK/net.o" "$RT" -lm -lpthread ${NET_AOT_LDFLAGS:-}
TEC_NUM_THREADS=1 $RUN "$WORK/driver" "$WORK/$PARAMS" "$WORK/out.txt" 1
$RUN "$WORK/driver" --compare "$WORK/out.txt" "$WORK/expected.txt"
