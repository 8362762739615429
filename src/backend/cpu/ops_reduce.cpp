// Reductions, scans and matrix multiply-accumulate.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "interp.hpp"
#include "numeric.hpp"

namespace ctile::backend::cpu {
namespace {

[[noreturn]] void unsupported(const char* what, DType d) {
  throw InternalError(detail::cat("cpu backend: ", what, " not supported on ", dtype_name(d)));
}

struct Split {
  std::int64_t outer = 1, len = 1, inner = 1;
};
Split split(const Shape& s, int axis) {
  Split r;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    const std::int64_t e = s[static_cast<std::size_t>(d)];
    if (d < axis) r.outer *= e;
    else if (d == axis) r.len = e;
    else r.inner *= e;
  }
  return r;
}

template <class T>
bool is_nan_elem(typename Arith<T>::C v) {
  if constexpr (is_float_v<T>) return std::isnan(v);
  else return false;
}

template <class T>
void reduce_t(ir::ReduceKind kind, const Split& s, const Tile& x, Tile& out, bool propagate_nan) {
  using A = Arith<T>;
  using C = typename A::C;
  const T* in = x.as<T>();
  const std::int64_t n = s.outer * s.inner;
  auto at = [&](std::int64_t o, std::int64_t a, std::int64_t i) { return in[(o * s.len + a) * s.inner + i]; };
  switch (kind) {
    case ir::ReduceKind::Sum:
    case ir::ReduceKind::Prod: {
      const bool sum = kind == ir::ReduceKind::Sum;
      if constexpr (is_float_v<T>) {
        std::vector<double> acc(static_cast<std::size_t>(n), sum ? 0.0 : 1.0);
        for (std::int64_t o = 0; o < s.outer; ++o)
          for (std::int64_t a = 0; a < s.len; ++a) {
            double* r = acc.data() + o * s.inner;
            if (sum) for (std::int64_t i = 0; i < s.inner; ++i) r[i] += to_double(at(o, a, i));
            else for (std::int64_t i = 0; i < s.inner; ++i) r[i] *= to_double(at(o, a, i));
          }
        T* res = out.as<T>();
        for (std::int64_t i = 0; i < n; ++i) res[i] = float_from_double<T>(acc[static_cast<std::size_t>(i)]);
        return;
      } else if constexpr (is_int_v<T>) {
        T* res = out.as<T>();
        for (std::int64_t i = 0; i < n; ++i) res[i] = sum ? T(0) : T(1);
        for (std::int64_t o = 0; o < s.outer; ++o)
          for (std::int64_t a = 0; a < s.len; ++a) {
            T* r = res + o * s.inner;
            if (sum) for (std::int64_t i = 0; i < s.inner; ++i) r[i] = wadd<T>(r[i], at(o, a, i));
            else for (std::int64_t i = 0; i < s.inner; ++i) r[i] = wmul<T>(r[i], at(o, a, i));
          }
        return;
      } else {
        unsupported(ir::reduce_name(kind), x.dtype);
      }
    }
    case ir::ReduceKind::Max:
    case ir::ReduceKind::Min: {
      const bool mx = kind == ir::ReduceKind::Max;
      auto acc = std::make_unique<C[]>(static_cast<std::size_t>(n));  // not vector: C may be bool
      for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) acc[static_cast<std::size_t>(o * s.inner + i)] = A::up(at(o, 0, i));
      for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t a = 1; a < s.len; ++a) {
          C* r = acc.get() + o * s.inner;
          for (std::int64_t i = 0; i < s.inner; ++i) {
            const C v = A::up(at(o, a, i));
            if constexpr (is_float_v<T>) {
              if (propagate_nan && (std::isnan(r[i]) || std::isnan(v))) r[i] = std::numeric_limits<C>::quiet_NaN();
              else r[i] = mx ? std::fmax(r[i], v) : std::fmin(r[i], v);
            }
            else r[i] = mx ? (v > r[i] ? v : r[i]) : (v < r[i] ? v : r[i]);
          }
        }
      T* res = out.as<T>();
      for (std::int64_t i = 0; i < n; ++i) res[i] = A::down(acc[static_cast<std::size_t>(i)]);
      return;
    }
    case ir::ReduceKind::ArgMax:
    case ir::ReduceKind::ArgMin: {
      const bool mx = kind == ir::ReduceKind::ArgMax;
      std::int64_t* res = out.as<std::int64_t>();
      for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) {
          std::int64_t best_i = 0;
          bool have = false;
          C best{};
          for (std::int64_t a = 0; a < s.len; ++a) {
            const C v = A::up(at(o, a, i));
            if (is_nan_elem<T>(v)) continue;
            if (!have || (mx ? v > best : v < best)) {
              best = v;
              best_i = a;
              have = true;
            }
          }
          res[o * s.inner + i] = best_i;
        }
      return;
    }
  }
}

}  // namespace

