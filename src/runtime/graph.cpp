// ctile::Graph (include/ctile/runtime/graph.hpp): building the platform graph from captured nodes,
// replays, and the updates between them.
#include "ctile/runtime/graph.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "../core/dump.hpp"
#include "../platform/command.hpp"
#include "../platform/kernel.hpp"
#include "foreign_launch.hpp"
#include "graph_state.hpp"
#include "kernel_cache.hpp"

namespace ctile::detail {
namespace {

// The host function of a kernel node that does not run natively: a tile kernel on the CPU
// interpreter, or a foreign (SIMT) kernel's host run over the node's parameter block.
std::function<void()> interpreted(const CapturedNode& n) {
  if (!n.record) return [host = n.host, params = n.params] { host(params.data()); };
  return [be = n.record->backend, ck = n.record->kernel, cfg = n.cfg, args = n.args] { be->run(*ck, cfg, args); };
}

const platform::NativeKernel* native_of(const CapturedNode& n) { return n.record ? n.record->native : n.native; }

void claim(const std::vector<GraphState::Use>& uses, int delta) {
  for (const GraphState::Use& u : uses)
    (u.writes ? u.storage->graph_writers : u.storage->graph_readers).fetch_add(delta, std::memory_order_acq_rel);
}

const GraphState::Use* find_use(const GraphState& g, const Storage* s) {
  for (const GraphState::Use& u : *g.uses)
    if (u.storage.get() == s) return &u;
  return nullptr;
}

std::string spec_str(const TensorCore& c, const Shape* tile) {
  std::string s = cat(dtype_name(c.dtype), ", shape ", shape_str(c.shape), ", strides ", shape_str(c.strides));
  if (tile) s += ", tiles " + shape_str(*tile);
  const ir::TensorFacts f = tensor_facts(c);
  const std::string fs = ir::facts_str(f);
  s += fs.empty() ? std::string(", no facts") : ", facts " + fs;
  return s + ", on " + c.storage->device.str();
}

}  // namespace

void build_graph(GraphState& g, std::vector<CapturedNode> nodes) {
  g.platform = &platform::platform_for(g.device);
  std::unique_ptr<platform::GraphBuilder> b = g.platform->graph_builder();
  g.nodes = std::move(nodes);
  g.pid.clear();
  std::vector<GraphState::Use> uses;
  // CTILE_GRAPH_JOIN_NODES=1: a graph with several first (or last) nodes gets an empty node before
  // (after) them, so that it starts and ends in one node. The same order as without; an experiment
  // for tools that follow a graph's branches (docs/cuda_runtime.md, "Graphs and compute-sanitizer").
  static const bool join_nodes = env_flag("CTILE_GRAPH_JOIN_NODES");
  std::size_t roots = 0;
  std::vector<bool> has_successor(g.nodes.size(), false);
  for (const CapturedNode& n : g.nodes) {
    roots += n.deps.empty() ? 1 : 0;
    for (std::size_t d : n.deps) has_successor[d] = true;
  }
  std::optional<platform::NodeId> entry;
  if (join_nodes && roots > 1) entry = b->add_empty({});
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const CapturedNode& n = g.nodes[i];
    std::vector<platform::NodeId> deps;
    for (std::size_t d : n.deps) deps.push_back(g.pid[d]);
    if (entry && deps.empty()) deps.push_back(*entry);
    platform::NodeId id = 0;
    switch (n.kind) {
      case CapturedNode::Kind::Kernel:
        g.kernels.push_back(i);
        if (const platform::NativeKernel* nk = native_of(n)) id = b->add_kernel(*nk, n.tile_blocks, n.shape, n.params.data(), deps);
        else id = b->add_host(interpreted(n), deps);
        break;
      case CapturedNode::Kind::Copy:
        id = b->add_copy(n.dst, n.src, n.bytes, deps);
        break;
      case CapturedNode::Kind::Host:
        id = b->add_host([fn = n.fn] { (*fn)(); }, deps);
        break;
    }
    g.pid.push_back(id);
    for (const NodeTensor& t : n.tensors) {
      auto it = std::find_if(uses.begin(), uses.end(), [&](const GraphState::Use& u) { return u.storage == t.core->storage; });
      if (it == uses.end()) uses.push_back({t.core->storage, t.writes});
      else it->writes |= t.writes;
    }
  }
  if (join_nodes && std::count(has_successor.begin(), has_successor.end(), false) > 1) {
    std::vector<platform::NodeId> sinks;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      if (!has_successor[i]) sinks.push_back(g.pid[i]);
    (void)b->add_empty(sinks);
  }
  g.exec = b->instantiate();
  claim(uses, +1);
  g.claimed = true;
  g.uses = std::make_shared<const std::vector<GraphState::Use>>(std::move(uses));
}

