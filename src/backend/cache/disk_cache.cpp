// The on-disk compiled-kernel cache. See disk_cache.hpp and docs/cache.md.
#include "disk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>

namespace ctile::cache {

namespace {

// ---- the entry file format --------------------------------------------------------------------
//
//   offset  size  field
//        0     8  magic "CTILEK01"
//        8     4  format version (u32 LE) = 1
//       12     4  meta length (u32 LE)
//       16     8  payload length (u64 LE)
//       24    32  SHA-256 of the payload
//       56    64  key, 64 lowercase hex digits (must equal the file name)
//      120     4  header size (u32 LE) = 160
//      124     4  flags (u32 LE) = 0
//      128    32  SHA-256 of bytes [0, 128) followed by the meta
//      160     -  meta (meta length bytes), then payload (payload length bytes); nothing after it
constexpr char kMagic[8] = {'C', 'T', 'I', 'L', 'E', 'K', '0', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderSize = 160;
constexpr std::size_t kHeaderHashedPart = 128;
constexpr std::size_t kMaxMeta = 64 * 1024;
constexpr std::size_t kHexLen = 64;
constexpr const char* kEntrySuffix = ".ctk";
constexpr const char* kTempSuffix = ".tmp";
constexpr std::int64_t kStaleTempNs = 10LL * 60 * 1000000000;  // temp files older than this are orphans

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// ---- SHA-256 ----------------------------------------------------------------------------------

// OpenSSL's libcrypto is loaded at run time (like the CUDA driver), so ctile builds where its
// headers are absent; without it the disk cache is off and says so once. Only the few EVP
// functions below are used; their C signatures are declared here.
struct EvpMd;
struct EvpMdCtx;
struct Crypto {
  EvpMdCtx* (*ctx_new)() = nullptr;
  void (*ctx_free)(EvpMdCtx*) = nullptr;
  int (*init_ex)(EvpMdCtx*, const EvpMd*, void*) = nullptr;
  int (*update)(EvpMdCtx*, const void*, std::size_t) = nullptr;
  int (*final_ex)(EvpMdCtx*, unsigned char*, unsigned int*) = nullptr;
  const EvpMd* (*sha256)() = nullptr;
  std::string error;
};

const Crypto& crypto() {
  static const Crypto c = [] {
    Crypto r;
    void* h = nullptr;
    for (const char* name : {"libcrypto.so.3", "libcrypto.so", "libcrypto.so.1.1"})
      if ((h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) {
      r.error = "OpenSSL's libcrypto (libcrypto.so.3) cannot be loaded";
      return r;
    }
    auto sym = [&](const char* n) { return ::dlsym(h, n); };
    r.ctx_new = reinterpret_cast<EvpMdCtx* (*)()>(sym("EVP_MD_CTX_new"));
    r.ctx_free = reinterpret_cast<void (*)(EvpMdCtx*)>(sym("EVP_MD_CTX_free"));
    r.init_ex = reinterpret_cast<int (*)(EvpMdCtx*, const EvpMd*, void*)>(sym("EVP_DigestInit_ex"));
    r.update = reinterpret_cast<int (*)(EvpMdCtx*, const void*, std::size_t)>(sym("EVP_DigestUpdate"));
    r.final_ex = reinterpret_cast<int (*)(EvpMdCtx*, unsigned char*, unsigned int*)>(sym("EVP_DigestFinal_ex"));
    r.sha256 = reinterpret_cast<const EvpMd* (*)()>(sym("EVP_sha256"));
    if (!r.ctx_new || !r.ctx_free || !r.init_ex || !r.update || !r.final_ex || !r.sha256)
      r.error = "libcrypto lacks the EVP digest functions (OpenSSL 1.1 or newer is needed)";
    return r;
  }();
  return c;
}

class Sha256 {
 public:
  Sha256() {
    const Crypto& c = crypto();
    if (!c.error.empty()) throw std::runtime_error("ctile: SHA-256 is unavailable: " + c.error);
    ctx_ = c.ctx_new();
    if (!ctx_ || c.init_ex(ctx_, c.sha256(), nullptr) != 1) {
      if (ctx_) c.ctx_free(ctx_);
      throw std::runtime_error("ctile: OpenSSL SHA-256 init failed");
    }
  }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256() { crypto().ctx_free(ctx_); }
  void update(const void* data, std::size_t n) {
    if (n != 0 && crypto().update(ctx_, data, n) != 1) throw std::runtime_error("ctile: OpenSSL SHA-256 update failed");
  }
  Digest finish() {
    Digest d{};
    unsigned int len = 0;
    if (crypto().final_ex(ctx_, d.data(), &len) != 1 || len != d.size())
      throw std::runtime_error("ctile: OpenSSL SHA-256 final failed");
    return d;
  }

 private:
  EvpMdCtx* ctx_ = nullptr;
};

Digest sha256_raw(const void* data, std::size_t n) {
  Sha256 s;
  s.update(data, n);
  return s.finish();
}

// ---- small POSIX helpers ----------------------------------------------------------------------

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text(int e) { return std::strerror(e); }

bool write_full(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Reads exactly the iovecs' total at `off`; false on a short read (truncated file) or an error.
bool preadv_full(int fd, iovec* iov, int iovcnt, off_t off) {
  for (;;) {
    while (iovcnt > 0 && iov->iov_len == 0) {
      ++iov;
      --iovcnt;
    }
    if (iovcnt == 0) return true;
    const ssize_t r = ::preadv(fd, iov, iovcnt, off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    off += r;
    auto left = static_cast<std::size_t>(r);
    while (iovcnt > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --iovcnt;
    }
    if (iovcnt > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
}

std::timespec now_realtime() {
  std::timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t ts_ns(const std::timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Sets atime and mtime to the current time, with full clock resolution (UTIME_NOW uses the coarse
// kernel clock, which would make hits within a few milliseconds tie in the LRU order). Explicit
// times need ownership of the file; in a cache shared between users fall back to UTIME_NOW, which
// needs write permission only. Best effort: a read-only cache still serves hits.
void touch(int fd) {
  const std::timespec now = now_realtime();
  const std::timespec times[2] = {now, now};
  if (::futimens(fd, times) == 0 || errno != EPERM) return;
  const std::timespec coarse[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
  (void)::futimens(fd, coarse);
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool is_hex_name(std::string_view s) { return std::all_of(s.begin(), s.end(), is_hex); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// mkdir -p; the last component gets `mode`, missing parents 0755 (before the umask).
bool make_dirs(const std::string& path, mode_t mode) {
  if (path.empty()) return false;
  if (::mkdir(path.c_str(), mode) == 0 || errno == EEXIST) return true;
  if (errno != ENOENT) return false;
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return false;
  if (!make_dirs(path.substr(0, slash), 0755)) return false;
  return ::mkdir(path.c_str(), mode) == 0 || errno == EEXIST;
}

// An exclusive flock on <dir>/lock (created if missing), held for the object's lifetime. The file
// is opened here, never shared with a forked child, so the lock excludes other processes and other
// threads alike. Not held (held() false) when the file cannot be opened, e.g. a read-only cache.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    const std::string path = dir + "/lock";
    // O_NONBLOCK: a FIFO or device in its place must not block the open (flock still waits).
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0) return;
    int r;
    do {
      r = ::flock(fd_, LOCK_EX);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }
  bool held() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// The lock file also holds the running total of entry bytes, shared by every process using the
// directory: 20 decimal digits and a newline, read and rewritten only under the lock. Empty or
// unreadable means unknown; a scan of the directory re-establishes it.
constexpr std::size_t kTotalLen = 21;

std::optional<std::uint64_t> read_total(int fd) {
  char buf[kTotalLen];
  iovec v{buf, kTotalLen};
  if (!preadv_full(fd, &v, 1, 0) || buf[kTotalLen - 1] != '\n') return std::nullopt;
  std::uint64_t x = 0;
  for (std::size_t i = 0; i + 1 < kTotalLen; ++i) {
    if (buf[i] < '0' || buf[i] > '9') return std::nullopt;
    x = x * 10 + static_cast<std::uint64_t>(buf[i] - '0');
  }
  return x;
}

void write_total(int fd, std::uint64_t x) {
  char buf[kTotalLen + 1];
  std::snprintf(buf, sizeof buf, "%020llu\n", static_cast<unsigned long long>(x));
  const ssize_t w = ::pwrite(fd, buf, kTotalLen, 0);
  (void)w;  // best effort: a short write reads back as unknown, and the next update rescans
}

// Removes `path` only if it is still the file we examined (same inode): a concurrent writer may have
// renamed a fresh, valid entry over it since we opened it. (An empty directory there goes too.)
bool unlink_if_same(const std::string& path, const struct stat& examined) {
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0) return false;
  if (now.st_dev != examined.st_dev || now.st_ino != examined.st_ino) return false;
  return (S_ISDIR(now.st_mode) ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) == 0;
}

struct ParsedHeader {
  std::uint32_t version = 0;
  std::uint32_t meta_len = 0;
  std::uint64_t payload_len = 0;
  std::uint32_t header_size = 0;
  std::uint32_t flags = 0;
  Digest payload_sha{};
  Digest header_sha{};
  std::string_view key_hex;
};

ParsedHeader parse_header(const unsigned char* h) {
  ParsedHeader p;
  p.version = get_u32(h + 8);
  p.meta_len = get_u32(h + 12);
  p.payload_len = get_u64(h + 16);
  std::memcpy(p.payload_sha.data(), h + 24, 32);
  p.key_hex = std::string_view(reinterpret_cast<const char*>(h + 56), kHexLen);
  p.header_size = get_u32(h + 120);
  p.flags = get_u32(h + 124);
  std::memcpy(p.header_sha.data(), h + 128, 32);
  return p;
}

Digest header_digest(const unsigned char* h, std::string_view meta) {
  Sha256 s;
  s.update(h, kHeaderHashedPart);
  s.update(meta.data(), meta.size());
  return s.finish();
}

// Checks everything the header alone can tell; returns the reason it is bad, or nullptr.
const char* check_header(const unsigned char* h, const ParsedHeader& p, std::string_view want_hex,
                         std::uint64_t file_size) {
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return "bad magic";
  if (p.version != kVersion) return "unknown format version";
  if (p.header_size != kHeaderSize || p.flags != 0) return "bad header fields";
  if (p.key_hex != want_hex) return "key in header does not match the file name";
  if (p.meta_len > kMaxMeta) return "bad meta length";
  const std::uint64_t body = file_size - kHeaderSize;  // caller ensured file_size >= kHeaderSize
  if (p.meta_len > body || p.payload_len != body - p.meta_len) return "length mismatch (truncated?)";
  return nullptr;
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const std::uint64_t d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (i == 0) return std::nullopt;
  std::string_view rest = s.substr(i);
  int shift = 0;
  if (!rest.empty()) {
    switch (rest[0]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: return std::nullopt;
    }
    rest.remove_prefix(1);
    if (rest == "iB" || rest == "B" || rest == "ib" || rest == "b") rest = {};
    if (!rest.empty()) return std::nullopt;
  }
  if (shift != 0 && v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

bool env_says_off(const char* v) {
  if (!v) return false;
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "0" || s == "off" || s == "false" || s == "no";
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/') return std::string(x) + "/ctile";
  if (const char* h = std::getenv("HOME"); h && h[0] != '\0') return std::string(h) + "/.cache/ctile";
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && pw->pw_dir[0] == '/')
    return std::string(pw->pw_dir) + "/.cache/ctile";
  return {};
}

}  // namespace

// ---- hashing and keys ---------------------------------------------------------------------------

Digest sha256(std::span<const std::byte> data) { return sha256_raw(data.data(), data.size()); }
Digest sha256(std::string_view data) { return sha256_raw(data.data(), data.size()); }

std::string to_hex(const Digest& d) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(d.size() * 2, '0');
  for (std::size_t i = 0; i < d.size(); ++i) {
    s[2 * i] = kDigits[d[i] >> 4];
    s[2 * i + 1] = kDigits[d[i] & 15];
  }
  return s;
}

std::optional<CacheKey> CacheKey::from_hex(std::string_view hex) {
  if (hex.size() != kHexLen) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  CacheKey k;
  for (std::size_t i = 0; i < k.digest.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    k.digest[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return k;
}

namespace {
void append_field(std::string& enc, std::string_view s) {
  unsigned char len[8];
  put_u64(len, s.size());
  enc.append(reinterpret_cast<const char*>(len), sizeof len);
  enc.append(s);
}
}  // namespace

KeyBuilder::KeyBuilder() { append_field(enc_, "ctile-cache-key/1"); }

KeyBuilder& KeyBuilder::add(std::string_view name, std::string_view value) {
  append_field(enc_, name);
  append_field(enc_, value);
  if (!desc_.empty()) desc_ += "; ";
  desc_.append(name);
  desc_ += '=';
  constexpr std::size_t kShown = 48;
  if (value.size() <= kShown) {
    desc_.append(value);
  } else {
    desc_.append(value.substr(0, kShown));
    desc_ += "...(" + std::to_string(value.size()) + " bytes)";
  }
  return *this;
}

KeyBuilder& KeyBuilder::add_int(std::string_view name, std::int64_t value) {
  return add(name, std::to_string(value));
}

CacheKey KeyBuilder::key() const { return CacheKey{sha256(std::string_view(enc_))}; }

std::string KeyBuilder::describe() const { return desc_; }

// ---- DiskCache ----------------------------------------------------------------------------------

DiskCache* DiskCache::global() {
  static DiskCache* const instance = []() -> DiskCache* {
    if (env_says_off(std::getenv("CTILE_CACHE"))) return nullptr;
    if (const std::string& why = crypto().error; !why.empty()) {
      std::fprintf(stderr, "ctile: disk cache disabled: %s\n", why.c_str());
      return nullptr;
    }
    std::string dir;
    if (const char* d = std::getenv("CTILE_CACHE_DIR"); d && d[0] != '\0') dir = d;
    else dir = default_cache_dir();
    if (dir.empty()) {
      std::fprintf(stderr, "ctile: disk cache disabled: no CTILE_CACHE_DIR, XDG_CACHE_HOME or home directory\n");
      return nullptr;
    }
    std::uint64_t max = kDefaultMaxBytes;
    if (const char* m = std::getenv("CTILE_CACHE_MAX_BYTES"); m && m[0] != '\0') {
      if (auto v = parse_size(m)) {
        max = *v;
      } else {
        std::fprintf(stderr, "ctile: CTILE_CACHE_MAX_BYTES=\"%s\" is not a size (e.g. 1073741824, 512M, 2G); using 1G\n", m);
      }
    }
    // Deliberately never destroyed: kernels may be launched from other static destructors.
    return new DiskCache(std::move(dir), max);
  }();
  return instance;
}

DiskCache::DiskCache(std::string dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string DiskCache::path_for(const CacheKey& key) const {
  const std::string hex = key.hex();
  return dir_ + "/" + hex.substr(0, 2) + "/" + hex + kEntrySuffix;
}

void DiskCache::warn_once(Warn kind, const std::string& msg) const {
  if (warned_[static_cast<std::size_t>(kind)].exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "ctile: disk cache %s: %s (further warnings of this kind are not shown)\n", dir_.c_str(),
               msg.c_str());
}

std::optional<std::vector<std::byte>> DiskCache::get(const CacheKey& key) {
  const std::string hex = key.hex();
  const std::string path = dir_ + "/" + hex.substr(0, 2) + "/" + hex + kEntrySuffix;
  auto miss = [&]() -> std::optional<std::vector<std::byte>> {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  };
  try {
    // What is at the path, before opening it: opening a FIFO for reading blocks until a writer
    // comes, and a device may do anything on open. Only a regular file is ever opened.
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      const int e = errno;
      if (e != ENOENT && e != ENOTDIR) warn_once(Warn::io_read, "cannot stat " + path + ": " + errno_text(e));
      return miss();
    }
    auto corrupt = [&](const char* why) -> std::optional<std::vector<std::byte>> {
      corrupt_.fetch_add(1, std::memory_order_relaxed);
      warn_once(Warn::corrupt, std::string("removed a corrupt entry ") + path + " (" + why + "); it will be recompiled");
      DirLock lock(dir_);
      if (unlink_if_same(path, st) && lock.held()) account_locked(lock.fd(), -static_cast<std::int64_t>(st.st_size));
      return miss();
    };
    if (!S_ISREG(st.st_mode)) return corrupt("not a regular file");
    // O_NONBLOCK: should a FIFO be renamed over the entry after the lstat, open returns at once
    // (and fstat below rejects it); for a regular file the flag changes nothing.
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
      const int e = errno;
      if (e != ENOENT && e != ENOTDIR) warn_once(Warn::io_read, "cannot open " + path + ": " + errno_text(e));
      return miss();
    }
    if (::fstat(fd.get(), &st) != 0) {
      const int e = errno;
      warn_once(Warn::io_read, "cannot stat " + path + ": " + errno_text(e));
      return miss();
    }
    if (!S_ISREG(st.st_mode)) return corrupt("not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < kHeaderSize) return corrupt("shorter than the header");
    // put() never stores an entry over the cap, so a larger file is damaged or foreign; reading
    // it would allocate its whole payload.
    if (size > max_bytes_) return corrupt("larger than the cache's size cap");

    unsigned char h[kHeaderSize];
    iovec hv{h, kHeaderSize};
    if (!preadv_full(fd.get(), &hv, 1, 0)) return corrupt("short read");
    const ParsedHeader p = parse_header(h);
    if (const char* why = check_header(h, p, hex, size)) return corrupt(why);

    // The header and meta are verified before the payload is allocated (its length comes from
    // the header, and matches the file's size, which is within the cap).
    std::string meta(p.meta_len, '\0');
    iovec mv{meta.data(), meta.size()};
    if (!preadv_full(fd.get(), &mv, 1, static_cast<off_t>(kHeaderSize))) return corrupt("short read");
    if (header_digest(h, meta) != p.header_sha) return corrupt("header checksum mismatch");

    std::vector<std::byte> payload(p.payload_len);
    iovec pv{payload.data(), payload.size()};
    if (!preadv_full(fd.get(), &pv, 1, static_cast<off_t>(kHeaderSize + p.meta_len))) return corrupt("short read");
    if (sha256(std::span<const std::byte>(payload)) != p.payload_sha) return corrupt("payload checksum mismatch");

    touch(fd.get());  // most recently used
    hits_.fetch_add(1, std::memory_order_relaxed);
    return payload;
  } catch (const std::exception& e) {
    warn_once(Warn::io_read, std::string("reading ") + path + " failed: " + e.what());
    return miss();
  }
}

bool DiskCache::ensure_dir(const std::string& sub) {
  if (::mkdir(sub.c_str(), 0777) == 0 || errno == EEXIST) return true;
  if (errno != ENOENT) return false;
  // The cache root is missing: create it private to the user (parents as usual), then the shard.
  if (!make_dirs(dir_, 0700)) return false;
  return ::mkdir(sub.c_str(), 0777) == 0 || errno == EEXIST;
}

void DiskCache::put(const CacheKey& key, std::span<const std::byte> payload, std::string_view meta) {
  if (meta.size() > kMaxMeta) meta = meta.substr(0, kMaxMeta);
  const std::uint64_t file_bytes = kHeaderSize + meta.size() + payload.size();
  if (file_bytes > max_bytes_) return;  // would be evicted at once

  const std::string hex = key.hex();
  const std::string sub = dir_ + "/" + hex.substr(0, 2);
  const std::string path = sub + "/" + hex + kEntrySuffix;
  std::string tmp;
  auto fail = [&](const std::string& what, int e) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    write_errors_.fetch_add(1, std::memory_order_relaxed);
    warn_once(Warn::io_write, what + ": " + errno_text(e) + "; kernels are compiled but not cached");
  };
  try {
    if (!ensure_dir(sub)) {
      const int e = errno;
      return fail("cannot create " + sub, e);
    }

    unsigned char h[kHeaderSize] = {};
    std::memcpy(h, kMagic, sizeof kMagic);
    put_u32(h + 8, kVersion);
    put_u32(h + 12, static_cast<std::uint32_t>(meta.size()));
    put_u64(h + 16, payload.size());
    const Digest ps = sha256(payload);
    std::memcpy(h + 24, ps.data(), ps.size());
    std::memcpy(h + 56, hex.data(), kHexLen);
    put_u32(h + 120, kHeaderSize);
    put_u32(h + 124, 0);
    const Digest hs = header_digest(h, meta);
    std::memcpy(h + 128, hs.data(), hs.size());

    // A name no other thread or process uses: pid, a per-process counter and random bits (a forked
    // child shares the counter's value but not the pid).
    static std::atomic<std::uint64_t> counter{0};
    thread_local std::mt19937_64 rng{std::random_device{}() ^
                                     static_cast<std::uint64_t>(steady_ns())};
    char suffix[96];
    std::snprintf(suffix, sizeof suffix, ".%ld.%llu.%016llx", static_cast<long>(::getpid()),
                  static_cast<unsigned long long>(counter.fetch_add(1, std::memory_order_relaxed)),
                  static_cast<unsigned long long>(rng()));
    const std::string tmp_name = sub + "/." + hex + suffix + kTempSuffix;

    Fd fd(::open(tmp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd.get() < 0) {
      const int e = errno;
      return fail("cannot create " + tmp_name, e);
    }
    tmp = tmp_name;
    if (!write_full(fd.get(), h, kHeaderSize) || !write_full(fd.get(), meta.data(), meta.size()) ||
        !write_full(fd.get(), payload.data(), payload.size())) {
      const int e = errno;
      return fail("cannot write " + tmp, e);
    }
    touch(fd.get());
    if (::fsync(fd.get()) != 0) {
      const int e = errno;
      return fail("cannot fsync " + tmp, e);
    }
    if (::close(fd.release()) != 0) {
      const int e = errno;
      return fail("cannot close " + tmp, e);
    }
    // Publish and count under the lock, so that the running total stays exact (an overwritten
    // entry's bytes are subtracted) and an eviction scan never misses a put in flight.
    DirLock lock(dir_);
    struct stat old {};
    const std::uint64_t old_bytes =
        ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) ? static_cast<std::uint64_t>(old.st_size) : 0;
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int e = errno;
      return fail("cannot rename to " + path, e);
    }
    tmp.clear();
    puts_.fetch_add(1, std::memory_order_relaxed);
    if (lock.held())
      account_locked(lock.fd(), static_cast<std::int64_t>(file_bytes) - static_cast<std::int64_t>(old_bytes));
  } catch (const std::exception& e) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    write_errors_.fetch_add(1, std::memory_order_relaxed);
    warn_once(Warn::io_write, std::string("writing ") + path + " failed: " + e.what());
    return;
  }
}

std::uint64_t DiskCache::account_locked(int lock_fd, std::int64_t delta) {
  const auto cur = read_total(lock_fd);
  std::uint64_t total = 0;
  if (!cur) {
    for (const auto& e : scan(false)) total += e.bytes;  // first use of the directory (or a damaged total)
  } else if (delta >= 0) {
    total = *cur + static_cast<std::uint64_t>(delta);
  } else {
    total = *cur - std::min(*cur, static_cast<std::uint64_t>(-delta));
  }
  if (total > max_bytes_) total = evict_lru_locked();
  write_total(lock_fd, total);
  return total;
}

void DiskCache::evict(const CacheKey& key) {
  const std::string path = path_for(key);
  DirLock lock(dir_);
  struct stat st {};
  const bool had = ::lstat(path.c_str(), &st) == 0;
  if (::unlink(path.c_str()) == 0) {
    evictions_.fetch_add(1, std::memory_order_relaxed);
    if (had && lock.held()) account_locked(lock.fd(), -static_cast<std::int64_t>(st.st_size));
  } else if (errno != ENOENT && errno != ENOTDIR) {
    const int e = errno;
    warn_once(Warn::evict, "cannot remove " + path + ": " + errno_text(e));
  }
}

std::vector<DiskCache::ScanEntry> DiskCache::scan(bool remove_stale_temps) const {
  std::vector<ScanEntry> out;
  DIR* root = ::opendir(dir_.c_str());
  if (!root) return out;
  const std::int64_t now = ts_ns(now_realtime());
  while (const dirent* de = ::readdir(root)) {
    const std::string_view shard(de->d_name);
    if (shard.size() != 2 || !is_hex_name(shard)) continue;
    const int sfd = ::openat(::dirfd(root), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (sfd < 0) continue;
    DIR* sd = ::fdopendir(sfd);
    if (!sd) {
      ::close(sfd);
      continue;
    }
    while (const dirent* fe = ::readdir(sd)) {
      const std::string_view name(fe->d_name);
      const bool entry = name.size() == kHexLen + 4 && ends_with(name, kEntrySuffix) &&
                         name.substr(0, 2) == shard && is_hex_name(name.substr(0, kHexLen));
      const bool temp = !entry && name.size() > 1 && name[0] == '.' && ends_with(name, kTempSuffix);
      if (!entry && !temp) continue;
      struct stat st {};
      if (::fstatat(sfd, fe->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
      if (temp) {
        if (remove_stale_temps && now - ts_ns(st.st_mtim) > kStaleTempNs) ::unlinkat(sfd, fe->d_name, 0);
        continue;
      }
      out.push_back({dir_ + "/" + std::string(shard) + "/" + std::string(name),
                     static_cast<std::uint64_t>(st.st_size), st.st_mtim});
    }
    ::closedir(sd);
  }
  ::closedir(root);
  return out;
}

std::uint64_t DiskCache::evict_lru_locked() {
  auto entries = scan(/*remove_stale_temps=*/true);
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  if (total <= max_bytes_) return total;
  std::sort(entries.begin(), entries.end(), [](const ScanEntry& a, const ScanEntry& b) {
    const auto ta = ts_ns(a.mtime), tb = ts_ns(b.mtime);
    return ta != tb ? ta < tb : a.path < b.path;
  });
  const std::uint64_t target = max_bytes_ / 10 * 9 + (max_bytes_ % 10) * 9 / 10;  // 90%, no overflow
  for (const auto& e : entries) {
    if (total <= target) break;
    if (::unlink(e.path.c_str()) == 0) {
      evictions_.fetch_add(1, std::memory_order_relaxed);
    } else if (errno != ENOENT) {
      continue;  // still there, still counted
    }
    total -= e.bytes;
  }
  return total;
}

Stats DiskCache::stats() {
  std::optional<std::uint64_t> total;
  {
    DirLock lock(dir_);
    if (lock.held()) total = read_total(lock.fd());
    if (!total) {
      total = 0;
      for (const auto& e : scan(false)) *total += e.bytes;
      if (lock.held()) write_total(lock.fd(), *total);
    }
  }
  Stats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.puts = puts_.load(std::memory_order_relaxed);
  s.write_errors = write_errors_.load(std::memory_order_relaxed);
  s.bytes = *total;
  return s;
}

void DiskCache::clear() {
  DirLock lock(dir_);
  for (const auto& e : scan(/*remove_stale_temps=*/true)) ::unlink(e.path.c_str());
  if (lock.held()) write_total(lock.fd(), 0);
}

std::vector<EntryInfo> DiskCache::list() const {
  auto entries = scan(false);
  std::sort(entries.begin(), entries.end(), [](const ScanEntry& a, const ScanEntry& b) {
    const auto ta = ts_ns(a.mtime), tb = ts_ns(b.mtime);
    return ta != tb ? ta < tb : a.path < b.path;
  });
  std::vector<EntryInfo> out;
  out.reserve(entries.size());
  for (const auto& e : entries) {
    EntryInfo info;
    info.path = e.path;
    info.file_bytes = e.bytes;
    info.last_used = e.mtime;
    const auto slash = e.path.find_last_of('/');
    info.key_hex = e.path.substr(slash + 1, kHexLen);
    try {
      Fd fd(::open(e.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));  // as in get()
      struct stat st {};
      unsigned char h[kHeaderSize];
      iovec hv{h, kHeaderSize};
      if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
          static_cast<std::uint64_t>(st.st_size) >= kHeaderSize && preadv_full(fd.get(), &hv, 1, 0)) {
        const ParsedHeader p = parse_header(h);
        info.file_bytes = static_cast<std::uint64_t>(st.st_size);
        if (!check_header(h, p, info.key_hex, info.file_bytes)) {
          std::string meta(p.meta_len, '\0');
          iovec mv{meta.data(), meta.size()};
          if (preadv_full(fd.get(), &mv, 1, static_cast<off_t>(kHeaderSize)) && header_digest(h, meta) == p.header_sha) {
            info.header_ok = true;
            info.payload_bytes = p.payload_len;
            info.meta = std::move(meta);
          }
        }
      }
    } catch (const std::exception&) {
      // listed with header_ok = false
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace ctile::cache
