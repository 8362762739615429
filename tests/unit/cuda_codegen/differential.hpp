// Shared by the differential tests (emulator and GPU): random inputs for any kernel (pieces over a
// 2-per-axis grid with partial tiles, tensors sized from their partitions, every other view strided
// and misaligned, NaN/inf/signed zeros among floats) and the comparison of written tensors.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../../src/backend/cpu/numeric.hpp"
#include "ctile/backend/backend.hpp"

namespace cuda_codegen_test {

using namespace ctile;
using backend::ArgValue;

struct Buffer {
  DType d = DType::f32;
  Shape shape, strides;
  std::size_t offset = 0;  // elements before the view's first element (misaligns vector accesses)
  std::vector<std::byte> mem;
  void* data() { return mem.data() + offset * static_cast<std::size_t>(dtype_size(d)); }
};

template <class T>
void fill_random(T* p, std::size_t n, std::mt19937_64& g) {
  std::uniform_int_distribution<int> small(-8, 23);
  std::normal_distribution<double> normal(0.0, 4.0);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = (g() & 1) != 0;
    } else if constexpr (backend::cpu::is_float_v<T>) {
      double v = normal(g);
      switch (g() % 32) {
        case 0: v = NAN; break;
        case 1: v = INFINITY; break;
        case 2: v = -0.0; break;
        case 3: v = 0.0; break;
        default: break;
      }
      p[i] = backend::cpu::float_from_double<T>(v);
    } else if constexpr (std::is_unsigned_v<T>) {
      p[i] = static_cast<T>(small(g) + 8);
    } else {
      p[i] = static_cast<T>(small(g));
    }
  }
}

// Largest tile of each axis over the partitions made of tensor value `t`.
inline Shape partition_tiles(const ir::Kernel& k, ir::ValueId t, int rank) {
  Shape s(static_cast<std::size_t>(rank), 0);
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::MakePartition && op.operands[0] == t)
      for (int d = 0; d < rank; ++d) s[static_cast<std::size_t>(d)] = std::max(s[static_cast<std::size_t>(d)], op.shape[static_cast<std::size_t>(d)]);
  });
  return s;
}

struct Inputs {
  Shape grid;
  std::vector<Buffer> bufs;  // per param (scalars: unused)
  std::vector<ArgValue> args;
};

inline Inputs make_inputs(const ir::Kernel& k, bool one_block, unsigned seed) {
  std::mt19937_64 g(seed);
  Inputs s;
  s.grid.assign(static_cast<std::size_t>(k.grid_rank), one_block ? 1 : 2);
  s.bufs.resize(k.params.size());
  s.args.resize(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (p.type.kind == ir::TypeKind::Tile) {
      s.args[i].scalar = is_float(p.type.dtype) ? ir::Scalar::of_float(0.5 + static_cast<double>(g() % 4) * 0.5)
                                                 : ir::Scalar::of_int(static_cast<std::int64_t>(1 + g() % 4));
      continue;
    }
    Buffer& b = s.bufs[i];
    b.d = p.type.dtype;
    const int r = p.type.rank;
    b.shape.resize(static_cast<std::size_t>(r));
    if (p.type.kind == ir::TypeKind::Piece) {
      for (int d = 0; d < r; ++d) {
        const std::int64_t t = p.type.shape[static_cast<std::size_t>(d)];
        const std::int64_t gd = s.grid[static_cast<std::size_t>(d)];
        b.shape[static_cast<std::size_t>(d)] = t * (gd - 1) + std::max<std::int64_t>(1, t - 3);
      }
    } else {
      const Shape tiles = partition_tiles(k, p.value, r);
      for (int d = 0; d < r; ++d) {
        const std::int64_t t = tiles[static_cast<std::size_t>(d)];
        b.shape[static_cast<std::size_t>(d)] = t == 0 ? 19 : std::max<std::int64_t>(1, 2 * t - 3);
      }
    }
    // Every other tensor gets padded rows and an odd base offset: strided and misaligned views.
    const bool odd = (g() & 1) != 0 && r >= 1;
    b.strides = contiguous_strides(b.shape);
    if (odd && r >= 2) {
      const std::int64_t ld = b.shape.back() + 3;
      std::int64_t acc = 1;
      for (int d = r - 1; d >= 0; --d) {
        b.strides[static_cast<std::size_t>(d)] = acc;
        acc *= d == r - 1 ? ld : b.shape[static_cast<std::size_t>(d)];
      }
    }
    b.offset = odd ? 1 : 0;
    std::int64_t span = 1;
    for (int d = 0; d < r; ++d) span += (b.shape[static_cast<std::size_t>(d)] - 1) * b.strides[static_cast<std::size_t>(d)];
    const std::size_t n = static_cast<std::size_t>(span) + b.offset + 8;
    b.mem.resize(n * static_cast<std::size_t>(dtype_size(b.d)));
    backend::cpu::dispatch(b.d, [&]<class T>(std::type_identity<T>) { fill_random(reinterpret_cast<T*>(b.mem.data()), n, g); });
    if (b.d == DType::b1)
      for (auto& x : b.mem) x = static_cast<std::byte>(static_cast<unsigned>(x) & 1u);
    s.args[i].tensor.data = b.data();
    s.args[i].tensor.dtype = b.d;
    s.args[i].tensor.shape = b.shape;
    s.args[i].tensor.strides = b.strides;
  }
  return s;
}

