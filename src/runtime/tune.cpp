// ctile::tune's cache side (runtime/tune.hpp): the key of a launch, and the winner's record in the
// disk cache with its provenance.
#include "ctile/runtime/tune.hpp"

#include <charconv>
#include <string_view>

#include "../backend/cache/disk_cache.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/frontend/kernel.hpp"

#ifndef CTILE_VERSION_STRING
#error "CTILE_VERSION_STRING comes from the build (src/CMakeLists.txt)"
#endif

namespace ctile::detail {

namespace {

cache::CacheKey digest(const std::string& key) { return cache::KeyBuilder().add("tune", key).key(); }

// Payload: "<index> <options>\n<provenance>".
std::string payload_of(std::size_t index, const KernelOptions& best, const std::string& provenance) {
  return std::to_string(index) + " " + (best.str().empty() ? "(defaults)" : best.str()) + "\n" + provenance;
}

}  // namespace

std::string tune_key(const std::string& kernel, const LaunchArgs& args, const std::vector<KernelOptions>& candidates,
                     Device d) {
  std::string k = "kernel " + kernel + "\n";
  for (const LaunchArg& a : args) {
    k += "arg " + std::to_string(a.index) + " " + param_kind_name(a.kind) + " " + std::string(dtype_name(a.dtype));
    if (a.core) k += " shape " + shape_str(a.core->shape) + " strides " + shape_str(a.core->strides);
    if (a.tile) k += " tile " + shape_str(*a.tile);
    if (a.kind == ParamSpec::Kind::Const) k += " value " + ir::scalar_str(a.scalar, a.dtype);
    k += "\n";
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) k += "candidate " + std::to_string(i) + " {" + candidates[i].str() + "}\n";
  k += tune_provenance(d);
  return k;
}

std::string tune_provenance(Device d) { return describe(d) + ", ctile " + CTILE_VERSION_STRING; }

std::optional<std::size_t> tune_lookup(const std::string& key, std::size_t candidates, std::string* provenance) {
  cache::DiskCache* dc = cache::DiskCache::global();
  if (!dc) return std::nullopt;
  const auto got = dc->get(digest(key));
  if (!got) return std::nullopt;
  const std::string_view text(reinterpret_cast<const char*>(got->data()), got->size());
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec != std::errc{} || index >= candidates) return std::nullopt;  // not ours to trust: measure again
  if (const std::size_t nl = text.find('\n'); provenance && nl != std::string_view::npos) *provenance = std::string(text.substr(nl + 1));
  (void)end;
  return index;
}

void tune_record(const std::string& key, std::size_t index, const KernelOptions& best, const std::string& provenance) {
  cache::DiskCache* dc = cache::DiskCache::global();
  if (!dc) return;
  const std::string p = payload_of(index, best, provenance);
  const std::string first_line = key.substr(0, key.find('\n'));
  dc->put(digest(key), std::as_bytes(std::span<const char>(p.data(), p.size())), "ctile::tune " + first_line + ": " + p);
}

void tune_error(const std::string& msg, const std::source_location& loc) { throw UserError(msg, SourceLoc(loc)); }

}  // namespace ctile::detail
