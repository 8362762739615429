#!/usr/bin/env bash
# Instructions per chained launch on the launching thread, counted by callgrind on the null driver
# (bench/null_cuda.cpp: a stand-in libcuda with no host cost of its own), for a cached launch
# (ctile::launch chained through Future::then) and a pre-bound one (ctile::bind). Only the chained
# loop is counted (--toggle-collect), so compiling and setting up do not show.
#   bench/callgrind_launch.sh [build dir, default build-rel] [launches, default 2000]
# A Release build (-O2 -g) gives the numbers docs/cuda_runtime.md quotes.
set -euo pipefail
build="${1:-build-rel}"
n="${2:-2000}"
bin="$build/bench/ctile_launch_overhead"
lib="$build/bench/libnull_cuda.so"
[[ -x "$bin" && -f "$lib" ]] || { echo "build $bin and $lib first (targets ctile_launch_overhead ctile_null_cuda)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is missing" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export CTILE_LIBCUDA="$lib" CTILE_CACHE=0 CTILE_QUIET=1 CTILE_SPIN_US="${CTILE_SPIN_US:-0}" NULL_CUDA_KERNEL_US=0 NULL_CUDA_COPY_US=0
count() {  # count <what> <function> <--only value>
  valgrind --tool=callgrind --toggle-collect="$2" --callgrind-out-file="$tmp/cg.%p" "$bin" --n "$n" --reps 1 --only "$3" \
    >/dev/null 2>"$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
  local total
  total="$(cat "$tmp"/cg.* | awk '/^summary:/ { s += $2 } END { print s + 0 }')"
  rm -f "$tmp"/cg.*
  printf '%-34s %8.0f instructions per launch (%d launches)\n' "$1" "$(echo "$total / $n" | bc -l)" "$n"
}
count "cached launch (launch + then)" '(anonymous namespace)::chain_launches(ctile::Stream const&, ctile::Partition<float>, ctile::Shared<float>, int)' enqueue
count "pre-bound launch (bind + then)" '*(anonymous namespace)::chain_bound<*>(ctile::BoundKernel<*>&, ctile::Stream const&, ctile::Partition<float>, ctile::Shared<float>, int)' bound
