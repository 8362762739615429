// Run-time control flow. Plain C++ `for`/`if`/`while` run at trace time (metaprogramming: they
// unroll or select code); these constructs become IR loops and branches instead.
//
//   for (auto k : ctile::range(n)) acc = acc + f(k);         // acc is carried automatically
//   ctile::if_(x > 0, [&] { y = y * 2; }, [&] { y = -y; });  // y is a branch result
//   ctile::while_([&] { return i < n; }, [&] { i = i + 1; });
//
// A tile variable that exists before the construct and is reassigned inside it becomes a
// loop-carried value (or a branch result); this is decided per C++ variable, so two variables
// naming one value are tracked separately. Tiles created inside must not escape it.
#pragma once

#include <functional>
#include <memory>

#include "ctile/frontend/tile.hpp"

namespace ctile {

namespace detail {

// Records the live variables at the start of a construct and, at its end, which were reassigned.
class LoopTrace {
 public:
  // Opens a ct.for over [lb, ub) by step; the body is traced once.
  LoopTrace(ValueId lb, ValueId ub, ValueId step, const SourceLoc& loc);
  ~LoopTrace();
  LoopTrace(const LoopTrace&) = delete;
  LoopTrace& operator=(const LoopTrace&) = delete;
  ValueId induction_variable() const { return iv_; }
  void begin_body();  // snapshot live variables, enter the region
  void end_body();    // close the region, resolve carried values

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ValueId iv_ = ir::kNoValue;
  SourceLoc loc_;
  bool opened_ = false, closed_ = false;
};

void trace_if(ValueId cond, const std::function<void()>& then_fn, const std::function<void()>* else_fn,
              const SourceLoc& loc);
void trace_while(const std::function<ValueId()>& cond_fn, const std::function<void()>& body_fn, const SourceLoc& loc);

}  // namespace detail

// A run-time loop over [begin, end) with a positive step. Use in a range-based for statement.
class Range {
 public:
  Range(ir::ValueId lb, ir::ValueId ub, ir::ValueId step, SourceLoc loc)
      : lb_(lb), ub_(ub), step_(step), loc_(std::move(loc)) {}

  // The range-for protocol (begin() opens the loop, the iterator's != closes it).
  class Sentinel {};  // doc: internal
  class Iterator {  // doc: internal
   public:
    explicit Iterator(detail::LoopTrace* t) : t_(t) {}
    Index operator*() const { return Index(t_->induction_variable(), SourceLoc{}); }
    Iterator& operator++() { return *this; }
    bool operator!=(Sentinel) {
      if (!entered_) {
        entered_ = true;
        t_->begin_body();
        return true;
      }
      t_->end_body();
      return false;
    }

   private:
    detail::LoopTrace* t_;
    bool entered_ = false;
  };

  Iterator begin() {  // doc: internal
    trace_ = std::make_unique<detail::LoopTrace>(lb_, ub_, step_, loc_);
    return Iterator(trace_.get());
  }
  Sentinel end() { return {}; }  // doc: internal

 private:
  ir::ValueId lb_, ub_, step_;
  SourceLoc loc_;
  std::unique_ptr<detail::LoopTrace> trace_;
};

inline Range range(const IndexArg& end, std::source_location l = std::source_location::current()) {
  return Range(IndexArg(0).resolve(l), end.resolve(l), IndexArg(1).resolve(l), l);
}
inline Range range(const IndexArg& begin, const IndexArg& end, const IndexArg& step = IndexArg(1),
                   std::source_location l = std::source_location::current()) {
  return Range(begin.resolve(l), end.resolve(l), step.resolve(l), l);
}

// A run-time branch on a bool scalar tile. Tile variables assigned in either branch become results.
template <class Then>
void if_(const Tile<bool>& cond, Then&& then_fn, std::source_location l = std::source_location::current()) {
  const std::function<void()> t = std::forward<Then>(then_fn);
  detail::trace_if(cond.value(), t, nullptr, l);
}
template <class Then, class Else>
void if_(const Tile<bool>& cond, Then&& then_fn, Else&& else_fn,
         std::source_location l = std::source_location::current()) {
  const std::function<void()> t = std::forward<Then>(then_fn);
  const std::function<void()> e = std::forward<Else>(else_fn);
  detail::trace_if(cond.value(), t, &e, l);
}

// A run-time loop: while cond() (a bool scalar tile) holds, run body().
template <class Cond, class Body>
void while_(Cond&& cond_fn, Body&& body_fn, std::source_location l = std::source_location::current()) {
  const std::function<ir::ValueId()> c = [&]() -> ir::ValueId {
    const Tile<bool> r = cond_fn();
    return r.value();
  };
  const std::function<void()> b = std::forward<Body>(body_fn);
  detail::trace_while(c, b, l);
}

}  // namespace ctile
