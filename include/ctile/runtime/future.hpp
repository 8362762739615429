// Future<R>: the result of asynchronous work on a stream. R is the payload: the handles the work
// hands back (tensors, partitions, shared handles, tuples of them). The payload is moved into the
// future when the work is enqueued, so a follow-up operation can take the handles right away
// (then/join) without waiting: stream order and the storages' dependency events keep that safe.
#pragma once

#include <concepts>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ctile/core/error.hpp"
#include "ctile/runtime/event.hpp"
#include "ctile/runtime/pool.hpp"
#include "ctile/runtime/stream.hpp"

namespace ctile {

// Shared by a Future and whoever made it. `payload` is set when the future is made and is never
// touched by the stream's worker (tasks capture their own references: cores, storages, boxes).
template <class R>
struct FutureState {
  Event done;                  // completes (maybe with an error) when the work has finished
  std::optional<R> payload;
  Stream stream;               // where the work was enqueued; then() continues there
};

template <class R> class Future;

template <class X> struct is_future : std::false_type {};
template <class X> struct is_future<Future<X>> : std::true_type {};

// An operation that has not run yet: async_on(stream) enqueues it and returns its Future.
template <class Op>
concept LazyOperation = requires(Op&& op, Stream s) {
  std::move(op).async_on(s);
} && is_future<std::remove_cvref_t<decltype(std::declval<Op&&>().async_on(std::declval<Stream>()))>>::value;

namespace detail {
template <class> inline constexpr bool dependent_false = false;
}

// A lazy operation that can also wait for one more event itself (a launch): Future::then hands it
// the previous step's event instead of joining the two.
template <class Op>
concept LazyOperationAfter = LazyOperation<Op> && requires(Op&& op, Stream s, Event e) { std::move(op).async_after(s, e); };

template <class R>
class [[nodiscard]] Future {
 public:
  using value_type = R;

  // `st` must be non-null and carry its payload (see FutureState).
  explicit Future(std::shared_ptr<FutureState<R>> st) : st_(std::move(st)) {
    if (!st_) throw UserError("Future made from a null FutureState");
    if (!st_->payload) throw UserError("Future made from a FutureState without its payload (set it before making the future)");
  }
  // Move-only: one future, one owner of the payload.
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  Future(Future&&) noexcept = default;  // the source becomes moved-from
  Future& operator=(Future&&) noexcept = default;
  ~Future() = default;                  // never waits: the work owns what it uses

  // Waits for the work; rethrows its error, otherwise hands back the payload. UserError for the
  // future of captured work (inside ctile::capture nothing runs; the graph gives the results).
  [[nodiscard]] R get() && {
    if (s().done.captured() && !s().done.done())
      throw UserError("Future::get inside a graph capture: the work is recorded into the graph, not run, so there is "
                      "nothing to wait for; return the future from the capture function and read the results from "
                      "the graph after replaying it");
    auto st = std::move(*this).into_state();
    st->done.wait();
    if (auto err = st->done.error()) std::rethrow_exception(err);
    return std::move(*st->payload);
  }
  R get() & = delete;  // use std::move(f).get(): it consumes the future

  void wait() const { s().done.wait(); }
  [[nodiscard]] bool ready() const { return s().done.done(); }
  [[nodiscard]] Stream stream() const { return s().stream; }
  [[nodiscard]] Event event() const { return s().done; }
  [[nodiscard]] bool valid() const noexcept { return st_ != nullptr; }

  // Chains a follow-up: calls f(R&&) now, on this thread, with the payload handles, and runs the
  // lazy operation f returns on this future's stream. The result completes when both steps have
  // and carries the first error of the chain. A follow-up launch waits for this step (it is
  // skipped, carrying the error, when this step failed before it was submitted). `f` may also return the Future of work it submitted
  // itself (a BoundKernel call, a graph replay): the chain continues with that.
  // A follow-up launch that fails its checks throws a UserError at `loc`, the caller's file:line.
  template <class F>
  [[nodiscard]] auto then(F&& f, std::source_location loc = std::source_location::current()) && {
    Stream s = this->stream();
    return std::move(*this).then_on(s, std::forward<F>(f), loc);
  }

