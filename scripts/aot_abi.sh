#!/bin/sh
# scripts/aot_abi.sh OLD_BUILD NEW_BUILD [OUTDIR] — is the AOT ABI unchanged between two builds?
#
# Emits the same operators with both builds (tec compile: conv2d_nchwc and dense for the host,
# winograd for rasp4b; aot_prepare_gen: the prepare/run pair for the host and AArch64;
# net_aot_gen: MobileNet v1 at 32x32 x0.25, margins in its header), requires the headers to be
# byte-identical (the ABI: symbols, prototypes, packed sizes) and reports whether objects and
# IR are too, then builds the aot_prepare driver against the OLD header, links it with the NEW
# object and the NEW runtime, and runs it. Exit status 0 when the ABI held.
# Used for issue 42 (the module runtime moved out of codegen_llvm/): everything identical.
set -eu
old=$(realpath "$1") new=$(realpath "$2") out=$(realpath -m "${3:-/tmp/tec-aot-abi}")
src=$(cd "$(dirname "$0")/.." && pwd)
emit() { # emit BUILD DIR
  b=$1 d=$2
  mkdir -p "$d/net"
  "$b/tools/tec" compile conv2d_nchwc --target llvm -o "$d/conv.o" --emit obj,h,ll \
    --shape n=1,c=16,h=14,w=14,oc=32,k=3,pad=1,bias=1,act=relu,out=NCHW8c >/dev/null
  "$b/tools/tec" compile dense --target llvm -o "$d/dense.o" --emit obj,h,ll \
    --shape m=64,n=64,k=64,const_b=1 >/dev/null
  "$b/tools/tec" compile conv2d_winograd --target rasp4b -o "$d/wino_a64.o" --emit obj,h,ll \
    --shape n=1,c=16,h=14,w=14,oc=16,k=3,pad=1,out=NCHW4c >/dev/null
  "$b/examples/aot_prepare/aot_prepare_gen" llvm "$d/dw.o" "$d/dw.h" >/dev/null
  "$b/examples/aot_prepare/aot_prepare_gen" rasp4b "$d/dw_a64.o" "$d/dw_a64.h" >/dev/null
  "$b/examples/net_aot/net_aot_gen" llvm "$d/net" mobilenet 32 0.25 >/dev/null
}
rm -rf "$out" && emit "$old" "$out/old" && emit "$new" "$out/new"
status=0
for f in $(cd "$out/old" && find . -type f | sort); do
  if cmp -s "$out/old/$f" "$out/new/$f"; then echo "same      $f"
  else
    case $f in *.h) echo "DIFFERENT $f (header: the ABI changed)"; status=1 ;;
               *) echo "different $f" ;; esac
  fi
done
mkdir -p "$out/link" && cp "$out/old/dw.h" "$out/link/dw.h"
cc -O2 -I "$out/link" -I "$src/include" "$src/examples/aot_prepare/run.c" "$out/new/dw.o" \
  "$new/libtec_runtime.a" -lpthread -lm -o "$out/link/run"
"$out/link/run" || status=1
exit $status
