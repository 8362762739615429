#!/usr/bin/env bash
# Installs what building and testing ctile needs (Debian/Ubuntu, apt-get): cmake, ninja, g++,
# GoogleTest, clang-tidy, clang++ (the compile_fail suite checks every case under GCC and clang) and
# CLI11 (the `ctile` tool's command line) and the DLPack header (a test checks ctile's own DLPack ABI
# declarations against it). Installs only what is missing; does nothing when all is present.
# Uses sudo only when not run as root.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1; }

have cmake || missing+=(cmake)
have ninja || missing+=(ninja-build)
have g++ || missing+=(g++)
# GoogleTest: the headers and the CMake package config that find_package(GTest) uses.
have_gtest() {
  [[ -f /usr/include/gtest/gtest.h ]] || return 1
  compgen -G "/usr/lib/*/cmake/GTest/GTestConfig.cmake" >/dev/null ||
    compgen -G "/usr/lib/cmake/GTest/GTestConfig.cmake" >/dev/null
}
have_gtest || missing+=(libgtest-dev)
have clang-tidy || have clang-tidy-14 || missing+=(clang-tidy)
have clang++-14 || have clang++ || missing+=(clang-14)
# CLI11: header-only, with the CMake package config that find_package(CLI11) uses.
[[ -f /usr/include/CLI/CLI.hpp ]] || missing+=(libcli11-dev)
have python3 || missing+=(python3)  # the docs checks (scripts/check_language_docs.py)
# DLPack: header only; tests/unit/interop compares ctile's declarations of its ABI with it.
[[ -f /usr/include/dlpack/dlpack.h ]] || missing+=(libdlpack-dev)

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: cmake, ninja, g++, GoogleTest, clang-tidy, clang++, CLI11, python3 and the DLPack header are installed"
  exit 0
fi

if ! have apt-get; then
  echo "setup: missing ${missing[*]}, and there is no apt-get here: install them by hand" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if ! have sudo; then
    echo "setup: missing ${missing[*]}; run this script as root (or install sudo)" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
