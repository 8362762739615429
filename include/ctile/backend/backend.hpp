// The backend interface. A backend turns a verified ir::Kernel into something it can run
// ("compile") and runs it over a grid of tile blocks with concrete arguments. The CPU interpreter
// is one backend; the CUDA backend (NVRTC) implements the same interface.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ctile/ir/ir.hpp"

namespace ctile::backend {

// A tensor as a kernel argument: base pointer, extents and strides in elements (64-bit).
struct TensorArg {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Shape strides;
};

// One argument per ir::Kernel::params entry, in that order. Piece and Tensor params use `tensor`
// (for a Piece: the whole partitioned tensor; the tile shape is in the param's type);
// scalar params use `scalar` (already cast to the param's dtype).
struct ArgValue {
  TensorArg tensor;
  ir::Scalar scalar;
};

struct LaunchConfig {
  Shape grid;                  // tile blocks per axis; grid.size() == kernel.grid_rank
  bool race_check = false;     // record writers of Unchecked stores and report overlaps (CPU)
  std::string kernel_name;     // for messages
};

class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  virtual const ir::Kernel& kernel() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Prepares `k` (already verified) for launches. May be called from several threads.
  virtual std::shared_ptr<const CompiledKernel> compile(std::shared_ptr<const ir::Kernel> k) = 0;
  // Runs every tile block of the grid to completion (CPU) or enqueues the work (GPU).
  // Throws UserError/RaceError for problems found while running.
  virtual void run(const CompiledKernel& ck, const LaunchConfig& cfg, std::span<const ArgValue> args) = 0;
};

// The CPU reference backend (backend/cpu): an interpreter of the IR.
std::shared_ptr<Backend> cpu_backend();

}  // namespace ctile::backend
