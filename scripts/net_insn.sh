#!/bin/sh
# scripts/net_insn.sh — executed AArch64 instructions of a whole MobileNet (v1, or v2 with
# TEC_NET=mobilenet_v2) by tec, layer by
# layer, beside XNNPACK's count of each convolution layer, under qemu-aarch64 with the qemu-insn
# plugin (the machinery of scripts/arm_insn.sh). Takes minutes at 224x224: not part of CI.
#
#   scripts/net_insn.sh [WORK_DIR [SIZE [WIDTH]]]      (default /tmp/tec-net-insn 224 1.0)
#
# tec: examples/net_aot for TEC_ARM_TARGET (default rasp4b), 1 thread; the driver marks before
# its counted run and after each layer, so the plugin's segment i is layer i (prepare and one
# warm-up run uncounted); its logits are checked against the same network JIT-compiled on the
# host. XNNPACK: the shared tool's xnn_conv_bench.c (NHWC, 1 thread, one warm-up and one counted
# call, its default AArch64 kernels: RESULTS.md's `xnnpack` rows) built over a layer table of
# this network's convolutions (layers.txt from net_aot_gen), against XNNPACK's arm64 packages
# unpacked under WORK_DIR (or XNN_ARM64_ROOT). XNNPACK runs each convolution alone (no pools, fc or softmax between them) and
# without bias or clamp; tec's layers have bias and relu6 fused. Needs a host build of tec
# (TEC_BUILD_DIR, default build/), gcc-aarch64-linux-gnu, qemu-user, the plugin sources
# (QEMU_INSN, default tools/qemu-insn, the project's copy).
# TEC_NET_DTYPE=int8: the network's int8 twin (net_aot_gen --int8, qdriver.c; its int8 logits
# bit-exact against the host's JIT int8 network) for TEC_ARM_TARGET (default an AArch64
# Neoverse N1 with +dotprod), beside XNNPACK's qc8 convolutions (xnn_qconv_bench.c: int8
# activations, per-channel int8 weights, int32 bias, fp32 requantization, clamp [-128, 127]);
# tec's residual adds are layers of their own (NAME_add), outside the convolutions' sum.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/tec-net-insn}
SIZE=${2:-224}
WIDTH=${3:-1.0}
BUILD=${TEC_BUILD_DIR:-$ROOT/build}
QI=${QEMU_INSN:-$ROOT/tools/qemu-insn}
NET=${TEC_NET:-mobilenet} # net_aot_gen's network: mobilenet (v1), mobilenet_v2, resnet18
P=net PARAMS=params.bin XNN_BENCH=xnn_conv_bench INT8=0 DT=
TARGET=${TEC_ARM_TARGET:-rasp4b}
if [ "${TEC_NET_DTYPE:-f32}" = int8 ]; then
  P=qnet PARAMS=qparams.bin XNN_BENCH=xnn_qconv_bench INT8=1 DT=" int8"
  TARGET=${TEC_ARM_TARGET:-llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+neon,+dotprod}
fi
mkdir -p "$WORK/tec" "$WORK/xnn"
cmake --build "$BUILD" --target net_aot_gen >/dev/null
make -s -C "$QI" BUILD="$WORK/qemu-insn" all >&2
if [ -e /lib/ld-linux-aarch64.so.1 ]; then QEMU_L=/; else QEMU_L=/usr/aarch64-linux-gnu; fi
PLUGIN=$WORK/qemu-insn/libinsn.so
# tec: build (run.sh checks the logits against the host's JIT network), then count
NET_AOT_INT8=$INT8 sh "$ROOT/examples/net_aot/run.sh" "$BUILD/examples/net_aot/net_aot_gen" "$ROOT" "$WORK/tec" \
  "$TARGET" "$NET" "$SIZE" "$WIDTH" >&2
TEC_NUM_THREADS=1 qemu-aarch64 -L $QEMU_L -plugin "$PLUGIN,out=$WORK/tec.insn" \
  "$WORK/tec/driver" "$WORK/tec/$PARAMS" "$WORK/tec/out2.txt" 1 >&2
