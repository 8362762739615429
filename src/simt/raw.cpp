// Raw CUDA kernels (ctile/simt/raw.hpp): the non-template half.
#include "ctile/simt/raw.hpp"

#include <cctype>

#include "gpu.hpp"
#include "stream_task.hpp"

namespace ctile::simt {

RawKernel RawKernel::from_source(unchecked_t, std::string source, std::string entry, std::string name) {
  if (entry.empty()) throw UserError("RawKernel::from_source: the entry (the kernel's extern \"C\" name) is empty");
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  bool found = false;
  for (std::size_t p = source.find(entry); p != std::string::npos && !found; p = source.find(entry, p + 1))
    found = (p == 0 || !ident(source[p - 1])) && (p + entry.size() == source.size() || !ident(source[p + entry.size()]));
  if (!found)
    throw UserError("RawKernel::from_source: the source does not mention its entry '" + entry + "'");
  auto s = std::make_shared<State>();
  s->source = std::move(source);
  s->name = name.empty() ? entry : std::move(name);
  s->entry = std::move(entry);
  return RawKernel(std::move(s));
}

namespace detail {

void raw_bind_tensor(RawPrepared& p, int arg, const std::shared_ptr<const TensorCore>& core, bool valid, bool writes) {
  const std::string head = "launch_raw of raw CUDA kernel '" + p.name + "', argument " + std::to_string(arg);
  if (!valid) throw UserError(head + ": the handle was moved from (use of a moved-from value)");
  const Device d = core->storage->device;
  if (p.arg_device && !(*p.arg_device == d))
    throw UserError(head + ": the tensor lives on " + d.str() + " but earlier arguments live on " + p.arg_device->str());
  p.arg_device = d;
  (writes ? p.writes : p.reads).push_back(core);
}

void raw_finish(RawPrepared& p, const GridSpec& grid, const Dims& block, std::int64_t dynamic_shared) {
  p.device = p.arg_device ? *p.arg_device : default_device();
  const std::string head = "launch_raw of raw CUDA kernel '" + p.name + "'";
  if (p.device.kind != DeviceKind::Cuda)
    throw UserError(head + ": raw CUDA kernels run on GPUs only, and this launch is on " + p.device.str() +
                    " (write the kernel with CTILE_SIMT_KERNEL to run it on the CPU too)");
  const Contract c = Contract().block(block.x, block.y, block.z).dynamic_shared(dynamic_shared);
  p.dims = validate_launch(head, c, limits_of(p.device), grid);
}

Event raw_enqueue(const RawPrepared& p, const Stream& stream) {
  if (!stream.valid()) throw UserError("launch_raw of raw CUDA kernel '" + p.name + "': the stream is empty");
  if (!(stream.device() == p.device))
    throw UserError("launch_raw of raw CUDA kernel '" + p.name + "': its arguments live on " + p.device.str() +
                    " but the stream runs on " + stream.device().str());
  if (stream.capturing())
    throw UserError("launch_raw of raw CUDA kernel '" + p.name + "': a raw kernel cannot be captured into a graph (ctile "
                    "does not know the layout of its parameters); write it with CTILE_SIMT_KERNEL, whose launches can be");
  gpu::load_raw(p.source, p.entry, p.dims.dynamic_shared, p.device.index, p.name);  // errors come out here

  return enqueue_ordered([&p] { return "launch_raw of raw CUDA kernel '" + p.name + "'"; }, p.reads, p.writes, stream,
                         [source = p.source, entry = p.entry, name = p.name, dims = p.dims, dev = p.device.index,
                          slots = p.slots]() mutable {
                           std::vector<void*> params(slots.size());
                           for (std::size_t i = 0; i < slots.size(); ++i) params[i] = &slots[i];
                           gpu::launch_raw(source, entry, dims, params.data(), dev, name);
                         });
}

}  // namespace detail
}  // namespace ctile::simt
