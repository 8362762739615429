// The pass manager, the registry of passes by name, and the pipelines (pass.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cctype>

#include "passes.hpp"

namespace ctile::passes {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Pass> (*make)();
};

// Every pass, by the name golden tests and pipelines use.
const Entry kPasses[] = {
    {"acc-split", make_acc_split},
    {"batch-mma", make_batch_mma},
    {"block-prefetch", make_block_prefetch},
    {"bounds", make_bounds},
    {"canonicalize", make_canonicalize},
    {"constant-fold", make_constant_fold},
    {"cse", make_cse},
    {"dce", make_dead_code},
    {"fuse-elementwise", make_fuse_elementwise},
    {"layout-assignment", make_layout_assignment},
    {"loop-prefetch", make_loop_prefetch},
    {"narrow-index", make_narrow_index},
    {"occupancy", make_occupancy},
    {"precision", make_precision},
    {"remat", make_remat},
    {"schedule", make_schedule},
    {"smem-alloc", make_smem_alloc},
    {"warp-specialize", make_warp_specialize},
};

std::string file_safe(const std::string& s) {
  std::string r;
  for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return r.substr(0, 80);
}

// CTILE_SKIP_PASSES (experiments, A/B in one process): a comma-separated list of passes the
// pipelines leave out. Only passes that optimise may be named: without them a kernel is still
// correct (the differential suites run with them skipped too).
const char* const kSkippable[] = {"narrow-index", "fuse-elementwise", "remat", "block-prefetch", "occupancy", "schedule", "cse"};

std::vector<std::string> skipped_passes() {
  std::vector<std::string> r;
  const char* e = std::getenv("CTILE_SKIP_PASSES");
  if (!e || !*e) return r;
  std::string s = e;
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t end = std::min(s.find(',', at), s.size());
    const std::string name = s.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    if (std::find_if(std::begin(kSkippable), std::end(kSkippable), [&](const char* x) { return name == x; }) == std::end(kSkippable)) {
      std::string known;
      for (const char* x : kSkippable) known += (known.empty() ? "" : ", ") + std::string(x);
      throw UserError(detail::cat("CTILE_SKIP_PASSES: '", name, "' is not a pass that may be skipped (", known, ")"));
    }
    r.push_back(name);
  }
  return r;
}

}  // namespace

PassManager& PassManager::add(std::unique_ptr<Pass> p) {
  passes_.push_back(std::move(p));
  return *this;
}

PassManager& PassManager::add(std::string_view name) { return add(make_pass(name)); }

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> r;
  for (const auto& p : passes_) r.emplace_back(p->name());
  return r;
}

void PassManager::run(ir::Kernel& k, const PassContext& ctx) const {
  std::string dir = ctx.dump_dir;
  if (dir.empty())
    if (const char* e = std::getenv("CTILE_DUMP_PASSES"); e && *e) dir = e;
  std::filesystem::path out;
  if (!dir.empty()) {
    out = std::filesystem::path(dir) / file_safe(k.name.empty() ? "kernel" : k.name);
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) throw UserError(detail::cat("CTILE_DUMP_PASSES: cannot create ", out.string(), ": ", ec.message()));
    std::ofstream(out / "00-input.ir") << ir::print(k, {.locations = true});
  }
  const std::vector<std::string> skip = skipped_passes();
  int n = 0;
  for (const auto& p : passes_) {
    if (std::find(skip.begin(), skip.end(), p->name()) != skip.end()) continue;
    p->run(k, ctx);
    ++n;
    if (ctx.verify_each) {
      try {
        ir::verify(k);
      } catch (const InternalError& e) {
        throw InternalError(detail::cat("after pass '", p->name(), "' on kernel '", k.name, "': ", e.what()));
      }
    }
    if (!out.empty()) {
      char num[16];
      std::snprintf(num, sizeof num, "%02d", n);
      std::ofstream(out / (std::string(num) + "-" + std::string(p->name()) + ".ir")) << ir::print(k, {.locations = true});
    }
  }
}

std::unique_ptr<Pass> make_pass(std::string_view name) {
  for (const Entry& e : kPasses)
    if (name == e.name) return e.make();
  std::string known;
  for (const Entry& e : kPasses) known += (known.empty() ? "" : ", ") + std::string(e.name);
  throw UserError(detail::cat("unknown pass '", name, "' (known: ", known, ")"));
}

std::vector<std::string> pass_names() {
  std::vector<std::string> r;
  for (const Entry& e : kPasses) r.emplace_back(e.name);
  return r;
}

PassManager tile_pipeline() {
  PassManager pm;
  pm.add("canonicalize").add("constant-fold").add("canonicalize").add("cse").add("dce").add("precision");
  return pm;
}

PassManager cuda_pipeline() {
  PassManager pm = tile_pipeline();
  // Batched products as rank-2 ones; K loops' loads one iteration ahead; to the GPU-level IR: layouts, then conversions that
  // cancel, then the accesses the facts prove in bounds, the order of each region, and the shared
  // memory of what remains; before that, tiles kept across a reduction that are cheaper to compute
  // again are computed again (remat), a resident grid's row loads go one tile block ahead
  // (block-prefetch), and the occupancy target follows from the registers left;
  // last, TMA copies may move to a producer warpgroup of their own (warp-specialize).
  pm.add("batch-mma").add("loop-prefetch").add("narrow-index").add("layout-assignment").add("canonicalize").add("cse").add("dce").add("bounds").add("schedule").add("remat").add("fuse-elementwise").add("block-prefetch").add("occupancy").add("smem-alloc").add("warp-specialize").add("acc-split");
  return pm;
}

}  // namespace ctile::passes
