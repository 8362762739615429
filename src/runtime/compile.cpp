// compile_only and warm_up (include/ctile/runtime/compile.hpp): argument specs planned like a
// launch's arguments, then either generated and compiled by NVRTC for a chosen architecture, or
// compiled into launch()'s kernel cache (kernel_cache.hpp) for a device.
#include "ctile/runtime/compile.hpp"

#include "ctile/runtime/bind.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

#include "../backend/cuda/codegen.hpp"
#include "../backend/cuda/nvrtc.hpp"
#include "../core/dump.hpp"
#include "kernel_cache.hpp"
#include "stage_timings.hpp"

namespace ctile::detail {

namespace {

struct Arch {
  std::string name;  // as given: "sm_90a"
  int sm = 0;        // 90
};

const char* const kAcceptedArchs =
    "sm_80, sm_86, sm_89, sm_90, sm_90a, and newer architectures in the same form (sm_<NN>; sm_<NN>a from sm_90a, "
    "sm_<NN>f from sm_100f)";

// "sm_<digits>[a|f]", compute capability 8.0 or newer.
Arch parse_arch(const std::string& kernel, const std::string& s) {
  auto bad = [&](const std::string& why) -> Arch {
    plan_error("compile_only", kernel, -1, "", "unsupported architecture '" + s + "'" + why + "; accepted: " + kAcceptedArchs);
  };
  if (s.rfind("sm_", 0) != 0) return bad("");
  std::size_t i = 3;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  const std::string digits = s.substr(3, i - 3);
  const std::string suffix = s.substr(i);
  if (digits.size() < 2 || digits.size() > 3 || digits[0] == '0') return bad("");
  const int sm = std::stoi(digits);
  if (sm < 80) return bad(" (ctile needs compute capability 8.0 or newer)");
  if (!(suffix.empty() || (suffix == "a" && sm >= 90) || (suffix == "f" && sm >= 100))) return bad("");
  return Arch{s, sm};
}

// The grid rank of a specialisation planned from specs: from the partition specs, else the option.
int spec_grid_rank(const char* action, const std::string& kernel, const LaunchPlan& plan, int option) {
  if (plan.grid) {
    const int r = static_cast<int>(plan.grid->size());
    if (option != 0 && option != r)
      plan_error(action, kernel, -1, "",
                 "grid_rank " + std::to_string(option) + " was given, but the partition spec of argument " +
                     std::to_string(plan.grid_source) + " makes a rank-" + std::to_string(r) + " grid");
    return r;
  }
  if (option == 0)
    plan_error(action, kernel, -1, "",
               "the kernel has no Mut parameter to take the grid rank from; give it in the options (.grid_rank = the "
               "number of axes of the grid passed to .grid({...}) at launch)");
  if (option < 1 || option > kMaxRank)
    plan_error(action, kernel, -1, "", "grid_rank " + std::to_string(option) + " must be 1 to 6");
  return option;
}

}  // namespace

void plan_tensor_spec(LaunchPlan& p, const std::string& kernel, int arg, ParamSpec spec, int rank, const Shape& shape,
                      const Shape& strides, const Shape& tile, const Shape& static_tile, bool aligned16,
                      const std::optional<ir::TensorFacts>& facts) {
  const std::string param = param_desc(spec, rank);
  auto fail = [&](const std::string& msg) { plan_error(p.action, kernel, arg, param, msg); };
  plan_shape(p, kernel, arg, spec, rank, shape);
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0) fail("the spec's shape " + shape_str(shape) + " has a negative extent at axis " + std::to_string(d));
  std::int64_t n = 0;
  if (!checked_numel(shape, n) || n > INT64_MAX / dtype_size(spec.dtype))
    fail("the spec's shape " + shape_str(shape) + " has more elements than int64 bytes can address");
  if (strides.size() != shape.size())
    fail("the spec's strides " + shape_str(strides) + " do not match the rank of its shape " + shape_str(shape));
  for (std::size_t d = 0; d < strides.size(); ++d)
    if (strides[d] < 0) fail("the spec's strides " + shape_str(strides) + " have a negative stride at axis " + std::to_string(d));
  if (spec.kind == ParamSpec::Kind::Piece) {
    if (tile.size() != shape.size())
      fail("the spec's tile shape " + shape_str(tile) + " has rank " + std::to_string(tile.size()) +
           " but its shape " + shape_str(shape) + " has rank " + std::to_string(shape.size()));
    for (std::size_t d = 0; d < tile.size(); ++d)
      if (!is_pow2(tile[d]))
        fail("the spec's tile extent " + std::to_string(tile[d]) + " at axis " + std::to_string(d) +
             " is not a power of two (every tile extent must be 1, 2, 4, ...)");
    if (!static_tile.empty() && static_tile != tile)
      fail("the kernel declares tile shape " + shape_str(static_tile) + " but the spec's tile shape is " + shape_str(tile));
    spec.tile_shape = tile;
  } else if (!tile.empty()) {
    fail("a tile shape is given, but only partition specs (Mut parameters) have one");
  }
  plan_grid(p, kernel, arg, spec, rank, shape);
  spec.facts = facts ? *facts : tensor_facts(aligned16, shape, strides);
  p.specs.push_back(std::move(spec));
}

