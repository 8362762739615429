// ctile::tune (runtime/tune.hpp) on the CPU backend: every candidate measured, the fastest chosen
// and recorded in the disk cache with its provenance, the record found again (no measurement) for
// the same launch and not for another shape or another candidate list, force, a record that does
// not fit the candidates, the arguments given back usable, and the errors of bad candidate lists.
// Its own binary: the process's disk cache (DiskCache::global) is pointed at a fresh directory
// before anything uses it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "ctile/ctile.hpp"
#include "../../../src/backend/cache/disk_cache.hpp"
#include "test_helpers.hpp"

namespace ct = ctile;
namespace fs = std::filesystem;

namespace {

// A fresh cache directory for this process, set before the first DiskCache::global().
const std::string kCacheDir = [] {
  const fs::path d = fs::temp_directory_path() / ("ctile-tune-test-" + std::to_string(::getpid()));
  fs::remove_all(d);
  ::setenv("CTILE_CACHE_DIR", d.c_str(), 1);
  ::setenv("CTILE_CACHE", "1", 1);
  return d.string();
}();

void scale_rows(ct::Mut<float, 2> y, ct::Ref<float, 2> x, ct::Scalar<float> a) { y.store(ct::load_like(x, y) * a); }

struct Cleanup {
  ~Cleanup() { fs::remove_all(kCacheDir); }
} cleanup;

}  // namespace

TEST(Tune, MeasuresEveryCandidateRecordsTheWinnerAndFindsItAgain) {
  auto x = ct::rand<float>({64, 256}, 3, -1.0, 1.0).share();
  const ct::TuneCandidates cands{{.warps = 1}, {.warps = 2}, {.warps = 4, .fast_math = true}};
  auto [r, args] = ct::tune(scale_rows, cands, ct::TuneOptions{.warmup = 1, .reps = 3},
                            ct::zeros<float>({64, 256}).partition({8, 256}), x, 2.0f);
  EXPECT_FALSE(r.from_cache);
  ASSERT_EQ(r.ms.size(), 3u);
  for (double ms : r.ms) EXPECT_GT(ms, 0.0);
  EXPECT_EQ(r.best_index, static_cast<std::size_t>(std::min_element(r.ms.begin(), r.ms.end()) - r.ms.begin()));
  EXPECT_EQ(r.best, cands.list[r.best_index]);
  EXPECT_NE(r.provenance.find("cpu"), std::string::npos) << r.provenance;
  EXPECT_NE(r.provenance.find("ctile 0."), std::string::npos) << r.provenance;
  // The arguments come back, ran through: y = 2 x.
  auto [y, x2, a] = std::move(args);
  EXPECT_EQ(a, 2.0f);
  const auto hy = std::move(y).unpartition().to_host(), hx = x2.to_host();
  for (std::size_t i = 0; i < hy.size(); ++i) ASSERT_EQ(hy[i], 2.0f * hx[i]) << i;

  // The same launch again: the winner from the cache, nothing measured.
  auto [r2, args2] = ct::tune(scale_rows, cands, ct::zeros<float>({64, 256}).partition({8, 256}), x, 2.0f);
  EXPECT_TRUE(r2.from_cache);
  EXPECT_TRUE(r2.ms.empty());
  EXPECT_EQ(r2.best_index, r.best_index);
  EXPECT_EQ(r2.best, r.best);
  EXPECT_EQ(r2.provenance, r.provenance);
  // force measures again; another shape, another tile or another candidate list is another launch.
  auto [r3, a3] = ct::tune(scale_rows, cands, ct::TuneOptions{.reps = 1, .force = true},
                           ct::zeros<float>({64, 256}).partition({8, 256}), x, 2.0f);
  EXPECT_FALSE(r3.from_cache);
  EXPECT_EQ(r3.ms.size(), 3u);
  auto x3 = ct::rand<float>({64, 128}, 4, -1.0, 1.0).share();
  auto [r4, a4] = ct::tune(scale_rows, cands, ct::TuneOptions{.reps = 1}, ct::zeros<float>({64, 128}).partition({8, 128}), x3, 2.0f);
  EXPECT_FALSE(r4.from_cache);
  auto [r5, a5] = ct::tune(scale_rows, cands, ct::TuneOptions{.reps = 1}, ct::zeros<float>({64, 256}).partition({16, 256}), x, 2.0f);
  EXPECT_FALSE(r5.from_cache);
  auto [r6, a6] = ct::tune(scale_rows, {{.warps = 1}, {.warps = 2}}, ct::TuneOptions{.reps = 1},
                           ct::zeros<float>({64, 256}).partition({8, 256}), x, 2.0f);
  EXPECT_FALSE(r6.from_cache);
  EXPECT_EQ(r6.ms.size(), 2u);
  // The records carry the winner and its provenance in their meta (what `ctile cache` lists).
  int records = 0;
  for (const auto& e : ct::cache::DiskCache::global()->list())
    if (e.meta.rfind("ctile::tune kernel ", 0) == 0) {
      ++records;
      EXPECT_NE(e.meta.find("ctile 0."), std::string::npos) << e.meta;
    }
  EXPECT_EQ(records, 4);
}

// A record whose index does not fit the candidates (a foreign or damaged entry) is not trusted.
TEST(Tune, ARecordThatDoesNotFitTheCandidatesIsMeasuredAgain) {
  auto x = ct::rand<float>({32, 64}, 5, -1.0, 1.0).share();
  const ct::TuneCandidates cands{{.warps = 1}, {.warps = 2}};
  auto [r, args] = ct::tune(scale_rows, cands, ct::TuneOptions{.reps = 1}, ct::zeros<float>({32, 64}).partition({8, 64}), x, 1.0f);
  ASSERT_FALSE(r.from_cache);
  // Overwrite the record with an index out of range.
  for (const auto& e : ct::cache::DiskCache::global()->list())
    if (e.meta.rfind("ctile::tune", 0) == 0) {
      const auto key = ct::cache::CacheKey::from_hex(e.key_hex);
      ASSERT_TRUE(key.has_value());
      const std::string bad = "7 warps=9\nnowhere";
      ct::cache::DiskCache::global()->put(*key, std::as_bytes(std::span<const char>(bad.data(), bad.size())), e.meta);
    }
  auto [r2, args2] = ct::tune(scale_rows, cands, ct::TuneOptions{.reps = 1}, ct::zeros<float>({32, 64}).partition({8, 64}), x, 1.0f);
  EXPECT_FALSE(r2.from_cache);
  EXPECT_LT(r2.best_index, 2u);
}

TEST(Tune, BadCandidateListsAreUserErrorsAtTheCall) {
  auto x = ct::rand<float>({32, 64}, 6, -1.0, 1.0).share();
  ct::test::expect_user_error(
      [&] {
        (void)ct::tune(scale_rows, std::vector<ct::KernelOptions>{}, ct::zeros<float>({32, 64}).partition({8, 64}), x, 1.0f);
      },
      {"ctile::tune of kernel", "no candidates to measure", "test_tune.cpp"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::tune(scale_rows, {{.warps = 2}, {.warps = 3}}, ct::zeros<float>({32, 64}).partition({8, 64}), x, 1.0f);
      },
      {"ctile::tune, candidate 1", "warps = 3 is not a power of two", "test_tune.cpp"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::tune(scale_rows, {{.warps = 2}}, ct::TuneOptions{.reps = 0}, ct::zeros<float>({32, 64}).partition({8, 64}), x, 1.0f);
      },
      {"reps must be at least 1", "got reps 0"});
}
