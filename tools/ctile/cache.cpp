// ctile cache list | stats | clear: the disk cache of compiled kernels (docs/cache.md).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "../../src/backend/cache/disk_cache.hpp"
#include "tool.hpp"

namespace ctile::tool {

namespace {

// The cache the command works on: --dir, else the configured one (null when disabled).
cache::DiskCache* open(const CacheOptions& o, std::unique_ptr<cache::DiskCache>& own) {
  if (!o.dir.empty()) {
    own = std::make_unique<cache::DiskCache>(o.dir);
    return own.get();
  }
  return cache::DiskCache::global();
}

std::string when(const std::timespec& t) {
  char buf[32];
  std::tm tm{};
  const std::time_t s = t.tv_sec;
  localtime_r(&s, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) >= 0x20) o += c;
  }
  return o + "\"";
}

int disabled() {
  std::printf("the disk cache is disabled (CTILE_CACHE=0, or no usable home directory); --dir DIR names one\n");
  return 0;
}

}  // namespace

int cache_list(const CacheOptions& o) {
  std::unique_ptr<cache::DiskCache> own;
  cache::DiskCache* dc = open(o, own);
  if (!dc) return disabled();
  const auto entries = dc->list();
  if (o.json) {
    for (const auto& e : entries)
      std::printf("{\"key\": %s, \"bytes\": %llu, \"payload_bytes\": %llu, \"last_used\": %s, \"ok\": %s, \"meta\": %s}\n",
                  json_str(e.key_hex).c_str(), static_cast<unsigned long long>(e.file_bytes),
                  static_cast<unsigned long long>(e.payload_bytes), json_str(when(e.last_used)).c_str(),
                  e.header_ok ? "true" : "false", json_str(e.meta).c_str());
    return 0;
  }
  std::printf("%s: %zu entries (least recently used first)\n", dc->dir().c_str(), entries.size());
  for (const auto& e : entries)
    std::printf("  %s  %10s  %s  %s%s\n", e.key_hex.substr(0, 16).c_str(), human_bytes(e.file_bytes).c_str(),
                when(e.last_used).c_str(), e.header_ok ? "" : "[damaged] ", e.meta.c_str());
  return 0;
}

int cache_stats(const CacheOptions& o) {
  std::unique_ptr<cache::DiskCache> own;
  cache::DiskCache* dc = open(o, own);
  if (!dc) return disabled();
  const auto entries = dc->list();
  unsigned long long bytes = 0, damaged = 0;
  for (const auto& e : entries) {
    bytes += e.file_bytes;
    damaged += !e.header_ok;
  }
  if (o.json) {
    std::printf("{\"dir\": %s, \"entries\": %zu, \"bytes\": %llu, \"max_bytes\": %llu, \"damaged\": %llu}\n",
                json_str(dc->dir()).c_str(), entries.size(), bytes, static_cast<unsigned long long>(dc->max_bytes()),
                damaged);
    return 0;
  }
  std::printf("directory  %s\nentries    %zu\nbytes      %s (%llu)\ncap        %s (CTILE_CACHE_MAX_BYTES)\n",
              dc->dir().c_str(), entries.size(), human_bytes(bytes).c_str(), bytes, human_bytes(dc->max_bytes()).c_str());
  if (damaged) std::printf("damaged    %llu (replaced on their next use; `ctile cache clear` removes them)\n", damaged);
  return 0;
}

int cache_clear(const CacheOptions& o) {
  std::unique_ptr<cache::DiskCache> own;
  cache::DiskCache* dc = open(o, own);
  if (!dc) return disabled();
  const auto entries = dc->list();
  unsigned long long bytes = 0;
  for (const auto& e : entries) bytes += e.file_bytes;
  dc->clear();
  std::printf("removed %zu entries (%s) from %s\n", entries.size(), human_bytes(bytes).c_str(), dc->dir().c_str());
  return 0;
}

}  // namespace ctile::tool
