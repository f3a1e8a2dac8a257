#!/usr/bin/env bash
# scripts/tune_table.sh — measures the table tests/test_tune_model.c's transfer test reads:
# COUNT configs of the dense space for M x N x K, sampled by tune_sample (tests/support), each
# timed once by `tec bench` (JIT for the host, prepare once, median of REPEAT runs).
#   scripts/tune_table.sh BUILD_DIR M N K COUNT SEED [REPEAT] > tests/data/tune_dense_MxNxK.txt
# Output: comment lines (#: the machine, the load, the command), then "gflops index config".
set -euo pipefail
b=$1 m=$2 n=$3 k=$4 count=$5 seed=$6 repeat=${7:-30}
echo "# dense m=$m n=$n k=$k const_b=1: $count configs (seed $seed), tec bench --repeat $repeat, $(date -u +%F)"
echo "# cpu: $(lscpu | sed -n 's/^Model name: *//p'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$b/tests/tune_sample" "$m" "$n" "$k" "$count" "$seed" | while read -r idx cfg; do
  out=$("$b/tools/tec" bench dense --shape "m=$m,n=$n,k=$k,const_b=1" --config "${cfg// /,}" --repeat "$repeat")
  g=$(sed -n 's/.* \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$out")
  echo "$g $idx $cfg"
done
