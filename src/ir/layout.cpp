// Layouts of the GPU-level IR (layout.hpp).
#include "ctile/ir/layout.hpp"

#include <algorithm>

#include "ctile/core/error.hpp"

namespace ctile::ir {
namespace {

int log2_exact(std::int64_t v) {
  int l = 0;
  while ((std::int64_t{1} << l) < v) ++l;
  return l;
}

std::string bits_str(const std::vector<int>& b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.size(); ++i) {
    s += i ? "," : "";
    s += b[i] == Layout::kCopy ? std::string("*") : std::to_string(b[i]);
  }
  return s + "]";
}

std::int64_t mask_of(const std::vector<int>& b) {
  std::int64_t m = 0;
  for (int e : b)
    if (e != Layout::kCopy) m |= std::int64_t{1} << e;
  return m;
}

int copy_mask_of(const std::vector<int>& b) {
  int m = 0;
  for (std::size_t k = 0; k < b.size(); ++k)
    if (b[k] == Layout::kCopy) m |= 1 << k;
  return m;
}

}  // namespace

std::int64_t Layout::element(std::int64_t r, int l, int w) const {
  std::int64_t e = 0;
  for (std::size_t k = 0; k < reg.size(); ++k)
    if ((r >> k) & 1) e |= std::int64_t{1} << reg[k];
  for (std::size_t k = 0; k < lane.size(); ++k)
    if (((l >> k) & 1) && lane[k] != kCopy) e |= std::int64_t{1} << lane[k];
  for (std::size_t k = 0; k < warp.size(); ++k)
    if (((w >> k) & 1) && warp[k] != kCopy) e |= std::int64_t{1} << warp[k];
  return e;
}

std::int64_t Layout::lane_elem_mask() const { return mask_of(lane); }
std::int64_t Layout::warp_elem_mask() const { return mask_of(warp); }
int Layout::copy_lane_mask() const { return copy_mask_of(lane); }
int Layout::copy_warp_mask() const { return copy_mask_of(warp); }

std::string layout_str(const Layout& l) {
  switch (l.kind) {
    case LayoutKind::None: return "";
    case LayoutKind::Dist:
      return "#dist<reg=" + bits_str(l.reg) + ", lane=" + bits_str(l.lane) + ", warp=" + bits_str(l.warp) + ">";
    case LayoutKind::Shared:
      if (l.swizzle)
        return "#shared<row=" + std::to_string(l.row) + ", swizzle=" + std::to_string(l.swizzle) + (l.trans ? ", trans" : "") + ">";
      if (l.pad == 0) return "#shared<>";
      return "#shared<row=" + std::to_string(l.row) + ", pad=" + std::to_string(l.pad) + ">";
  }
  return "?";
}

std::string check_dist(const Layout& l, std::int64_t numel, int warps) {
  if (!l.is_dist()) return "not a distributed layout";
  if (!is_pow2(numel) || !is_pow2(warps)) return "element count and warps must be powers of two";
  const int n = log2_exact(numel);
  if (l.lane.size() != 5) return "a distributed layout has 5 lane bits, got " + std::to_string(l.lane.size());
  if (static_cast<int>(l.warp.size()) != log2_exact(warps))
    return "expected " + std::to_string(log2_exact(warps)) + " warp bits for " + std::to_string(warps) + " warps, got " +
           std::to_string(l.warp.size());
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  auto see = [&](int e, bool copy_ok) -> std::string {
    if (e == Layout::kCopy) return copy_ok ? "" : "a register bit must name an element bit";
    if (e < 0 || e >= n) return "element bit " + std::to_string(e) + " out of range for " + std::to_string(numel) + " elements";
    if (seen[static_cast<std::size_t>(e)]++) return "element bit " + std::to_string(e) + " is named twice";
    return "";
  };
  for (int e : l.reg)
    if (auto m = see(e, false); !m.empty()) return m;
  for (int e : l.lane)
    if (auto m = see(e, true); !m.empty()) return m;
  for (int e : l.warp)
    if (auto m = see(e, true); !m.empty()) return m;
  for (int e = 0; e < n; ++e)
    if (!seen[static_cast<std::size_t>(e)]) return "element bit " + std::to_string(e) + " is not named";
  return "";
}

