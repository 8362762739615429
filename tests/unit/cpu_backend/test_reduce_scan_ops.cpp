// Reductions of bool tiles (any/all as max/min) and the scan family (cumsum, cumprod, cummax,
// cummin; inclusive or exclusive, forward or reverse) against references written here, on fresh
// random inputs and edge values. Also runs through the generated code in the host emulation.
#include <limits>

#include "../../../src/backend/cpu/numeric.hpp"
#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::ReduceKind;

std::vector<std::uint8_t> random_bools(std::size_t n, unsigned seed, int one_in) {
  std::mt19937 g(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = g() % static_cast<unsigned>(one_in) == 0 ? 1 : 0;
  return v;
}

// any / all along each axis of a [R, C] bool tile: sparse trues (any is mostly false somewhere),
// dense trues (all is mostly true somewhere), and a row/column that is all true or all false.
TEST(CpuBoolReduce, AnyAllAlongEachAxis) {
  const std::int64_t R = 8, C = 32;
  for (int density : {2, 9, 40}) {
    auto x = random_bools(R * C, 100 + static_cast<unsigned>(density), density);
    for (std::int64_t j = 0; j < C; ++j) x[static_cast<std::size_t>(2 * C + j)] = 1;  // row 2 all true
    for (std::int64_t i = 0; i < R; ++i) x[static_cast<std::size_t>(i * C + 5)] = 0;  // column 5 all false
    if (density == 2)
      for (auto& b : x) b = b || (&b - x.data()) % C == 7;  // column 7 all true
    for (int axis = 0; axis < 2; ++axis) {
      const std::int64_t n = axis == 0 ? C : R, len = axis == 0 ? R : C;
      for (ReduceKind k : {ReduceKind::Max, ReduceKind::Min}) {
        auto o = run_tile<std::uint8_t>({x.data(), DType::b1}, {R, C}, DType::b1, {n},
                                        [&](KB& kb, ValueId t) { return kb.reduce(k, t, axis); });
        for (std::int64_t j = 0; j < n; ++j) {
          bool any = false, all = true;
          for (std::int64_t i = 0; i < len; ++i) {
            const bool b = x[static_cast<std::size_t>(axis == 0 ? i * C + j : j * C + i)] != 0;
            any = any || b;
            all = all && b;
          }
          ASSERT_EQ(o[static_cast<std::size_t>(j)], (k == ReduceKind::Max ? any : all) ? 1 : 0)
              << (k == ReduceKind::Max ? "any" : "all") << " axis " << axis << " index " << j << " density " << density;
        }
      }
    }
  }
}

// To a scalar (every element reduced: the tile block's threads all take part).
TEST(CpuBoolReduce, AnyAllOfAWholeTile) {
  for (int pos : {-1, 0, 511, 1000}) {
    std::vector<std::uint8_t> zeros(1024, 0), ones(1024, 1);
    if (pos >= 0) {
      zeros[static_cast<std::size_t>(pos)] = 1;
      ones[static_cast<std::size_t>(pos)] = 0;
    }
    auto any = run_tile<std::uint8_t>({zeros.data(), DType::b1}, {1024}, DType::b1, {1},
                                      [&](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Max, t, 0), {1}); });
    auto all = run_tile<std::uint8_t>({ones.data(), DType::b1}, {1024}, DType::b1, {1},
                                      [&](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Min, t, 0), {1}); });
    EXPECT_EQ(any[0], pos >= 0 ? 1 : 0) << pos;
    EXPECT_EQ(all[0], pos >= 0 ? 0 : 1) << pos;
  }
}


// ---- scans ----

struct ScanVariant {
  ReduceKind kind;
  bool exclusive, reverse;
};
std::string variant_str(const ScanVariant& v) {
  return std::string(ir::reduce_name(v.kind)) + (v.exclusive ? " exclusive" : " inclusive") + (v.reverse ? " reverse" : "");
}
std::vector<ScanVariant> variants(bool is_bool) {
  std::vector<ScanVariant> r;
  for (ReduceKind k : {ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max, ReduceKind::Min})
    if (!is_bool || k == ReduceKind::Max || k == ReduceKind::Min)
      for (bool e : {false, true})
        for (bool rv : {false, true}) r.push_back({k, e, rv});
  return r;
}

