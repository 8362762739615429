// The CPU reference backend: compile = verify; run = interpret every tile block of the grid on a
// thread pool (blocks write disjoint outputs), then report the first error and any race found.
#include <atomic>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>

#include "ctile/backend/backend.hpp"
#include "ctile/passes/pass.hpp"
#include "interp.hpp"
#include "race_checker.hpp"
#include "thread_pool.hpp"

namespace ctile::backend {
namespace cpu {
namespace {

class CpuCompiled final : public CompiledKernel {
 public:
  explicit CpuCompiled(std::shared_ptr<const ir::Kernel> k) : k_(std::move(k)) {}
  const ir::Kernel& kernel() const override { return *k_; }

 private:
  std::shared_ptr<const ir::Kernel> k_;
};

std::string block_str(std::int64_t linear, const Launch& L) {
  std::array<std::int64_t, kMaxRank> c{};
  for (int d = L.grid_rank - 1; d >= 0; --d) {
    const auto ud = static_cast<std::size_t>(d);
    c[ud] = linear % L.grid[ud];
    linear /= L.grid[ud];
  }
  std::string s = "(";
  for (int d = 0; d < L.grid_rank; ++d) s += (d ? ", " : "") + std::to_string(c[static_cast<std::size_t>(d)]);
  return s + ")";
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  std::shared_ptr<const CompiledKernel> compile(std::shared_ptr<const ir::Kernel> k) override {
    CTILE_CHECK(k != nullptr, "cpu backend: null kernel");
    ir::verify(*k);
    // The tile-level pipeline (canonicalize, fold, cse, dce, precision): the interpreter runs the
    // same optimised IR every backend starts from, with the same results.
    auto opt = std::make_shared<ir::Kernel>(ir::clone(*k));
    passes::PassContext ctx;
    ctx.options = k->options;  // fast_math sets approximate roundings; the interpreter computes exactly
    passes::tile_pipeline().run(*opt, ctx);
    return std::make_shared<CpuCompiled>(std::move(opt));
  }

  void run(const CompiledKernel& ck, const LaunchConfig& cfg, std::span<const ArgValue> args) override {
    const auto* c = dynamic_cast<const CpuCompiled*>(&ck);
    CTILE_CHECK(c != nullptr, "cpu backend: kernel was compiled by another backend");
    const ir::Kernel& k = c->kernel();
    const std::string kname = cfg.kernel_name.empty() ? k.name : cfg.kernel_name;

    Launch L;
    L.kernel = &k;
    L.args = args;
    L.grid_rank = k.grid_rank;
    if (static_cast<int>(cfg.grid.size()) != k.grid_rank)
      throw UserError(detail::cat("kernel '", kname, "' has a ", k.grid_rank, "-D grid, launched with ",
                                  shape_str(cfg.grid)));
    std::int64_t total = 0;
    if (!checked_numel(cfg.grid, total))
      throw UserError(detail::cat("kernel '", kname, "': bad grid ", shape_str(cfg.grid)));
    for (std::size_t d = 0; d < cfg.grid.size(); ++d) L.grid[d] = cfg.grid[d];
    if (args.size() != k.params.size())
      throw UserError(detail::cat("kernel '", kname, "' takes ", k.params.size(), " arguments, got ", args.size()));
    L.views.resize(k.params.size());
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const ir::Param& p = k.params[i];
      if (p.type.kind == ir::TypeKind::Tile) continue;
      const TensorArg& ta = args[i].tensor;
      auto bad = [&](const std::string& what) {
        return UserError(detail::cat("kernel '", kname, "': argument ", p.arg_index, " ('", p.name, "') ", what));
      };
      if (ta.dtype != p.type.dtype)
        throw bad(detail::cat("has dtype ", dtype_name(ta.dtype), ", expected ", dtype_name(p.type.dtype)));
      if (static_cast<int>(ta.shape.size()) != p.type.rank || ta.strides.size() != ta.shape.size())
        throw bad(detail::cat("has shape ", shape_str(ta.shape), " and strides ", shape_str(ta.strides),
                              ", expected rank ", p.type.rank));
      std::int64_t n = 0;
      if (!checked_numel(ta.shape, n)) throw bad(detail::cat("has a bad shape ", shape_str(ta.shape)));
      for (std::int64_t s : ta.strides)
        if (s < 0) throw bad(detail::cat("has negative strides ", shape_str(ta.strides)));
      if (ta.data == nullptr && n != 0) throw bad("has no data");
      TensorView& v = L.views[i];
      v.data = static_cast<std::byte*>(ta.data);
      v.dtype = ta.dtype;
      v.rank = p.type.rank;
      for (int d = 0; d < v.rank; ++d) {
        v.ext[static_cast<std::size_t>(d)] = ta.shape[static_cast<std::size_t>(d)];
        v.stride[static_cast<std::size_t>(d)] = ta.strides[static_cast<std::size_t>(d)];
      }
      v.param = static_cast<int>(i);
      v.access = p.type.access;
    }
    if (total == 0) return;

    std::optional<RaceChecker> race;
    if (cfg.race_check) {
      race.emplace();
      L.race = &*race;
    }

    std::atomic<std::int64_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex err_m;
    std::exception_ptr err;
    std::int64_t err_block = std::numeric_limits<std::int64_t>::max();
    const std::function<void()> body = [&] {
      std::optional<BlockInterp> interp;
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;
        const std::int64_t b = next.fetch_add(1, std::memory_order_relaxed);
        if (b >= total) return;
        try {
          if (!interp) interp.emplace(L);
          interp->run(b);
        } catch (...) {
          std::lock_guard lk(err_m);
          if (b < err_block) {
            err_block = b;
            err = std::current_exception();
          }
          failed = true;
        }
      }
    };
    ThreadPool::instance().run(body, total - 1);
    if (err) std::rethrow_exception(err);

    if (race) {
      if (auto r = race->report()) {
        const ir::Param& p = k.params[static_cast<std::size_t>(r->param)];
        throw RaceError(detail::cat("race in kernel '", kname, "': element ", shape_str(r->element), " of parameter '",
                                    p.name, "' (argument ", p.arg_index, ") was stored by tile block ",
                                    block_str(r->first, L), " and tile block ", block_str(r->second, L)));
      }
    }
  }
};

}  // namespace
}  // namespace cpu

std::shared_ptr<Backend> cpu_backend() {
  static const std::shared_ptr<Backend> b = std::make_shared<cpu::CpuBackend>();
  return b;
}

}  // namespace ctile::backend