GraphOwner::~GraphOwner() {
  if (state && state->claimed) {
    claim(*state->uses, -1);
    state->claimed = false;
  }
}

void graph_moved_from() {
  throw UserError("use of a moved-from Graph (replay(), unwrap() or a move took it; a replay's future gives it back)");
}

Event graph_replay(const std::shared_ptr<GraphState>& gp, const Stream& s) {
  GraphState& g = *gp;
  StreamImpl& impl = *s.impl();
  if (impl.capture())
    throw UserError("replay of a graph on a capturing stream: graphs are not captured into other graphs (replay it "
                    "outside the capture)");
  const Device sd = impl.device();
  if (!(sd == g.device))
    throw UserError(cat("replay of a graph captured on ", g.device.str(), " on a stream of ", sd.str(),
                        ": a graph runs on the device it was captured on"));
  std::shared_ptr<const std::vector<GraphState::Use>> uses = g.uses;
  const std::uint64_t order = impl.order();
  Storage::Deps deps;
  for (const GraphState::Use& u : *uses) {
    if (u.writes) u.storage->deps_for_write(deps, order);
    else u.storage->deps_for_read(deps, order);
  }
  for (const Event& e : deps)
    if (e.captured()) throw_captured_use("replay of a graph");
  Command cmd;
  cmd.kind = Command::Kind::Graph;
  cmd.graph = g.exec.get();
  cmd.name = "graph";
  cmd.keep.push_back(gp);    // the executable graph and its nodes, until the run has finished
  cmd.keep.push_back(uses);  // and every storage it touches
  Event done = impl.submit(std::move(cmd), std::span<Event>(deps.data(), deps.size()));
  for (const GraphState::Use& u : *uses) {
    if (u.writes) u.storage->record_write(done);
    else u.storage->record_read(done);
  }
  return done;
}

namespace {

// Graph::set_scalar of a foreign (SIMT) kernel node: a Scalar slot of the kernel's arguments.
void foreign_set_scalar(GraphState& g, std::size_t idx, const std::string& head, int arg, ir::Scalar v,
                        bool value_is_float) {
  CapturedNode& n = g.nodes[idx];
  const ForeignKernel& k = *n.foreign;
  if (arg < 0 || static_cast<std::size_t>(arg) >= k.slots.size())
    throw UserError(cat(head, ": argument ", arg, " does not exist; ", k.describe, " takes ", k.slots.size()));
  const platform::ParamSlot& slot = k.slots[static_cast<std::size_t>(arg)];
  if (slot.kind != platform::ParamSlot::Kind::Scalar)
    throw UserError(cat(head, ", argument ", arg, ": not a Uniform; change a tensor with Graph::swap or Graph::copy_in"));
  const DType t = slot.dtype;
  if (value_is_float != is_float(t) && !is_bool(t))
    throw UserError(cat(head, ", argument ", arg, " (Uniform<", dtype_name(t), ">): ", value_is_float ? "a floating-point" : "an integer",
                        " value for a parameter of the other kind; convert it explicitly"));
  const ir::Scalar cast = ir::scalar_cast(v, t);
  if (!value_is_float && is_integer(t) && cast.i != v.i)
    throw UserError(cat(head, ", argument ", arg, " (Uniform<", dtype_name(t), ">): the value ", v.i, " does not fit in ",
                        dtype_name(t)));
  const std::uint64_t bits = platform::scalar_bits(cast, t);
  std::memcpy(n.params.data() + slot.offset, &bits, static_cast<std::size_t>(dtype_size(t)));  // little-endian: the low bytes
  if (n.native) g.exec->set_kernel_params(g.pid[idx], n.params.data(), /*pointers=*/false);
  else g.exec->set_host(g.pid[idx], interpreted(n));
}

}  // namespace

