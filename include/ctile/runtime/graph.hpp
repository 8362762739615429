// Graphs: a sequence of lazy operations captured once and replayed many times as one submission.
//
//   auto g = ctile::capture(device, [&](ctile::Capture& cap) {
//     return ctile::launch(k1, std::move(z), x).async_on(cap.stream())
//         .then([](auto&& t) { return ctile::launch(k2, std::move(std::get<0>(t)), y); });
//   });                                        // nothing has run: g holds a graph of two kernels
//   for (int step = 0; step < 100; ++step) {
//     g.copy_in<1>(std::span<const float>(input));   // new input (ordered after earlier replays)
//     g = std::move(g).replay(stream).get();          // one submission; the future gives g back
//   }
//   auto [z2, y2] = std::move(g).unwrap();            // the handles of the last operation
//
// The capture function gets a Capture: its stream() (and fork()ed streams, for work in parallel)
// record launches, ctile::copy and host callbacks instead of running them; the function returns
// the future of its last operation. On a GPU the graph is a CUDA graph; on the CPU it runs its
// nodes in order on the stream's worker, with the same semantics.
//
// Ownership: the graph owns every tensor its nodes use for its lifetime: the handles of the final
// future (results(), get<I...>()) and every tensor an earlier node used. Another launch may read a
// Shared tensor the graph only reads; nothing else may write a tensor the graph uses, or read one
// it writes (UserError), until the graph is dropped or unwrapped. Replays are ordered after earlier
// work on those tensors, and later work after the replays, through the tensors' events, as launches
// are. A capture cannot allocate (a UserError at the allocation; allocate before capturing).
//
// Inputs change between replays by copying into a captured tensor (copy_in), by new scalar
// arguments (set_scalar), or by swapping in another tensor of the same spec (swap). docs/host_api.md
// ("Graphs") has the details; docs/tutorials/graphs.md a walk-through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/runtime/future.hpp"
#include "ctile/runtime/launch.hpp"
#include "ctile/runtime/stream.hpp"

namespace ctile {

namespace detail {
struct GraphState;
class CaptureState;
class CaptureScope;

// Releases the graph's claim on its tensors when the Graph handle goes away (in-flight replays keep
// the GraphState, not this).
struct GraphOwner {
  std::shared_ptr<GraphState> state;
  explicit GraphOwner(std::shared_ptr<GraphState> s) : state(std::move(s)) {}
  ~GraphOwner();
  GraphOwner(const GraphOwner&) = delete;
  GraphOwner& operator=(const GraphOwner&) = delete;
};

// Non-template parts (src/runtime/graph.cpp).
Event graph_replay(const std::shared_ptr<GraphState>& g, const Stream& s);
void graph_set_scalar(GraphState& g, std::size_t kernel_node, int arg, ir::Scalar v, bool is_float);
void graph_copy_in(GraphState& g, const TensorCore& c, long shared_holders, const void* src, std::int64_t elements,
                   DType dtype);
std::vector<std::byte> graph_read(const GraphState& g, const TensorCore& c);
void graph_swap(GraphState& g, const std::shared_ptr<const TensorCore>& old_core, const std::shared_ptr<const TensorCore>& new_core,
                const Shape* old_tile, const Shape* new_tile, const char* handle);
std::size_t graph_nodes(const GraphState& g);
std::size_t graph_kernel_nodes(const GraphState& g);
std::string graph_kernel_name(const GraphState& g, std::size_t kernel_node);
Device graph_device(const GraphState& g);
[[noreturn]] void graph_moved_from();

template <class X> struct is_handle : std::false_type {};
template <class T> struct is_handle<Tensor<T>> : std::true_type {};
template <class T> struct is_handle<Partition<T>> : std::true_type {};
template <class T> struct is_handle<Shared<T>> : std::true_type {};
template <class T> struct is_handle<UncheckedTensor<T>> : std::true_type {};

// The element of a (nested) tuple at a path of indices: get<1, 0>(t) = std::get<0>(std::get<1>(t)).
template <std::size_t I, std::size_t... Rest, class X>
auto& at_path(X& x) {
  if constexpr (sizeof...(Rest) == 0) return std::get<I>(x);
  else return at_path<Rest...>(std::get<I>(x));
}
}  // namespace detail

// What a capture function is given: the capture's streams.
class Capture {
 public:
  explicit Capture(detail::CaptureState& s) : s_(&s) {}
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  // The capture's first stream: lazy operations submitted here (async_on, then) are recorded.
  [[nodiscard]] Stream stream() const;
  // Another capturing stream: its operations may run in parallel with the first stream's where
  // their tensors allow (a join on a tensor is an edge of the graph).
  [[nodiscard]] Stream fork();

 private:
  detail::CaptureState* s_;
  mutable Stream main_;
};

template <class R>
class [[nodiscard]] Graph {
 public:
  using Payload = R;