Layout blocked(const Shape& shape, int vec, int warps, bool warps_last) {
  CTILE_CHECK(is_pow2(vec) && is_pow2(warps), "blocked layout: vec ", vec, " and warps ", warps, " must be powers of two");
  const int n = log2_exact(numel(shape));
  const int last = shape.empty() ? 0 : log2_exact(shape.back());
  const int v = std::min(log2_exact(vec), last);
  const int wb = log2_exact(warps);
  Layout l;
  l.kind = LayoutKind::Dist;
  std::vector<char> used(static_cast<std::size_t>(n), 0);
  for (int e = 0; e < v; ++e) {
    l.reg.push_back(e);
    used[static_cast<std::size_t>(e)] = 1;
  }
  int next = v;
  for (int k = 0; k < 5; ++k) {
    if (next < n) {
      l.lane.push_back(next);
      used[static_cast<std::size_t>(next++)] = 1;
    } else {
      l.lane.push_back(Layout::kCopy);
    }
  }
  if (warps_last) {
    for (int k = 0; k < wb; ++k) {
      if (next < n) {
        l.warp.push_back(next);
        used[static_cast<std::size_t>(next++)] = 1;
      } else {
        l.warp.push_back(Layout::kCopy);
      }
    }
  } else {
    // The top bits (the outermost axes first), but never below the lanes' bits.
    int top = n - 1;
    std::vector<int> w;
    for (int k = 0; k < wb; ++k) {
      if (top >= next) {
        w.push_back(top);
        used[static_cast<std::size_t>(top--)] = 1;
      } else {
        w.push_back(Layout::kCopy);
      }
    }
    // Warp bit 0 takes the lowest of them, so that consecutive warps cover consecutive rows.
    std::vector<int> named;
    for (int e : w)
      if (e != Layout::kCopy) named.push_back(e);
    std::sort(named.begin(), named.end());
    for (int k = 0; k < wb; ++k) l.warp.push_back(k < static_cast<int>(named.size()) ? named[static_cast<std::size_t>(k)] : Layout::kCopy);
  }
  for (int e = 0; e < n; ++e)
    if (!used[static_cast<std::size_t>(e)]) l.reg.push_back(e);
  return l;
}

Layout replicated(const Shape& shape, int warps) {
  Layout l;
  l.kind = LayoutKind::Dist;
  const int n = log2_exact(numel(shape));
  for (int e = 0; e < n; ++e) l.reg.push_back(e);
  l.lane.assign(5, Layout::kCopy);
  l.warp.assign(static_cast<std::size_t>(log2_exact(warps)), Layout::kCopy);
  return l;
}

namespace {
// Bit offset of each axis in the row-major linear index (the last axis at bit 0).
std::vector<int> axis_offsets(const Shape& shape) {
  std::vector<int> off(shape.size(), 0);
  int acc = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    off[d] = acc;
    acc += log2_exact(shape[d]);
  }
  return off;
}
}  // namespace

Layout slice(const Layout& l, const Shape& shape, int axis) {
  const std::vector<int> off = axis_offsets(shape);
  const int lo = off[static_cast<std::size_t>(axis)];
  const int width = log2_exact(shape[static_cast<std::size_t>(axis)]);
  auto map = [&](int e) { return e == Layout::kCopy ? e : e < lo ? e : e < lo + width ? Layout::kCopy : e - width; };
  Layout r;
  r.kind = LayoutKind::Dist;
  for (int e : l.reg)
    if (map(e) != Layout::kCopy) r.reg.push_back(map(e));
  for (int e : l.lane) r.lane.push_back(map(e));
  for (int e : l.warp) r.warp.push_back(map(e));
  return r;
}

Layout permute(const Layout& l, const Shape& shape, const std::vector<int>& perm) {
  Shape out(perm.size());
  for (std::size_t q = 0; q < perm.size(); ++q) out[q] = shape[static_cast<std::size_t>(perm[q])];
  const std::vector<int> src = axis_offsets(shape), dst = axis_offsets(out);
  std::vector<int> to(static_cast<std::size_t>(log2_exact(numel(shape))), 0);
  for (std::size_t q = 0; q < perm.size(); ++q) {
    const auto d = static_cast<std::size_t>(perm[q]);
    for (int j = 0; j < log2_exact(shape[d]); ++j) to[static_cast<std::size_t>(src[d] + j)] = dst[q] + j;
  }
  auto map = [&](int e) { return e == Layout::kCopy ? e : to[static_cast<std::size_t>(e)]; };
  Layout r = l;
  for (int& e : r.reg) e = map(e);
  for (int& e : r.lane) e = map(e);
  for (int& e : r.warp) e = map(e);
  return r;
}

Layout broadcast_source(const Layout& result, const Shape& from, const Shape& to) {
  const std::vector<int> src = axis_offsets(from), dst = axis_offsets(to);
  // Result bit -> source bit (kCopy for the bits of stretched axes).
  std::vector<int> back(static_cast<std::size_t>(log2_exact(numel(to))), Layout::kCopy);
  for (std::size_t d = 0; d < to.size(); ++d)
    if (from[d] == to[d])
      for (int j = 0; j < log2_exact(to[d]); ++j) back[static_cast<std::size_t>(dst[d] + j)] = src[d] + j;
  auto map = [&](int e) { return e == Layout::kCopy ? e : back[static_cast<std::size_t>(e)]; };
  Layout r;
  r.kind = LayoutKind::Dist;
  for (int e : result.reg)
    if (map(e) != Layout::kCopy) r.reg.push_back(map(e));
  for (int e : result.lane) r.lane.push_back(map(e));
  for (int e : result.warp) r.warp.push_back(map(e));
  return r;
}

bool registers_only(const Layout& from, const Layout& to) {
  return from.is_dist() && to.is_dist() && from.lane == to.lane && from.warp == to.warp && from.reg.size() == to.reg.size();
}

