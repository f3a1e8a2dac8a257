#!/bin/sh
# bench/auto_tuned.sh — the auto-scheduler's instant and tuned modes against the template, on
# GEMM 1024 and a ResNet 3x3 layer (C = K = 128, 28 x 28, the template's NCHW16c layout), one
# thread: each program tuned once with `tec tune --auto` (its tuning time reported), then
# ROUNDS interleaved rounds, each round benching instant, tuned and template in turn with
# `tec bench` (JIT build, prepare once, the median of REPEAT timed runs: wall time); per
# variant the median of the rounds' medians and their spread (min..max).
#   bench/auto_tuned.sh [BUILD_DIR] [TRIALS] [ROUNDS]   (defaults: build 64 5)
# Records and logs go to $OUT (default /tmp/tec-auto-tuned). The machine may be shared: say
# so beside any number.
set -eu
build=${1:-build}
trials=${2:-64}
rounds=${3:-5}
out=${OUT:-/tmp/tec-auto-tuned}
tec=$build/tools/tec
mkdir -p "$out"
export TEC_NUM_THREADS=1

gemm_op=dense
gemm_shape=m=1024,n=1024,k=1024,bt=0
gemm_repeat=10
conv_op=conv2d_nchwc
conv_shape=n=1,c=128,h=28,w=28,oc=128,k=3,pad=1,in=NCHW16c,out=NCHW16c
conv_repeat=40

for p in gemm conv; do
  eval op=\$${p}_op shape=\$${p}_shape
  rec=$out/$p.jsonl
  if [ ! -s "$rec" ]; then
    t0=$(date +%s)
    "$tec" tune "$op" --shape "$shape" --auto --tuner xgb --trials "$trials" --records "$rec" \
      >"$out/$p.tune.log" 2>&1
    t1=$(date +%s)
    echo "$p: tuned $trials trials in $((t1 - t0)) s (log $out/$p.tune.log)"
  fi
done

: >"$out/rounds.txt"
r=1
while [ $r -le "$rounds" ]; do
  for p in gemm conv; do
    eval op=\$${p}_op shape=\$${p}_shape repeat=\$${p}_repeat
    for v in instant tuned template; do
      case $v in
        instant) extra="--auto" ;;
        tuned) extra="--auto --records $out/$p.jsonl" ;;
        template) extra="" ;;
      esac
      # shellcheck disable=SC2086
      ms=$("$tec" bench "$op" --shape "$shape" $extra --repeat "$repeat" 2>/dev/null |
        sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
      echo "$p $v $r $ms" >>"$out/rounds.txt"
    done
  done
  r=$((r + 1))
done

echo "program variant median_ms min_ms max_ms (rounds: $rounds, 1 thread)"
for p in gemm conv; do
  for v in instant tuned template; do
    awk -v p=$p -v v=$v '$1 == p && $2 == v { print $4 }' "$out/rounds.txt" | sort -g |
      awk -v p=$p -v v=$v '{ x[NR] = $1 } END {
        m = NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2
        printf "%s %s %.3f %.3f %.3f\n", p, v, m, x[1], x[NR] }'
  done
done
