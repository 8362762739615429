// Reductions, scans and mma (with a K loop carrying the accumulator).
#include <limits>

#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::ReduceKind;

TEST(CpuReduce, FloatSumAccumulatesInDoubleAndRoundsOnce) {
  const std::int64_t R = 64, C = 32;
  auto x = random_floats(R * C, 40, -1000.0f, 1000.0f);
  for (int axis = 0; axis < 2; ++axis) {
    const std::int64_t n = axis == 0 ? C : R;
    auto o = run_tile<float>(in(x), {R, C}, DType::f32, {n}, [&](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Sum, t, axis); });
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t i = 0; i < (axis == 0 ? R : C); ++i)
        s += axis == 0 ? x[static_cast<std::size_t>(i * C + j)] : x[static_cast<std::size_t>(j * C + i)];
      EXPECT_EQ(o[static_cast<std::size_t>(j)], static_cast<float>(s)) << axis << " " << j;
    }
  }
  // f16 sum of 256 multiples of 1/8: a float accumulator in f16 would lose them, double does not.
  std::vector<f16> hx(256);
  double hs = 0;
  for (int i = 0; i < 256; ++i) {
    hx[static_cast<std::size_t>(i)] = h(static_cast<float>((i * 37 % 129) - 64) / 8.0f + 2048.0f * (i == 0));
    hs += static_cast<float>(hx[static_cast<std::size_t>(i)]);
  }
  auto ho = run_tile<f16>(in(hx), {256}, DType::f16, {1}, [&](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Sum, t, 0), {1}); });
  EXPECT_EQ(ho[0].bits, h(static_cast<float>(hs)).bits);
}

TEST(CpuReduce, ProdMaxMinWithNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // [4, 4]: column 1 has one NaN, column 3 only NaNs
  std::vector<float> x{1, nan, 3, nan, -2, 5, 0.5f, nan, 4, -1, 2, nan, 0.25f, 2, -8, nan};
  auto mx = run_tile<float>(in(x), {4, 4}, DType::f32, {4}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Max, t, 0); });
  auto mn = run_tile<float>(in(x), {4, 4}, DType::f32, {4}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Min, t, 0); });
  EXPECT_EQ(mx[0], 4);
  EXPECT_EQ(mx[1], 5);
  EXPECT_EQ(mx[2], 3);
  EXPECT_TRUE(std::isnan(mx[3]));
  EXPECT_EQ(mn[0], -2);
  EXPECT_EQ(mn[1], -1);
  EXPECT_EQ(mn[2], -8);
  EXPECT_TRUE(std::isnan(mn[3]));
  auto pr = run_tile<float>(in(x), {4, 4}, DType::f32, {4}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Prod, t, 1); });
  EXPECT_TRUE(std::isnan(pr[0]));
  std::vector<double> d{1.5, -2, 3, 0.125, 7, 1e300, 1e10, -1};
  auto dp = run_tile<double>(in(d), {2, 4}, DType::f64, {2}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Prod, t, 1); });
  EXPECT_EQ(dp[0], 1.5 * -2 * 3 * 0.125);
  EXPECT_EQ(dp[1], 7 * 1e300 * 1e10 * -1);  // -inf
}

TEST(CpuReduce, IntegerReductionsWrap) {
  std::vector<std::int8_t> x(16 * 16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int8_t>(90 + static_cast<int>(i % 37));
  auto s = run_tile<std::int8_t>(in(x), {16, 16}, DType::i8, {16}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Sum, t, 1); });
  for (int r = 0; r < 16; ++r) {
    int want = 0;
    for (int c = 0; c < 16; ++c) want += x[static_cast<std::size_t>(r * 16 + c)];
    EXPECT_EQ(s[static_cast<std::size_t>(r)], static_cast<std::int8_t>(want));
  }
  std::vector<std::uint32_t> u{65536, 65536, 3, 7, 0xffffffffu, 2, 5, 1};
  auto p = run_tile<std::uint32_t>(in(u), {4, 2}, DType::u32, {4}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Prod, t, 1); });
  EXPECT_EQ(p, (std::vector<std::uint32_t>{0, 21, 0xfffffffeu, 5}));
  auto mx = run_tile<std::uint32_t>(in(u), {8}, DType::u32, {1}, [](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Max, t, 0), {1}); });
  EXPECT_EQ(mx[0], 0xffffffffu);
  std::vector<std::uint8_t> b{0, 1, 0, 0, 1, 1, 0, 0};
  auto any = run_tile<std::uint8_t>({b.data(), DType::b1}, {2, 4}, DType::b1, {2}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Max, t, 1); });
  auto all = run_tile<std::uint8_t>({b.data(), DType::b1}, {2, 4}, DType::b1, {4}, [](KB& kb, ValueId t) { return kb.reduce(ReduceKind::Min, t, 0); });
  EXPECT_EQ(any, (std::vector<std::uint8_t>{1, 1}));
  EXPECT_EQ(all, (std::vector<std::uint8_t>{0, 1, 0, 0}));
}

