// The state behind a ctile::Graph (private to the library): the captured nodes, the platform's
// executable graph built from them, and the storages they use. Kept alive by the Graph's owner
// token and by every replay in flight.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "../platform/graph.hpp"
#include "../platform/platform.hpp"
#include "capture.hpp"

namespace ctile::detail {

struct GraphState {
  Device device;
  platform::DevicePlatform* platform = nullptr;
  std::vector<CapturedNode> nodes;
  std::vector<platform::NodeId> pid;  // per node: its id in the platform graph
  std::vector<std::size_t> kernels;   // the kernel nodes, in capture order
  // The storages the nodes use, and whether any node writes each. Copied on write (swap), so a
  // replay keeps the set it ran with.
  struct Use {
    std::shared_ptr<Storage> storage;
    bool writes = false;
  };
  std::shared_ptr<const std::vector<Use>> uses;
  bool claimed = false;  // counted in the storages' graph_writers / graph_readers
  // The platform's executable graph. Declared last, so it is destroyed first: no graph that points
  // at the storages outlives them (compute-sanitizer reports a free of memory that a live graph's
  // node uses as a use after free).
  std::unique_ptr<platform::GraphExec> exec;
};

// Makes the platform graph of `nodes` (their ids, edges and parameters as captured) into `g`, and
// claims the storages for the graph.
void build_graph(GraphState& g, std::vector<CapturedNode> nodes);

}  // namespace ctile::detail
