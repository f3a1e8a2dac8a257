#!/bin/sh
# scripts/xnn_arm64.sh — sourced by net_insn.sh and arm_insn.sh: XNNPACK's AArch64 packages
# unpacked into XNN_ROOT (XNN_ARM64_ROOT, or $WORK/xnn-arm64), never installed:
# libxnnpack-dev:arm64 cannot be installed beside the host's libxnnpack-dev (apt removes the
# amd64 one, which bench/run conv links). Sets XNN_ROOT, XNN_LIB and have_xnn (1 when
# xnnpack.h is there after the download).
XNN_ROOT=${XNN_ARM64_ROOT:-$WORK/xnn-arm64}
XNN_LIB=$XNN_ROOT/usr/lib/aarch64-linux-gnu
if [ ! -e "$XNN_ROOT/usr/include/xnnpack.h" ]; then
  mkdir -p "$XNN_ROOT/debs"
  (cd "$XNN_ROOT/debs" && apt-get download libxnnpack0:arm64 libxnnpack-dev:arm64 \
    libpthreadpool0:arm64 libpthreadpool-dev:arm64 libcpuinfo0:arm64) >&2 ||
    echo "xnn_arm64: could not download XNNPACK's arm64 packages: no XNNPACK column" >&2
  for d in "$XNN_ROOT"/debs/*.deb; do if [ -e "$d" ]; then dpkg -x "$d" "$XNN_ROOT"; fi; done
fi
have_xnn=0
if [ -e "$XNN_ROOT/usr/include/xnnpack.h" ]; then have_xnn=1; fi

# xnn_build NAME: $QI/NAME.c (a tools/qemu-insn XNNPACK bench) cross-built into $WORK/NAME
xnn_build() {
  aarch64-linux-gnu-gcc -O2 -I "$QI" -I "$XNN_ROOT/usr/include" -o "$WORK/$1" "$QI/$1.c" \
    -L "$XNN_LIB" -Wl,-rpath-link,"$XNN_LIB" -lXNNPACK -lpthreadpool -lm -ldl
}

# xnn_count NAME OUT ARGS...: runs $WORK/NAME ARGS under $QEMU with the counting plugin (output
# in OUT.out, counts in OUT.insn) and prints the total of the CALLS-th counted call; prints
# nothing when it fails
xnn_count() {
  _name=$1 _out=$2
  shift 2
  rm -f "$_out.insn"
  if $QEMU -L $QEMU_L -E LD_LIBRARY_PATH="$XNN_LIB" \
    -plugin "$WORK/qemu-insn/libinsn.so,hot=2,out=$_out.insn" "$WORK/$_name" "$@" >"$_out.out"; then
    sed -n "s/^insn: seg=$CALLS total=\([0-9]*\) .*/\1/p" "$_out.insn"
  fi
}