TEST(CpuReduce, ArgMaxArgMinFirstIndexWinsTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{3, 7, 7, 1, 1, 7,    // row 0: max 7 first at 1, min 1 first at 3
                       nan, 2, nan, 2, -5, -5,  // row 1: NaN ignored; max 2 at 1; min -5 at 4
                       0, 0, 0, 0, 0, 0, nan, nan, nan, nan, nan, nan};  // row 2: all equal -> 0; row 3: all NaN -> 0
  // pad rows to [4, 8] with -inf / +inf would change the result, so use shape [4, 6] -> not a power of two;
  // instead store the rows into a [4, 8] tile whose last two columns repeat the row's first element.
  std::vector<float> t(32);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) t[static_cast<std::size_t>(r * 8 + c)] = x[static_cast<std::size_t>(r * 6 + (c < 6 ? c : 0))];
  auto am = run_tile<std::int64_t>(in(t), {4, 8}, DType::i64, {4}, [](KB& kb, ValueId v) { return kb.reduce(ReduceKind::ArgMax, v, 1); });
  auto an = run_tile<std::int64_t>(in(t), {4, 8}, DType::i64, {4}, [](KB& kb, ValueId v) { return kb.reduce(ReduceKind::ArgMin, v, 1); });
  EXPECT_EQ(am, (std::vector<std::int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(an, (std::vector<std::int64_t>{3, 4, 0, 0}));
  std::vector<std::int16_t> y{5, 9, 9, 2, 2, 5, 9, 2};  // [2, 4] along axis 0: columns (5,2) (9,5) (9,9) (2,2)
  auto cm = run_tile<std::int64_t>(in(y), {2, 4}, DType::i64, {4}, [](KB& kb, ValueId v) { return kb.reduce(ReduceKind::ArgMax, v, 0); });
  EXPECT_EQ(cm, (std::vector<std::int64_t>{0, 0, 0, 0}));
  auto cn = run_tile<std::int64_t>(in(y), {2, 4}, DType::i64, {4}, [](KB& kb, ValueId v) { return kb.reduce(ReduceKind::ArgMin, v, 0); });
  EXPECT_EQ(cn, (std::vector<std::int64_t>{1, 1, 0, 0}));
}

TEST(CpuReduce, ReduceMiddleAxisOf3D) {
  std::vector<std::int32_t> x(2 * 4 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i * 7 % 23) - 11;
  auto s = run_tile<std::int32_t>(in(x), {2, 4, 8}, DType::i32, {2, 8}, [](KB& kb, ValueId v) { return kb.reduce(ReduceKind::Sum, v, 1); });
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 8; ++c) {
      int want = 0;
      for (int b = 0; b < 4; ++b) want += x[static_cast<std::size_t>((a * 4 + b) * 8 + c)];
      EXPECT_EQ(s[static_cast<std::size_t>(a * 8 + c)], want);
    }
}