// Every variant of a dtype in one kernel (one output each): x is [R, C], scanned along `axis`.
template <class T>
std::vector<std::vector<T>> run_scans(std::vector<T>& x, std::int64_t R, std::int64_t C, int axis,
                                      const std::vector<ScanVariant>& vs) {
  KB kb("scans", 2);
  const ValueId t = kb.tensor("in", dtype_of<T>, 2);
  std::vector<ValueId> outs;
  for (std::size_t i = 0; i < vs.size(); ++i) outs.push_back(kb.piece("out" + std::to_string(i), dtype_of<T>, {R, C}));
  const ValueId v = kb.load(kb.partition(t, {R, C}), {kb.i64c(0), kb.i64c(0)});
  for (std::size_t i = 0; i < vs.size(); ++i) kb.store_piece(outs[i], kb.scan(v, axis, vs[i].kind, vs[i].exclusive, vs[i].reverse));
  std::vector<std::vector<T>> o(vs.size(), std::vector<T>(static_cast<std::size_t>(R * C)));
  std::vector<backend::ArgValue> args{targ(x.data(), dtype_of<T>, {R, C})};
  for (auto& ov : o) args.push_back(targ(ov.data(), dtype_of<T>, {R, C}));
  launch(kb.finish(), {1, 1}, args);
  return o;
}

// The reference, from scratch for every output: the elements before (exclusive) or up to
// (inclusive) position k in the scan's direction, folded in that order starting at the first of
// them (none: the identity); float sums and products in double, rounded once.
template <class T>
T ref_scan(const std::vector<T>& x, std::int64_t R, std::int64_t C, int axis, const ScanVariant& v, std::int64_t r, std::int64_t c) {
  const std::int64_t len = axis == 0 ? R : C, pos = axis == 0 ? r : c;
  auto at = [&](std::int64_t k) { return x[static_cast<std::size_t>(axis == 0 ? k * C + c : r * C + k)]; };
  std::vector<std::int64_t> idx;  // in scan order
  for (std::int64_t s = 0; s < len; ++s) {
    const std::int64_t k = v.reverse ? len - 1 - s : s;
    const bool before = v.reverse ? k > pos : k < pos;
    if (before || (!v.exclusive && k == pos)) idx.push_back(k);
  }
  if constexpr (std::is_same_v<T, bool>) {
    bool acc = v.kind == ReduceKind::Min;
    for (auto k : idx) acc = v.kind == ReduceKind::Max ? (acc || at(k)) : (acc && at(k));
    return acc;
  } else if constexpr (backend::cpu::is_float_v<T>) {
    using backend::cpu::to_double;
    if (v.kind == ReduceKind::Sum || v.kind == ReduceKind::Prod) {
      double acc = v.kind == ReduceKind::Sum ? 0.0 : 1.0;
      for (std::size_t j = 0; j < idx.size(); ++j) {
        const double e = to_double(at(idx[j]));
        acc = j == 0 ? e : v.kind == ReduceKind::Sum ? acc + e : acc * e;
      }
      return backend::cpu::float_from_double<T>(acc);
    }
    double acc = v.kind == ReduceKind::Max ? -INFINITY : INFINITY;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const double e = to_double(at(idx[j]));
      acc = j == 0 ? e : v.kind == ReduceKind::Max ? std::fmax(acc, e) : std::fmin(acc, e);
    }
    return backend::cpu::float_from_double<T>(acc);
  } else {
    using U = std::make_unsigned_t<T>;
    U acc = v.kind == ReduceKind::Sum ? U(0) : U(1);
    T m = v.kind == ReduceKind::Max ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
    for (auto k : idx) {
      const T e = at(k);
      if (v.kind == ReduceKind::Sum) acc = static_cast<U>(acc + static_cast<U>(e));
      else if (v.kind == ReduceKind::Prod) acc = static_cast<U>(acc * static_cast<U>(e));
      else m = v.kind == ReduceKind::Max ? std::max(m, e) : std::min(m, e);
    }
    return v.kind == ReduceKind::Sum || v.kind == ReduceKind::Prod ? static_cast<T>(acc) : m;
  }
}

