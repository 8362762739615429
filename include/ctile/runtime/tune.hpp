// ctile::tune: measures candidate kernel options (warps, stages, tma, warp_specialize, pingpong,
// epilogue_overlap, ...: core/options.hpp) for one launch on the device in hand, and records the
// winner in the disk cache with its provenance (the device with its driver, and the ctile
// version), so the next process with the same launch starts with it instead of measuring again.
//
//   auto [r, args] = ctile::tune(kernel, {{.warps = 4}, {.warps = 8}, {.warps = 8, .epilogue_overlap = 1}},
//                                std::move(c).partition({128, 256}), a, b);
//   auto [c2, a2, b2] = std::move(args);                       // the arguments, given back
//   auto l = ctile::launch(kernel, std::move(c2), a2, b2).options(r.best);
//
// Each candidate runs `warmup` times untimed (its compile among them), then `reps` times, each
// launch timed on the stream by the device (StreamTimer); the fastest median wins (the first on a
// tie). The arguments go through every run, as a launch takes them and gives them back: a Mut
// partition's contents are overwritten by each run. The cache key holds the kernel's name, every
// argument's kind, element type, shape, strides and tile (a Const's value), the candidates in
// order, the device's description (GPU, SMs, memory, driver) and the ctile version; a kernel whose
// body changed under the same name keeps its key: TuneOptions::force measures again (and records
// the new winner). Without a disk cache (CTILE_CACHE=0) nothing is recorded.
//
// Bad input: no candidates, or a candidate that does not validate, is a UserError at the caller's
// line naming the kernel and the candidate's index.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ctile/core/options.hpp"
#include "ctile/runtime/launch.hpp"
#include "ctile/runtime/timer.hpp"

namespace ctile {

// The candidates, in order; made from a braced list or a vector at the call, which it records as the
// place a bad candidate list is reported at.
struct TuneCandidates {
  std::vector<KernelOptions> list;
  std::source_location loc;
  TuneCandidates(std::initializer_list<KernelOptions> l, std::source_location where = std::source_location::current())
      : list(l), loc(where) {}
  TuneCandidates(std::vector<KernelOptions> l, std::source_location where = std::source_location::current())
      : list(std::move(l)), loc(where) {}
};

struct TuneOptions {
  int warmup = 1;      // untimed runs of each candidate (the first compiles it)
  int reps = 5;        // timed runs of each candidate; their median counts
  bool force = false;  // measure even when the disk cache holds a winner for this launch
};

struct TuneResult {
  KernelOptions best;          // the winner's options
  std::size_t best_index = 0;  // its index among the candidates
  std::vector<double> ms;      // each candidate's median device time (ms); empty when from the cache
  bool from_cache = false;     // the winner came from the disk cache (nothing was measured)
  std::string provenance;      // where the winner was measured: the device (GPU, driver) and ctile version
};

namespace detail {

// The cache key's text for a launch (kernel name, arguments, candidates, device, ctile version).
std::string tune_key(const std::string& kernel, const LaunchArgs& args, const std::vector<KernelOptions>& candidates,
                     Device d);
// The winner recorded under `key` (its index, checked against the candidates' count), if any.
std::optional<std::size_t> tune_lookup(const std::string& key, std::size_t candidates, std::string* provenance);
// Records the winner under `key` (no-op without a disk cache).
void tune_record(const std::string& key, std::size_t index, const KernelOptions& best, const std::string& provenance);
// The provenance text of a measurement on `d`.
std::string tune_provenance(Device d);
[[noreturn]] void tune_error(const std::string& msg, const std::source_location& loc);

}  // namespace detail

template <class... P, class... A>
std::pair<TuneResult, std::tuple<A...>> tune(void (*fn)(P...), const TuneCandidates& cands, const TuneOptions& topt, A... args_in) {
  static_assert(sizeof...(P) == sizeof...(A), "ctile::tune: the number of arguments differs from the kernel's parameters");
  static_assert((detail::check_argument<P, A>() && ...));
  const std::vector<KernelOptions>& candidates = cands.list;
  const std::string& name = *detail::intern_kernel_name(reinterpret_cast<const void*>(fn), nullptr);
  if (candidates.empty()) detail::tune_error("ctile::tune of kernel '" + name + "': no candidates to measure", cands.loc);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    try {
      candidates[i].validate(name);
    } catch (const UserError& e) {
      detail::tune_error("ctile::tune, candidate " + std::to_string(i) + ": " + e.what(), cands.loc);
    }
  }
  if (topt.reps < 1 || topt.warmup < 0)
    detail::tune_error("ctile::tune of kernel '" + name + "': reps must be at least 1 and warmup at least 0, got reps " +
                           std::to_string(topt.reps) + ", warmup " + std::to_string(topt.warmup),
                       cands.loc);
  std::tuple<A...> args(std::move(args_in)...);
  std::string key;
  Device dev;
  try {
    detail::LaunchArgs la;
    detail::collect_arguments<P...>(la, name, args);
    dev = detail::launch_device(la);
    key = detail::tune_key(name, la, candidates, dev);
  } catch (...) {
    detail::rethrow_at(cands.loc);
  }
  TuneResult r;
  if (!topt.force) {
    if (auto hit = detail::tune_lookup(key, candidates.size(), &r.provenance)) {
      r.best_index = *hit;
      r.best = candidates[*hit];
      r.from_cache = true;
      return {std::move(r), std::move(args)};
    }
  }
  const Stream s = default_stream(dev);
  auto run = [&](const KernelOptions& o) {
    return std::apply([&](auto&&... a) { return launch(fn, std::move(a)...).options(o); }, std::move(args));
  };
  for (const KernelOptions& o : candidates) {
    for (int w = 0; w < topt.warmup; ++w) args = run(o).sync_on(s, cands.loc);
    std::vector<double> t;
    for (int i = 0; i < topt.reps; ++i) {
      StreamTimer timer(s);
      timer.start();
      auto f = run(o).async_on(s, cands.loc);
      timer.stop();
      args = std::move(f).get();
      t.push_back(timer.elapsed_ms());
    }
    std::sort(t.begin(), t.end());
    r.ms.push_back(t[t.size() / 2]);
  }
  r.best_index = static_cast<std::size_t>(std::min_element(r.ms.begin(), r.ms.end()) - r.ms.begin());
  r.best = candidates[r.best_index];
  r.provenance = detail::tune_provenance(dev);
  detail::tune_record(key, r.best_index, r.best, r.provenance);
  return {std::move(r), std::move(args)};
}

template <class... P, class... A>
std::pair<TuneResult, std::tuple<A...>> tune(void (*fn)(P...), const TuneCandidates& candidates, A... args) {
  return tune(fn, candidates, TuneOptions{}, std::move(args)...);
}

}  // namespace ctile
