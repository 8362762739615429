// Memory ops: Load, LoadPiece, LoadWindow, StorePiece, StoreWindow, Gather, ScatterPiece, ScatterUnchecked, AtomicRMW,
// AtomicCAS. All index arithmetic is 64-bit and bounds-checked per coordinate, so nothing outside
// a tensor is ever touched, whatever the indices.
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "interp.hpp"
#include "numeric.hpp"
#include "race_checker.hpp"

namespace ctile::backend::cpu {
namespace {

// Elements in tensors: bool is one byte (non-zero = true); the rest are their own representation.
template <class T>
T read_elem(const std::byte* p) {
  if constexpr (is_bool_v<T>) {
    return *reinterpret_cast<const std::uint8_t*>(p) != 0;
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
}
template <class T>
void write_elem(std::byte* p, T v) {
  if constexpr (is_bool_v<T>) {
    *reinterpret_cast<std::uint8_t*>(p) = v ? 1 : 0;
  } else {
    std::memcpy(p, &v, sizeof(T));
  }
}

// Elements of tensors that several blocks may write concurrently (Atomic, Unchecked) are accessed
// with relaxed atomic loads/stores (plain moves on common hardware): a racy kernel then stores one
// of the racing values instead of being undefined behaviour in the interpreter itself.
template <class T>
using Carrier = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                   std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                      std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
template <class W>
bool atomic_aligned(const std::byte* p) {
  return reinterpret_cast<std::uintptr_t>(p) % std::atomic_ref<W>::required_alignment == 0;
}
template <class T>
T read_shared(const std::byte* p) {
  using W = Carrier<T>;
  W w;
  if (atomic_aligned<W>(p)) w = std::atomic_ref<W>(*reinterpret_cast<W*>(const_cast<std::byte*>(p))).load(std::memory_order_relaxed);
  else std::memcpy(&w, p, sizeof(W));
  if constexpr (is_bool_v<T>) {
    return w != 0;
  } else {
    return std::bit_cast<T>(w);
  }
}
template <class T>
void write_shared(std::byte* p, T v) {
  using W = Carrier<T>;
  W w;
  if constexpr (is_bool_v<T>) w = v ? 1 : 0;
  else w = std::bit_cast<W>(v);
  if (atomic_aligned<W>(p)) std::atomic_ref<W>(*reinterpret_cast<W*>(p)).store(w, std::memory_order_relaxed);
  else std::memcpy(p, &w, sizeof(W));
}

// The window of a tile over a tensor: along dim d, tile elements e with
// lo[d] <= e < hi[d] are inside the tensor, at coordinate base[d] + e.
struct Window {
  int rank = 0;
  bool empty = false;
  std::array<std::int64_t, kMaxRank> base{}, lo{}, hi{};
};

// The window of a tile of shape `tile` whose element 0 lies at element coordinates `origin` (any
// values), keeping along each axis only the tile elements in [keep_lo[d], keep_hi[d]) (no limit
// when null).
Window window_at(const TensorView& t, const Shape& tile, const std::int64_t* origin, const std::int64_t* keep_lo = nullptr,
                 const std::int64_t* keep_hi = nullptr) {
  Window w;
  w.rank = static_cast<int>(tile.size());
  for (int d = 0; d < w.rank; ++d) {
    const auto ud = static_cast<std::size_t>(d);
    const std::int64_t ts = tile[ud], c0 = origin[d];
    if (c0 <= -ts || c0 >= t.ext[ud]) {
      w.empty = true;
      return w;
    }
    std::int64_t lo = c0 < 0 ? -c0 : 0, hi = std::min(ts, t.ext[ud] - c0);  // c0 in (-ts, ext): no overflow
    if (keep_lo) lo = std::max(lo, keep_lo[d]);
    if (keep_hi) hi = std::min(hi, keep_hi[d]);
    if (lo >= hi) {
      w.empty = true;
      return w;
    }
    w.base[ud] = c0;
    w.lo[ud] = lo;
    w.hi[ud] = hi;
  }
  return w;
}

// The window of the tile at `tile_index` (element origin tile_index * tile; an origin that
// overflows is outside).
Window window(const TensorView& t, const Shape& tile, const std::int64_t* tile_index) {
  std::array<std::int64_t, kMaxRank> origin{};
  for (std::size_t d = 0; d < tile.size(); ++d)
    if (__builtin_mul_overflow(tile_index[d], tile[d], &origin[d])) {
      Window w;
      w.rank = static_cast<int>(tile.size());
      w.empty = true;
      return w;
    }
  return window_at(t, tile, origin.data());
}

// Calls row(out_offset, tensor_offset_of_element_0_of_row, in_row) for every row (last dim) of
// the tile; tensor offsets are in elements.
template <class F>
void for_rows(const TensorView& t, const Shape& tile, const Window& w, F row) {
  const int r = w.rank;
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t rows = 1;
  for (int d = 0; d < r - 1; ++d) rows *= tile[static_cast<std::size_t>(d)];
  const std::int64_t inner = tile[static_cast<std::size_t>(r - 1)];
  for (std::int64_t q = 0; q < rows; ++q) {
    bool in = true;
    std::int64_t off = 0;
    for (int d = 0; d < r - 1; ++d) {
      const auto ud = static_cast<std::size_t>(d);
      if (idx[ud] < w.lo[ud] || idx[ud] >= w.hi[ud]) in = false;
      off += (w.base[ud] + idx[ud]) * t.stride[ud];
    }
    row(q * inner, off, in);
    for (int d = r - 2; d >= 0; --d) {
      const auto ud = static_cast<std::size_t>(d);
      if (++idx[ud] < tile[ud]) break;
      idx[ud] = 0;
    }
  }
}

// Index tiles converted to int64 (u64 values past INT64_MAX become -1: out of bounds).
struct Indices {
  int rank = 0;
  std::int64_t n = 0;
  std::vector<std::int64_t> v;  // [d * n + e]
  explicit Indices(const std::vector<const Tile*>& idx) : rank(static_cast<int>(idx.size())) {
    n = rank ? idx[0]->n : 1;
    v.resize(static_cast<std::size_t>(rank * n));
    for (int d = 0; d < rank; ++d) {
      std::int64_t* dst = v.data() + d * n;
      dispatch(idx[static_cast<std::size_t>(d)]->dtype, [&]<class T>(std::type_identity<T>) {
        if constexpr (is_int_v<T>) {
          const T* s = idx[static_cast<std::size_t>(d)]->as<T>();
          for (std::int64_t e = 0; e < n; ++e) {
            if constexpr (std::is_same_v<T, std::uint64_t>)
              dst[e] = s[e] > static_cast<std::uint64_t>(INT64_MAX) ? -1 : static_cast<std::int64_t>(s[e]);
            else
              dst[e] = static_cast<std::int64_t>(s[e]);
          }
        } else {
          throw InternalError(detail::cat("cpu backend: index tile of dtype ", dtype_name(idx[0]->dtype)));
        }
      });
    }
  }
  std::int64_t at(int d, std::int64_t e) const { return v[static_cast<std::size_t>(d * n + e)]; }
  // Global coordinates of element e are idx + origin; false when outside [0, ext) (or, with a
  // `limit`, outside [0, limit) before adding the origin).
  bool locate(const TensorView& t, std::int64_t e, std::int64_t* coords, std::int64_t& off,
              const std::int64_t* origin = nullptr, const Shape* limit = nullptr) const {
    off = 0;
    for (int d = 0; d < rank; ++d) {
      const auto ud = static_cast<std::size_t>(d);
      std::int64_t c = at(d, e);
      if (limit && (c < 0 || c >= (*limit)[ud])) return false;
      if (origin) c += origin[d];
      if (c < 0 || c >= t.ext[ud]) return false;
      coords[d] = c;
      off += c * t.stride[ud];
    }
    return true;
  }
};

std::byte* elem_ptr(const TensorView& t, std::int64_t off) {
  return t.data + off * static_cast<std::int64_t>(dtype_size(t.dtype));
}

template <class T>
constexpr bool atomic_ok = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                           std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
                           std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
T* atomic_target(const TensorView& t, std::int64_t off) {
  std::byte* p = elem_ptr(t, off);
  if (reinterpret_cast<std::uintptr_t>(p) % std::atomic_ref<T>::required_alignment != 0)
    throw UserError(detail::cat("atomic update of a misaligned ", dtype_name(t.dtype), " element"));
  return reinterpret_cast<T*>(p);
}

}  // namespace

namespace {

void load_window(const TensorView& t, const Window& w, const ir::Scalar& pad, Tile& out) {
  const Shape& tile = *out.shape;
  dispatch(out.dtype, [&]<class T>(std::type_identity<T>) {
    const T padv = scalar_to<T>(pad);
    T* o = out.as<T>();
    const auto es = static_cast<std::int64_t>(dtype_size(t.dtype));
    if (w.empty) {
      for (std::int64_t i = 0; i < out.n; ++i) o[i] = padv;
      return;
    }
    if (w.rank == 0) {
      o[0] = read_elem<T>(t.data);
      return;
    }
    const int r = w.rank;
    const auto ui = static_cast<std::size_t>(r - 1);
    const std::int64_t inner = tile[ui], lo = w.lo[ui], hi = w.hi[ui], st = t.stride[ui], b = w.base[ui];
    for_rows(t, tile, w, [&](std::int64_t oo, std::int64_t off, bool in) {
      T* dst = o + oo;
      if (!in) {
        for (std::int64_t e = 0; e < inner; ++e) dst[e] = padv;
        return;
      }
      for (std::int64_t e = 0; e < lo; ++e) dst[e] = padv;
      const std::byte* src = t.data + (off + (b + lo) * st) * es;
      if (st == 1 && !is_bool_v<T>) {
        std::memcpy(dst + lo, src, static_cast<std::size_t>(hi - lo) * sizeof(T));
      } else {
        for (std::int64_t e = lo; e < hi; ++e, src += st * es) dst[e] = read_elem<T>(src);
      }
      for (std::int64_t e = hi; e < inner; ++e) dst[e] = padv;
    });
  });
}

void store_window(const TensorView& t, const Window& w, const Tile& value) {
  const Shape& tile = *value.shape;
  if (w.empty) return;
  dispatch(value.dtype, [&]<class T>(std::type_identity<T>) {
    const T* v = value.as<T>();
    const auto es = static_cast<std::int64_t>(dtype_size(t.dtype));
    if (w.rank == 0) {
      write_elem<T>(t.data, v[0]);
      return;
    }
    const auto ui = static_cast<std::size_t>(w.rank - 1);
    const std::int64_t lo = w.lo[ui], hi = w.hi[ui], st = t.stride[ui], b = w.base[ui];
    for_rows(t, tile, w, [&](std::int64_t oo, std::int64_t off, bool in) {
      if (!in) return;
      const T* src = v + oo;
      std::byte* dst = t.data + (off + (b + lo) * st) * es;
      if (st == 1 && !is_bool_v<T>) {
        std::memcpy(dst, src + lo, static_cast<std::size_t>(hi - lo) * sizeof(T));
      } else {
        for (std::int64_t e = lo; e < hi; ++e, dst += st * es) write_elem<T>(dst, src[e]);
      }
    });
  });
}

}  // namespace

void op_load(const TensorView& t, const std::int64_t* tile_index, const ir::Scalar& pad, Tile& out) {
  load_window(t, window(t, *out.shape, tile_index), pad, out);
}

void op_load_window(const TensorView& t, const std::int64_t* origin, const ir::Scalar& pad, Tile& out) {
  load_window(t, window_at(t, *out.shape, origin), pad, out);
}

void op_store_piece(const TensorView& t, const std::int64_t* tile_index, const Tile& value) {
  store_window(t, window(t, *value.shape, tile_index), value);
}

void op_store_window(const TensorView& t, const Shape& piece, const std::int64_t* tile_index, const std::int64_t* offsets,
                     const Tile& value) {
  const Shape& tile = *value.shape;
  const int r = static_cast<int>(tile.size());
  std::array<std::int64_t, kMaxRank> origin{}, keep_lo{}, keep_hi{};
  for (int d = 0; d < r; ++d) {
    const auto ud = static_cast<std::size_t>(d);
    const std::int64_t o = offsets[d], ts = tile[ud], ps = piece[ud];
    if (o >= ps || o <= -ts) return;  // misses the piece
    std::int64_t c0 = 0;
    if (__builtin_mul_overflow(tile_index[d], ps, &c0) || __builtin_add_overflow(c0, o, &c0)) return;
    origin[ud] = c0;
    keep_lo[ud] = o < 0 ? -o : 0;
    keep_hi[ud] = ps - o;
  }
  store_window(t, window_at(t, tile, origin.data(), keep_lo.data(), keep_hi.data()), value);
}

void op_gather(const TensorView& t, const std::vector<const Tile*>& idx, const ir::Scalar& pad, Tile& out) {
  const Indices ix(idx);
  dispatch(out.dtype, [&]<class T>(std::type_identity<T>) {
    const T padv = scalar_to<T>(pad);
    T* o = out.as<T>();
    std::array<std::int64_t, kMaxRank> c{};
    std::int64_t off = 0;
    const bool shared = t.access != ir::Access::Read;
    for (std::int64_t e = 0; e < out.n; ++e) {
      if (!ix.locate(t, e, c.data(), off)) o[e] = padv;
      else o[e] = shared ? read_shared<T>(elem_ptr(t, off)) : read_elem<T>(elem_ptr(t, off));
    }
  });
}

void op_scatter_piece(const TensorView& t, const Shape& tile, const std::int64_t* tile_index,
                      const std::vector<const Tile*>& idx, const Tile& value) {
  const Indices ix(idx);
  std::array<std::int64_t, kMaxRank> origin{};
  for (std::size_t d = 0; d < tile.size(); ++d)
    if (__builtin_mul_overflow(tile_index[d], tile[d], &origin[d])) return;
  dispatch(value.dtype, [&]<class T>(std::type_identity<T>) {
    const T* v = value.as<T>();
    std::array<std::int64_t, kMaxRank> c{};
    std::int64_t off = 0;
    for (std::int64_t e = 0; e < value.n; ++e)
      if (ix.locate(t, e, c.data(), off, origin.data(), &tile)) write_elem<T>(elem_ptr(t, off), v[e]);
  });
}

void op_store_window_unchecked(const TensorView& t, const std::int64_t* offsets, const Tile& value, RaceChecker* race,
                               std::int64_t block) {
  const Shape& tile = *value.shape;
  const int r = t.rank;
  dispatch(value.dtype, [&]<class T>(std::type_identity<T>) {
    const T* v = value.as<T>();
    std::array<std::int64_t, kMaxRank> c{}, e{};  // the element's coordinates in the tensor and in the tile
    for (std::int64_t i = 0; i < value.n; ++i) {
      std::int64_t off = 0;
      bool in = true;
      for (int d = 0; d < r && in; ++d) {
        const auto ud = static_cast<std::size_t>(d);
        in = !__builtin_add_overflow(offsets[d], e[ud], &c[ud]) && c[ud] >= 0 && c[ud] < t.ext[ud];
        off += c[ud] * t.stride[ud];
      }
      if (in) {
        std::byte* p = elem_ptr(t, off);
        if (race) race->record(p, t.param, c.data(), t.rank, block);
        write_shared<T>(p, v[i]);
      }
      for (int d = r - 1; d >= 0; --d) {  // the next element, row-major
        const auto ud = static_cast<std::size_t>(d);
        if (++e[ud] < tile[ud]) break;
        e[ud] = 0;
      }
    }
  });
}

void op_scatter_unchecked(const TensorView& t, const std::vector<const Tile*>& idx, const Tile& value,
                          RaceChecker* race, std::int64_t block) {
  const Indices ix(idx);
  dispatch(value.dtype, [&]<class T>(std::type_identity<T>) {
    const T* v = value.as<T>();
    std::array<std::int64_t, kMaxRank> c{};
    std::int64_t off = 0;
    for (std::int64_t e = 0; e < value.n; ++e) {
      if (!ix.locate(t, e, c.data(), off)) continue;
      std::byte* p = elem_ptr(t, off);
      if (race) race->record(p, t.param, c.data(), t.rank, block);
      write_shared<T>(p, v[e]);
    }
  });
}

void op_atomic_rmw(ir::AtomicKind kind, const TensorView& t, const std::vector<const Tile*>& idx,
                   const Tile& value, Tile& old) {
  const Indices ix(idx);
  dispatch(value.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_narrow_v<T>) {
      // The narrow floats (f16, bf16, fp8): a compare-and-swap loop on the element's bit pattern;
      // the new value is the element op (in f32, rounded once), as on the GPU.
      using A = Arith<T>;
      using B = decltype(T::bits);
      const T* v = value.as<T>();
      T* o = old.as<T>();
      std::array<std::int64_t, kMaxRank> c{};
      std::int64_t off = 0;
      for (std::int64_t e = 0; e < value.n; ++e) {
        if (!ix.locate(t, e, c.data(), off)) {
          o[e] = T::from_bits(0);
          continue;
        }
        std::atomic_ref<B> ref(*atomic_target<B>(t, off));
        const float x = A::up(v[e]);
        B cur = ref.load();
        for (;;) {
          const float a = A::up(T::from_bits(cur));
          B nv = v[e].bits;
          switch (kind) {
            case ir::AtomicKind::Add: nv = A::down(a + x).bits; break;
            case ir::AtomicKind::Max: nv = A::down(std::fmax(a, x)).bits; break;
            case ir::AtomicKind::Min: nv = A::down(std::fmin(a, x)).bits; break;
            case ir::AtomicKind::Exch: break;
          }
          if (ref.compare_exchange_weak(cur, nv)) break;
        }
        o[e] = T::from_bits(cur);
      }
    } else if constexpr (!atomic_ok<T>) {
      throw InternalError(detail::cat("cpu backend: atomic on ", dtype_name(value.dtype)));
    } else {
      const T* v = value.as<T>();
      T* o = old.as<T>();
      std::array<std::int64_t, kMaxRank> c{};
      std::int64_t off = 0;
      for (std::int64_t e = 0; e < value.n; ++e) {
        if (!ix.locate(t, e, c.data(), off)) {
          o[e] = T(0);
          continue;
        }
        std::atomic_ref<T> ref(*atomic_target<T>(t, off));
        const T x = v[e];
        switch (kind) {
          case ir::AtomicKind::Add: o[e] = ref.fetch_add(x); break;
          case ir::AtomicKind::Exch: o[e] = ref.exchange(x); break;
          case ir::AtomicKind::Max:
          case ir::AtomicKind::Min: {
            const bool mx = kind == ir::AtomicKind::Max;
            T cur = ref.load();
            for (;;) {
              T nv;
              if constexpr (is_float_v<T>) nv = mx ? std::fmax(cur, x) : std::fmin(cur, x);
              else nv = mx ? (x > cur ? x : cur) : (x < cur ? x : cur);
              if (std::memcmp(&nv, &cur, sizeof(T)) == 0 || ref.compare_exchange_weak(cur, nv)) break;
            }
            o[e] = cur;
            break;
          }
        }
      }
    }
  });
}

void op_atomic_cas(const TensorView& t, const std::vector<const Tile*>& idx, const Tile& expected,
                   const Tile& desired, Tile& old) {
  const Indices ix(idx);
  dispatch(desired.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (!atomic_ok<T>) {
      throw InternalError(detail::cat("cpu backend: atomic on ", dtype_name(desired.dtype)));
    } else {
      const T* ex = expected.as<T>();
      const T* de = desired.as<T>();
      T* o = old.as<T>();
      std::array<std::int64_t, kMaxRank> c{};
      std::int64_t off = 0;
      for (std::int64_t e = 0; e < desired.n; ++e) {
        if (!ix.locate(t, e, c.data(), off)) {
          o[e] = T(0);
          continue;
        }
        std::atomic_ref<T> ref(*atomic_target<T>(t, off));
        T cur = ex[e];
        ref.compare_exchange_strong(cur, de[e]);
        o[e] = cur;
      }
    }
  });
}

}  // namespace ctile::backend::cpu
