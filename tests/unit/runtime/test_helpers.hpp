// Shared helpers for the runtime unit tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <typeinfo>

#include "ctile/core/error.hpp"

namespace ctile::test {

// Runs `f` and checks that it throws an error of exactly type E (UserError by default: a
// RaceError or OutOfMemoryError does not pass for it, nor it for them; never an InternalError or
// anything else) whose message contains every one of `parts`. There must be at least one part,
// and none may be empty: every error test names what the message must say.
template <class E = UserError>
void expect_error(const std::function<void()>& f, std::initializer_list<std::string_view> parts) {
  if (parts.size() == 0) ADD_FAILURE() << "an error test must name at least one message fragment";
  for (std::string_view p : parts)
    if (p.empty()) ADD_FAILURE() << "an empty message fragment matches anything";
  try {
    f();
  } catch (const InternalError& e) {
    ADD_FAILURE() << "expected a " << typeid(E).name() << ", got an InternalError: " << e.what();
    return;
  } catch (const UserError& e) {
    if (typeid(e) != typeid(E))
      ADD_FAILURE() << "expected exactly a " << typeid(E).name() << ", got a " << typeid(e).name() << ": " << e.what();
    const std::string msg = e.what();
    for (std::string_view p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message \"" << msg << "\" does not contain \"" << p << "\"";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a " << typeid(E).name() << ", got: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected a " << typeid(E).name() << ", nothing was thrown";
}

inline void expect_user_error(const std::function<void()>& f, std::initializer_list<std::string_view> parts) {
  expect_error<UserError>(f, parts);
}

}  // namespace ctile::test
