// Graph capture (private to the library): while ctile::capture runs its function, launches, copies
// and host callbacks submitted to the capture's streams are recorded as nodes instead of run, with
// the dependencies the storages' events give them. docs/host_api.md ("Graphs") describes the rules.
//
// Recording reuses the launch path unchanged: a node's event is an Event::create_captured() event,
// recorded on the storages the node reads and writes like any event, so later nodes find it among
// their dependencies and the capture turns it into an edge. Every storage is put back as it was
// when the capture ends (save_state / restore_state): nothing ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../platform/launch_shape.hpp"
#include "ctile/backend/backend.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"

namespace ctile::platform {
class NativeKernel;
}  // namespace ctile::platform

namespace ctile::detail {

struct LaunchRecord;
struct ForeignKernel;
struct GraphState;

// "<what>: the tensor is used by a graph capture ..." (a UserError): work outside a capture that
// would depend on captured work, or host access to what a capture writes.
[[noreturn]] void throw_captured_use(std::string_view what);
// Work submitted outside a capture (`capturing` false) must not wait for captured work: throws
// throw_captured_use("<what()> outside the capture") when one of `deps` is a captured event.
// `what` makes the message only then (launch paths call this for every launch).
template <class What>
void reject_captured_deps(std::span<const Event> deps, bool capturing, const What& what) {
  if (capturing) return;
  for (const Event& e : deps)
    if (e.captured()) throw_captured_use(std::string(what()) + " outside the capture");
}

// Event::when_all of events among which some are captured: the capture running on this thread
// learns which nodes `join` stands for, so that work waiting for the join depends on those nodes
// (ct::join of captured futures, Future::then after a failed-or-pending pair). No-op without one.
void note_captured_join(const Event& join, const Event* inputs, std::size_t n);

// A tensor that a captured node uses.
struct NodeTensor {
  std::shared_ptr<const TensorCore> core;  // keeps the view alive; its identity is what swap() replaces
  int arg = -1;   // kernel nodes: the C++ argument
  int slot = -1;  // kernel nodes: its slot in the parameter layout
  bool writes = false;
};

struct CapturedNode {
  enum class Kind : std::uint8_t { Kernel, Copy, Host };
  Kind kind = Kind::Kernel;
  std::vector<std::size_t> deps;  // earlier nodes
  std::vector<NodeTensor> tensors;

  // Kernel
  const LaunchRecord* record = nullptr;
  std::string_view name;  // interned
  std::int64_t tile_blocks = 0;
  std::vector<std::byte> params;        // native kernels: the packed parameter block
  backend::LaunchConfig cfg;            // interpreted kernels (CPU): grid and name
  std::vector<backend::ArgValue> args;  // interpreted kernels: one per IR parameter
  std::vector<ir::Scalar> scalars;      // per C++ argument (Scalar parameters; others unused)
  // Foreign kernels (SIMT, foreign_launch.hpp; `record` is null): the native kernel launched over
  // `shape` (a GPU) or the host function (the CPU), from `params`; NodeTensor::slot is the argument.
  const ForeignKernel* foreign = nullptr;
  const platform::NativeKernel* native = nullptr;
  platform::LaunchShape shape;
  std::function<void(const std::byte*)> host;

  // Copy
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::int64_t bytes = 0;

  // Host
  std::shared_ptr<StreamTask> fn;
};

class CaptureState : public std::enable_shared_from_this<CaptureState> {
 public:
  explicit CaptureState(Device d);
  ~CaptureState();
  CaptureState(const CaptureState&) = delete;
  CaptureState& operator=(const CaptureState&) = delete;

  // The capture running on this thread (ctile::capture), or null.
  static CaptureState* on_this_thread();

  [[nodiscard]] Device device() const { return device_; }
  // "a capture on cpu:0 with 3 nodes"
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] bool ended() const { return ended_; }

  // A capturing stream of this capture (a lane: its nodes run in order, other lanes in parallel
  // where the dependencies allow).
  [[nodiscard]] std::shared_ptr<StreamImpl> new_lane();
  // A stream for lane `i` (lane 0 exists from the start: Capture::stream()).
  [[nodiscard]] std::shared_ptr<StreamImpl> lane_stream(std::size_t i);

  // Before a node reads a storage's events: remember the storage's state once (restored at the end).
  void touch(const std::shared_ptr<Storage>& s);
  // Whether `e` is the event of one of this capture's nodes (or a join of them).
  [[nodiscard]] bool owns(const Event& e) const;
  // Records `node` on `lane`, after the nodes among `deps` (other events are ignored: a replay
  // orders itself after the work before it through the storages). Throws UserError when the
  // capture has ended, is used from another thread, or a dependency belongs to another capture.
  // `lane` is a stream of this capture (new_lane()).
  Event add(CapturedNode node, StreamImpl& lane, std::span<const Event> deps);
  Event add(CapturedNode node, std::size_t lane, std::span<const Event> deps);
  // The event of the last node of `lane` (ready when the lane has none).
  [[nodiscard]] Event last_of(std::size_t lane) const;
  // Events the next node of `lane` also waits for (Stream::record(wait_for) on a capturing stream).
  void wait_on(std::size_t lane, std::span<Event> events);

  // Ends the capture: builds the platform graph of the nodes. Throws UserError when nothing was
  // captured or `result` (the capture function's future) is not of this capture's work.
  [[nodiscard]] std::shared_ptr<GraphState> finish(const Event& result);
  // Ends the capture (also on failure): storages back as they were, node events completed.
  void end() noexcept;

  void check_thread(std::string_view what) const;

 private:
  Device device_;
  std::thread::id thread_;
  bool ended_ = false;
  std::vector<CapturedNode> nodes_;
  std::vector<Event> events_;  // per node
  std::unordered_map<const void*, std::size_t> node_of_;  // event id -> node
  // join event id -> the join (kept, so that its id is not reused) and the nodes it stands for;
  // `foreign`: it also joins captured work of no node of this capture.
  struct Join {
    Event event;
    std::vector<std::size_t> nodes;
    bool foreign = false;
  };
  std::unordered_map<const void*, Join> joins_;
  // The nodes a captured event stands for, appended to `out`; false if it is of no node or join of
  // this capture.
  bool nodes_of(const Event& e, std::vector<std::size_t>& out) const;
  void note_join(const Event& join, const Event* inputs, std::size_t n);
  friend void note_captured_join(const Event&, const Event*, std::size_t);
  struct Lane {
    bool has_last = false;
    std::size_t last = 0;
    std::vector<std::size_t> pending;  // Stream::record(wait_for) on this lane
  };
  std::vector<Lane> lanes_;
  std::unordered_map<Storage*, std::pair<std::shared_ptr<Storage>, Storage::State>> saved_;
  CaptureState* prev_on_thread_ = nullptr;
  friend class CaptureScope;
};

// Runs a capture for ctile::capture: makes the CaptureState current on this thread for the scope
// (one capture per thread at a time) and ends it when the scope ends, however it ends.
class CaptureScope {
 public:
  explicit CaptureScope(Device d);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  [[nodiscard]] CaptureState& state() { return *state_; }
  [[nodiscard]] std::shared_ptr<GraphState> finish(const Event& result) { return state_->finish(result); }

 private:
  std::shared_ptr<CaptureState> state_;
};

}  // namespace ctile::detail
