// Golden tests of every pass: input IR -> passes -> expected IR (golden_harness.hpp). Every pass
// in the registry has at least one case.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "golden_harness.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> case_files() {
  std::vector<fs::path> r;
  for (const auto& e : fs::recursive_directory_iterator(CTILE_PASS_GOLDEN_DIR))
    if (e.path().extension() == ".ir") r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace

class PassGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(PassGolden, MatchesExpectedIr) {
  const fs::path file = GetParam();
  const std::string text = pass_golden::read_file(file);
  const pass_golden::Case c = pass_golden::parse_case(text);
  const std::string got = pass_golden::run_case(c);
  const char* update = std::getenv("CTILE_UPDATE_GOLDEN");
  if (update && *update && std::string(update) != "0") {
    if (pass_golden::trim(got) != pass_golden::trim(c.expected)) {
      std::ofstream(file) << c.head << got;
      ADD_FAILURE() << "updated " << file << ": review the diff, then run again without CTILE_UPDATE_GOLDEN";
    }
    return;
  }
  EXPECT_EQ(pass_golden::trim(got), pass_golden::trim(c.expected)) << "in " << file;
}

INSTANTIATE_TEST_SUITE_P(Files, PassGolden, ::testing::ValuesIn(case_files()), [](const auto& info) {
  std::string n = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(PassGoldenCoverage, EveryRegisteredPassHasACase) {
  std::set<std::string> covered;
  for (const fs::path& f : case_files()) covered.insert(f.parent_path().filename().string());
  for (const std::string& p : ctile::passes::pass_names()) EXPECT_TRUE(covered.count(p)) << "pass '" << p << "' has no golden case";
}

// The harness can fail: a wrong expectation is a mismatch, not a pass.
TEST(PassGoldenHarness, AWrongExpectationFails) {
  const fs::path file = case_files().front();
  pass_golden::Case c = pass_golden::parse_case(pass_golden::read_file(file));
  const std::string got = pass_golden::run_case(c);
  std::string wrong = got;
  wrong.replace(wrong.find("ct.kernel"), 9, "ct.kernal");
  EXPECT_NE(pass_golden::trim(got), pass_golden::trim(wrong));
  EXPECT_THROW(pass_golden::parse_case("// passes: dce\nct.kernel @k grid_rank 1 () {\n  ct.yield\n}\n"), std::runtime_error);
}
