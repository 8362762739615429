#include "graph.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "device.hpp"
#include "kernel.hpp"

namespace ctile::platform::cuda {
namespace {

CUdeviceptr dptr(const std::byte* p) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p)); }

// Programmatic edges into kernel nodes of programmatic kernels (CTILE_PDL, read once: on unless "0").
bool programmatic_edges() {
  static const bool on = [] {
    const char* v = std::getenv("CTILE_PDL");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

void host_node_trampoline(void* p) {
  auto* h = static_cast<CudaGraphExec::HostNode*>(p);
  try {
    h->fn();
  } catch (...) {
    h->errors->fail(std::current_exception());
  }
}

class CudaGraphBuilder final : public GraphBuilder {
 public:
  explicit CudaGraphBuilder(int device) : dc_(DeviceContext::get(device)), errors_(std::make_shared<HostCall>()) {
    const Driver& d = drv();
    if (!d.cuGraphCreate || !d.cuGraphDestroy || !d.cuGraphAddKernelNode_v2 || !d.cuGraphAddMemcpyNode ||
        !d.cuGraphAddHostNode || !d.cuGraphInstantiateWithFlags || !d.cuGraphLaunch || !d.cuGraphExecDestroy ||
        !d.cuGraphExecKernelNodeSetParams_v2 || !d.cuGraphKernelNodeSetParams_v2)
      throw UserError(detail::cat("graphs on cuda:", device, " need the CUDA 12 graph entry points, which this CUDA driver (",
                                  d.version / 1000, ".", d.version % 1000 / 10, ") lacks"));
    ScopedContext scope(dc_.ctx());
    CTILE_CU(cuGraphCreate, (&graph_, 0u), "creating a CUDA graph on cuda:", device);
  }
  ~CudaGraphBuilder() override {
    if (!graph_) return;
    try {
      ScopedContext scope(dc_.ctx());
      (void)CTILE_CU_REPORT(cuGraphDestroy, (graph_), "destroying an unused CUDA graph on cuda:", dc_.index());
    } catch (...) {
    }
  }
  CudaGraphBuilder(const CudaGraphBuilder&) = delete;
  CudaGraphBuilder& operator=(const CudaGraphBuilder&) = delete;

  NodeId add_kernel(const NativeKernel& nk, std::int64_t tile_blocks, const LaunchShape& shape, const std::byte* params,
                    std::span<const NodeId> deps) override {
    const auto& k = static_cast<const CudaKernel&>(nk);
    CTILE_CHECK(k.device_index() == dc_.index(), "cuda graph: a kernel of cuda:", k.device_index());
    CudaGraphExec::Node n;
    n.is_kernel = true;
    n.kernel.func = k.fn();
    if (shape.given()) {
      n.kernel.gridDimX = shape.grid[0];
      n.kernel.gridDimY = shape.grid[1];
      n.kernel.gridDimZ = shape.grid[2];
      n.kernel.blockDimX = shape.block[0];
      n.kernel.blockDimY = shape.block[1];
      n.kernel.blockDimZ = shape.block[2];
      n.kernel.sharedMemBytes = shape.smem;
    } else {
      n.kernel.gridDimX = static_cast<unsigned>(k.blocks_for(tile_blocks));
      n.kernel.gridDimY = n.kernel.gridDimZ = 1;
      n.kernel.blockDimX = k.threads();
      n.kernel.blockDimY = n.kernel.blockDimZ = 1;
      n.kernel.sharedMemBytes = k.smem();
    }
    KernelNodeParams p = n.kernel;
    void* kp[] = {const_cast<std::byte*>(params)};
    p.kernelParams = kp;  // copied into the node by the driver
    ScopedContext scope(dc_.ctx());
    const auto d = node_deps(deps);
    // A kernel that waits for the grids it depends on itself (CudaKernel::programmatic) takes its
    // dependencies on kernel nodes as programmatic edges: the driver may launch it as soon as those
    // grids have all started (their CTAs trigger at entry), and its CTAs wait in
    // griddepcontrol.wait until the grids have finished and their writes are visible. The launch
    // latency between dependent kernels overlaps the upstream kernel. Other dependencies (copies,
    // host and empty nodes) stay full edges.
    const bool kernel_dep = std::any_of(deps.begin(), deps.end(), [&](NodeId id) { return nodes_[id].is_kernel; });
    if (!k.programmatic() || !kernel_dep || !programmatic_edges() || !drv().cuGraphAddDependencies_v2) {
      CTILE_CU(cuGraphAddKernelNode_v2, (&n.node, graph_, d.data(), d.size(), &p),
               "adding a kernel node to a CUDA graph on cuda:", dc_.index());
    } else {
      CTILE_CU(cuGraphAddKernelNode_v2, (&n.node, graph_, nullptr, 0, &p), "adding a kernel node to a CUDA graph on cuda:",
               dc_.index());
      std::vector<GraphEdgeData> edges(d.size(), GraphEdgeData{});
      for (std::size_t i = 0; i < d.size(); ++i)
        if (nodes_[deps[i]].is_kernel) {
          edges[i].from_port = static_cast<unsigned char>(abi::kGraphKernelNodePortProgrammatic);
          edges[i].type = static_cast<unsigned char>(abi::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
        }
      const std::vector<CUgraphNode> to(d.size(), n.node);
      CTILE_CU(cuGraphAddDependencies_v2, (graph_, d.data(), to.data(), edges.data(), d.size()),
               "adding the dependencies of a kernel node (programmatic edges from kernel nodes) to a CUDA graph on cuda:",
               dc_.index());
    }
    nodes_.push_back(n);
    return nodes_.size() - 1;
  }

  NodeId add_copy(std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<const NodeId> deps) override {
    Memcpy3D c{};
    c.srcMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    c.srcDevice = dptr(src);
    c.srcPitch = static_cast<std::size_t>(bytes);
    c.srcHeight = 1;
    c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dptr(dst);
    c.dstPitch = static_cast<std::size_t>(bytes);
    c.dstHeight = 1;
    c.WidthInBytes = static_cast<std::size_t>(bytes);
    c.Height = 1;
    c.Depth = 1;
    CudaGraphExec::Node n;
    ScopedContext scope(dc_.ctx());
    const auto d = node_deps(deps);
    CTILE_CU(cuGraphAddMemcpyNode, (&n.node, graph_, d.data(), d.size(), &c, dc_.ctx()),
             "adding a copy of ", bytes, " bytes to a CUDA graph on cuda:", dc_.index());
    nodes_.push_back(n);
    return nodes_.size() - 1;
  }

  NodeId add_host(std::function<void()> fn, std::span<const NodeId> deps) override {
    auto h = std::make_unique<CudaGraphExec::HostNode>();
    h->fn = std::move(fn);
    h->errors = errors_;
    HostNodeParams p{&host_node_trampoline, h.get()};
    CudaGraphExec::Node n;
    ScopedContext scope(dc_.ctx());
    const auto d = node_deps(deps);
    CTILE_CU(cuGraphAddHostNode, (&n.node, graph_, d.data(), d.size(), &p), "adding a host node to a CUDA graph on cuda:",
             dc_.index());
    hosts_.push_back(std::move(h));
    nodes_.push_back(n);
    return nodes_.size() - 1;
  }

  NodeId add_empty(std::span<const NodeId> deps) override {
    if (!drv().cuGraphAddEmptyNode)
      throw UserError(detail::cat("graphs on cuda:", dc_.index(), " need cuGraphAddEmptyNode, which this CUDA driver lacks"));
    CudaGraphExec::Node n;
    ScopedContext scope(dc_.ctx());
    const auto d = node_deps(deps);
    CTILE_CU(cuGraphAddEmptyNode, (&n.node, graph_, d.data(), d.size()), "adding an empty node to a CUDA graph on cuda:",
             dc_.index());
    nodes_.push_back(n);
    return nodes_.size() - 1;
  }

  std::unique_ptr<GraphExec> instantiate() override {
    ScopedContext scope(dc_.ctx());
    CUgraphExec exec = nullptr;
    CTILE_CU(cuGraphInstantiateWithFlags, (&exec, graph_, 0ull), "instantiating a CUDA graph of ", nodes_.size(),
             " nodes on cuda:", dc_.index());
    CUgraph g = std::exchange(graph_, nullptr);
    return std::make_unique<CudaGraphExec>(dc_.index(), dc_.ctx(), g, exec, std::move(nodes_), std::move(hosts_), errors_);
  }

 private:
  std::vector<CUgraphNode> node_deps(std::span<const NodeId> deps) const {
    std::vector<CUgraphNode> d;
    d.reserve(deps.size());
    for (NodeId id : deps) {
      CTILE_CHECK(id < nodes_.size(), "cuda graph: dependency on node ", id, " of ", nodes_.size());
      d.push_back(nodes_[id].node);
    }
    return d;
  }

  DeviceContext& dc_;
  CUgraph graph_ = nullptr;
  std::vector<CudaGraphExec::Node> nodes_;
  std::vector<std::unique_ptr<CudaGraphExec::HostNode>> hosts_;
  std::shared_ptr<HostCall> errors_;
};

}  // namespace

CudaGraphExec::CudaGraphExec(int device, CUcontext ctx, CUgraph graph, CUgraphExec exec, std::vector<Node> nodes,
                             std::vector<std::unique_ptr<HostNode>> hosts, std::shared_ptr<HostCall> errors)
    : device_(device), ctx_(ctx), graph_(graph), exec_(exec), nodes_(std::move(nodes)), hosts_(std::move(hosts)),
      errors_(std::move(errors)),
      kernel_nodes_(static_cast<std::uint64_t>(
          std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.is_kernel; }))) {}

