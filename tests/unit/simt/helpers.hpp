// Helpers of the SIMT unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <ctile/ctile.hpp>

namespace simt_test {

namespace ct = ::ctile;
namespace cs = ::ctile::simt;

// Runs `f` and returns the message of the UserError it throws (failing the test when it throws
// nothing or something else, an InternalError in particular).
template <class F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const ct::RaceError& e) {
    return std::string("RaceError: ") + e.what();
  } catch (const ct::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a UserError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a UserError, nothing was thrown";
  return {};
}

#define EXPECT_USER_ERROR(stmt, fragment)                                                  \
  do {                                                                                     \
    const std::string simt_msg_ = ::simt_test::user_error_of([&] { stmt; });              \
    EXPECT_NE(simt_msg_.find(fragment), std::string::npos) << "message: " << simt_msg_;    \
  } while (0)

}  // namespace simt_test
