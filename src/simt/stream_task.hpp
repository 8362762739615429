// A SIMT-side launch that runs as a task in stream order (a race-checked launch on a GPU, a raw
// CUDA kernel): its tensors checked against graph ownership (a tensor a graph uses is that
// graph's), ordered after the work they depend on, kept alive until it has run, and recorded on
// them. `what()` names the launch in errors (made only then). Private to src/simt.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"

namespace ctile::simt::detail {

template <class What, class F>
Event enqueue_ordered(const What& what, const std::vector<std::shared_ptr<const TensorCore>>& reads,
                      const std::vector<std::shared_ptr<const TensorCore>>& writes, const Stream& stream, F&& fn) {
  for (const auto& c : reads)
    if (graph_forbids(*c->storage, false)) check_free_for(*c->storage, false, what());
  for (const auto& c : writes)
    if (graph_forbids(*c->storage, true)) check_free_for(*c->storage, true, what());
  std::vector<Event> deps;
  for (const auto& c : reads)
    for (Event& e : c->storage->deps_for_read()) deps.push_back(std::move(e));
  for (const auto& c : writes)
    for (Event& e : c->storage->deps_for_write()) deps.push_back(std::move(e));
  // The task keeps every view alive until it has run (and drops them before its event completes).
  std::vector<std::shared_ptr<const TensorCore>> keep = reads;
  keep.insert(keep.end(), writes.begin(), writes.end());
  Stream target = stream;
  Event done = target.enqueue([fn = std::forward<F>(fn), keep = std::move(keep)]() mutable { fn(); }, std::move(deps));
  for (const auto& c : reads) c->storage->record_read(done);
  for (const auto& c : writes) c->storage->record_write(done);
  return done;
}

}  // namespace ctile::simt::detail
