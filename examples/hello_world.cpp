// Hello world: every tile block of a 2-D grid writes its own tile index into its piece.
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

// Each block owns one 1x1 piece of `ids` and stores 100 * row + column of its tile index there.
void hello(ct::Mut<std::int64_t, 2> ids) {
  auto [i, j] = ids.tile_index();
  ids.store(i * 100 + j);
}

int main() {
  auto ids = ct::zeros<std::int64_t>({3, 4}).partition({1, 1});  // grid 3 x 4: twelve tile blocks
  auto [done] = ct::launch(hello, std::move(ids)).sync();
  const std::vector<std::int64_t> out = std::move(done).unpartition().to_host();
  bool ok = true;
  for (int i = 0; i < 3; ++i) {
    std::printf("  ");
    for (int j = 0; j < 4; ++j) {
      std::printf("block (%d,%d) says %3lld   ", i, j, static_cast<long long>(out[static_cast<std::size_t>(i * 4 + j)]));
      ok = ok && out[static_cast<std::size_t>(i * 4 + j)] == i * 100 + j;
    }
    std::printf("\n");
  }
  return example::verdict("hello_world", ok);
}