  Graph(std::shared_ptr<detail::GraphOwner> owner, R payload) : owner_(std::move(owner)), payload_(std::move(payload)) {}
  Graph(Graph&&) noexcept = default;  // the source becomes moved-from
  Graph& operator=(Graph&&) noexcept = default;
  // No copies: one graph, one owner of its tensors.
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() = default;  // never waits: in-flight replays keep what they use

  // Runs the graph on `s` (a stream of the graph's device) once the work before it on its tensors
  // is done. The future gives the graph back when the run has finished; it carries the run's error.
  [[nodiscard]] Future<Graph> replay(const Stream& s) && {
    Event done = detail::graph_replay(owner().state, s);
    auto st = detail::make_pooled<FutureState<Graph>>();
    st->done = std::move(done);
    st->stream = s;
    st->payload.emplace(std::move(*this));
    return Future<Graph>(std::move(st));
  }
  Future<Graph> replay(const Stream&) & = delete;  // use std::move(g).replay(s): the future owns the graph meanwhile
  // A graph is a lazy operation: Future::then can replay it.
  [[nodiscard]] Future<Graph> async_on(const Stream& s) && { return std::move(*this).replay(s); }
  // Replays and waits.
  [[nodiscard]] Graph sync_on(const Stream& s) && { return std::move(*this).replay(s).get(); }

  // The handles of the capture function's last operation, owned by the graph (read-only).
  [[nodiscard]] const R& results() const {
    owner();
    return *payload_;
  }
  // One of them, by its position in the (nested) tuple: get<0>(), get<1, 2>().
  template <std::size_t... I>
  [[nodiscard]] const auto& get() const {
    return detail::at_path<I...>(results());
  }
  // The elements of the tensor at that position as a host vector, after the replays before this call.
  template <std::size_t... I>
  [[nodiscard]] auto read() const {
    const auto& h = get<I...>();
    using H = std::remove_cvref_t<decltype(h)>;
    static_assert(detail::is_handle<H>::value, "ctile::Graph::read<I...>(): the element at that position is not a tensor");
    using T = typename H::element_type;
    const std::vector<std::byte> bytes = detail::graph_read(*owner().state, *h.core(unchecked));
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  // Copies host data into the tensor at that position (a captured input), after the replays
  // submitted before this call and before any after it. The tensor must be contiguous and have
  // `host.size()` elements; a Shared tensor must have no holders outside the graph.
  template <std::size_t... I, class T>
  void copy_in(std::span<const T> host) {
    const auto& h = get<I...>();
    using H = std::remove_cvref_t<decltype(h)>;
    static_assert(detail::is_handle<H>::value, "ctile::Graph::copy_in<I...>(): the element at that position is not a tensor");
    static_assert(std::is_same_v<typename H::element_type, std::remove_cv_t<T>>,
                  "ctile::Graph::copy_in<I...>(): the host data's element type differs from the tensor's");
    long holders = 0;
    if constexpr (detail::is_shared<H>::value) holders = h.holders() - count_shared(*h.core(unchecked)->storage);
    detail::graph_copy_in(*owner().state, *h.core(unchecked), holders, host.data(), static_cast<std::int64_t>(host.size()),
                          dtype_of<std::remove_cv_t<T>>);
  }
  template <std::size_t... I, class T>
  void copy_in(const std::vector<T>& host) {
    copy_in<I...>(std::span<const T>(host));
  }
  // Swaps the tensor at that position for `replacement`, a tensor of the same spec (element type,
  // shape, strides, tile shape, alignment facts, device): every node that used the old one uses
  // the replacement from the next replay on, the graph owns the replacement, and the old tensor
  // comes back (its events order its next use after the replays that used it). UserError when the
  // specs differ or a node uses the old memory through another view.
  template <std::size_t... I, class H>
  [[nodiscard]] std::remove_cvref_t<H> swap(H&& replacement) {  // by value: an lvalue gets the static_assert, not a copy error
    static_assert(!std::is_lvalue_reference_v<H>, "ctile::Graph::swap: move the replacement in (std::move)");
    static_assert(detail::is_handle<std::remove_cvref_t<H>>::value, "ctile::Graph::swap: the replacement must be a tensor handle");
    auto& slot = detail::at_path<I...>(*payload_);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(slot)>, std::remove_cvref_t<H>>,
                  "ctile::Graph::swap<I...>: the replacement's type differs from the handle at that position");
    owner();
    if (!replacement.valid()) throw UserError("ctile::Graph::swap: the replacement is moved from or empty");
    const Shape* old_tile = nullptr;
    const Shape* new_tile = nullptr;
    if constexpr (detail::is_partition<std::remove_cvref_t<H>>::value) {
      old_tile = &slot.tile_shape();
      new_tile = &replacement.tile_shape();
    }
    detail::graph_swap(*owner().state, slot.core(unchecked), replacement.core(unchecked), old_tile, new_tile,
                       handle_name<std::remove_cvref_t<H>>());
    H old = std::move(slot);
    slot = std::move(replacement);
    return old;
  }
  // A new value for the Scalar argument `arg` (its position among the kernel's parameters) of the
  // `kernel_node`-th launch of the capture (0-based, in capture order). UserError for a node or
  // argument that does not exist, an argument that is not a Scalar (a Const is part of the
  // specialisation: capture another graph), or a value of the other kind or out of range.
  template <class V>
    requires(std::is_arithmetic_v<V> && !std::is_same_v<V, bool>)
  void set_scalar(std::size_t kernel_node, int arg, V value) {
    ir::Scalar v;
    if constexpr (std::is_floating_point_v<V>) v = ir::Scalar::of_float(static_cast<double>(value));
    else if constexpr (std::is_unsigned_v<V>) v = ir::Scalar::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(value)));
    else v = ir::Scalar::of_int(static_cast<std::int64_t>(value));
    detail::graph_set_scalar(*owner().state, kernel_node, arg, v, std::is_floating_point_v<V>);
  }

  [[nodiscard]] std::size_t nodes() const { return detail::graph_nodes(*owner().state); }
  [[nodiscard]] std::size_t kernel_nodes() const { return detail::graph_kernel_nodes(*owner().state); }
  [[nodiscard]] std::string kernel_name(std::size_t kernel_node) const {
    return detail::graph_kernel_name(*owner().state, kernel_node);
  }
  [[nodiscard]] Device device() const { return detail::graph_device(*owner().state); }
  [[nodiscard]] bool valid() const noexcept { return owner_ != nullptr; }

  // The handles back; the graph is gone. Later uses of them are ordered after its replays.
  [[nodiscard]] R unwrap() && {
    owner();
    R r = std::move(*payload_);
    payload_.reset();
    owner_.reset();
    return r;
  }
  R unwrap() & = delete;  // use std::move(g).unwrap()

 private:
  const detail::GraphOwner& owner() const {
    if (!owner_) detail::graph_moved_from();
    return *owner_;
  }
  // Copies of a Shared handle inside the payload (they are the graph's own holders).
  long count_shared(const detail::Storage& s) const {
    long n = 0;
    visit(*payload_, [&](const auto& h) {
      using H = std::remove_cvref_t<decltype(h)>;
      if constexpr (detail::is_shared<H>::value)
        if (h.valid() && h.core(unchecked)->storage.get() == &s) ++n;
    });
    return n;
  }
  template <class X, class F>
  static void visit(const X& x, F&& f) {
    if constexpr (requires { std::tuple_size<X>::value; }) {
      std::apply([&](const auto&... e) { (visit(e, f), ...); }, x);
    } else {
      f(x);
    }
  }
  template <class H>
  static const char* handle_name() {
    if constexpr (detail::is_partition<H>::value) return "Partition";
    else if constexpr (detail::is_shared<H>::value) return "Shared";
    else if constexpr (detail::is_tensor<H>::value) return "Tensor";
    else return "UncheckedTensor";
  }

  std::shared_ptr<detail::GraphOwner> owner_;  // null once moved from
  std::optional<R> payload_;
};

