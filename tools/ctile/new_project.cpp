// ctile new NAME: a CMake project that consumes an installed ctile (find_package) and builds and
// runs an example with a tile kernel and a SIMT kernel, each checked against a host loop.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ctile/core/error.hpp"
#include "tool.hpp"

namespace ctile::tool {

namespace {

namespace fs = std::filesystem;

constexpr const char* kCMake = R"(# A project that uses ctile (made by `ctile new`).
cmake_minimum_required(VERSION 3.25)
project(@NAME@ LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)

# Point CMAKE_PREFIX_PATH at ctile's install prefix if CMake does not find it by itself.
find_package(ctile 0.1 REQUIRED)

add_executable(@NAME@ src/main.cpp)
target_link_libraries(@NAME@ PRIVATE ctile::ctile)

enable_testing()
add_test(NAME @NAME@ COMMAND @NAME@)
)";

constexpr const char* kMain = R"(// @NAME@: a tile kernel and a SIMT kernel (made by `ctile new`). Each runs on the default device
// (the GPU when one is usable, else the CPU backend) and is checked against a host loop.
#include <cmath>
#include <cstdio>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;

// A tile kernel: y is this tile block's own piece of the output, x a shared, read-only input.
void scale_tiles(ct::Mut<float, 1> y, ct::Ref<float, 1> x) { y.store(ct::load_like(x, y) * 2.0f); }

// A SIMT kernel: one thread per element; get_mut() writes only this thread's own element.
CTILE_SIMT_KERNEL(add_one,
    (DisjointSpan<float> out, Span<float> in),
    Contract().block(256),
    (out.size() == in.size()),
{
  auto i = index_1d();
  out.get_mut(i).set(in.get_or(i, 0.0f) + 1.0f);
})

int main() {
  const std::int64_t n = 1 << 16;
  std::printf("running on %s\n", ct::describe(ct::default_device()).c_str());
  auto x = ct::arange<float>(n).share();
  auto [y, x2] = ct::launch(scale_tiles, ct::zeros<float>({n}).partition({1024}), x).sync();  // y = 2x
  auto [z, y2] = cs::prepare(add_one, cs::cover(n), ct::zeros<float>({n}), std::move(y).unpartition().share()).sync();
  const std::vector<float> got = z.to_host();
  int bad = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * static_cast<float>(i) + 1.0f) ++bad;
  std::printf("@NAME@: %s (%d of %lld elements differ)\n", bad == 0 ? "ok" : "WRONG", bad, static_cast<long long>(n));
  return bad == 0 ? 0 : 1;
}
)";

constexpr const char* kReadme = R"(# @NAME@

A project that uses ctile (made by `ctile new`): `src/main.cpp` has a tile
kernel and a SIMT kernel, each checked against a host loop.

    cmake -S . -B build @PREFIX_HINT@
    cmake --build build
    ./build/@NAME@          # or: ctest --test-dir build

Without a GPU the kernels run on ctile's CPU backend. `ctile doctor` says what this machine has.
)";

std::string fill(std::string s, const std::string& name, const std::string& prefix_hint) {
  for (std::size_t p; (p = s.find("@NAME@")) != std::string::npos;) s.replace(p, 6, name);
  for (std::size_t p; (p = s.find("@PREFIX_HINT@")) != std::string::npos;) s.replace(p, 13, prefix_hint);
  return s;
}

// The install prefix of this ctile, when the tool runs from <prefix>/bin and the package config is
// there (then the new project is told where to find it).
std::string install_prefix() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path prefix = exe.parent_path().parent_path();
  for (const char* lib : {"lib", "lib64"})
    if (fs::exists(prefix / lib / "cmake" / "ctile" / "ctileConfig.cmake", ec)) return prefix.string();
  return {};
}

}  // namespace

int new_project(const NewOptions& o) {
  const std::string& name = o.name;
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    throw UserError("ctile new: '" + name + "' is not a valid project name (letters, digits and _, not starting with a digit)");
  const fs::path root = fs::path(o.dir) / name;
  std::error_code ec;
  if (fs::exists(root, ec)) {
    if (!o.force || !fs::is_directory(root, ec) || !fs::is_empty(root, ec))
      throw UserError("ctile new: " + root.string() + " already exists" +
                      (o.force ? " and is not an empty directory" : " (use --force for an existing empty directory)"));
  }
  fs::create_directories(root / "src", ec);
  if (ec) throw UserError("ctile new: cannot create " + (root / "src").string() + ": " + ec.message());
  const std::string prefix = install_prefix();
  const std::string hint = prefix.empty() ? "" : "-DCMAKE_PREFIX_PATH=" + prefix;
  auto write = [&](const fs::path& p, const char* text) {
    std::ofstream f(p);
    f << fill(text, name, hint);
    if (!f) throw UserError("ctile new: cannot write " + p.string());
  };
  write(root / "CMakeLists.txt", kCMake);
  write(root / "src" / "main.cpp", kMain);
  write(root / "README.md", kReadme);
  write(root / ".gitignore", "build/\n");
  std::printf("created %s: CMakeLists.txt, src/main.cpp (a tile kernel and a SIMT kernel), README.md\n",
              root.string().c_str());
  std::printf("build and run it:\n  cmake -S %s -B %s/build%s%s\n  cmake --build %s/build\n  %s/build/%s\n",
              root.string().c_str(), root.string().c_str(), hint.empty() ? "" : " ", hint.c_str(), root.string().c_str(),
              root.string().c_str(), name.c_str());
  return 0;
}

}  // namespace ctile::tool
