// Distributed layouts: the element each (register, lane, warp) holds, the checks, and the blocked
// layouts the layout-assignment pass starts from.
#include <gtest/gtest.h>

#include <set>

#include "ctile/ir/layout.hpp"

namespace ir = ctile::ir;

namespace {
// Every element is held by at least one thread, and copies only where the layout says so.
void expect_covers(const ir::Layout& l, std::int64_t numel) {
  std::set<std::int64_t> seen;
  int holders = 0;
  for (int w = 0; w < l.warps(); ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (std::int64_t r = 0; r < l.regs(); ++r) {
        const std::int64_t e = l.element(r, lane, w);
        ASSERT_GE(e, 0);
        ASSERT_LT(e, numel);
        seen.insert(e);
        ++holders;
      }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), numel);
  const int copies = (1 << __builtin_popcount(static_cast<unsigned>(l.copy_lane_mask()))) *
                     (1 << __builtin_popcount(static_cast<unsigned>(l.copy_warp_mask())));
  EXPECT_EQ(holders, numel * copies);
}
}  // namespace

TEST(Layout, BlockedRowsOverWarps) {
  // [4, 1024] over 4 warps, 8 elements per vector: a warp per row, lanes along the row.
  const ir::Layout l = ir::blocked({4, 1024}, 8, 4, /*warps_last=*/false);
  EXPECT_EQ(ir::check_dist(l, 4096, 4), "");
  EXPECT_EQ(ir::layout_str(l), "#dist<reg=[0,1,2,8,9], lane=[3,4,5,6,7], warp=[10,11]>");
  EXPECT_EQ(l.regs(), 32);
  // Lane 1 of warp 2 holds elements 8..15 of row 2 in its first registers.
  EXPECT_EQ(l.element(0, 1, 2), 2 * 1024 + 8);
  EXPECT_EQ(l.element(7, 1, 2), 2 * 1024 + 15);
  expect_covers(l, 4096);
}

TEST(Layout, BlockedWarpsAlongTheRow) {
  const ir::Layout l = ir::blocked({4, 1024}, 8, 4, /*warps_last=*/true);
  EXPECT_EQ(ir::layout_str(l), "#dist<reg=[0,1,2,10,11], lane=[3,4,5,6,7], warp=[8,9]>");
  expect_covers(l, 4096);
}

TEST(Layout, SmallTilesHaveCopies) {
  // 16 elements over 2 warps with vectors of 4: lanes 0-3 hold elements, the rest copies.
  const ir::Layout l = ir::blocked({16}, 4, 2);
  EXPECT_EQ(ir::check_dist(l, 16, 2), "");
  EXPECT_EQ(ir::layout_str(l), "#dist<reg=[0,1], lane=[2,3,*,*,*], warp=[*]>");
  EXPECT_EQ(l.copy_lane_mask(), 0b11100);
  EXPECT_EQ(l.copy_warp_mask(), 1);
  expect_covers(l, 16);
  const ir::Layout one = ir::replicated({1, 1}, 4);
  EXPECT_EQ(ir::layout_str(one), "#dist<reg=[], lane=[*,*,*,*,*], warp=[*,*]>");
  expect_covers(one, 1);
}

TEST(Layout, ChecksNameTheProblem) {
  ir::Layout l = ir::blocked({64}, 2, 1);
  EXPECT_EQ(ir::check_dist(l, 64, 1), "");
  EXPECT_NE(ir::check_dist(l, 64, 2).find("expected 1 warp bits"), std::string::npos);
  EXPECT_NE(ir::check_dist(l, 128, 1).find("element bit 6 is not named"), std::string::npos);
  l.lane[0] = l.reg[0];
  EXPECT_NE(ir::check_dist(l, 64, 1).find("named twice"), std::string::npos);
}

TEST(Layout, MmaWarpGridsAreAsSquareAsTheTileAllows) {
  auto grid = [](std::int64_t m, std::int64_t n, int w) {
    const ir::MmaWarpGrid g = ir::mma_warp_grid(m, n, w);
    return std::to_string(g.wm) + "x" + std::to_string(g.wn);
  };
  EXPECT_EQ(grid(128, 128, 8), "2x4");  // 64 x 32 warp tiles
  EXPECT_EQ(grid(128, 128, 4), "2x2");
  EXPECT_EQ(grid(128, 64, 4), "2x2");
  EXPECT_EQ(grid(256, 128, 8), "4x2");
  EXPECT_EQ(grid(16, 16, 1), "1x1");
  EXPECT_EQ(grid(16, 16, 2), "0x0");   // no warp tile of at least 16 x 16 for each of 2 warps
  EXPECT_EQ(grid(64, 8, 1), "0x0");    // n below 16 (two n8 atoms per ldmatrix.x4.trans)
  EXPECT_EQ(grid(48, 64, 1), "0x0");   // not a power of two
}

TEST(Layout, MmaAccumulatorIsTheFragmentOfEachWarpTile) {
  // [64, 64] over 4 warps: a 2 x 2 grid of 32 x 32 warp tiles, 2 x 4 atoms of 16 x 8 each.
  const ir::Layout l = ir::mma_accumulator(64, 64, 4);
  EXPECT_EQ(ir::check_dist(l, 4096, 4), "");
  EXPECT_EQ(l.regs(), 32);
  expect_covers(l, 4096);
  auto at = [](std::int64_t row, std::int64_t col) { return row * 64 + col; };
  // Lane 9 (g = 2, t = 1): fragment elements 0, 1 at row 2, columns 2, 3; elements 2, 3 at row 10.
  EXPECT_EQ(l.element(0, 9, 0), at(2, 2));
  EXPECT_EQ(l.element(1, 9, 0), at(2, 3));
  EXPECT_EQ(l.element(2, 9, 0), at(10, 2));
  EXPECT_EQ(l.element(3, 9, 0), at(10, 3));
  // Register 4 * a + j: atom a = na + 4 * ma (na along n, steps of 8 columns; ma along m, of 16 rows).
  EXPECT_EQ(l.element(4 * 1 + 0, 9, 0), at(2, 8 + 2));
  EXPECT_EQ(l.element(4 * 4 + 0, 9, 0), at(16 + 2, 2));
  // Warp w = wm * 2 + wn: warp 1 holds columns 32.., warp 2 rows 32...
  EXPECT_EQ(l.element(0, 9, 1), at(2, 32 + 2));
  EXPECT_EQ(l.element(0, 9, 2), at(32 + 2, 2));
}
