// The compiler's middle: passes over the IR and the pipelines that chain them (docs/compiler.md).
// Every optimisation is a named pass with golden tests (tests/unit/passes/golden: input IR -> passes
// -> expected IR); the pipeline is one readable list; a dump of the IR after each pass is written
// when CTILE_DUMP_PASSES names a directory (or PassContext::dump_dir is set).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctile/core/options.hpp"
#include "ctile/ir/ir.hpp"

namespace ctile::passes {

// What the passes know about the compilation.
struct PassContext {
  KernelOptions options;
  int sm = 0;                // target compute capability * 10; 0: no GPU target (the CPU interpreter)
  std::string dump_dir;      // "" : CTILE_DUMP_PASSES, else no dumps
  bool verify_each = true;   // run the verifier after every pass (InternalError on a broken pass)
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual void run(ir::Kernel& k, const PassContext& ctx) = 0;
};

class PassManager {
 public:
  PassManager& add(std::unique_ptr<Pass> p);
  PassManager& add(std::string_view name);  // a pass from the registry below
  // Runs every pass in order; verifies after each (ctx.verify_each) and writes
  // <dump_dir>/<kernel>/<NN>-<pass>.ir after each when dumping.
  void run(ir::Kernel& k, const PassContext& ctx) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

// The registry of passes by name ("canonicalize", "cse", ...); an unknown name is a UserError that
// lists the known ones.
std::unique_ptr<Pass> make_pass(std::string_view name);
std::vector<std::string> pass_names();

// The tile-level pipeline every backend runs (canonicalize, constant-fold, cse, dce, precision).
PassManager tile_pipeline();
// The tile-level pipeline followed by the GPU-level passes of the CUDA backend (layouts,
// conversions, bounds, shared memory, scheduling).
PassManager cuda_pipeline();

}  // namespace ctile::passes
