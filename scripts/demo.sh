#!/usr/bin/env bash
# Builds the examples (Release, build/release) and runs each one, in the order of CTILE_EXAMPLES in
# examples/CMakeLists.txt. Every example checks its result against a reference computed on the
# host and exits non-zero when it does not match. Exits non-zero if any example fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh

# The example names, from `set(CTILE_EXAMPLES ...)` (comments dropped; may span lines).
examples=()
read -r -a examples < <(sed 's/#.*//' examples/CMakeLists.txt | tr '\n' ' ' |
                          grep -o 'set( *CTILE_EXAMPLES [^)$]*)' | head -n 1 |
                          sed -e 's/set( *CTILE_EXAMPLES//' -e 's/)$//')
if [[ ${#examples[@]} -eq 0 ]]; then
  echo "demo: no examples found in examples/CMakeLists.txt (set(CTILE_EXAMPLES ...))" >&2
  exit 1
fi

cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_EXAMPLES=ON -DCTILE_BUILD_TESTS=OFF
cmake --build build/release -j "$(nproc)" --target "${examples[@]}"

passed=0
failed=()
for ex in "${examples[@]}"; do
  echo
  echo "== ${ex}"
  if "build/release/examples/${ex}"; then
    passed=$((passed + 1))
  else
    failed+=("${ex}")
  fi
done

echo
echo "${passed} of ${#examples[@]} examples match their references"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
