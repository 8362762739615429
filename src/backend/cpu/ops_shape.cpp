// Tile construction and shape manipulation: Constant, Iota, Broadcast, Reshape, Permute, Cat, Extract.
#include <array>
#include <cstring>

#include "interp.hpp"
#include "numeric.hpp"

namespace ctile::backend::cpu {
namespace {

// Row-major strides (elements) of a tile shape.
std::array<std::int64_t, kMaxRank> row_major(const Shape& s) {
  std::array<std::int64_t, kMaxRank> st{};
  std::int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

// dst (row-major, shape `shape`) [e] = src[base + sum_d e_d * sstride[d]]
template <class W>
void strided_copy(const W* src, std::int64_t base, const Shape& shape, const std::int64_t* sstride, W* dst) {
  const int r = static_cast<int>(shape.size());
  if (r == 0) {
    dst[0] = src[base];
    return;
  }
  const std::int64_t inner = shape[static_cast<std::size_t>(r - 1)];
  const std::int64_t istride = sstride[r - 1];
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t rows = 1;
  for (int d = 0; d < r - 1; ++d) rows *= shape[static_cast<std::size_t>(d)];
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t off = base;
    for (int d = 0; d < r - 1; ++d) off += idx[static_cast<std::size_t>(d)] * sstride[d];
    const W* s = src + off;
    if (istride == 1) {
      std::memcpy(dst, s, static_cast<std::size_t>(inner) * sizeof(W));
    } else {
      for (std::int64_t e = 0; e < inner; ++e) dst[e] = s[e * istride];
    }
    dst += inner;
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < shape[static_cast<std::size_t>(d)]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
}

}  // namespace

void op_constant(const ir::Scalar& v, Tile& out) {
  dispatch(out.dtype, [&]<class T>(std::type_identity<T>) {
    const T c = scalar_to<T>(v);
    T* o = out.as<T>();
    for (std::int64_t i = 0; i < out.n; ++i) o[i] = c;
  });
}

void op_iota(Tile& out, std::int64_t floor) {
  const std::int64_t g = floor > 1 ? floor : 1;
  dispatch(out.dtype, [&]<class T>(std::type_identity<T>) {
    T* o = out.as<T>();
    for (std::int64_t i = 0; i < out.n; ++i) o[i] = convert_elem<T, std::int64_t>(i - i % g);
  });
}

void op_broadcast(const Tile& x, Tile& out) {
  const Shape& xs = *x.shape;
  auto st = row_major(xs);
  for (std::size_t d = 0; d < xs.size(); ++d)
    if (xs[d] == 1) st[d] = 0;
  dispatch_width(x.dtype, [&]<class W>(std::type_identity<W>) {
    strided_copy<W>(x.as<W>(), 0, *out.shape, st.data(), out.as<W>());
  });
}

void op_reshape(const Tile& x, Tile& out) { std::memcpy(out.bytes(), x.bytes(), x.size_bytes()); }

void op_permute(const std::vector<int>& perm, const Tile& x, Tile& out) {
  const auto xst = row_major(*x.shape);
  std::array<std::int64_t, kMaxRank> st{};
  for (std::size_t i = 0; i < perm.size(); ++i) st[i] = xst[static_cast<std::size_t>(perm[i])];
  dispatch_width(x.dtype, [&]<class W>(std::type_identity<W>) {
    strided_copy<W>(x.as<W>(), 0, *out.shape, st.data(), out.as<W>());
  });
}

void op_cat(int axis, const Tile& a, const Tile& b, Tile& out) {
  const Shape& as = *a.shape;
  const Shape& bs = *b.shape;
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= as[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < as.size(); ++d) inner *= as[d];
  const auto es = static_cast<std::size_t>(dtype_size(a.dtype));
  const std::size_t ca = static_cast<std::size_t>(as[static_cast<std::size_t>(axis)] * inner) * es;
  const std::size_t cb = static_cast<std::size_t>(bs[static_cast<std::size_t>(axis)] * inner) * es;
  std::byte* o = out.bytes();
  const std::byte* pa = a.bytes();
  const std::byte* pb = b.bytes();
  for (std::int64_t i = 0; i < outer; ++i) {
    std::memcpy(o, pa, ca);
    o += ca;
    pa += ca;
    std::memcpy(o, pb, cb);
    o += cb;
    pb += cb;
  }
}

void op_extract(const Shape& offsets, const Tile& x, Tile& out) {
  const auto st = row_major(*x.shape);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < offsets.size(); ++d) base += offsets[d] * st[d];
  dispatch_width(x.dtype, [&]<class W>(std::type_identity<W>) {
    strided_copy<W>(x.as<W>(), base, *out.shape, st.data(), out.as<W>());
  });
}

}  // namespace ctile::backend::cpu
