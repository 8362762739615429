// The tracing context: while a kernel function runs at trace time, every DSL value records IR into
// the context of the current thread. Tiles register themselves here so that loops and branches can
// find which C++ variables they reassign (loop-carried values and branch results).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "ctile/ir/builder.hpp"

namespace ctile::detail {

class TileBase;

// The location of the user's expression; operators receive it through an implicit conversion
// whose default argument is evaluated at the user's call site.
template <class X>
struct Located {
  const X& x;
  std::source_location loc;
  Located(const X& v, std::source_location l = std::source_location::current()) : x(v), loc(l) {}  // NOLINT
};

class TraceContext {
 public:
  explicit TraceContext(ir::Kernel& k) : builder_(k) {}
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The context of the kernel being traced on this thread; throws a UserError outside a trace.
  static TraceContext& current(const SourceLoc& where);
  static TraceContext* current_or_null();

  ir::Builder& b() { return builder_; }
  ir::Kernel& kernel() { return builder_.kernel(); }

  // Live tile variables, ordered by creation (deterministic IR).
  std::uint64_t register_tile(TileBase* t) {
    const std::uint64_t s = next_serial_++;
    live_.emplace(s, t);
    return s;
  }
  void unregister_tile(std::uint64_t serial) { live_.erase(serial); }
  const std::map<std::uint64_t, TileBase*>& live() const { return live_; }
  std::uint64_t next_serial() const { return next_serial_; }

  // Errors detected where throwing is impossible (destructors) are raised at the next op.
  void defer_error(UserError e) {
    if (!deferred_) deferred_.emplace(std::move(e));
  }
  void raise_deferred() {
    if (deferred_) {
      UserError e = *deferred_;
      deferred_.reset();
      throw e;
    }
  }
  int open_constructs = 0;  // ct::range loops not yet closed

 private:
  ir::Builder builder_;
  std::map<std::uint64_t, TileBase*> live_;
  std::uint64_t next_serial_ = 0;
  std::optional<UserError> deferred_;
};

// Installs a context as the current one for this thread for its lifetime.
class TraceScope {
 public:
  explicit TraceScope(TraceContext& c);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  TraceContext* prev_;
};

// Base of every Tile<T>: holds the SSA value the C++ variable currently names.
class TileBase {
 public:
  ir::ValueId value() const { return v_; }
  void set_value(ir::ValueId v) { v_ = v; }

 protected:
  TileBase(ir::ValueId v, const SourceLoc& where) : ctx_(&TraceContext::current(where)), v_(v) {
    serial_ = ctx_->register_tile(this);
  }
  TileBase(const TileBase& o) : ctx_(o.ctx_), v_(o.v_) { serial_ = ctx_->register_tile(this); }
  TileBase& operator=(const TileBase& o) {
    v_ = o.v_;
    return *this;
  }
  ~TileBase() {
    if (TraceContext::current_or_null() == ctx_) ctx_->unregister_tile(serial_);
  }
  TraceContext& ctx() const { return *ctx_; }

 private:
  TraceContext* ctx_;
  ir::ValueId v_;
  std::uint64_t serial_ = 0;
};

}  // namespace ctile::detail
