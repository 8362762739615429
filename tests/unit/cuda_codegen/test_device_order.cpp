// Host checks of device-library index arithmetic that every launch relies on (compiled with the
// emulation prelude, like the generated code): the grouped tile-block order is a bijection.
#include "emu/ct_emu.h"
#include "ctile/device/config.h"
#include "ctile/device/layout.h"

#include <gtest/gtest.h>

#include <vector>

TEST(DeviceOrder, GroupedBlocksVisitEveryBlockOnce) {
  for (long long n0 : {1, 2, 7, 8, 9, 31, 64})
    for (long long n1 : {1, 3, 8, 17})
      for (long long g : {1, 2, 8}) {
        std::vector<int> seen(static_cast<std::size_t>(n0 * n1), 0);
        for (long long lin = 0; lin < n0 * n1; ++lin) {
          long long b0 = -1, b1 = -1;
          ct::grouped_block(lin, n0, n1, g, b0, b1);
          ASSERT_TRUE(b0 >= 0 && b0 < n0 && b1 >= 0 && b1 < n1) << n0 << "x" << n1 << " g " << g << " lin " << lin;
          ++seen[static_cast<std::size_t>(b0 * n1 + b1)];
        }
        for (int s : seen) ASSERT_EQ(s, 1) << n0 << "x" << n1 << " g " << g;
      }
}

TEST(DeviceOrder, GroupsWalkRowsFirstWithinAGroup) {
  // 16 x 4 blocks in groups of 8 rows: ids 0..7 are column 0 of rows 0..7, id 8 starts column 1.
  long long b0, b1;
  ct::grouped_block(7, 16, 4, 8, b0, b1);
  EXPECT_EQ(b0, 7);
  EXPECT_EQ(b1, 0);
  ct::grouped_block(8, 16, 4, 8, b0, b1);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(b1, 1);
  ct::grouped_block(32, 16, 4, 8, b0, b1);  // the second group
  EXPECT_EQ(b0, 8);
  EXPECT_EQ(b1, 0);
}
