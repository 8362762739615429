// Checked shape arithmetic: strides, grids (ceil_div), view offsets and reshape never overflow
// int64 silently. A shape whose row-major strides would overflow is a UserError even when it has
// no element ({0, INT64_MAX, 2}), whatever the order of its extents; what fits works. Under UBSan
// (scripts/sanitize.sh asan) the old signed overflows in these paths were reported as UB.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ctile/runtime/compile.hpp"
#include "ctile/runtime/creation.hpp"
#include "ctile/runtime/partition.hpp"
#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;

namespace {

constexpr std::int64_t kMax = INT64_MAX;

TEST(ShapeOverflow, CeilDivNearInt64Max) {
  EXPECT_EQ(ct::ceil_div(kMax, 2), std::int64_t{1} << 62);
  EXPECT_EQ(ct::ceil_div(kMax, kMax), 1);
  EXPECT_EQ(ct::ceil_div(kMax - 1, kMax), 1);
  EXPECT_EQ(ct::ceil_div(kMax, 1), kMax);
  EXPECT_EQ(ct::ceil_div(0, 16), 0);
  EXPECT_EQ(ct::ceil_div(17, 16), 2);
  EXPECT_EQ(ct::ceil_div(32, 16), 2);
}

TEST(ShapeOverflow, CheckedNumelBoundsTheNonZeroExtentsInAnyOrder) {
  std::int64_t n = -1;
  for (const ct::Shape& s : {ct::Shape{0, kMax, 2}, ct::Shape{kMax, 2, 0}, ct::Shape{2, 0, kMax}, ct::Shape{0, kMax, kMax}})
    EXPECT_FALSE(ct::checked_numel(s, n)) << ct::shape_str(s);
  ASSERT_TRUE(ct::checked_numel({0, kMax}, n));
  EXPECT_EQ(n, 0);
  ASSERT_TRUE(ct::checked_numel({kMax, 1}, n));
  EXPECT_EQ(n, kMax);
  EXPECT_FALSE(ct::checked_numel({-1, 0}, n));
}

TEST(ShapeOverflow, ContiguousStrides) {
  EXPECT_EQ(ct::contiguous_strides({0, kMax}), (ct::Shape{kMax, 1}));
  EXPECT_EQ(ct::contiguous_strides({3, 0, 5}), (ct::Shape{5, 5, 1}));
  // The outermost extent never enters a stride.
  EXPECT_EQ(ct::contiguous_strides({kMax, 1}), (ct::Shape{1, 1}));
  expect_user_error([] { (void)ct::contiguous_strides({0, kMax, 2}); },
                    {"the row-major strides of shape [0, 9223372036854775807, 2] overflow int64"});
}

TEST(ShapeOverflow, ZeroElementShapesWithHugeExtentsAreRejected) {
  for (const ct::Shape& s : {ct::Shape{0, kMax, 2}, ct::Shape{kMax, 2, 0}, ct::Shape{0, kMax, kMax}})
    expect_user_error([&] { (void)ct::zeros<float>(s); },
                      {"zeros", "has no element, but the product of its non-zero extents", "overflows int64"});
  expect_user_error([] { (void)ct::zeros<float>({kMax, 2}); }, {"the element count of shape", "overflows int64"});
  // What fits works: no element, strides [INT64_MAX, 1].
  auto t = ct::zeros<float>({0, kMax});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.to_host().empty());
}

TEST(ShapeOverflow, ReshapeToAnOverflowingEmptyShape) {
  expect_user_error([] { (void)ct::zeros<float>({0}).reshape({0, kMax, kMax}); },
                    {"reshape", "has no element, but the product of its non-zero extents"});
  auto r = ct::zeros<float>({0}).reshape({kMax, 0});
  EXPECT_EQ(r.shape(), (ct::Shape{kMax, 0}));
}

TEST(ShapeOverflow, PartitionGridOfHugeExtents) {
  // ceil_div(INT64_MAX, 2^62) was (INT64_MAX + 2^62 - 1) / 2^62: signed overflow.
  auto p = ct::zeros<std::uint8_t>({0, kMax}).partition({1, std::int64_t{1} << 62});
  EXPECT_EQ(p.grid(), (ct::Shape{0, 2}));
  auto q = ct::zeros<std::uint8_t>({kMax, 0}).partition({std::int64_t{1} << 62, 4});
  EXPECT_EQ(q.grid(), (ct::Shape{2, 0}));
}

TEST(ShapeOverflow, SliceOffsetsOfEmptyViews) {
  // A borrowed tensor of no elements may have any strides; a slice's offset must still fit.
  auto big = [] { return ct::Tensor<float>::borrow(ct::unchecked, nullptr, {0, 5}, {kMax, kMax}); };
  expect_user_error([&] { (void)big().slice(1, 4, 5); }, {"slice", "starts more than int64 bytes into the storage"});
  // The element offset fits (INT64_MAX), its byte offset does not.
  expect_user_error([&] { (void)big().slice(1, 1, 2); }, {"slice", "starts more than int64 bytes into the storage"});
  auto ok = big().slice(1, 0, 1);
  EXPECT_EQ(ok.numel(), 0);
  // A fresh empty tensor: the offset in elements fits, in bytes it does not.
  expect_user_error([] { (void)ct::zeros<float>({0, kMax}).slice(1, kMax - 1, kMax); },
                    {"slice", "starts more than int64 bytes into the storage"});
  auto edge = ct::zeros<std::uint8_t>({0, kMax}).slice(1, kMax - 1, kMax);  // 1-byte elements: fits
  EXPECT_EQ(edge.shape(), (ct::Shape{0, 1}));
  EXPECT_TRUE(edge.to_host().empty());
}

TEST(ShapeOverflow, SpecsOfOverflowingShapes) {
  expect_user_error([] { (void)ct::spec::shared<float>({0, kMax, 2}); }, {"row-major strides", "overflow int64"});
}

}  // namespace