CudaGraphExec::~CudaGraphExec() {
  try {
    ScopedContext scope(ctx_);
    (void)CTILE_CU_REPORT(cuGraphExecDestroy, (exec_), "destroying an executable CUDA graph on cuda:", device_);
    (void)CTILE_CU_REPORT(cuGraphDestroy, (graph_), "destroying a CUDA graph on cuda:", device_);
  } catch (...) {
  }
}

void CudaGraphExec::set_kernel_params(NodeId node, const std::byte* params, bool pointers) {
  CTILE_CHECK(node < nodes_.size() && nodes_[node].is_kernel, "cuda graph: node ", node, " is not a kernel node");
  KernelNodeParams p = nodes_[node].kernel;
  void* kp[] = {const_cast<std::byte*>(params)};
  p.kernelParams = kp;
  ScopedContext scope(ctx_);
  CTILE_CU(cuGraphExecKernelNodeSetParams_v2, (exec_, nodes_[node].node, &p),
           "updating the parameters of kernel node ", node, " of a CUDA graph on cuda:", device_);
  // The graph the executable graph was made from keeps the node's parameters too.
  if (pointers)
    CTILE_CU(cuGraphKernelNodeSetParams_v2, (nodes_[node].node, &p), "updating the parameters of kernel node ", node,
             " of a CUDA graph's template on cuda:", device_);
}

void CudaGraphExec::set_host(NodeId, std::function<void()>) {
  throw InternalError("cuda graph: host nodes are not updated (CUDA kernels are kernel nodes)");
}

void CudaGraphExec::launch(CUstream s) {
  CTILE_CU(cuGraphLaunch, (exec_, s), "launching a CUDA graph of ", nodes_.size(), " nodes on cuda:", device_);
  count_kernel_launches(device_, kernel_nodes_);
}

std::unique_ptr<GraphBuilder> make_graph_builder(int device) { return std::make_unique<CudaGraphBuilder>(device); }

}  // namespace ctile::platform::cuda
