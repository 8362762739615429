// The CUDA platform of one GPU (src/platform/platform.hpp) over devices, streams, memory and graphs
// of this folder.
#include "cuda_platform.hpp"

#include <array>
#include <atomic>
#include <mutex>

#include "device.hpp"
#include "graph.hpp"
#include "memory.hpp"
#include "stream.hpp"

namespace ctile::platform::cuda {
namespace {

class CudaPlatform final : public DevicePlatform {
 public:
  explicit CudaPlatform(int index) : index_(index), dc_(DeviceContext::get(index)) {}

  Device device() const override { return Device{DeviceKind::Cuda, index_}; }
  std::string describe() const override {
    const DeviceInfo& info = dc_.info();
    const int ver = driver_status().api->version;
    return detail::cat(device().str(), " (", info.name, ", sm_", info.sm(), ", ", info.sm_count, " SMs, ",
                       (info.total_mem + (std::size_t{1} << 29)) >> 30, " GiB, driver ", ver / 1000, ".", ver % 1000 / 10, ")");
  }
  bool host_accessible() const override { return false; }
  int sm() const override { return dc_.info().sm(); }
  std::int64_t max_smem_per_block() const override { return dc_.info().smem_per_block_optin; }

  Allocation allocate(std::int64_t bytes, bool zeroed) override { return cuda::allocate(index_, bytes, zeroed); }
  void release(const Allocation& a, std::int64_t, std::span<const Event> uses) noexcept override {
    cuda::release(index_, a, uses);
  }
  void copy_to_host(std::byte* dst, const std::byte* src, std::int64_t bytes) override {
    cuda::copy_to_host(index_, dst, src, bytes);
  }
  Event copy_from_host(std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<Event> deps) override {
    return cuda::copy_from_host(index_, dst, src, bytes, deps);
  }
  Event copy_from_device(std::byte* dst, DevicePlatform& from, const std::byte* src, std::int64_t bytes,
                         std::span<Event> deps, detail::KeepAlive keep) override {
    const Device f = from.device();
    CTILE_CHECK(f.kind == DeviceKind::Cuda, "cuda platform: a device copy from ", f.str());
    return copy_device(index_, dst, f.index, src, bytes, deps, std::move(keep));
  }
  std::uint64_t copy_order() const override { return dc_.copy_stream_id(); }

  std::shared_ptr<StreamImpl> create_stream() override { return make_stream(index_); }
  std::shared_ptr<StreamImpl> wrap_stream(void* native, std::shared_ptr<const void> keep_alive) override {
    return make_foreign_stream(index_, static_cast<CUstream>(native), std::move(keep_alive));
  }
  std::unique_ptr<GraphBuilder> graph_builder() override { return make_graph_builder(index_); }

 private:
  int index_;
  DeviceContext& dc_;
};

}  // namespace

DevicePlatform& platform(int index) {
  constexpr int kMaxDevices = 64;
  static std::mutex mu;
  static std::array<std::atomic<CudaPlatform*>, kMaxDevices> platforms{};  // never destroyed (see device.hpp)
  (void)DeviceContext::get(index);                                          // validates the index (UserError)
  auto& slot = platforms[static_cast<std::size_t>(index)];
  if (CudaPlatform* p = slot.load(std::memory_order_acquire)) return *p;
  std::lock_guard lk(mu);
  if (!slot.load(std::memory_order_relaxed)) slot.store(new CudaPlatform(index), std::memory_order_release);
  return *slot.load(std::memory_order_relaxed);
}

}  // namespace ctile::platform::cuda
