#!/usr/bin/env bash
# The wgmma probe (tests/gpu_wgmma, issue 8) in one call: the host emulation first (it must pass
# anywhere), then on a machine with an sm_90 GPU the real instructions (nvcc -cubin for sm_90a, a
# driver-API host). Writes ${OUT:-results}/wgmma_probe.txt; exits non-zero on a mismatch or error.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results}"
mkdir -p "$out"
b="$root/build/wgmma-probe"
mkdir -p "$b"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
rep="$out/wgmma_probe.txt"
status=0
{
  echo "== emulation"
  g++ -std=c++20 -O1 -I include -include tests/unit/cuda_codegen/emu/ct_emu.h tests/gpu_wgmma/probe.cpp -o "$b/probe_emu" -lpthread &&
    "$b/probe_emu" || status=1
  if command -v nvidia-smi >/dev/null && nvidia-smi >/dev/null 2>&1; then
    echo "== GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
    "$CUDA_HOME/bin/nvcc" -cubin -arch=sm_90a -std=c++17 -I include tests/gpu_wgmma/probe_kernel.cu -o "$b/probe.cubin" &&
      g++ -std=c++17 -DPROBE_GPU -I"$CUDA_HOME/include" tests/gpu_wgmma/probe.cpp -o "$b/probe_gpu" -lcuda &&
      "$b/probe_gpu" "$b/probe.cubin" || status=1
    "$CUDA_HOME/bin/cuobjdump" --dump-sass "$b/probe.cubin" | grep -oE 'HGMMA[.A-Z0-9x]*' | sort | uniq -c
  else
    echo "== GPU: none here (the emulation only checks that the layouts and descriptors agree with each other)"
  fi
  exit "$status"
} 2>&1 | tee "$rep"
exit "${PIPESTATUS[0]}"
