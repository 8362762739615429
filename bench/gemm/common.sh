# Sourced by bench/gemm/run.sh, sweep.sh and profile.sh: moves to the repository root and sets
#   out    the results folder (OUT, default bench/gemm/results), created
#   build  the Release build folder (CTILE_GEMM_BUILD, default build/gemm)
# with the CUDA tools on PATH, and defines build_gemm_bench LOG, which configures and builds
# ctile_gemm_bench into $build (its output in LOG; on failure the log's end, and status 1).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-$root/bench/gemm/results}"
mkdir -p "$out"
build="${CTILE_GEMM_BUILD:-build/gemm}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PATH="$PATH:$CUDA_HOME/bin"
build_gemm_bench() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
    -DCTILE_BUILD_TOOL=OFF -DCTILE_BUILD_BENCH=ON >"$1" 2>&1 &&
    cmake --build "$build" --target ctile_gemm_bench -j "$(nproc)" >>"$1" 2>&1 ||
    { tail -30 "$1"; return 1; }
}
