// Non-template op emission used by the DSL types: each function checks its operands as the user's
// mistake would show them (UserError at the user's file:line) and appends one or more IR ops to the
// current trace. The typed front end (tile.hpp, params.hpp) is a thin layer over these.
#pragma once

#include <array>
#include <vector>

#include "ctile/frontend/trace_context.hpp"

namespace ctile::detail {

using ir::ValueId;

// By value: the kernel's value table grows while ops are emitted.
ir::Type type_of(ValueId v);
Shape shape_of(ValueId v);

ValueId emit_constant(ir::Scalar v, DType d, const Shape& shape, const SourceLoc& loc);
ValueId emit_iota(std::int64_t n, DType d, const SourceLoc& loc);
ValueId emit_block_id(int axis, const SourceLoc& loc);
ValueId emit_num_blocks(int axis, const SourceLoc& loc);
ValueId emit_dim(ValueId tensor_like, int axis, const SourceLoc& loc);

// Numerics of one float op (docs/ir.md, "Numerics"): a rounding (Default: the op's own, which the
// kernel option fast_math may make approximate), flushing subnormals, and min/max's NaN policy.
struct Numerics {
  ir::Rounding rounding = ir::Rounding::Default;
  bool ftz = false;
  bool propagate_nan = false;
};

ValueId emit_unary(ir::UnaryFn f, ValueId x, const SourceLoc& loc, Numerics n = {});
// Binary ops broadcast their operands numpy-style (trailing axes aligned, extents 1 stretch).
ValueId emit_binary(ir::BinaryFn f, ValueId a, ValueId b, const SourceLoc& loc, Numerics n = {});
ValueId emit_binary_scalar(ir::BinaryFn f, ValueId a, ir::Scalar s, bool scalar_on_left, const SourceLoc& loc);
ValueId emit_cmp(ir::CmpPred p, ValueId a, ValueId b, const SourceLoc& loc);
ValueId emit_cmp_scalar(ir::CmpPred p, ValueId a, ir::Scalar s, const SourceLoc& loc);
ValueId emit_select(ValueId c, ValueId a, ValueId b, const SourceLoc& loc);
ValueId emit_fma(ValueId a, ValueId b, ValueId c, const SourceLoc& loc);
ValueId emit_convert(ValueId x, DType to, const SourceLoc& loc);
// The same bits read as another element type of the same width (no bool).
ValueId emit_bitcast(ValueId x, DType to, const SourceLoc& loc);
// Counter-based random numbers: `seed` an integer scalar, `offsets` an integer tile (the counter
// of each element); both become i64, the seed broadcast to the offsets' shape.
ValueId emit_random(ir::RandomDist d, ValueId seed, ValueId offsets, const char* what, const SourceLoc& loc);

ValueId emit_broadcast(ValueId x, const Shape& shape, const SourceLoc& loc);
ValueId emit_reshape(ValueId x, const Shape& shape, const SourceLoc& loc);
ValueId emit_permute(ValueId x, const std::vector<int>& perm, const SourceLoc& loc);
ValueId emit_cat(ValueId a, ValueId b, int axis, const SourceLoc& loc);
ValueId emit_extract(ValueId x, const Shape& offsets, const Shape& shape, const SourceLoc& loc);

ValueId emit_reduce(ir::ReduceKind k, ValueId x, int axis, bool keepdims, const SourceLoc& loc, Numerics n = {});
// A scan of `k` (sum, prod, max, min) along `axis`; `what` names it in errors (cumsum, ...).
ValueId emit_scan(ir::ReduceKind k, ValueId x, int axis, bool exclusive, bool reverse, const char* what, const SourceLoc& loc);
ValueId emit_mma(ValueId a, ValueId b, ValueId acc, const SourceLoc& loc);

ValueId emit_make_partition(ValueId tensor, const Shape& tile, const SourceLoc& loc);
ValueId emit_partition_count(ValueId partition_or_piece, int axis, const SourceLoc& loc);
// Indices are i64 scalars (already converted); pad is cast to the element type.
ValueId emit_load(ValueId partition, const std::vector<ValueId>& idx, ir::Scalar pad, const SourceLoc& loc);
ValueId emit_load_piece(ValueId piece, ir::Scalar pad, const SourceLoc& loc);
void emit_store_piece(ValueId piece, ValueId tile, const SourceLoc& loc);
ValueId emit_load_window(ValueId tensor, const std::vector<ValueId>& origin, const Shape& shape, ir::Scalar pad,
                         const SourceLoc& loc);
void emit_store_window(ValueId piece, const std::vector<ValueId>& offsets, ValueId tile, const SourceLoc& loc);
// Index tiles of any integer type, broadcast to one common shape.
ValueId emit_gather(ValueId tensor, const std::vector<ValueId>& idx, ir::Scalar pad, const SourceLoc& loc);
void emit_scatter_piece(ValueId piece, const std::vector<ValueId>& idx, ValueId value, const SourceLoc& loc);
void emit_scatter_unchecked(ValueId tensor, const std::vector<ValueId>& idx, ValueId value, const SourceLoc& loc);
ValueId emit_atomic_rmw(ir::AtomicKind k, ValueId tensor, const std::vector<ValueId>& idx, ValueId value,
                        const SourceLoc& loc);
ValueId emit_atomic_cas(ValueId tensor, const std::vector<ValueId>& idx, ValueId expected, ValueId desired,
                        const SourceLoc& loc);

// An index argument: an i64 scalar value (integer scalars of other types are converted).
ValueId as_index(ValueId v, const SourceLoc& loc);

[[noreturn]] void user_error(const std::string& msg, const SourceLoc& loc);
void check_tile_shape(const Shape& s, const char* what, const SourceLoc& loc);

}  // namespace ctile::detail