void op_reduce(ir::ReduceKind kind, int axis, const Tile& x, Tile& out, bool propagate_nan) {
  const Split s = split(*x.shape, axis);
  dispatch(x.dtype, [&]<class T>(std::type_identity<T>) { reduce_t<T>(kind, s, x, out, propagate_nan); });
}

namespace {
// The combine of a scan over elements of T: the running value's type Acc (double for float sums
// and products, which round each output once; the compute type for float max/min; T for integers,
// wrapping), its identity (the first output of an exclusive scan), lift and down.
template <class T>
struct ScanCombine {
  using A = Arith<T>;
  using C = typename A::C;
  static constexpr bool wide = is_float_v<T>;  // sums and products of floats run in double
  ir::ReduceKind kind;

  template <class Acc>
  Acc identity() const {
    switch (kind) {
      case ir::ReduceKind::Sum: return Acc(0);
      case ir::ReduceKind::Prod: return Acc(1);
      case ir::ReduceKind::Max:
        if constexpr (std::numeric_limits<Acc>::has_infinity) return -std::numeric_limits<Acc>::infinity();
        else return std::numeric_limits<Acc>::lowest();
      default:
        if constexpr (std::numeric_limits<Acc>::has_infinity) return std::numeric_limits<Acc>::infinity();
        else return std::numeric_limits<Acc>::max();
    }
  }
};

// out[line] = scan of x[line] along the axis, with combine `comb` on Acc values.
template <class T, class Acc, class Lift, class Comb, class Down>
void scan_lines(const Split& s, const Tile& x, Tile& out, bool exclusive, bool reverse, Acc identity, Lift lift, Comb comb,
                Down down) {
  const T* in = x.as<T>();
  T* res = out.as<T>();
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.inner; ++i) {
      Acc run = identity;
      for (std::int64_t step = 0; step < s.len; ++step) {
        const std::int64_t a = reverse ? s.len - 1 - step : step;
        const std::int64_t at = (o * s.len + a) * s.inner + i;
        const Acc v = lift(in[at]);
        // The inclusive run starts at the first element itself (a max of NaNs stays NaN, a sum of
        // -0s stays -0); the exclusive output lags it by one and starts at the identity.
        const Acc next = step == 0 ? v : comb(run, v);
        res[at] = down(exclusive ? run : next);
        run = next;
      }
    }
}
}  // namespace

void op_scan(ir::ReduceKind kind, int axis, bool exclusive, bool reverse, const Tile& x, Tile& out) {
  const Split s = split(*x.shape, axis);
  dispatch(x.dtype, [&]<class T>(std::type_identity<T>) {
    using A = Arith<T>;
    using C = typename A::C;
    const ScanCombine<T> sc{kind};
    const bool mx = kind == ir::ReduceKind::Max;
    if constexpr (is_float_v<T>) {
      if (kind == ir::ReduceKind::Sum || kind == ir::ReduceKind::Prod) {
        const bool sum = kind == ir::ReduceKind::Sum;
        return scan_lines<T, double>(s, x, out, exclusive, reverse, sc.template identity<double>(),
                                     [](T v) { return to_double(v); },
                                     [sum](double a, double b) { return sum ? a + b : a * b; },
                                     [](double a) { return float_from_double<T>(a); });
      }
      return scan_lines<T, C>(s, x, out, exclusive, reverse, sc.template identity<C>(), [](T v) { return A::up(v); },
                              [mx](C a, C b) { return mx ? std::fmax(a, b) : std::fmin(a, b); },
                              [](C a) { return A::down(a); });
    } else if constexpr (is_bool_v<T>) {
      if (kind != ir::ReduceKind::Max && kind != ir::ReduceKind::Min) unsupported("sum/prod scan", x.dtype);
      return scan_lines<T, bool>(s, x, out, exclusive, reverse, !mx, [](bool v) { return v; },
                                 [mx](bool a, bool b) { return mx ? (a || b) : (a && b); }, [](bool a) { return a; });
    } else {
      return scan_lines<T, T>(s, x, out, exclusive, reverse, sc.template identity<T>(), [](T v) { return v; },
                              [kind](T a, T b) {
                                switch (kind) {
                                  case ir::ReduceKind::Sum: return wadd<T>(a, b);
                                  case ir::ReduceKind::Prod: return wmul<T>(a, b);
                                  case ir::ReduceKind::Max: return b > a ? b : a;
                                  default: return b < a ? b : a;
                                }
                              },
                              [](T a) { return a; });
    }
  });
}

