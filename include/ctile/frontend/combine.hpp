// Reductions and scans over a user combine function (docs/language.md, "Reductions and scans over
// a combine function"):
//
//   auto m = ct::reduce(x, 1, [](auto a, auto b) { return ct::maximum(ct::abs(a), ct::abs(b)); });
//   auto [v, i] = ct::reduce(std::tuple{x, idx}, 0, [](auto a, auto b) {  // an argmax, smallest index on ties
//     auto [av, ai] = a;
//     auto [bv, bi] = b;
//     const auto take_b = (bv > av) | ((bv == av) & (bi < ai));
//     return std::tuple{ct::where(take_b, bv, av), ct::where(take_b, bi, ai)};
//   });
//   auto run = ct::scan(x, 0, [](auto a, auto b) { return a * b; }, ct::exclusive, 1.0f);
//
// The function is called once, while the kernel is traced, with rank-0 tiles (scalars) of the
// combined tiles' element types; what it computes becomes the op's combine region (ct.reduce_with,
// ct.scan_with). It must be associative, and for reductions commutative too: the order in which
// elements are combined is the backend's (the CPU reference goes left to right along the axis; the
// GPU combines registers, then lanes, then warps). It may use element-wise operations on its
// arguments and literals only: no loads, stores, reductions or control flow, and no tiles from
// outside it (a lambda capture). Both are reported as UserErrors at the offending line.
#pragma once

#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/frontend/tile.hpp"

