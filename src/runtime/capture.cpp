// Graph capture: capturing streams and the recording of nodes (capture.hpp).
#include "capture.hpp"

#include <algorithm>
#include <utility>

#include "../platform/command.hpp"
#include "ctile/core/error.hpp"
#include "graph_state.hpp"

namespace ctile::detail {
namespace {

thread_local CaptureState* t_capture = nullptr;

const char* const kCapturedHint =
    "the tensor is used by a graph capture, whose work is recorded into the graph, not run: inside ctile::capture "
    "only operations on the capture's streams may use it (and nothing can wait for them); after the capture, only "
    "the graph";

// A capturing stream: what is submitted here becomes nodes of the capture.
class CaptureLane final : public StreamImpl {
 public:
  CaptureLane(std::shared_ptr<CaptureState> st, std::size_t lane) : st_(std::move(st)), lane_(lane) {}
  Device device() const override { return st_->device(); }
  CaptureState* capture() override { return st_.get(); }
  [[nodiscard]] std::size_t lane() const { return lane_; }

  Event submit(Command&& cmd, std::span<Event> wait_for) override {
    switch (cmd.kind) {
      case Command::Kind::Host: {
        CapturedNode n;
        n.kind = CapturedNode::Kind::Host;
        n.fn = std::make_shared<StreamTask>(std::move(cmd.fn));
        return st_->add(std::move(n), lane_, wait_for);
      }
      case Command::Kind::Marker:
        st_->check_thread("Stream::record on a capturing stream");
        st_->wait_on(lane_, wait_for);
        return st_->last_of(lane_);
      case Command::Kind::Inline:
        throw UserError("Stream::enqueue on a capturing stream: an opaque task cannot be recorded into a graph (use "
                        "Stream::host for a host callback, launches and ctile::copy for device work)");
      default:
        throw InternalError("capture: an untyped submission of a kernel, copy or graph (the launch glue records those)");
    }
  }
  void synchronize() override {
    throw UserError("Stream::synchronize on a capturing stream: captured work is not run, so there is nothing to wait "
                    "for (replay the graph and wait for its future)");
  }