void graph_set_scalar(GraphState& g, std::size_t kernel_node, int arg, ir::Scalar v, bool value_is_float) {
  if (kernel_node >= g.kernels.size())
    throw UserError(cat("Graph::set_scalar: kernel node ", kernel_node, " does not exist; the graph has ", g.kernels.size(),
                        " kernel node", g.kernels.size() == 1 ? "" : "s", " (0-based, in capture order)"));
  const std::size_t idx = g.kernels[kernel_node];
  CapturedNode& n = g.nodes[idx];
  const std::string head = cat("Graph::set_scalar of kernel node ", kernel_node, " ('", n.name, "')");
  if (!n.record) {
    foreign_set_scalar(g, idx, head, arg, v, value_is_float);
    return;
  }
  const LaunchRecord& r = *n.record;
  if (arg < 0 || static_cast<std::size_t>(arg) >= r.specs.size())
    throw UserError(cat(head, ": argument ", arg, " does not exist; the kernel takes ", r.specs.size()));
  const ParamSpec& spec = r.specs[static_cast<std::size_t>(arg)];
  if (spec.kind == ParamSpec::Kind::Const)
    throw UserError(cat(head, ", argument ", arg, " (", param_desc(spec, spec.rank),
                        "): a Const value is part of the kernel's specialisation; capture another graph for another value"));
  if (spec.kind != ParamSpec::Kind::Scalar)
    throw UserError(cat(head, ", argument ", arg, " (", param_desc(spec, spec.rank),
                        "): not a scalar; change a tensor with Graph::swap or Graph::copy_in"));
  if (value_is_float != is_float(spec.dtype) && !is_bool(spec.dtype))
    throw UserError(cat(head, ", argument ", arg, " (", param_desc(spec, spec.rank), "): ", value_is_float ? "a floating-point" : "an integer",
                        " value for a parameter of the other kind; convert it explicitly"));
  const ir::Scalar cast = scalar_argument(std::string(n.name), arg, spec, v, value_is_float, "Graph::set_scalar");
  n.scalars[static_cast<std::size_t>(arg)] = cast;
  const int slot = r.arg_slot[static_cast<std::size_t>(arg)];
  if (r.native) {
    platform::write_scalar(n.params.data(), r.native->layout().slots[static_cast<std::size_t>(slot)], cast);
    g.exec->set_kernel_params(g.pid[idx], n.params.data(), /*pointers=*/false);
  } else {
    n.args[static_cast<std::size_t>(slot)].scalar = cast;
    g.exec->set_host(g.pid[idx], interpreted(n));
  }
}

void graph_copy_in(GraphState& g, const TensorCore& c, long shared_holders, const void* src, std::int64_t elements,
                   DType dtype) {
  const std::string what = cat("Graph::copy_in into a tensor of shape ", shape_str(c.shape));
  if (!find_use(g, c.storage.get())) throw UserError(cat(what, ": no node of the graph uses it"));
  if (shared_holders > 0)
    throw UserError(cat(what, ": the Shared tensor has ", shared_holders, " holder", shared_holders == 1 ? "" : "s",
                        " outside the graph, which may read it meanwhile; drop them first"));
  if (dtype != c.dtype)
    throw UserError(cat(what, ": the data is ", dtype_name(dtype), ", the tensor ", dtype_name(c.dtype)));
  if (elements != c.numel())
    throw UserError(cat(what, ": ", elements, " elements given for a tensor of ", c.numel()));
  copy_from_host_into(c, static_cast<const std::byte*>(src), what);
}

std::vector<std::byte> graph_read(const GraphState& g, const TensorCore& c) {
  (void)g;
  c.storage->wait_writes();
  std::vector<std::byte> out(static_cast<std::size_t>(c.numel() * dtype_size(c.dtype)));
  gather(c, out.data());
  return out;
}