TEST(CpuScan, CumulativeSums) {
  const std::int64_t R = 4, C = 256;
  auto x = random_floats(R * C, 41);
  for (int axis = 0; axis < 2; ++axis) {
    auto o = run_tile<float>(in(x), {R, C}, DType::f32, {R, C}, [&](KB& kb, ValueId t) { return kb.scan(t, axis); });
    for (std::int64_t i = 0; i < R; ++i)
      for (std::int64_t j = 0; j < C; ++j) {
        double s = 0;
        if (axis == 1)
          for (std::int64_t k = 0; k <= j; ++k) s += x[static_cast<std::size_t>(i * C + k)];
        else
          for (std::int64_t k = 0; k <= i; ++k) s += x[static_cast<std::size_t>(k * C + j)];
        ASSERT_EQ(o[static_cast<std::size_t>(i * C + j)], static_cast<float>(s)) << axis << " " << i << "," << j;
      }
  }
  std::vector<std::int32_t> iv{2147483647, 1, 5, -10};
  auto io = run_tile<std::int32_t>(in(iv), {4}, DType::i32, {4}, [](KB& kb, ValueId t) { return kb.scan(t, 0); });
  EXPECT_EQ(io, (std::vector<std::int32_t>{2147483647, -2147483647 - 1, -2147483643, -2147483653ll + 4294967296ll}));
  std::vector<f16> hv{h(2048.0f), h(1.0f), h(1.0f), h(1.0f)};  // 2049 is not an f16; 2050, 2051 -> 2052 (ties to even)
  auto ho = run_tile<f16>(in(hv), {4}, DType::f16, {4}, [](KB& kb, ValueId t) { return kb.scan(t, 0); });
  EXPECT_EQ(static_cast<float>(ho[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(ho[1]), 2048.0f);  // 2049 ties to even
  EXPECT_EQ(static_cast<float>(ho[2]), 2050.0f);  // accumulator is exact (2050)
  EXPECT_EQ(static_cast<float>(ho[3]), 2052.0f);  // 2051 ties to even
}

// C[M, N] = A[M, K] B[K, N] in 64x64 tiles, looping over K tiles with the accumulator carried.
std::shared_ptr<const ir::Kernel> matmul_kernel(DType ab, DType acc, std::int64_t tile = 64) {
  KB kb("matmul", 2);
  const ValueId A = kb.tensor("a", ab, 2);
  const ValueId B = kb.tensor("b", ab, 2);
  const ValueId Cp = kb.piece("c", acc, {tile, tile});
  const ValueId pa = kb.partition(A, {tile, tile});
  const ValueId pb = kb.partition(B, {tile, tile});
  const ValueId zero = kb.constant(acc, {tile, tile}, ir::Scalar::of_int(0));
  const ValueId bi = kb.block_id(0), bj = kb.block_id(1);
  auto res = kb.for_(kb.i64c(0), kb.count(pa, 1), kb.i64c(1), {zero}, [&](ValueId k, std::vector<ValueId> c) {
    const ValueId a = kb.load(pa, {bi, k});
    const ValueId b = kb.load(pb, {k, bj});
    return std::vector<ValueId>{kb.mma(a, b, c[0])};
  });
  kb.store_piece(Cp, res[0]);
  return kb.finish();
}

template <class AB, class ACC>
void check_matmul(std::int64_t M, std::int64_t N, std::int64_t K, double rel_tol, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::uniform_int_distribution<int> ui(-128, 127);
  std::vector<AB> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
  auto gen = [&]() -> AB {
    if constexpr (std::is_same_v<AB, std::int8_t>) return static_cast<AB>(ui(g));
    else if constexpr (std::is_same_v<AB, std::uint8_t>) return static_cast<AB>(ui(g) + 128);
    else return AB(u(g));
  };
  auto val = [](AB v) {
    if constexpr (std::is_same_v<AB, f16> || std::is_same_v<AB, bf16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
  };
  for (auto& v : a) v = gen();
  for (auto& v : b) v = gen();
  std::vector<ACC> c(static_cast<std::size_t>(M * N));
  launch(matmul_kernel(dtype_of<AB>, dtype_of<ACC>), {ceil_div(M, 64), ceil_div(N, 64)},
         {targ(a, {M, K}), targ(b, {K, N}), targ(c, {M, N})});
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0, mag = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double p = val(a[static_cast<std::size_t>(i * K + k)]) * val(b[static_cast<std::size_t>(k * N + j)]);
        s += p;
        mag += std::fabs(p);
      }
      double got;
      if constexpr (std::is_same_v<ACC, f16>) got = static_cast<float>(c[static_cast<std::size_t>(i * N + j)]);
      else got = static_cast<double>(c[static_cast<std::size_t>(i * N + j)]);
      if (rel_tol == 0) ASSERT_EQ(got, s) << i << "," << j;
      else ASSERT_NEAR(got, s, rel_tol * (mag + 1.0)) << i << "," << j;
    }
}

TEST(CpuMma, MatmulAllDtypeCombinations) {
  check_matmul<f16, float>(256, 256, 256, 1e-6, 50);
  check_matmul<bf16, float>(250, 192, 200, 1e-6, 51);  // padded edges (M, K not multiples of 64)
  check_matmul<float, float>(130, 64, 100, 1e-6, 52);
  check_matmul<double, double>(64, 128, 192, 1e-14, 53);
  check_matmul<std::int8_t, std::int32_t>(128, 64, 256, 0, 54);
  check_matmul<std::uint8_t, std::int32_t>(64, 64, 130, 0, 55);
  check_matmul<f16, f16>(64, 64, 128, 2e-3, 56);
}

TEST(CpuMma, SingleTileIsExactlyRoundedOnce) {
  // acc + sum_k a*b in double, k ascending, one rounding: identical to the reference.
  const std::int64_t M = 16, N = 32, K = 64;
  auto a = random_floats(M * K, 60), b = random_floats(K * N, 61), acc = random_floats(M * N, 62);
  KB kb("mma1");
  const ValueId A = kb.tensor("a", DType::f32, 2), B = kb.tensor("b", DType::f32, 2), C = kb.tensor("c", DType::f32, 2);
  const ValueId out = kb.piece("out", DType::f32, {M * N});
  auto z = kb.i64c(0);
  const ValueId r = kb.mma(kb.load(kb.partition(A, {M, K}), {z, z}), kb.load(kb.partition(B, {K, N}), {z, z}),
                           kb.load(kb.partition(C, {M, N}), {z, z}));
  kb.store_piece(out, kb.reshape(r, {M * N}));
  std::vector<float> o(static_cast<std::size_t>(M * N));
  launch(kb.finish(), {1}, {targ(a, {M, K}), targ(b, {K, N}), targ(acc, {M, N}), targ(o, {M * N})});
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = acc[static_cast<std::size_t>(i * N + j)];
      for (std::int64_t k = 0; k < K; ++k)
        s += static_cast<double>(a[static_cast<std::size_t>(i * K + k)]) * b[static_cast<std::size_t>(k * N + j)];
      ASSERT_EQ(o[static_cast<std::size_t>(i * N + j)], static_cast<float>(s));
    }
}

}  // namespace
}  // namespace cpu_test
