// The on-disk compiled-kernel cache: content-hashed keys, one checksummed file per entry, atomic
// writes, an LRU size cap, safe across threads and processes. Private to the library (backends use
// it; a future `ctile cache` command lists and clears it). docs/cache.md describes the format.
//
// Nothing here throws on a bad entry or an unusable directory: a corrupt, truncated or foreign
// entry is counted, deleted and reported as a miss (the caller recompiles); an I/O failure is a
// miss or a dropped put, with one warning on stderr per cache instance and kind of failure.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ctile::cache {

// SHA-256 (OpenSSL EVP) of `data`. Throws std::runtime_error only if OpenSSL itself fails.
using Digest = std::array<unsigned char, 32>;
Digest sha256(std::span<const std::byte> data);
Digest sha256(std::string_view data);
std::string to_hex(const Digest& d);

// The identity of a cache entry: SHA-256 of the canonical encoding of an ordered list of
// (name, value) parts (see KeyBuilder). Two keys are equal iff their digests are.
struct CacheKey {
  Digest digest{};

  std::string hex() const { return to_hex(digest); }  // 64 lowercase hex digits
  // Parses 64 hex digits (either case); nullopt for anything else.
  static std::optional<CacheKey> from_hex(std::string_view hex);

  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

// Builds a CacheKey from ordered parts. The canonical encoding is a domain tag followed by, for each
// part, u64-LE length of the name, the name, u64-LE length of the value, the value; so two
// different part lists (("ab","c") vs ("a","bc"), a part more or less, another order) never encode
// to the same bytes.
class KeyBuilder {
 public:
  KeyBuilder();
  KeyBuilder& add(std::string_view name, std::string_view value);
  KeyBuilder& add_int(std::string_view name, std::int64_t value);  // value as decimal text

  CacheKey key() const;
  // "name=value; name=value" with long values shortened, for an entry's meta or diagnostics.
  std::string describe() const;
  const std::string& canonical() const { return enc_; }

 private:
  std::string enc_;
  std::string desc_;
};

// One entry as listed by DiskCache::list() (from its header only; the payload is not verified).
struct EntryInfo {
  std::string key_hex;          // from the file name
  std::string path;
  std::uint64_t file_bytes = 0; // header + meta + payload
  std::uint64_t payload_bytes = 0;
  std::string meta;
  std::timespec last_used{};    // mtime: set on write and on every hit
  bool header_ok = false;       // magic, version, key, lengths and header checksum all agree
};

struct Stats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;        // includes corrupt entries
  std::uint64_t corrupt = 0;       // entries found invalid on get (deleted)
  std::uint64_t evictions = 0;     // entries removed by the size cap or by evict()
  std::uint64_t puts = 0;          // entries written
  std::uint64_t write_errors = 0;  // puts dropped because of an I/O failure
  std::uint64_t bytes = 0;         // bytes of all entries in the directory (every process's running total)
};

class DiskCache {
 public:
  static constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{1} << 30;  // 1 GiB

  // The process-wide cache configured from the environment, created on first call; nullptr when
  // CTILE_CACHE=0 (or off/false/no). CTILE_CACHE_DIR overrides the directory (default
  // $XDG_CACHE_HOME/ctile, else $HOME/.cache/ctile; no usable home disables the cache);
  // CTILE_CACHE_MAX_BYTES the cap (bytes, with an optional K/M/G suffix; default 1 GiB).
  static DiskCache* global();

  // A cache in `dir` (created on first put, with its parents) holding at most `max_bytes`.
  DiskCache(std::string dir, std::uint64_t max_bytes = kDefaultMaxBytes);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // The payload stored under `key`, or nullopt (absent, corrupt: then deleted, or unreadable).
  // A hit marks the entry as most recently used.
  std::optional<std::vector<std::byte>> get(const CacheKey& key);
  // Stores `payload` with `meta` (free text, e.g. KeyBuilder::describe()) under `key`, replacing
  // any entry there; then applies the size cap. An entry larger than the cap is not stored.
  void put(const CacheKey& key, std::span<const std::byte> payload, std::string_view meta = {});
  // Removes the entry (e.g. the driver rejected the cubin); no-op when absent.
  void evict(const CacheKey& key);

  // This instance's counters, and the directory's running total of bytes (shared by all processes;
  // a scan when it is not known yet).
  Stats stats();
  // Removes every entry (and stale temporary files).
  void clear();
  // Every entry, least recently used first.
  std::vector<EntryInfo> list() const;

  const std::string& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  std::string path_for(const CacheKey& key) const;  // <dir>/<first 2 hex>/<hex>.ctk

 private:
  struct ScanEntry {
    std::string path;
    std::uint64_t bytes;
    std::timespec mtime;
  };
  enum class Warn { io_read, io_write, corrupt, evict, count_ };

  void warn_once(Warn kind, const std::string& msg) const;
  bool ensure_dir(const std::string& path);
  std::vector<ScanEntry> scan(bool remove_stale_temps) const;
  // With <dir>/lock held (its fd): adds `delta` to the running total (scanning when it is unknown),
  // evicts if it is over the cap, stores and returns the new total.
  std::uint64_t account_locked(int lock_fd, std::int64_t delta);
  // With the lock held: scans, deletes least recently used entries down to 90% of the cap (when
  // over it) and stale temporary files; returns the bytes left.
  std::uint64_t evict_lru_locked();

  std::string dir_;
  std::uint64_t max_bytes_;

  std::atomic<std::uint64_t> hits_{0}, misses_{0}, corrupt_{0}, evictions_{0}, puts_{0},
      write_errors_{0};
  mutable std::array<std::atomic<bool>, static_cast<std::size_t>(Warn::count_)> warned_{};
};

}  // namespace ctile::cache
