#include "ctile/runtime/stream.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "../platform/command.hpp"
#include "../platform/platform.hpp"
#include "ctile/core/error.hpp"

namespace ctile {
namespace {

void check_handle(const std::shared_ptr<StreamImpl>& impl) {
  if (!impl) throw UserError("use of an empty Stream handle (default-constructed or moved-from)");
}

Event submit(StreamImpl& impl, detail::Command&& cmd, std::vector<Event>& wait_for) {
  return impl.submit(std::move(cmd), std::span<Event>(wait_for.data(), wait_for.size()));
}

}  // namespace

Stream Stream::create(Device d) { return Stream(platform::platform_for(d).create_stream()); }

Stream Stream::wrap_cuda(unchecked_t, int device, void* cu_stream, std::shared_ptr<const void> keep_alive) {
  return Stream(platform::platform_for(Device{DeviceKind::Cuda, device}).wrap_stream(cu_stream, std::move(keep_alive)));
}

Device Stream::device() const {
  check_handle(impl_);
  return impl_->device();
}

Event Stream::host(StreamTask fn, std::vector<Event> wait_for) {
  check_handle(impl_);
  if (!fn) throw UserError("Stream::host of an empty task");
  detail::Command cmd;
  cmd.kind = detail::Command::Kind::Host;
  cmd.fn = std::move(fn);
  return submit(*impl_, std::move(cmd), wait_for);
}

Event Stream::record(std::vector<Event> wait_for) {
  check_handle(impl_);
  detail::Command cmd;
  cmd.kind = detail::Command::Kind::Marker;
  return submit(*impl_, std::move(cmd), wait_for);
}

Event Stream::enqueue(StreamTask task, std::vector<Event> wait_for) {
  check_handle(impl_);
  if (!task) throw UserError("Stream::enqueue of an empty task");
  detail::Command cmd;
  cmd.kind = detail::Command::Kind::Inline;
  cmd.fn = std::move(task);
  return submit(*impl_, std::move(cmd), wait_for);
}

void Stream::synchronize() {
  check_handle(impl_);
  impl_->synchronize();
}

bool Stream::capturing() const {
  check_handle(impl_);
  return impl_->capture() != nullptr;
}

const std::shared_ptr<StreamImpl>& Stream::impl() const {
  check_handle(impl_);
  return impl_;
}

Stream default_stream(Device d) {
  // The streams live in `streams` (drained by its destructor at exit); `fast` finds the common ones
  // without the lock (launches without a stream ask on every call).
  constexpr int kFast = 64;
  static std::atomic<const Stream*> fast[2][kFast] = {};
  const int kind = static_cast<int>(d.kind);
  const bool cached = kind >= 0 && kind < 2 && d.index >= 0 && d.index < kFast;
  if (cached)
    if (const Stream* s = fast[kind][d.index].load(std::memory_order_acquire)) return *s;
  static std::mutex mu;
  static std::map<std::pair<int, int>, Stream> streams;
  std::lock_guard lk(mu);
  auto key = std::make_pair(kind, d.index);
  auto it = streams.find(key);
  if (it == streams.end()) it = streams.emplace(key, Stream::create(d)).first;
  if (cached) fast[kind][d.index].store(&it->second, std::memory_order_release);
  return it->second;
}

}  // namespace ctile
