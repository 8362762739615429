// Shared helpers for the runtime unit tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "ctile/core/error.hpp"

namespace ctile::test {

// Runs `f` and checks that it throws a UserError (never an InternalError or anything else) whose
// message contains every one of `parts`.
inline void expect_user_error(const std::function<void()>& f, std::initializer_list<std::string_view> parts) {
  try {
    f();
  } catch (const InternalError& e) {
    ADD_FAILURE() << "expected a UserError, got an InternalError: " << e.what();
    return;
  } catch (const UserError& e) {
    const std::string msg = e.what();
    for (std::string_view p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message \"" << msg << "\" does not contain \"" << p << "\"";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a UserError, got: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected a UserError, nothing was thrown";
}

}  // namespace ctile::test
