// Self-test of EXPECT_USER_ERROR / EXPECT_ERROR_OF_TYPE (error_util.hpp): every way an error test
// can be wrong makes it fail: no error, another error type (a subclass for its base or the
// reverse, an InternalError), a message without the fragment, or an empty fragment.
#include <gtest/gtest-spi.h>

#include "error_util.hpp"

namespace {

void nothing() {}
[[noreturn]] void user(const char* m) { throw ctile::UserError(m); }
[[noreturn]] void race(const char* m) { throw ctile::RaceError(m); }
[[noreturn]] void internal(const char* m) { throw ctile::InternalError(m); }

TEST(ErrorUtil, PassesForTheRightTypeAndFragment) {
  const std::string msg = EXPECT_USER_ERROR(user("the grid [0] is empty"), "is empty");
  EXPECT_EQ(msg, "error: the grid [0] is empty");
  EXPECT_ERROR_OF_TYPE(race("race in kernel 'k'"), ctile::RaceError, "race in kernel");
}

TEST(ErrorUtil, FailsWhenNothingIsThrown) {
  EXPECT_NONFATAL_FAILURE(EXPECT_USER_ERROR(nothing(), "x"), "no error from: nothing()");
}

TEST(ErrorUtil, FailsForAMessageWithoutTheFragment) {
  EXPECT_NONFATAL_FAILURE(EXPECT_USER_ERROR(user("the grid [0] is empty"), "overflows"), "message lacks \"overflows\"");
}

TEST(ErrorUtil, FailsForAnEmptyFragment) {
  EXPECT_NONFATAL_FAILURE(EXPECT_USER_ERROR(user("anything"), ""), "an error test must name a message fragment");
}

TEST(ErrorUtil, FailsForAnotherType) {
  EXPECT_NONFATAL_FAILURE(EXPECT_USER_ERROR(race("race in kernel 'k'"), "race"),
                          "a ctile::RaceError instead of a ctile::UserError");
  EXPECT_NONFATAL_FAILURE(EXPECT_ERROR_OF_TYPE(user("race in kernel 'k'"), ctile::RaceError, "race"),
                          "a ctile::UserError instead of a ctile::RaceError");
  EXPECT_NONFATAL_FAILURE(EXPECT_USER_ERROR(internal("boom"), "boom"), "an internal error instead of a ctile::UserError");
}

}  // namespace
