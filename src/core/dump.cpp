// Generated code dumps (core/dump.hpp).
#include "dump.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace ctile::detail {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

void dump_generated(const std::string& what, const std::string& entry, const char* ext, const std::string& text) {
  static std::mutex mu;
  std::lock_guard lk(mu);
  const char* dir = std::getenv("CTILE_DUMP_DIR");
  if (dir && *dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::filesystem::path p = std::filesystem::path(dir) / (entry + ext);
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f)
      std::fprintf(stderr, "ctile: cannot write %s\n", p.string().c_str());
    else if (!env_flag("CTILE_QUIET"))
      std::fprintf(stderr, "ctile: wrote %s (%s)\n", p.string().c_str(), what.c_str());
    return;
  }
  std::fprintf(stderr, "// ---- ctile: %s of %s (entry %s) ----\n%s\n// ---- end of %s ----\n",
               std::strcmp(ext, ".ptx") == 0 ? "PTX" : "CUDA source", what.c_str(), entry.c_str(), text.c_str(),
               entry.c_str());
}

}  // namespace ctile::detail
