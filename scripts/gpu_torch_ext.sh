#!/usr/bin/env bash
# The PyTorch extension example (examples/torch_extension, docs/tutorials/torch_extension.md) in one
# call, on a machine with torch (CUDA or CPU build), cmake, ninja and g++; no network needed:
#   1. builds libctile.a (Release, position-independent) with torch's C++ ABI
#      (torch._C._GLIBCXX_USE_CXX11_ABI) into build/torch-ext;
#   2. builds the extension with torch.utils.cpp_extension.load and runs examples/torch_extension/run.py:
#      ctile kernels on torch tensors (CPU, and CUDA when torch sees a GPU; REQUIRE_GPU=1 makes a
#      missing GPU a failure) against torch, zero-copy checks, stream ordering on torch's stream.
# Logs and torch_extension.txt go to ${OUT:-results}/. Exits non-zero when a step or a check fails.
# Environment: OUT, PYTHON (default python3), JOBS, REQUIRE_GPU=1, CTILE_TEST_SEED (reproduce a run).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
py="${PYTHON:-python3}"
build="$root/build/torch-ext"
jobs="${JOBS:-$(nproc)}"

abi="$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))' 2>"$out/torch_ext_python.log")" || {
  echo "gpu_torch_ext: '$py' cannot import torch (see $out/torch_ext_python.log)" | tee "$out/torch_ext_summary.txt"
  exit 1
}
echo "gpu_torch_ext: torch $("$py" -c 'import torch; print(torch.__version__, "cuda" if torch.cuda.is_available() else "cpu-only")'), _GLIBCXX_USE_CXX11_ABI=$abi" |
  tee "$out/torch_ext_summary.txt"

if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF \
         -DCTILE_BUILD_EXAMPLES=OFF -DCTILE_BUILD_BENCH=OFF -DCTILE_BUILD_TOOL=OFF \
         -DCMAKE_POSITION_INDEPENDENT_CODE=ON "-DCMAKE_CXX_FLAGS=-D_GLIBCXX_USE_CXX11_ABI=$abi" &&
       cmake --build "$build" -j "$jobs" --target ctile; } >"$out/torch_ext_build.log" 2>&1; then
  echo "gpu_torch_ext: building libctile.a failed (see torch_ext_build.log)" | tee -a "$out/torch_ext_summary.txt"
  tail -30 "$out/torch_ext_build.log"
  exit 1
fi

# The toolchain, for the record: which compiler torch's extension build uses and whether it links
# libstdc++ shared (the extension must share the process's libstdc++; see run.py).
{ echo "== c++: $(command -v c++) -> $(readlink -f "$(command -v c++)")"; c++ --version | head -1
  echo "libstdc++.so: $(c++ -print-file-name=libstdc++.so)  libstdc++.a: $(c++ -print-file-name=libstdc++.a)"
  c++ -dumpspecs 2>/dev/null | grep -n 'static-libstdc' | head -3; } >>"$out/torch_ext_summary.txt" 2>&1

args=(--out "$out")
[[ "${REQUIRE_GPU:-0}" == 1 ]] && args+=(--require-gpu)
# -X faulthandler: a crash prints the Python stack; a crash by a signal then reruns under gdb (when
# the machine has it) for the native stack, into torch_ext_crash.txt.
CTILE_LIB="$build/src/libctile.a" CTILE_EXT_BUILD="$build/ext" \
  "$py" -X faulthandler "$root/examples/torch_extension/run.py" "${args[@]}" 2>&1 | tee "$out/torch_ext_run.log"
rc=${PIPESTATUS[0]}
echo "gpu_torch_ext: run.py exit $rc" | tee -a "$out/torch_ext_summary.txt"
if ((rc > 128)) && command -v gdb >/dev/null; then
  CTILE_LIB="$build/src/libctile.a" CTILE_EXT_BUILD="$build/ext" timeout 300 gdb -batch -ex run -ex bt -ex "info sharedlibrary" \
    --args "$py" "$root/examples/torch_extension/run.py" "${args[@]}" >"$out/torch_ext_crash.txt" 2>&1
  grep -A40 -m1 'signal SIG' "$out/torch_ext_crash.txt" | head -60
elif ((rc > 128)); then
  echo "gpu_torch_ext: no gdb here; the extension's own handler prints the native stack (CTILE_BACKTRACE=1)" | tee -a "$out/torch_ext_summary.txt"
  CTILE_BACKTRACE=1 CTILE_VERBOSE=1 CTILE_LIB="$build/src/libctile.a" CTILE_EXT_BUILD="$build/ext" \
    "$py" -X faulthandler "$root/examples/torch_extension/run.py" "${args[@]}" >"$out/torch_ext_crash.txt" 2>&1
  grep -A40 -m1 'native stack' "$out/torch_ext_crash.txt" | c++filt | head -50
  # How the extension was linked, and which libstdc++ symbols it defines itself (a second copy of
  # the iostream/locale code beside the process's libstdc++ is a known way for ostreams to crash).
  { echo "== build.ninja"; grep -E '^(cflags|ldflags|post_cflags|cuda_cflags) =|^rule link|^  command' "$build/ext/build.ninja"
    echo "== libstdc++ symbols defined in ctile_torch.so"; nm -DC --defined-only "$build/ext/ctile_torch.so" | grep -cE ' std::(basic_ostream|locale|codecvt)'
    echo "== needed"; readelf -d "$build/ext/ctile_torch.so" | grep NEEDED; echo "== c++"; c++ --version | head -1; } >>"$out/torch_ext_crash.txt" 2>&1
  tail -22 "$out/torch_ext_crash.txt"
fi
if [[ -f "$build/ext/ctile_torch.so" ]]; then
  { echo "== ctile_torch.so NEEDED"; readelf -d "$build/ext/ctile_torch.so" | grep NEEDED
    echo "libstdc++ stream/locale symbols it defines itself: $(nm -DC --defined-only "$build/ext/ctile_torch.so" | grep -cE ' std::(basic_ostream|locale|codecvt)')"; } >>"$out/torch_ext_summary.txt" 2>&1
fi
exit "$rc"