template <class T>
double show(T v) {
  if constexpr (backend::cpu::is_float_v<T>) return backend::cpu::to_double(v);
  else return static_cast<double>(v);
}
template <class T>
bool same_bits(T a, T b) {
  if constexpr (backend::cpu::is_float_v<T>) {
    const double x = backend::cpu::to_double(a), y = backend::cpu::to_double(b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y && std::signbit(x) == std::signbit(y);
  } else {
    return a == b;
  }
}

template <class T>
void check_scans(std::vector<T> x, std::int64_t R, std::int64_t C, std::vector<int> axes) {
  const auto vs = variants(std::is_same_v<T, bool>);
  for (int axis : axes) {
    auto o = run_scans<T>(x, R, C, axis, vs);
    for (std::size_t vi = 0; vi < vs.size(); ++vi)
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t c = 0; c < C; ++c) {
          const T want = ref_scan<T>(x, R, C, axis, vs[vi], r, c);
          const T got = o[vi][static_cast<std::size_t>(r * C + c)];
          if constexpr (std::is_same_v<T, bool>) {
            ASSERT_EQ(got, want) << variant_str(vs[vi]) << " axis " << axis << " at " << r << "," << c;
          } else {
            ASSERT_TRUE(same_bits(got, want)) << dtype_name(dtype_of<T>) << " " << variant_str(vs[vi]) << " axis " << axis
                                              << " at " << r << "," << c << ": got " << show(got) << ", want " << show(want);
          }
        }
  }
}

template <class T>
std::vector<T> scan_input(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  if constexpr (backend::cpu::is_float_v<T>) {
    // Near 1 so that products of a row stay finite; a few edge values (NaN, +-inf, -0, a
    // subnormal, a large magnitude) for max/min and for the propagation through sums.
    std::uniform_real_distribution<double> u(0.6, 1.6);
    for (auto& e : v) e = backend::cpu::float_from_double<T>((g() & 1 ? 1 : -1) * u(g));
    const double edges[] = {NAN, INFINITY, -INFINITY, -0.0, 0x1p-140, 1e30, -1e30};
    for (std::size_t i = 0; i < std::size(edges); ++i) v[(i * 37 + 11) % n] = backend::cpu::float_from_double<T>(edges[i]);
  } else if constexpr (std::is_same_v<T, bool>) {
    for (auto& e : v) e = g() % 3 == 0;
  } else {
    for (auto& e : v) e = static_cast<T>(g());  // wraps in sums and products
    v[3] = std::numeric_limits<T>::min();
    v[4] = std::numeric_limits<T>::max();
  }
  return v;
}

