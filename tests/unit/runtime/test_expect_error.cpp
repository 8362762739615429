// Self-test of ctile::test::expect_error / expect_user_error (test_helpers.hpp): it fails for no
// error, another error type (a subclass for its base or the reverse), a missing fragment and an
// empty or absent fragment list.
#include <gtest/gtest-spi.h>

#include "test_helpers.hpp"

namespace {

using ctile::test::expect_error;
using ctile::test::expect_user_error;

void user() { throw ctile::UserError("shape [2] has rank 1"); }
void race() { throw ctile::RaceError("race in kernel 'k'"); }
void oom() { throw ctile::OutOfMemoryError("out of memory: cannot allocate 8 bytes"); }
void internal() { throw ctile::InternalError("boom"); }
void other() { throw std::runtime_error("not ctile's"); }
void nothing() {}

TEST(ExpectError, PassesForTheRightTypeAndFragments) {
  expect_user_error(user, {"shape [2]", "rank 1"});
  expect_error<ctile::RaceError>(race, {"race in kernel"});
  expect_error<ctile::OutOfMemoryError>(oom, {"out of memory"});
}

TEST(ExpectError, FailsForEveryWrongOutcome) {
  EXPECT_NONFATAL_FAILURE(expect_user_error(nothing, {"x"}), "nothing was thrown");
  EXPECT_NONFATAL_FAILURE(expect_user_error(user, {"rank 2"}), "does not contain \"rank 2\"");
  EXPECT_NONFATAL_FAILURE(expect_user_error(user, {}), "at least one message fragment");
  EXPECT_NONFATAL_FAILURE(expect_user_error(user, {""}), "an empty message fragment matches anything");
  EXPECT_NONFATAL_FAILURE(expect_user_error(race, {"race"}), "expected exactly a");
  EXPECT_NONFATAL_FAILURE(expect_user_error(oom, {"out of memory"}), "expected exactly a");
  EXPECT_NONFATAL_FAILURE(expect_error<ctile::RaceError>(user, {"rank"}), "expected exactly a");
  EXPECT_NONFATAL_FAILURE(expect_user_error(internal, {"boom"}), "got an InternalError");
  EXPECT_NONFATAL_FAILURE(expect_user_error(other, {"not ctile"}), "got: not ctile's");
}

}  // namespace
