// Launch errors name the caller's file:line: a launch rejected before anything is submitted (bad
// rank, grid, device, a moved-from handle, a mismatched bound argument) throws a UserError whose
// where() is the line of the .sync() / .async_on() / .sync_on() / .then() / bound call, and whose
// text starts with it. An error in the kernel's own code keeps the kernel's line.
#include <gtest/gtest-spi.h>

#include <string>

#include "error_util.hpp"

namespace ct = ctile;

namespace {

void add1(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }
int g_bad_store_line = 0;
void bad_store(ct::Mut<float, 1> z) {
  g_bad_store_line = __LINE__ + 1;
  z.store(ct::Tile<float>::zeros({8}));
}

// The error `f` throws, which must be exactly a ctile::UserError (any other outcome fails).
template <class F>
ct::UserError user_error_of(F&& f) {
  try {
    f();
  } catch (const ct::UserError& e) {
    if (typeid(e) != typeid(ct::UserError)) ADD_FAILURE() << "not exactly a UserError: " << e.what();
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what();
    return ct::UserError("(wrong type)");
  }
  ADD_FAILURE() << "nothing was thrown";
  return ct::UserError("(nothing thrown)");
}

// `e` was raised at `line` of this file: where() says so and the text starts with "file:line: error: ",
// and the message still contains `fragment`.
void expect_at(const ct::UserError& e, int line, const std::string& fragment) {
  const std::string file = __FILE__, what = e.what();
  const std::string head = file + ":" + std::to_string(line) + ": error: ";
  std::string problems;
  if (e.where().file != file || e.where().line != static_cast<unsigned>(line))
    problems += " where() is " + e.where().str() + ", not " + file + ":" + std::to_string(line) + ";";
  if (what.rfind(head, 0) != 0) problems += " the text does not start with \"" + head + "\";";
  if (what.find(fragment) == std::string::npos) problems += " the text lacks \"" + fragment + "\";";
  if (!problems.empty()) ADD_FAILURE() << "\"" << what << "\":" << problems;
}

TEST(LaunchLocation, SyncNamesTheCallersLine) {
  auto x = ct::zeros<float>({4, 16}).share();
  const int line = __LINE__ + 1;
  const auto e = user_error_of([&] { (void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).sync(); });
  expect_at(e, line, "launch of kernel");
  expect_at(e, line, "rank-1 tensor, got rank 2");
}

TEST(LaunchLocation, AsyncOnSyncOnAndThen) {
  auto s = ct::Stream::create(ct::cpu());
  auto bad = ct::zeros<float>({2, 2}).share();
  const int l1 = __LINE__ + 1;
  const auto e1 = user_error_of([&] { (void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), bad).async_on(s); });
  expect_at(e1, l1, "got rank 2");
  const int l2 = __LINE__ + 1;
  const auto e2 = user_error_of([&] { (void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), bad).sync_on(s); });
  expect_at(e2, l2, "got rank 2");
  // A follow-up launch made inside then(): the line of the then() call.
  auto x = ct::zeros<float>({64}).share();
  auto f = ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).async_on(s);
  const int l3 = __LINE__ + 1;
  const auto e3 = user_error_of([&] { (void)std::move(f).then([&](auto r) { return ct::launch(add1, std::move(std::get<0>(r)), bad); }); });
  expect_at(e3, l3, "got rank 2");
}

TEST(LaunchLocation, MovedFromArgumentAndEmptyGrid) {
  auto x = ct::zeros<float>({64}).share();
  auto p = ct::zeros<float>({64}).partition({16});
  auto [p2, x2] = ct::launch(add1, std::move(p), x).sync();
  const int l1 = __LINE__ + 1;
  const auto e1 = user_error_of([&] { (void)ct::launch(add1, std::move(p), x).sync(); });  // NOLINT(bugprone-use-after-move)
  expect_at(e1, l1, "moved from");
  const int l2 = __LINE__ + 1;
  const auto e2 = user_error_of([&] { (void)ct::launch(add1, ct::zeros<float>({0}).partition({16}), ct::zeros<float>({0}).share()).sync(); });
  expect_at(e2, l2, "is empty");
}

TEST(LaunchLocation, BoundKernelCall) {
  auto k = ct::bind(add1, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}));
  auto s = ct::default_stream(ct::cpu());
  const int line = __LINE__ + 1;
  const auto e = user_error_of([&] { (void)k(s, ct::zeros<float>({64}).partition({32}), ct::zeros<float>({64}).share()); });
  expect_at(e, line, "in tiles of [32]");
}

TEST(LaunchLocation, KernelErrorsKeepTheKernelsLine) {
  const auto e = user_error_of([&] { (void)ct::launch(bad_store, ct::zeros<float>({64}).partition({16})).sync(); });
  EXPECT_EQ(e.where().line, static_cast<unsigned>(g_bad_store_line)) << e.what();
  EXPECT_NE(std::string(e.what()).find("test_launch_location.cpp:" + std::to_string(g_bad_store_line)), std::string::npos) << e.what();
}

// Self-test: expect_at fails for another line, another file prefix and a missing fragment.
TEST(LaunchLocation, SelfTestExpectAtCanFail) {
  const ct::UserError here("launch of kernel 'k': bad", ct::SourceLoc(__FILE__, 7));
  expect_at(here, 7, "bad");
  EXPECT_NONFATAL_FAILURE(expect_at(here, 8, "bad"), "does not start with");
  EXPECT_NONFATAL_FAILURE(expect_at(here, 7, "good"), "lacks \"good\"");
  EXPECT_NONFATAL_FAILURE(expect_at(ct::UserError("launch of kernel 'k': bad"), 7, "bad"), "where() is <unknown>");
  // The right text with another where() (a rethrow that kept the message but lost the place).
  const ct::UserError moved(std::string("launch of kernel 'k': bad"), ct::SourceLoc("elsewhere.cpp", 7));
  EXPECT_NONFATAL_FAILURE(expect_at(moved, 7, "bad"), "where() is elsewhere.cpp:7");
  EXPECT_NONFATAL_FAILURE((void)user_error_of([] {}), "nothing was thrown");
  EXPECT_NONFATAL_FAILURE((void)user_error_of([] { throw ct::RaceError("r"); }), "not exactly a UserError");
}

}  // namespace