MmaWarpGrid mma_warp_grid(std::int64_t m, std::int64_t n, int warps) {
  if (!is_pow2(m) || !is_pow2(n) || !is_pow2(warps) || m < 16 || n < 16) return {0, 0};
  MmaWarpGrid g;
  // Split the longer side of the warp tile while it stays at least 16 (n: 16, two n8 atoms).
  for (int w = warps; w > 1; w /= 2) {
    const std::int64_t tm = m / g.wm, tn = n / g.wn;
    if (tn >= tm && tn >= 32) g.wn *= 2;
    else if (tm >= 32) g.wm *= 2;
    else if (tn >= 32) g.wn *= 2;
    else return {0, 0};
  }
  return g;
}

Layout mma_accumulator(std::int64_t m, std::int64_t n, int warps) {
  const MmaWarpGrid g = mma_warp_grid(m, n, warps);
  CTILE_CHECK(g.wm > 0, "mma accumulator layout: [", m, ", ", n, "] cannot be spread over ", warps, " warps");
  const int ln = log2_exact(n);
  const int lna = log2_exact(n / g.wn / 8), lma = log2_exact(m / g.wm / 16);
  const int lwn = log2_exact(g.wn), lwm = log2_exact(g.wm);
  Layout l;
  l.kind = LayoutKind::Dist;
  l.reg = {0, ln + 3};
  l.lane = {1, 2, ln + 0, ln + 1, ln + 2};
  for (int k = 0; k < lna; ++k) l.reg.push_back(3 + k);
  for (int k = 0; k < lma; ++k) l.reg.push_back(ln + 4 + k);
  for (int k = 0; k < lwn; ++k) l.warp.push_back(3 + lna + k);
  for (int k = 0; k < lwm; ++k) l.warp.push_back(ln + 4 + lma + k);
  CTILE_CHECK(check_dist(l, m * n, warps).empty(), "mma accumulator layout: ", check_dist(l, m * n, warps));
  return l;
}

bool wgmma_shape(std::int64_t m, std::int64_t n, std::int64_t k, int warps, int elem_bytes) {
  if (warps < 4 || warps % 4 != 0 || !is_pow2(warps) || !is_pow2(m) || !is_pow2(n)) return false;
  if (elem_bytes != 1 && elem_bytes != 2) return false;
  return m % (16 * warps) == 0 && n % 64 == 0 && k % wgmma_k(elem_bytes) == 0 && wgmma_swizzle(k, elem_bytes) != 0;
}

namespace {
// The m64nNk16 fragment over whole warpgroups: [m, n] with n a multiple of 8.
Layout wgmma_fragment(std::int64_t m, std::int64_t n, int warps) {
  const int ln = log2_exact(n), lna = log2_exact(n / 8), lw = log2_exact(warps);
  const int lb = log2_exact(m / (16 * warps));
  Layout l;
  l.kind = LayoutKind::Dist;
  l.reg = {0, ln + 3};
  l.lane = {1, 2, ln + 0, ln + 1, ln + 2};
  for (int k = 0; k < lna; ++k) l.reg.push_back(3 + k);
  for (int k = 0; k < lb; ++k) l.reg.push_back(ln + 4 + lw + k);
  for (int k = 0; k < lw; ++k) l.warp.push_back(ln + 4 + k);
  CTILE_CHECK(check_dist(l, m * n, warps).empty(), "wgmma fragment layout: ", check_dist(l, m * n, warps));
  return l;
}
}  // namespace

Layout wgmma_accumulator(std::int64_t m, std::int64_t n, int warps) {
  CTILE_CHECK(wgmma_shape(m, n, 16, warps), "wgmma accumulator layout: [", m, ", ", n, "] over ", warps, " warps");
  return wgmma_fragment(m, n, warps);
}

Layout wgmma_a_fragment(std::int64_t m, std::int64_t k, int warps) {
  CTILE_CHECK(warps >= 4 && warps % 4 == 0 && is_pow2(warps) && is_pow2(m) && is_pow2(k) && m % (16 * warps) == 0 && k % 16 == 0,
              "wgmma register-A layout: [", m, ", ", k, "] over ", warps, " warps");
  return wgmma_fragment(m, k, warps);
}

int wgmma_swizzle(std::int64_t row, int elem_bytes) {
  const std::int64_t bytes = row * elem_bytes;
  if (bytes == 32 || bytes == 64) return static_cast<int>(bytes);
  return bytes > 0 && bytes % 128 == 0 ? 128 : 0;
}

std::int64_t shared_offset(const Layout& l, std::int64_t rows, std::int64_t r, std::int64_t c, int elem_bytes) {
  if (!l.swizzle) return r * (l.row + l.pad) + c;
  const std::int64_t sw = l.swizzle, e = elem_bytes, bw = sw / e;
  const std::int64_t o = (c / bw) * rows * sw + (r / 8) * 8 * sw + (r % 8) * sw + e * (c % bw);
  return (o ^ (((o >> 7) & (sw / 16 - 1)) << 4)) / e;
}

}  // namespace ctile::ir
