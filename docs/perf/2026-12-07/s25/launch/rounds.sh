#!/usr/bin/env bash
# Session 25: the launch rows of the two warm calls after s25_call_short.sh (records in
# rounds.tar.gz: 16/ three rounds, 17/ eight rounds), the paced completer (CTILE_COMPLETER_PACE_US=50)
# and the previous design (=0) in turns, on the build of the short call.
lo=build/gemm/bench/ctile_launch_overhead
for i in 1 2 3 4 5 6 7 8; do
  for pace in 50 0; do
    timeout 12 env CTILE_COMPLETER_PACE_US=$pace "$lo" --only enqueue,bound,sync --out "$OUT/r${i}_p$pace.jsonl" > /dev/null 2>&1
  done
done