# XNNPACK on the same convolution shapes (scripts/xnn_arm64.sh: its packages unpacked)
. "$ROOT/scripts/xnn_arm64.sh"
if [ $have_xnn = 1 ]; then
  cp "$QI/$XNN_BENCH.c" "$QI/insn_marker.h" "$WORK/xnn/"
  awk 'BEGIN { print "#ifndef QEMU_INSN_LAYERS_H\n#define QEMU_INSN_LAYERS_H\n#include <string.h>";
               print "typedef struct { const char *name; int C, H, W, K, kh, kw, s, p, g; } layer_t;";
               print "static const layer_t LAYERS[] = {" }
       { printf "  {\"%s\", %s, %s, %s, %s, %s, %s, %s, %s, %s},\n", $1, $2, $3, $4, $5, $6, $6, $7, $8, $9 }
       END { print "};" }' "$WORK/tec/layers.txt" >"$WORK/xnn/layers.h"
  # the helpers of the shared tool's layers.h after its table
  sed -n '/^#define NLAYERS/,$p' "$QI/layers.h" >>"$WORK/xnn/layers.h"
  aarch64-linux-gnu-gcc -O2 -I "$WORK/xnn" -I "$XNN_ROOT/usr/include" -o "$WORK/xnn/$XNN_BENCH" \
    "$WORK/xnn/$XNN_BENCH.c" -L "$XNN_LIB" -Wl,-rpath-link,"$XNN_LIB" \
    -lXNNPACK -lpthreadpool -lm -ldl
  while read -r name rest; do
    qemu-aarch64 -L $QEMU_L -E LD_LIBRARY_PATH="$XNN_LIB" -plugin "$PLUGIN,out=$WORK/xnn/$name.insn" \
      "$WORK/xnn/$XNN_BENCH" \
      "$name" 1 >"$WORK/xnn/$name.out" || echo "xnnpack $name: FAILED ($(tail -1 "$WORK/xnn/$name.out"))" >&2
  done <"$WORK/tec/layers.txt"
fi
# the table: segment i of tec.insn is layer i of net_model_layer_names (conv layers first in
# layers.txt order, the same order)
echo "$NET$DT ${SIZE}x${SIZE} width $WIDTH, $TARGET, 1 thread: executed AArch64 instructions per layer"
echo "| layer | MACs/4 | tec insns | tec insns/(MACs/4) | XNNPACK insns | XNNPACK insns/(MACs/4) |"
echo "|---|---:|---:|---:|---:|---:|"
names=$(sed -n 's/.*_model_layer_names\[[A-Z]*_MODEL_LAYERS\] = {\(.*\)};/\1/p' "$WORK/tec/${P}_model.c" | tr -d '" ' | tr ',' ' ')
# int8: the driver's first segment is the image's quantization (qnet_model_hook(-1))
if [ $INT8 = 1 ]; then names="(quantize) $names"; fi
i=0
for name in $names; do
  i=$((i + 1))
  tec=$(sed -n "s/^insn: seg=$i total=\([0-9]*\) .*/\1/p" "$WORK/tec.insn")
  shape=$(awk -v n="$name" '$1 == n { print $2, $3, $4, $5, $6, $7, $8, $9 }' "$WORK/tec/layers.txt")
  xnn=
  if [ $have_xnn = 1 ] && [ -n "$shape" ]; then
    xnn=$(sed -n 's/^insn: seg=1 total=\([0-9]*\) .*/\1/p' "$WORK/xnn/$name.insn" 2>/dev/null || true)
  fi
  echo "$name $tec ${xnn:--} $shape"
done | awk '
  function c(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
  {
    name = $1; tec = $2; xnn = $3; macs4 = 0
    if (NF >= 11) { # c_in h w c_out k s p g
      C = $4; H = $5; W = $6; K = $7; k = $8; s = $9; p = $10; g = $11
      oh = int((H + 2 * p - k) / s) + 1; ow = int((W + 2 * p - k) / s) + 1
      macs4 = K * oh * ow * (C / g) * k * k / 4
      ctec += tec; cm += macs4
      if (xnn != "-") { cx += xnn; cxt += tec; cxm += macs4 }
    }
    all += tec
    printf "| %s | %s | %s | %s | %s | %s |\n", name, macs4 ? c(macs4) : "-", c(tec),
      macs4 ? sprintf("%.3f", tec / macs4) : "-", xnn == "-" ? "-" : c(xnn),
      (macs4 && xnn != "-") ? sprintf("%.3f", xnn / macs4) : "-"
  }
  END {
    printf "| **convolutions (body)** | %s | %s | %.3f | %s | %s |\n", c(cm), c(ctec), ctec / cm,
      cx ? c(cx) : "-", cx ? sprintf("%.3f", cx / cxm) : "-"
    printf "| **whole network** | | %s | | | |\n", c(all)
    if (cx) printf "tec / XNNPACK over the convolutions: %.3f\n", cxt / cx
  }'
