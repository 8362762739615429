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
