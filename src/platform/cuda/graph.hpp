// CUDA graphs built from typed commands (src/platform/graph.hpp): kernel nodes, device-to-device
// memcpy nodes, host nodes; instantiated once, launched with cuGraphLaunch, kernel parameters
// updated with cuGraphExecKernelNodeSetParams. Private to the library.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "../graph.hpp"
#include "driver.hpp"
#include "stream.hpp"

namespace ctile::platform::cuda {

class CudaGraphExec final : public GraphExec {
 public:
  struct Node {
    CUgraphNode node = nullptr;
    KernelNodeParams kernel{};  // kernel nodes: everything but kernelParams
    bool is_kernel = false;
  };
  struct HostNode {
    std::function<void()> fn;
    std::shared_ptr<HostCall> errors;
  };
  CudaGraphExec(int device, CUcontext ctx, CUgraph graph, CUgraphExec exec, std::vector<Node> nodes,
                std::vector<std::unique_ptr<HostNode>> hosts, std::shared_ptr<HostCall> errors);
  ~CudaGraphExec() override;
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;

  void set_kernel_params(NodeId node, const std::byte* params, bool pointers) override;
  void set_host(NodeId node, std::function<void()> fn) override;
  std::size_t nodes() const override { return nodes_.size(); }

  [[nodiscard]] int device_index() const { return device_; }
  // cuGraphLaunch on `s` (the caller holds the stream's lock and makes the context current).
  void launch(CUstream s);
  // Where the graph's host nodes leave their first error.
  [[nodiscard]] const std::shared_ptr<HostCall>& host_errors() const { return errors_; }

 private:
  int device_;
  CUcontext ctx_;
  CUgraph graph_;
  CUgraphExec exec_;
  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<HostNode>> hosts_;
  std::shared_ptr<HostCall> errors_;
  std::uint64_t kernel_nodes_;  // counted per launch (kernel_launches)
};

// A builder for cuda:device. Throws UserError when the driver lacks the graph entry points.
[[nodiscard]] std::unique_ptr<GraphBuilder> make_graph_builder(int device);

}  // namespace ctile::platform::cuda
