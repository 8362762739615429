#!/usr/bin/env bash
# The SIMT benchmarks in one call, for a GPU machine: builds ctile_simt_bench (Release, into
# build/simt-bench), runs it, runs the torch peers when torch with CUDA is present, and writes the
# records and a Markdown table under $OUT (default: bench/simt/results):
#   simt_bench.jsonl  torch.jsonl  simt_report.md  simt_results.json  *.log
# Arguments go to both benchmark programs (--quick for a short run, --only NAME, --iters, --trials).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-$root/bench/simt/results}"
mkdir -p "$out"
build="${CTILE_SIMT_BENCH_BUILD:-build/simt-bench}"

echo "== configuring and building ctile_simt_bench (Release) in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
      -DCTILE_BUILD_TOOL=OFF >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" --target ctile_simt_bench -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

commit="${CTILE_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || echo unknown)"
echo "== ctile_simt_bench (commit $commit, driver $driver)"
status=0
"$build/bench/simt/ctile_simt_bench" --out "$out/simt_bench.jsonl" "$@" 2>&1 | tee "$out/simt_bench.log" || status=$?
files=("$out/simt_bench.jsonl")
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "== torch peers"
  python3 bench/simt/torch_peers.py --out "$out/torch.jsonl" "$@" 2>&1 | tee "$out/torch.log" || status=$?
  files+=("$out/torch.jsonl")
else
  echo "== torch with CUDA is not available here: no torch peers (the torch.sum target is not measured)"
fi
python3 bench/simt/report.py "${files[@]}" --md "$out/simt_report.md" --json "$out/simt_results.json" \
        --meta "date=$(date -u +%Y-%m-%d)" "commit=$commit" "driver=$driver"
exit "$status"