namespace ctile {

namespace detail {

// What the non-template part (src/frontend/combine.cpp) traces: a ct.reduce_with or ct.scan_with
// over `inputs` along `axis`.
struct CombineSpec {
  ir::OpKind kind = ir::OpKind::ReduceWith;
  std::vector<ValueId> inputs;    // the k combined tiles (one shape)
  std::vector<ValueId> identity;  // an exclusive scan's first outputs (k scalars); else empty
  int axis = 0;
  bool keepdims = false;          // reductions: keep the axis with extent 1
  bool exclusive = false;         // scans
  bool reverse = false;
  bool has_identity = false;      // the caller gave identities (checked against `exclusive`)
};

// The combine function as traced: called once with the region's left and right arguments (k
// scalars each), it returns the k values the region yields.
using CombineFn = std::function<std::vector<ValueId>(const std::vector<ValueId>&, const std::vector<ValueId>&)>;

// Opens the op, traces `fn` into its region, checks what it holds, and returns the op's k results
// (reshaped to keep the axis when keepdims). UserErrors at `loc`, or at the offending op's line.
std::vector<ValueId> trace_combine(const CombineSpec& spec, const CombineFn& fn, const SourceLoc& loc);

// The element type of a Tile<T> (or of a type derived from one, such as Scalar<T>).
template <Element T>
T tile_element_of(const Tile<T>&);
template <class X>
using tile_element_t = decltype(tile_element_of(std::declval<const X&>()));
template <class X>
concept TileLike = requires(const X& x) { tile_element_of(x); };

// What a combine function returns for k tiles: a Tile of the element type (k = 1), or a std::tuple
// of k values convertible to the tiles' types.
template <class R, class Tup>
struct CombinesTo : std::false_type {};
template <class... Y, class... Z>
  requires(sizeof...(Y) == sizeof...(Z))
struct CombinesTo<std::tuple<Y...>, std::tuple<Z...>> : std::bool_constant<(std::is_convertible_v<Y, Z> && ...)> {};

template <class F, class A>
struct CombineResult {
  using type = void;
};
template <class F, class A>
  requires std::is_invocable_v<F&, const A&, const A&>
struct CombineResult<F, A> {
  using type = std::invoke_result_t<F&, const A&, const A&>;
};

template <class F, class T>
constexpr void check_combine_of_one() {
  static_assert(std::is_invocable_v<F&, const Tile<T>&, const Tile<T>&>,
                "ctile::reduce / ctile::scan: the combine function must take two tiles of the combined element type "
                "(e.g. [](auto a, auto b) { return a + b; })");
  static_assert(std::is_convertible_v<typename CombineResult<F, Tile<T>>::type, Tile<T>>,
                "ctile::reduce / ctile::scan: the combine function must return a tile of the element type it combines");
}
template <class F, class Tup>
constexpr void check_combine_of_tuple() {
  static_assert(std::is_invocable_v<F&, const Tup&, const Tup&>,
                "ctile::reduce / ctile::scan over a tuple of tiles: the combine function must take two std::tuples of "
                "tiles (one value of each combined tile)");
  static_assert(CombinesTo<typename CombineResult<F, Tup>::type, Tup>::value,
                "ctile::reduce / ctile::scan over a tuple of tiles: the combine function must return a std::tuple of one "
                "tile per combined tile, of their element types, in their order");
}

template <class Tup, std::size_t... I>
Tup tuple_of_values(const std::vector<ValueId>& v, const SourceLoc& loc, std::index_sequence<I...>) {
  return Tup{std::tuple_element_t<I, Tup>(v[I], loc)...};
}
template <class Tup, std::size_t... I>
std::vector<ValueId> values_of_tuple(const Tup& t, std::index_sequence<I...>) {
  return {std::get<I>(t).value()...};
}

// The combine function of k = 1 (single) or of a tuple, traced over fresh scalar tiles.
template <Element T, class F>
CombineFn combine_of_one(F& fn, const SourceLoc& loc) {
  return [&fn, loc](const std::vector<ValueId>& a, const std::vector<ValueId>& b) {
    const Tile<T> x(a[0], loc), y(b[0], loc);
    const Tile<T> r = fn(x, y);
    return std::vector<ValueId>{r.value()};
  };
}
template <class Tup, class F>
CombineFn combine_of_tuple(F& fn, const SourceLoc& loc) {
  return [&fn, loc](const std::vector<ValueId>& a, const std::vector<ValueId>& b) {
    constexpr auto seq = std::make_index_sequence<std::tuple_size_v<Tup>>{};
    const Tup x = tuple_of_values<Tup>(a, loc, seq), y = tuple_of_values<Tup>(b, loc, seq);
    const Tup r = fn(x, y);
    return values_of_tuple(r, seq);
  };
}

template <class... X>
std::vector<ValueId> values_of(const std::tuple<X...>& xs) {
  return std::apply([](const auto&... x) { return std::vector<ValueId>{x.value()...}; }, xs);
}
// The identities of an exclusive scan over tiles of element types E...: tiles or literals.
template <class... E, class... I>
std::vector<ValueId> identities_of(const std::tuple<I...>& ids, const SourceLoc& loc) {
  static_assert(sizeof...(E) == sizeof...(I), "ctile::scan: one identity per combined tile");
  static_assert((OperandFor<I, E> && ...),
                "ctile::scan: each identity is a scalar tile or a literal of its tile's element type");
  return std::apply([&](const auto&... i) { return std::vector<ValueId>{as_tile<E>(i, loc).value()...}; }, ids);
}

}  // namespace detail

// ---- reductions ----
// The reduction of x along `axis` with `combine` ((Tile<T>, Tile<T>) -> Tile<T> on scalars);
// keepdims keeps the axis with extent 1.
template <Element T, class F>
Tile<T> reduce(const Tile<T>& x, int axis, F&& combine, bool keepdims = false,
               std::source_location l = std::source_location::current()) {
  detail::check_combine_of_one<F, T>();
  detail::CombineSpec s{ir::OpKind::ReduceWith, {x.value()}, {}, axis, keepdims};
  return Tile<T>(detail::trace_combine(s, detail::combine_of_one<T>(combine, l), l)[0], l);
}
// The reduction of several tiles of one shape together: `combine` takes and returns std::tuples of
// one scalar of each; the result is a std::tuple of the reduced tiles.
template <class... X, class F>
  requires(sizeof...(X) >= 1 && (detail::TileLike<X> && ...))
std::tuple<Tile<detail::tile_element_t<X>>...> reduce(const std::tuple<X...>& xs, int axis, F&& combine, bool keepdims = false,
                                                      std::source_location l = std::source_location::current()) {
  using Tup = std::tuple<Tile<detail::tile_element_t<X>>...>;
  detail::check_combine_of_tuple<F, Tup>();
  detail::CombineSpec s{ir::OpKind::ReduceWith, detail::values_of(xs), {}, axis, keepdims};
  const std::vector<ir::ValueId> r = detail::trace_combine(s, detail::combine_of_tuple<Tup>(combine, l), l);
  return detail::tuple_of_values<Tup>(r, l, std::index_sequence_for<X...>{});
}

// ---- scans ----
// The inclusive scan of x along `axis` with `combine`: element i combines elements 0..i (with
// ct::reverse, the elements from the last down to i). An exclusive scan (element i combines the
// elements before i) needs the identity of the function, the first output: the overloads below.
template <Element T, class F>
Tile<T> scan(const Tile<T>& x, int axis, F&& combine, ScanMode m = {},
             std::source_location l = std::source_location::current()) {
  detail::check_combine_of_one<F, T>();
  detail::CombineSpec s{ir::OpKind::ScanWith, {x.value()}, {}, axis, false, m.exclusive, m.reverse, false};
  return Tile<T>(detail::trace_combine(s, detail::combine_of_one<T>(combine, l), l)[0], l);
}
template <Element T, class F, detail::OperandFor<T> I>
Tile<T> scan(const Tile<T>& x, int axis, F&& combine, ScanMode m, const I& identity,
             std::source_location l = std::source_location::current()) {
  detail::check_combine_of_one<F, T>();
  const Tile<T> id = detail::as_tile<T>(identity, l);
  detail::CombineSpec s{ir::OpKind::ScanWith, {x.value()}, {id.value()}, axis, false, m.exclusive, m.reverse, true};
  return Tile<T>(detail::trace_combine(s, detail::combine_of_one<T>(combine, l), l)[0], l);
}
template <class... X, class F>
  requires(sizeof...(X) >= 1 && (detail::TileLike<X> && ...))
std::tuple<Tile<detail::tile_element_t<X>>...> scan(const std::tuple<X...>& xs, int axis, F&& combine, ScanMode m = {},
                                                    std::source_location l = std::source_location::current()) {
  using Tup = std::tuple<Tile<detail::tile_element_t<X>>...>;
  detail::check_combine_of_tuple<F, Tup>();
  detail::CombineSpec s{ir::OpKind::ScanWith, detail::values_of(xs), {}, axis, false, m.exclusive, m.reverse, false};
  const std::vector<ir::ValueId> r = detail::trace_combine(s, detail::combine_of_tuple<Tup>(combine, l), l);
  return detail::tuple_of_values<Tup>(r, l, std::index_sequence_for<X...>{});
}
template <class... X, class F, class... I>
  requires(sizeof...(X) >= 1 && (detail::TileLike<X> && ...))
std::tuple<Tile<detail::tile_element_t<X>>...> scan(const std::tuple<X...>& xs, int axis, F&& combine, ScanMode m,
                                                    const std::tuple<I...>& identity,
                                                    std::source_location l = std::source_location::current()) {
  using Tup = std::tuple<Tile<detail::tile_element_t<X>>...>;
  detail::check_combine_of_tuple<F, Tup>();
  detail::CombineSpec s{ir::OpKind::ScanWith, detail::values_of(xs), detail::identities_of<detail::tile_element_t<X>...>(identity, l),
                        axis, false, m.exclusive, m.reverse, true};
  const std::vector<ir::ValueId> r = detail::trace_combine(s, detail::combine_of_tuple<Tup>(combine, l), l);
  return detail::tuple_of_values<Tup>(r, l, std::index_sequence_for<X...>{});
}

}  // namespace ctile
