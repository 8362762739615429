// Error tests must fail with a UserError (never an InternalError) whose message says what is wrong.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

// Runs `stmt`, expects a ctile::UserError whose text contains `needle`; returns the error.
#define EXPECT_USER_ERROR(stmt, needle)                                                          \
  [&]() -> std::string {                                                                         \
    try {                                                                                        \
      stmt;                                                                                      \
    } catch (const ctile::InternalError& e) {                                                    \
      ADD_FAILURE() << "an internal error instead of a user error: " << e.what();                \
      return {};                                                                                 \
    } catch (const ctile::UserError& e) {                                                        \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)                           \
          << "message lacks \"" << (needle) << "\": " << e.what();                               \
      return e.what();                                                                           \
    }                                                                                            \
    ADD_FAILURE() << "no error from: " #stmt;                                                    \
    return {};                                                                                   \
  }()
