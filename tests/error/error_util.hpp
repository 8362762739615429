// Error tests must fail with a UserError (never an InternalError) whose message says what is wrong.
#pragma once

#include <string>
#include <string_view>
#include <typeinfo>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

namespace ctile::test {
// The dynamic type of an error, for messages ("ctile::RaceError").
inline std::string error_type_name(const std::exception& e) {
  if (dynamic_cast<const RaceError*>(&e)) return "ctile::RaceError";
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "ctile::OutOfMemoryError";
  if (dynamic_cast<const UserError*>(&e)) return "ctile::UserError";
  if (dynamic_cast<const InternalError*>(&e)) return "ctile::InternalError";
  return typeid(e).name();
}
}  // namespace ctile::test

// Runs `stmt`, expects an error of exactly type `Type` (a ctile::UserError or one of its
// subclasses; a subclass does not stand in for its base, nor the base for it) whose text contains
// `needle`, which must not be empty; returns the error's text. An InternalError, another type
// or no error at all is a failure.
#define EXPECT_ERROR_OF_TYPE(stmt, Type, needle)                                                   \
  [&]() -> std::string {                                                                           \
    const std::string needle_ = (needle);                                                          \
    if (needle_.empty()) ADD_FAILURE() << "an error test must name a message fragment: " #stmt;    \
    try {                                                                                          \
      stmt;                                                                                        \
    } catch (const ctile::InternalError& e) {                                                      \
      ADD_FAILURE() << "an internal error instead of a " #Type ": " << e.what();                   \
      return {};                                                                                   \
    } catch (const ctile::UserError& e) {                                                          \
      if (typeid(e) != typeid(Type))                                                               \
        ADD_FAILURE() << "a " << ctile::test::error_type_name(e) << " instead of a " #Type ": " << e.what(); \
      EXPECT_NE(std::string(e.what()).find(needle_), std::string::npos)                            \
          << "message lacks \"" << needle_ << "\": " << e.what();                                  \
      return e.what();                                                                             \
    }                                                                                              \
    ADD_FAILURE() << "no error from: " #stmt;                                                      \
    return {};                                                                                     \
  }()

// The common case: a plain ctile::UserError.
#define EXPECT_USER_ERROR(stmt, needle) EXPECT_ERROR_OF_TYPE(stmt, ctile::UserError, needle)