 private:
  std::shared_ptr<CaptureState> st_;
  std::size_t lane_;
};

}  // namespace

void throw_captured_use(std::string_view what) { throw UserError(cat(what, ": ", kCapturedHint)); }

CaptureState::CaptureState(Device d) : device_(d), thread_(std::this_thread::get_id()) {}

CaptureState::~CaptureState() { end(); }

CaptureState* CaptureState::on_this_thread() { return t_capture; }

std::string CaptureState::describe() const {
  return cat("a graph capture on ", device_.str(), " with ", nodes_.size(), " node", nodes_.size() == 1 ? "" : "s", " so far");
}

std::shared_ptr<StreamImpl> CaptureState::new_lane() {
  check_thread("Capture::fork");
  lanes_.emplace_back();
  return std::make_shared<CaptureLane>(shared_from_this(), lanes_.size() - 1);
}

std::shared_ptr<StreamImpl> CaptureState::lane_stream(std::size_t i) {
  check_thread("Capture::stream");
  CTILE_CHECK(i < lanes_.size(), "capture: lane ", i);
  return std::make_shared<CaptureLane>(shared_from_this(), i);
}

void CaptureState::check_thread(std::string_view what) const {
  if (ended_) throw UserError(cat(what, ": the graph capture this stream belongs to has ended (a capturing stream works only "
                                        "inside its capture function)"));
  if (std::this_thread::get_id() != thread_)
    throw UserError(cat(what, ": a graph capture is recorded by the thread that runs ctile::capture; its streams cannot be "
                              "used from another thread"));
}

void CaptureState::touch(const std::shared_ptr<Storage>& s) {
  check_thread("recording into a graph capture");
  if (s->platform->device() != device_)
    throw UserError(cat("a graph capture on ", device_.str(), " cannot use a tensor on ", s->device.str()));
  auto [it, fresh] = saved_.try_emplace(s.get());
  if (fresh) it->second = {s, s->save_state()};
}

bool CaptureState::owns(const Event& e) const { return node_of_.count(e.id()) != 0 || joins_.count(e.id()) != 0; }

bool CaptureState::nodes_of(const Event& e, std::vector<std::size_t>& out) const {
  if (auto it = node_of_.find(e.id()); it != node_of_.end()) {
    out.push_back(it->second);
    return true;
  }
  auto j = joins_.find(e.id());
  if (j == joins_.end() || j->second.foreign) return false;
  out.insert(out.end(), j->second.nodes.begin(), j->second.nodes.end());
  return true;
}

void CaptureState::note_join(const Event& join, const Event* inputs, std::size_t n) {
  Join j{join, {}, false};
  for (std::size_t i = 0; i < n; ++i)
    if (inputs[i].captured() && !nodes_of(inputs[i], j.nodes)) j.foreign = true;
  joins_.insert_or_assign(join.id(), std::move(j));
}

void note_captured_join(const Event& join, const Event* inputs, std::size_t n) {
  if (CaptureState* c = t_capture; c && !c->ended_) c->note_join(join, inputs, n);
}

Event CaptureState::add(CapturedNode node, StreamImpl& lane, std::span<const Event> deps) {
  auto* l = dynamic_cast<CaptureLane*>(&lane);
  CTILE_CHECK(l != nullptr && l->capture() == this, "capture: a node submitted through a stream of another capture");
  return add(std::move(node), l->lane(), deps);
}

Event CaptureState::add(CapturedNode node, std::size_t lane, std::span<const Event> deps) {
  check_thread("recording into a graph capture");
  CTILE_CHECK(lane < lanes_.size(), "capture: lane ", lane);
  Lane& l = lanes_[lane];
  std::vector<std::size_t> d;
  if (l.has_last) d.push_back(l.last);
  for (std::size_t p : l.pending) d.push_back(p);
  l.pending.clear();
  for (const Event& e : deps) {
    if (!e.captured()) continue;  // work before the capture: each replay orders itself after it
    if (!nodes_of(e, d))
      throw UserError("a graph capture uses a tensor that another graph capture is recording (one capture at a time per "
                      "tensor)");
  }
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  node.deps = std::move(d);
  const std::size_t id = nodes_.size();
  nodes_.push_back(std::move(node));
  Event ev = Event::create_captured();
  events_.push_back(ev);
  node_of_.emplace(ev.id(), id);
  l.has_last = true;
  l.last = id;
  return ev;
}

Event CaptureState::last_of(std::size_t lane) const {
  const Lane& l = lanes_.at(lane);
  return l.has_last ? events_[l.last] : Event::ready();
}

void CaptureState::wait_on(std::size_t lane, std::span<Event> events) {
  Lane& l = lanes_.at(lane);
  for (const Event& e : events) {
    if (!e.captured()) continue;
    if (!nodes_of(e, l.pending)) throw UserError("Stream::record on a capturing stream waits for work of another graph capture");
  }
}

std::shared_ptr<GraphState> CaptureState::finish(const Event& result) {
  check_thread("ctile::capture");
  if (nodes_.empty())
    throw UserError(cat("ctile::capture on ", device_.str(),
                        ": the capture function recorded nothing (submit its operations to cap.stream())"));
  if (!result.captured())
    throw UserError("ctile::capture: the capture function returned the future of work that was not captured (submit its "
                    "operations to cap.stream() or a stream from cap.fork())");
  auto g = std::make_shared<GraphState>();
  g->device = device_;
  build_graph(*g, std::move(nodes_));
  nodes_.clear();
  return g;
}

void CaptureState::end() noexcept {
  if (ended_) return;
  ended_ = true;
  // Storages back as they were: nothing ran.
  for (auto& [raw, saved] : saved_) saved.first->restore_state(std::move(saved.second));
  saved_.clear();
  // Whatever still waits for a node (a join of captured futures) completes, with an error saying why.
  std::exception_ptr err;
  try {
    throw UserError("this work was recorded into a graph by ctile::capture and never runs by itself (replay the graph)");
  } catch (...) {
    err = std::current_exception();
  }
  for (Event& e : events_) {
    try {
      e.complete(err);
    } catch (...) {
    }
  }
  events_.clear();
  node_of_.clear();
  joins_.clear();
}

CaptureScope::CaptureScope(Device d) {
  if (t_capture)
    throw UserError(cat("ctile::capture inside another capture on this thread (", t_capture->describe(),
                        "): captures do not nest"));
  state_ = std::make_shared<CaptureState>(d);
  state_->lanes_.emplace_back();  // lane 0: Capture::stream()
  state_->prev_on_thread_ = t_capture;
  t_capture = state_.get();
}

CaptureScope::~CaptureScope() {
  t_capture = state_->prev_on_thread_;
  state_->end();
}

}  // namespace ctile::detail