TEST(CpuScan, EveryVariantF32BothAxes) { check_scans(scan_input<float>(8 * 64, 1), 8, 64, {0, 1}); }
TEST(CpuScan, EveryVariantI32BothAxes) { check_scans(scan_input<std::int32_t>(8 * 64, 2), 8, 64, {0, 1}); }
TEST(CpuScan, EveryVariantOtherTypes) {
  check_scans(scan_input<double>(4 * 32, 3), 4, 32, {1});
  check_scans(scan_input<f16>(4 * 32, 4), 4, 32, {1});
  check_scans(scan_input<bf16>(16 * 8, 5), 16, 8, {0});
  check_scans(scan_input<std::uint8_t>(4 * 32, 6), 4, 32, {1});
  check_scans(scan_input<std::int64_t>(32 * 4, 7), 32, 4, {0});
}
TEST(CpuScan, BoolCummaxIsARunningAny) {
  auto bytes = scan_input<std::uint8_t>(8 * 32, 8);
  std::vector<std::uint8_t> x(bytes.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = bytes[i] % 3 == 0;
  const auto vs = variants(true);
  KB kb("bool_scans", 2);
  const ValueId t = kb.tensor("in", DType::b1, 2);
  std::vector<ValueId> outs;
  for (std::size_t i = 0; i < vs.size(); ++i) outs.push_back(kb.piece("out" + std::to_string(i), DType::b1, {8, 32}));
  const ValueId v = kb.load(kb.partition(t, {8, 32}), {kb.i64c(0), kb.i64c(0)});
  for (std::size_t i = 0; i < vs.size(); ++i) kb.store_piece(outs[i], kb.scan(v, 1, vs[i].kind, vs[i].exclusive, vs[i].reverse));
  std::vector<std::vector<std::uint8_t>> res(vs.size(), std::vector<std::uint8_t>(8 * 32));
  std::vector<backend::ArgValue> args{targ(x.data(), DType::b1, {8, 32})};
  for (auto& r : res) args.push_back(targ(r.data(), DType::b1, {8, 32}));
  launch(kb.finish(), {1, 1}, args);
  for (std::size_t vi = 0; vi < vs.size(); ++vi)
    for (std::int64_t r = 0; r < 8; ++r)
      for (std::int64_t c = 0; c < 32; ++c) {
        bool acc = vs[vi].kind == ReduceKind::Min;
        for (std::int64_t k = 0; k < 32; ++k) {
          const bool in_set = vs[vi].reverse ? (vs[vi].exclusive ? k > c : k >= c) : (vs[vi].exclusive ? k < c : k <= c);
          if (in_set) acc = vs[vi].kind == ReduceKind::Max ? (acc || x[static_cast<std::size_t>(r * 32 + k)]) : (acc && x[static_cast<std::size_t>(r * 32 + k)]);
        }
        ASSERT_EQ(res[vi][static_cast<std::size_t>(r * 32 + c)], acc ? 1 : 0) << variant_str(vs[vi]) << " at " << r << "," << c;
      }
}

// The first output of an exclusive scan is the identity; a 1-element tile too (the generated code
// has a separate path for it).
TEST(CpuScan, ExclusiveStartsAtTheIdentity) {
  std::vector<float> x{5.0f};
  for (const ScanVariant& v : variants(false)) {
    auto o = run_tile<float>(in(x), {1}, DType::f32, {1}, [&](KB& kb, ValueId t) { return kb.scan(t, 0, v.kind, v.exclusive, v.reverse); });
    const float want = !v.exclusive ? 5.0f
                       : v.kind == ReduceKind::Sum ? 0.0f
                       : v.kind == ReduceKind::Prod ? 1.0f
                       : v.kind == ReduceKind::Max ? -INFINITY
                                                   : INFINITY;
    EXPECT_EQ(bits(o[0]), bits(want)) << variant_str(v);
  }
  std::vector<std::int16_t> xi{7, 7, 7, 7};
  auto mx = run_tile<std::int16_t>(in(xi), {4}, DType::i16, {4}, [](KB& kb, ValueId t) { return kb.scan(t, 0, ReduceKind::Max, true, false); });
  auto mn = run_tile<std::int16_t>(in(xi), {4}, DType::i16, {4}, [](KB& kb, ValueId t) { return kb.scan(t, 0, ReduceKind::Min, true, true); });
  EXPECT_EQ(mx[0], -32768);
  EXPECT_EQ(mn[3], 32767);
  EXPECT_EQ(mx[1], 7);
}

// A 3-D tile scanned along its middle axis.
TEST(CpuScan, MiddleAxisOf3D) {
  auto x = random_floats(4 * 8 * 4, 9, -2, 2);
  for (const ScanVariant& v : variants(false)) {
    auto o = run_tile<float>(in(x), {4, 8, 4}, DType::f32, {4, 8, 4}, [&](KB& kb, ValueId t) { return kb.scan(t, 1, v.kind, v.exclusive, v.reverse); });
    for (std::int64_t a = 0; a < 4; ++a)
      for (std::int64_t c = 0; c < 4; ++c) {
        std::vector<float> line(8);
        for (std::int64_t b = 0; b < 8; ++b) line[static_cast<std::size_t>(b)] = x[static_cast<std::size_t>((a * 8 + b) * 4 + c)];
        for (std::int64_t b = 0; b < 8; ++b)
          ASSERT_TRUE(same_bits(o[static_cast<std::size_t>((a * 8 + b) * 4 + c)], ref_scan<float>(line, 1, 8, 1, v, 0, b)))
              << variant_str(v) << " at " << a << "," << b << "," << c;
      }
  }
}
}  // namespace
}  // namespace cpu_test