namespace detail {
std::shared_ptr<GraphOwner> finish_capture(CaptureScope& scope, const Event& result);
CaptureScope* begin_capture(Device d);
void end_capture(CaptureScope* scope) noexcept;
CaptureState& capture_state(CaptureScope& scope);
}  // namespace detail

// Captures what `fn(Capture&)` submits to the capture's streams into a graph on `d`. `fn` returns
// the ctile::Future of its last operation; the graph owns that future's handles (Graph::results()).
// Nothing runs during the capture. Throws UserError (and captures nothing) when `fn` allocates a
// tensor, waits for captured work (Future::get, to_host of a captured tensor), lets work outside
// the capture depend on captured work, submits something that cannot be captured (Stream::enqueue,
// a race-checked launch), or returns a future of work that was not captured.
template <class F>
[[nodiscard]] auto capture(Device d, F&& fn) {
  using Fut = std::remove_cvref_t<std::invoke_result_t<F, Capture&>>;
  static_assert(is_future<Fut>::value,
                "ctile::capture(fn): fn(ctile::Capture&) must return the ctile::Future of its last operation");
  using R = typename Fut::value_type;
  struct Scope {
    detail::CaptureScope* s;
    ~Scope() { detail::end_capture(s); }
  } scope{detail::begin_capture(d)};
  Capture cap(detail::capture_state(*scope.s));
  Fut f = std::invoke(std::forward<F>(fn), cap);
  auto fs = std::move(f).into_state();
  auto owner = detail::finish_capture(*scope.s, fs->done);
  return Graph<R>(std::move(owner), std::move(*fs->payload));
}
template <class F>
[[nodiscard]] auto capture(F&& fn) {
  return capture(default_device(), std::forward<F>(fn));
}

}  // namespace ctile
