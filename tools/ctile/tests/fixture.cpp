// A helper program for the tool's tests (tools/ctile/tests/check_tool.cmake):
//   fixture cache-put DIR N   writes N entries into a disk cache at DIR
//   fixture dump DIR          writes a dump directory like a GPU run's: a SIMT and a tile kernel's
//                             CUDA source, PTX and cubin (compile_only for sm_90a) and the tile IR
//   fixture tile-run          launches a tile kernel (whose IR CTILE_DUMP_IR prints)
//   fixture race              launches a SIMT kernel with a shared-memory race (exit 0 unless
//                             the race checker is on)
//   fixture clean             launches a race-free SIMT kernel; exit 0 when its result is right
#include <cstdio>
#include <fstream>
#include <string>

#include <ctile/ctile.hpp>

#include "../../../src/backend/cache/disk_cache.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

void tile_scale(ct::Mut<float, 1> y, ct::Ref<float, 1> x) { y.store(ct::load_like(x, y) * 3.0f); }

CTILE_SIMT_KERNEL(fixture_simt_copy, (DisjointSpan<float> out, Span<float> in), Contract().block(64),
                  (out.size() == in.size()), {
  auto i = index_1d();
  out.get_mut(i).set(in.get_or(i, 0.0f));
})

CTILE_SIMT_KERNEL(fixture_simt_race, (DisjointSpan<int> out), Contract().block(64).dynamic_shared(4), (), {
  auto s = dynamic_shared<int>(ctile::unchecked);
  s[0] = (int)thread_in_block();  // every thread writes one shared element: a race
  out.get_mut(index_1d()).set(1);
})

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "cache-put" && argc == 4) {
    ct::cache::DiskCache c(argv[2]);
    for (int i = 0; i < std::stoi(argv[3]); ++i) {
      const std::string payload(1000 + i, 'x');
      c.put(ct::cache::KeyBuilder().add("fixture", std::to_string(i)).key(),
            std::span(reinterpret_cast<const std::byte*>(payload.data()), payload.size()),
            "fixture entry " + std::to_string(i));
    }
    return 0;
  }
  if (cmd == "dump" && argc == 3) {
    const std::string dir = argv[2];
    const cs::CompileResult s = cs::compile_only(fixture_simt_copy, "sm_90a");
    std::ofstream(dir + "/" + s.entry + ".cu") << s.cuda_source;
    std::ofstream(dir + "/" + s.entry + ".ptx") << s.ptx;
    std::ofstream(dir + "/" + s.entry + ".cubin", std::ios::binary) << s.cubin;
    const ct::CompileOnlyResult t = ct::compile_only(tile_scale, ct::CompileOptions{.arch = "sm_90a"},
                                                     ct::spec::partition<float>({4096}, {256}), ct::spec::shared<float>({4096}));
    std::ofstream(dir + "/" + t.entry + ".ir") << t.ir;
    std::ofstream(dir + "/" + t.entry + ".cu") << t.cuda_source;
    std::ofstream(dir + "/" + t.entry + ".ptx") << t.ptx;  // PTX only: inspect --sass assembles it with ptxas
    return 0;
  }
  if (cmd == "tile-run") {
    auto x = ct::arange<float>(1024).share();
    auto [y, x2] = ct::launch(tile_scale, ct::zeros<float>({1024}).partition({256}), x).sync();
    return std::move(y).unpartition().to_host()[10] == 30.0f ? 0 : 1;
  }
  if (cmd == "race") {
    auto [o] = cs::prepare(fixture_simt_race, cs::grid(1), ct::zeros<int>({64})).sync();
    return o.to_host()[0] == 1 ? 0 : 1;
  }
  if (cmd == "clean") {
    auto x = ct::arange<float>(200).share();
    auto [o, x2] = cs::prepare(fixture_simt_copy, cs::cover(200), ct::zeros<float>({200}), x).sync();
    return o.to_host()[199] == 199.0f ? 0 : 1;
  }
  std::fprintf(stderr, "usage: fixture cache-put DIR N | dump DIR | tile-run | race | clean\n");
  return 2;
}