  // Like then(), but runs the follow-up on `next_stream`. The follow-up still sees this step's
  // results: every tensor it takes is ordered after this step's writes by its storage's events,
  // so moving ownership between streams cannot race.
  template <class F>
  [[nodiscard]] auto then_on(const Stream& next_stream, F&& f, std::source_location loc = std::source_location::current()) && {
    if constexpr (!std::is_invocable_v<F, R&&>) {
      static_assert(detail::dependent_false<F>, "Future<R>::then(f): f must be callable with R&& (the payload)");
    } else {
      using Op = std::invoke_result_t<F, R&&>;
      if constexpr (is_future<Op>::value) {
        auto st = std::move(*this).into_state();
        Op next = std::invoke(std::forward<F>(f), std::move(*st->payload));
        auto ns = std::move(next).into_state();
        ns->done = Event::when_all(st->done, std::move(ns->done));
        return Op(std::move(ns));
      } else if constexpr (!LazyOperation<Op>) {
        static_assert(detail::dependent_false<F>,
                      "Future<R>::then(f): f must return a lazy operation, i.e. a type with "
                      "`async_on(Stream) &&` returning a ctile::Future<...> (for example a launch that has not "
                      "been run yet), or a ctile::Future");
      } else if constexpr (LazyOperationAfter<Op>) {
        // A launch waits for the previous step itself, so it completes after it and carries its
        // error: no join of the two events.
        auto st = std::move(*this).into_state();
        Op op = std::invoke(std::forward<F>(f), std::move(*st->payload));
        if constexpr (requires { std::move(op).async_after(next_stream, st->done, loc); })
          return std::move(op).async_after(next_stream, st->done, loc);
        else
          return std::move(op).async_after(next_stream, st->done);
      } else {
        auto st = std::move(*this).into_state();
        Op op = std::invoke(std::forward<F>(f), std::move(*st->payload));
        auto next = std::move(op).async_on(next_stream);
        using X = typename decltype(next)::value_type;
        auto ns = std::move(next).into_state();
        if (ns.use_count() == 1) {  // the usual case: reuse the new step's state
          ns->done = Event::when_all(st->done, std::move(ns->done));
          return Future<X>(std::move(ns));
        }
        auto out = detail::make_pooled<FutureState<X>>();
        out->done = Event::when_all(st->done, ns->done);
        out->payload = std::move(ns->payload);
        out->stream = ns->stream;
        return Future<X>(std::move(out));
      }
    }
  }

  // The shared state, leaving this future moved-from (for launch glue and join).
  [[nodiscard]] std::shared_ptr<FutureState<R>> into_state() && {
    s();
    return std::move(st_);
  }

 private:
  const FutureState<R>& s() const {
    if (!st_) throw UserError("use of a moved-from Future (get(), then() or join() consumed it)");
    return *st_;
  }
  std::shared_ptr<FutureState<R>> st_;  // null once moved from
};

// One future for several: payloads are moved into a tuple now; it completes when all have, with
// the first error in argument order. It reports the first future's stream.
template <class R0, class... Rs>
[[nodiscard]] Future<std::tuple<R0, Rs...>> join(Future<R0>&& f0, Future<Rs>&&... fs) {
  if (!f0.valid() || (!fs.valid() || ...)) throw UserError("join() of a moved-from Future");
  auto s0 = std::move(f0).into_state();
  auto ss = std::make_tuple(std::move(fs).into_state()...);
  auto out = detail::make_pooled<FutureState<std::tuple<R0, Rs...>>>();
  out->done = std::apply([&](auto&... s) { return Event::when_all({s0->done, s->done...}); }, ss);
  out->stream = s0->stream;
  out->payload.emplace(std::apply(
      [&](auto&... s) { return std::tuple<R0, Rs...>(std::move(*s0->payload), std::move(*s->payload)...); }, ss));
  return Future<std::tuple<R0, Rs...>>(std::move(out));
}

}  // namespace ctile
