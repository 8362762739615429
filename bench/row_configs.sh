#!/usr/bin/env bash
# The row kernels under several compile configurations, beside their peers, in one run on a GPU
# machine: builds ctile_bench (Release, build/gpu), runs the selected row kernels once per
# (warps, min CTAs per SM) pair on the same inputs (ctile_bench --configs), then the peers' rows
# (bench/peers.py --only rows: torch, torch.compile, autotuned Triton), and prints per kernel and
# shape each configuration's TB/s and its ratio to the best peer (bench/row_configs.py). Method as
# ctile_bench and peers.py (per-call device time, L2 flushed, median, results checked first).
# Environment: OUT (default results/row-configs), KERNELS (ctile_bench kernel names, default
# layer_norm,rms_norm,softmax), CONFIGS (ctile_bench --configs items: W:C[:S] or eN:C[:S], 0 = the
# compiler's choice; default 0:0,e16:0,e8:0,e4:0), PEERS=0 (no peers), DEADLINE_S (seconds the peers may take, 150).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results/row-configs}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
kernels="${KERNELS:-layer_norm,rms_norm,softmax}"
configs="${CONFIGS:-0:0,e16:0,e8:0,e4:0}"
log="$out/row_configs.log"
: >"$log"
if [[ ! -x build/gpu/bench/ctile_bench ]]; then
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF >>"$log" 2>&1
fi
cmake --build build/gpu -j "$(nproc)" --target ctile_bench >>"$log" 2>&1 || { echo "build failed"; tail -30 "$log"; exit 1; }
export CTILE_CACHE_DIR="$out/kernel-cache"
rm -rf "$CTILE_CACHE_DIR" "$out/ctile.jsonl" "$out/peers.jsonl"
t0=$SECONDS
build/gpu/bench/ctile_bench --only "$kernels" --configs "$configs" --out "$out/ctile.jsonl" >>"$log" 2>&1
echo "ctile_bench exit $? in $((SECONDS - t0)) s" | tee -a "$log"
if [[ "${PEERS:-1}" != 0 ]]; then
  t0=$SECONDS
  PYTHONUNBUFFERED=1 TRITON_CACHE_DIR="$out/triton-cache" python3 bench/peers.py --only rows --out "$out/peers.jsonl" \
    --ctile-results "$out/ctile.jsonl" --deadline "$(($(date +%s) + ${DEADLINE_S:-150}))" >>"$log" 2>&1
  echo "peers.py exit $? in $((SECONDS - t0)) s" | tee -a "$log"
fi
rm -rf "$CTILE_CACHE_DIR" "$out/triton-cache"
python3 bench/row_configs.py "$out/ctile.jsonl" "$out/peers.jsonl" | tee "$out/row_configs.md"
