// Errors. Like Halide, ctile separates a user's mistake (UserError: clear message, the user's
// file:line where known) from a bug in ctile itself (InternalError). Tests of misuse assert that a
// UserError, never an InternalError, is raised.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ctile {

// Where in the user's code something happened. Empty when unknown.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  SourceLoc() = default;
  SourceLoc(const std::source_location& l) : file(l.file_name()), line(l.line()) {}  // NOLINT: implicit by design
  SourceLoc(std::string f, unsigned l) : file(std::move(f)), line(l) {}
  bool known() const { return !file.empty(); }
  std::string str() const { return known() ? file + ":" + std::to_string(line) : std::string("<unknown>"); }
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A mistake in how ctile was used: bad kernel code, bad launch arguments, misuse of ownership.
class UserError : public Error {
 public:
  UserError(const std::string& msg, SourceLoc where = {})
      : Error(where.known() ? where.str() + ": error: " + msg : "error: " + msg), where_(std::move(where)), msg_(msg) {}
  const SourceLoc& where() const { return where_; }
  const std::string& message() const { return msg_; }

 private:
  SourceLoc where_;
  std::string msg_;
};

// A bug in ctile. Seeing one is always worth a report.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& msg, std::source_location l = std::source_location::current())
      : Error(std::string("internal error (a bug in ctile) at ") + l.file_name() + ":" + std::to_string(l.line()) +
              ": " + msg) {}
};

// Overlapping stores by different tile blocks, found by the race checker (docs/architecture.md).
class RaceError : public UserError {
 public:
  using UserError::UserError;
};

// A tensor allocation the host could not satisfy ("out of memory: cannot allocate N bytes for a
// tensor on cpu"). A UserError like the others; its own type lets a test that needs a large
// allocation tell "this machine is too small" from any other error.
class OutOfMemoryError : public UserError {
 public:
  using UserError::UserError;
};

namespace detail {
template <class... A>
std::string cat(A&&... a) {
  std::ostringstream os;
  (os << ... << std::forward<A>(a));
  return os.str();
}
}  // namespace detail

}  // namespace ctile

// Internal invariant: failing it is a ctile bug.
#define CTILE_CHECK(cond, ...)                                                             \
  do {                                                                                     \
    if (!(cond)) throw ::ctile::InternalError(::ctile::detail::cat("check failed: " #cond " ", ##__VA_ARGS__)); \
  } while (0)