namespace {

// The products of one batch: widened operands W (double or int64), accumulator and output
// pointers at their batch offsets; S one row of sums.
template <class W, class C, class Round>
void mma_rows(const W* A, const W* B, const C* c, C* o, std::int64_t M, std::int64_t K, std::int64_t N, std::vector<W>& S,
              Round round) {
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t j = 0; j < N; ++j) S[static_cast<std::size_t>(j)] = static_cast<W>(c[i * N + j]);
    for (std::int64_t k = 0; k < K; ++k) {
      const W aik = A[static_cast<std::size_t>(i * K + k)];
      const W* brow = B + k * N;
      for (std::int64_t j = 0; j < N; ++j) S[static_cast<std::size_t>(j)] += aik * brow[j];
    }
    for (std::int64_t j = 0; j < N; ++j) o[i * N + j] = round(S[static_cast<std::size_t>(j)]);
  }
}

}  // namespace

// [M,K] x [K,N] + [M,N], or batched: [P,M,K] x [P,K,N] + [P,M,N], one product per leading index.
void op_mma(const Tile& a, const Tile& b, const Tile& acc, Tile& out) {
  const int r = a.rank();
  const std::int64_t P = r == 3 ? (*a.shape)[0] : 1;
  const std::int64_t M = (*a.shape)[static_cast<std::size_t>(r - 2)], K = (*a.shape)[static_cast<std::size_t>(r - 1)],
                     N = (*b.shape)[static_cast<std::size_t>(r - 1)];
  if (is_float(a.dtype)) {
    std::vector<double> A(static_cast<std::size_t>(a.n)), B(static_cast<std::size_t>(b.n)), S(static_cast<std::size_t>(N));
    auto widen = [](const Tile& t, std::vector<double>& dst) {
      dispatch(t.dtype, [&]<class T>(std::type_identity<T>) {
        if constexpr (is_float_v<T>) {
          const T* p = t.as<T>();
          for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = to_double(p[i]);
        }
      });
    };
    widen(a, A);
    widen(b, B);
    dispatch(acc.dtype, [&]<class T>(std::type_identity<T>) {
      if constexpr (is_float_v<T>) {
        for (std::int64_t p = 0; p < P; ++p) {
          // The accumulator is read as double: to_double, not a plain cast (f16/bf16 are classes).
          std::vector<double> C(static_cast<std::size_t>(M * N));
          const T* c = acc.as<T>() + p * M * N;
          for (std::size_t i = 0; i < C.size(); ++i) C[i] = to_double(c[i]);
          mma_rows(A.data() + p * M * K, B.data() + p * K * N, C.data(), C.data(), M, K, N, S, [](double v) { return v; });
          T* o = out.as<T>() + p * M * N;
          for (std::size_t i = 0; i < C.size(); ++i) o[i] = float_from_double<T>(C[i]);
        }
      } else {
        unsupported("mma accumulator", acc.dtype);
      }
    });
    return;
  }
  std::vector<std::int64_t> A(static_cast<std::size_t>(a.n)), B(static_cast<std::size_t>(b.n)), S(static_cast<std::size_t>(N));
  auto widen = [](const Tile& t, std::vector<std::int64_t>& dst) {
    dispatch(t.dtype, [&]<class T>(std::type_identity<T>) {
      if constexpr (std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>) {
        const T* p = t.as<T>();
        for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = p[i];
      } else {
        unsupported("mma operand", t.dtype);
      }
    });
  };
  widen(a, A);
  widen(b, B);
  if (acc.dtype != DType::i32) unsupported("mma accumulator", acc.dtype);
  for (std::int64_t p = 0; p < P; ++p)
    mma_rows(A.data() + p * M * K, B.data() + p * K * N, acc.as<std::int32_t>() + p * M * N, out.as<std::int32_t>() + p * M * N, M,
             K, N, S, [](std::int64_t v) { return static_cast<std::int32_t>(v); });
}

}  // namespace ctile::backend::cpu
