// Foreign launches (foreign_launch.hpp): the same ordering and capture rules as tile launches.
#include "foreign_launch.hpp"

#include "../platform/command.hpp"
#include "capture.hpp"
#include "ctile/core/error.hpp"

namespace ctile::detail {

Event submit_foreign(const ForeignLaunch& l, const Stream& s) {
  StreamImpl& impl = *s.impl();
  const ForeignKernel& k = *l.kernel;
  const Device sdev = impl.device();
  // Messages are made only on an error (this runs for every launch).
  auto head = [&k] { return "launch of " + k.describe; };
  CTILE_CHECK(static_cast<bool>(l.native) != static_cast<bool>(l.host), "foreign launch: a kernel or a host function");
  for (const ForeignLaunch::Arg& a : l.args) {
    if (!(a.core->storage->device == sdev))
      throw UserError(cat(head(), ", argument ", a.arg, ": the tensor lives on ", a.core->storage->device.str(),
                          " but the stream runs on ", sdev.str()));
    if (graph_forbids(*a.core->storage, a.writes)) check_free_for(*a.core->storage, a.writes, cat(head(), ", argument ", a.arg));
  }
  CaptureState* cap = impl.capture();
  if (cap)
    for (const ForeignLaunch::Arg& a : l.args) cap->touch(a.core->storage);

  // Readers wait for the last writer, writers for everything before them.
  const std::uint64_t order = impl.order();
  Storage::Deps deps;
  for (const ForeignLaunch::Arg& a : l.args) {
    if (a.writes) a.core->storage->deps_for_write(deps, order);
    else a.core->storage->deps_for_read(deps, order);
  }
  reject_captured_deps(std::span<const Event>(deps.data(), deps.size()), cap != nullptr, head);

  Event done;
  if (cap) {
    CapturedNode n;
    n.kind = CapturedNode::Kind::Kernel;
    n.foreign = &k;
    n.name = k.name;
    n.native = l.native;
    n.shape = l.shape;
    n.host = l.host;
    n.params.assign(l.params.begin(), l.params.end());
    for (const ForeignLaunch::Arg& a : l.args) n.tensors.push_back(NodeTensor{a.core, a.arg, a.arg, a.writes});
    done = cap->add(std::move(n), impl, std::span<const Event>(deps.data(), deps.size()));
  } else {
    Command cmd;
    cmd.name = k.name;
    for (const ForeignLaunch::Arg& a : l.args) cmd.keep.push_back(a.core);  // alive until it has run
    if (l.native) {
      cmd.kind = Command::Kind::Kernel;
      cmd.kernel = l.native;
      cmd.shape = l.shape;
      cmd.params = l.params.data();  // read during submit
    } else {
      cmd.kind = Command::Kind::Host;
      cmd.fn = [host = l.host, params = std::vector<std::byte>(l.params.begin(), l.params.end())] { host(params.data()); };
    }
    done = impl.submit(std::move(cmd), std::span<Event>(deps.data(), deps.size()));
  }
  for (const ForeignLaunch::Arg& a : l.args) {
    if (a.writes) a.core->storage->record_write(done);
    else a.core->storage->record_read(done);
  }
  return done;
}

}  // namespace ctile::detail