void graph_swap(GraphState& g, const std::shared_ptr<const TensorCore>& old_core, const std::shared_ptr<const TensorCore>& new_core,
                const Shape* old_tile, const Shape* new_tile, const char* handle) {
  const std::string head = cat("Graph::swap of a ", handle, "<", dtype_name(old_core->dtype), ">");
  const bool same = old_core->shape == new_core->shape && old_core->strides == new_core->strides &&
                    (!old_tile || *old_tile == *new_tile) && tensor_facts(*old_core) == tensor_facts(*new_core) &&
                    old_core->storage->device == new_core->storage->device;
  if (!same)
    throw UserError(cat(head, ": the replacement (", spec_str(*new_core, new_tile), ") differs from the captured tensor (",
                        spec_str(*old_core, old_tile), "); a graph is replayed with tensors of the spec it was captured with"));
  if (new_core->storage == old_core->storage) return;  // the same memory: nothing changes
  check_free_for(*new_core->storage, true, head + ": the replacement");
  const Storage* old_s = old_core->storage.get();
  for (const CapturedNode& n : g.nodes) {
    for (const NodeTensor& t : n.tensors)
      if (t.core->storage.get() == old_s && t.core != old_core)
        throw UserError(cat(head, ": kernel '", n.name, "' of the graph uses the same memory through another view (a slice or "
                              "reshape); only a tensor used through one view can be swapped"));
    if (n.kind == CapturedNode::Kind::Copy) {
      const std::byte* lo = old_s->ptr;
      const std::byte* hi = old_s->ptr + old_s->bytes;
      if ((n.dst >= lo && n.dst < hi) || (n.src >= lo && n.src < hi))
        throw UserError(cat(head, ": a copy node of the graph uses it; only tensors of kernel nodes can be swapped"));
    }
  }
  bool writes = false;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    CapturedNode& n = g.nodes[i];
    bool changed = false;
    for (NodeTensor& t : n.tensors) {
      if (t.core != old_core) continue;
      t.core = new_core;
      writes |= t.writes;
      changed = true;
      const platform::NativeKernel* nk = native_of(n);
      if (n.foreign) {
        platform::write_data_pointer(n.params.data(), n.foreign->slots[static_cast<std::size_t>(t.slot)], new_core->data());
      } else if (nk) {
        platform::write_tensor_arg(*nk, n.params.data(), static_cast<std::size_t>(t.slot), new_core->data(),
                                   new_core->shape.data(), new_core->strides.data(), static_cast<int>(new_core->shape.size()));
      } else {
        n.args[static_cast<std::size_t>(t.slot)].tensor = new_core->arg();
      }
    }
    if (!changed) continue;
    if (native_of(n)) g.exec->set_kernel_params(g.pid[i], n.params.data(), /*pointers=*/true);
    else g.exec->set_host(g.pid[i], interpreted(n));
  }
  // The storage set, copied: replays in flight keep the one they ran with.
  std::vector<GraphState::Use> uses = *g.uses;
  bool still_used = false;
  for (const CapturedNode& n : g.nodes)
    for (const NodeTensor& t : n.tensors) still_used |= t.core->storage.get() == old_s;
  for (auto it = uses.begin(); it != uses.end(); ++it)
    if (it->storage.get() == old_s && !still_used) {
      if (g.claimed) (it->writes ? it->storage->graph_writers : it->storage->graph_readers).fetch_sub(1);
      uses.erase(it);
      break;
    }
  auto it = std::find_if(uses.begin(), uses.end(), [&](const GraphState::Use& u) { return u.storage == new_core->storage; });
  if (it == uses.end()) {
    uses.push_back({new_core->storage, writes});
    if (g.claimed) (writes ? new_core->storage->graph_writers : new_core->storage->graph_readers).fetch_add(1);
  }
  g.uses = std::make_shared<const std::vector<GraphState::Use>>(std::move(uses));
}

std::size_t graph_nodes(const GraphState& g) { return g.nodes.size(); }
std::size_t graph_kernel_nodes(const GraphState& g) { return g.kernels.size(); }
std::string graph_kernel_name(const GraphState& g, std::size_t kernel_node) {
  if (kernel_node >= g.kernels.size())
    throw UserError(cat("Graph::kernel_name: kernel node ", kernel_node, " does not exist; the graph has ", g.kernels.size()));
  return std::string(g.nodes[g.kernels[kernel_node]].name);
}
Device graph_device(const GraphState& g) { return g.device; }

CaptureScope* begin_capture(Device d) { return new CaptureScope(d); }
void end_capture(CaptureScope* scope) noexcept { delete scope; }
CaptureState& capture_state(CaptureScope& scope) { return scope.state(); }
std::shared_ptr<GraphOwner> finish_capture(CaptureScope& scope, const Event& result) {
  return std::make_shared<GraphOwner>(scope.finish(result));
}

}  // namespace ctile::detail

namespace ctile {

Stream Capture::stream() const {
  if (!main_.valid()) main_ = Stream(s_->lane_stream(0));
  return main_;
}

Stream Capture::fork() { return Stream(s_->new_lane()); }

}  // namespace ctile