CompileOnlyResult compile_only_planned(const void* fn, Tracer tracer, const std::string& name, const CompileOptions& opt,
                                       const LaunchPlan& plan) {
  using namespace backend::cuda;
  const Arch arch = parse_arch(name, opt.arch);
  const int grid_rank = spec_grid_rank("compile_only", name, plan, opt.grid_rank);
  Nvrtc* nv = nvrtc();
  if (!nv)
    plan_error("compile_only", name, -1, "", "NVRTC is not available: " + nvrtc_unavailable_reason());
  const auto v = nv->version();
  const std::string nv_version = std::to_string(v.major) + "." + std::to_string(v.minor);
  if (const std::vector<int> archs = nv->supported_archs();
      !archs.empty() && std::find(archs.begin(), archs.end(), arch.sm) == archs.end()) {
    std::string list;
    for (int a : archs)
      if (a >= 80) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
    plan_error("compile_only", name, -1, "",
               "NVRTC " + nv_version + " cannot compile for " + arch.name + "; it supports " + list);
  }

  CompileOnlyResult r;
  r.kernel = name;
  r.arch = arch.name;
  r.grid_rank = grid_rank;
  r.nvrtc_version = nv_version;
  const auto t0 = std::chrono::steady_clock::now();
  opt.kernel.validate(name);
  r.ir_kernel = with_options(tracer(fn, name, plan.specs, grid_rank), opt.kernel);
  const double trace_ms = ms_since(t0);
  r.ir = ir::print(*r.ir_kernel);
  if (env_flag("CTILE_DUMP_IR")) std::fprintf(stderr, "%s", r.ir.c_str());
  CodegenOptions co;  // the generator's defaults (the backend's tuning knobs CTILE_PREFETCH/CTILE_THREADS do not apply)
  co.sm = arch.sm;
  const auto t1 = std::chrono::steady_clock::now();
  GeneratedKernel gk = generate(*r.ir_kernel, co);
  const double codegen_ms = ms_since(t1);
  if (env_flag("CTILE_DUMP_CUDA")) dump_generated("kernel '" + name + "'", gk.entry, ".cu", gk.source);
  const auto t2 = std::chrono::steady_clock::now();
  const CompileResult cr = nv->compile_for_arch(gk, arch.name);
  const double nvrtc_ms = ms_since(t2);
  if (env_flag("CTILE_DUMP_PTX")) dump_generated("kernel '" + name + "'", gk.entry, ".ptx", cr.ptx);
  if (env_flag("CTILE_TIMINGS"))
    std::fprintf(stderr, "ctile: timings of kernel '%s' (compile_only, %s): trace %.3f ms, codegen %.3f ms, nvrtc %.3f ms\n",
                 name.c_str(), arch.name.c_str(), trace_ms, codegen_ms, nvrtc_ms);
  if (env_flag("CTILE_TIMINGS"))
    for (const std::string& n : gk.notes) std::fprintf(stderr, "ctile: kernel '%s': %s\n", name.c_str(), n.c_str());
  r.entry = gk.entry;
  r.threads_per_block = gk.threads;
  r.dynamic_smem_bytes = gk.smem_bytes;
  r.params_bytes = gk.params_bytes;
  r.prefetches = gk.prefetches;
  r.cuda_source = std::move(gk.source);
  r.ptx = cr.ptx;
  r.cubin.resize(cr.image.size());
  std::transform(cr.image.begin(), cr.image.end(), r.cubin.begin(), [](char c) { return static_cast<std::byte>(c); });
  r.nvrtc_log = cr.log;
  return r;
}

BoundPtr bind_planned(const void* fn, Tracer tracer, const std::string& name, const Device& d, const LaunchPlan& plan,
                      int grid_rank_option, const KernelOptions& options) {
  const int grid_rank = spec_grid_rank("bind", name, plan, grid_rank_option);
  backend::Backend& be = backend_for(d);
  const CacheLookup found = find_or_compile(fn, tracer, name, plan.specs, grid_rank, be, d, options);
  return make_bound(*found.record, name);
}

WarmUpResult warm_up_planned(const void* fn, Tracer tracer, const std::string& name, const Device& d,
                             const WarmUpOptions& opt, const LaunchPlan& plan) {
  const int grid_rank = spec_grid_rank("warm_up", name, plan, opt.grid_rank);
  backend::Backend& be = backend_for(d);
  const CacheLookup found = find_or_compile(fn, tracer, name, plan.specs, grid_rank, be, d, opt.kernel);
  return WarmUpResult{std::string(be.name()), found.hit};
}

}  // namespace ctile::detail
