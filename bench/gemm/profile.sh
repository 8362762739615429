#!/usr/bin/env bash
# One GEMM (or GEMV) configuration under Nsight Compute, for a GPU machine: builds
# ctile_gemm_bench (Release, build/gemm: common.sh), profiles one timed launch of the
# configuration with the full section set, and writes under $OUT (default bench/gemm/results):
#   profile_details.txt  every section (throughput, memory, occupancy, warp state, ...)
#   profile_stalls.txt   the warp-stall reasons summed over the kernel, and the SASS instructions
#                        that collect the most stall samples (bench/gemm/stall_summary.py)
#   profile.ncu-rep      the report itself (ncu-ui), when it is under the size a device call returns
#   bench/gemm/profile.sh [--only 4096x4096x4096] [--config 128x256x64] [--kernel matmul_bias_silu]
# --kernel profiles the first timed launch of the kernels whose name contains the text (the fused
# epilogue's rows come after the plain product's at the same shape).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
only=4096x4096x4096 config=128x256x64 kernel=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --kernel) kernel="$2"; shift 2 ;;
    *) echo "usage: bench/gemm/profile.sh [--only MxNxK|NxK] [--config CFG] [--kernel TEXT]" >&2; exit 2 ;;
  esac
done
build_gemm_bench "$out/profile_build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
# Launches: the start-up fill, the checked first launch, then the timed ones: the third is profiled.
# With --kernel: its checked first launch, then the timed ones (the second is profiled).
select=(--launch-skip 2)
[[ -n $kernel ]] && select=(-k "regex:$kernel" --launch-skip 1)
ncu --set full --import-source no "${select[@]}" --launch-count 1 -f -o "$out/profile" \
  "$build/bench/ctile_gemm_bench" --only "$only" --config "$config" --reps 2 >"$out/profile_ncu.log" 2>&1 ||
  { tail -30 "$out/profile_ncu.log"; exit 1; }
ncu --import "$out/profile.ncu-rep" --page details --print-details all >"$out/profile_details.txt" 2>&1
{
  ncu --import "$out/profile.ncu-rep" --page raw --csv 2>/dev/null | python3 bench/gemm/stall_summary.py --raw
  ncu --import "$out/profile.ncu-rep" --page source --csv --print-source sass 2>/dev/null |
    python3 bench/gemm/stall_summary.py --source
} >"$out/profile_stalls.txt" 2>&1
cat "$out/profile_stalls.txt" | head -60
[[ $(stat -c %s "$out/profile.ncu-rep") -lt 16000000 ]] || rm -f "$out/profile.ncu-rep"