inline double tolerance(DType d) {
  switch (d) {
    case DType::f16: return 2e-3;
    case DType::bf16: return 1.6e-2;
    case DType::f32: return 2e-6;
    case DType::f64: return 1e-13;
    default: return 0;
  }
}

// Compares the memory of a written tensor element by element; returns the first mismatch.
inline std::string compare(const Buffer& want, const Buffer& got, double tol_scale, double min_tol = 0) {
  std::string err;
  backend::cpu::dispatch(want.d, [&]<class T>(std::type_identity<T>) {
    const T* w = reinterpret_cast<const T*>(want.mem.data());
    const T* o = reinterpret_cast<const T*>(got.mem.data());
    const std::size_t n = want.mem.size() / sizeof(T);
    for (std::size_t i = 0; i < n && err.empty(); ++i) {
      if constexpr (backend::cpu::is_float_v<T>) {
        const double a = backend::cpu::to_double(w[i]), b = backend::cpu::to_double(o[i]);
        if (std::isnan(a) && std::isnan(b)) continue;
        if (a == b) continue;
        if (std::isfinite(a) && std::isfinite(b) && std::abs(a - b) <= std::max(tolerance(want.d) * tol_scale, min_tol) * std::max(1.0, std::abs(a)))
          continue;
        err = "element " + std::to_string(i) + ": interpreter " + std::to_string(a) + ", generated code " + std::to_string(b);
      } else {
        if (std::memcmp(&w[i], &o[i], sizeof(T)) != 0)
          err = "element " + std::to_string(i) + ": interpreter " + std::to_string(static_cast<long long>(w[i])) +
                ", generated code " + std::to_string(static_cast<long long>(o[i]));
      }
    }
  });
  return err;
}


inline bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// How a case is compared: racy kernels only run (atomics' old values and cross-block float sums
// depend on the order); kernels whose blocks write each other's elements run as one block; f32
// accumulation (mma, full reductions) gets a wider tolerance.
struct Policy {
  bool racy = false, one_block = false;
  double scale = 50;
  double min_tol = 0;  // relative tolerance at least this (f64 outputs computed in f32)
};
inline Policy policy(const std::string& name) {
  Policy p;
  p.racy = starts(name, "atomics_") || name == "example_reduce_sum" || name == "golden_memory" || name == "histogram";
  p.one_block = starts(name, "gather_scatter") || name == "example_unsafe_scatter";
  if (starts(name, "mma_") || starts(name, "mm_") || name.find("matmul") != std::string::npos) p.scale = 1e3;
  // CUDA's expf and glibc's may differ in the last bit (the emulator uses glibc, like the interpreter)
  if (name == "axpby_f64") p.min_tol = 1e-4;
  return p;
}

}  // namespace cuda_codegen_test
