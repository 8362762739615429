// The ctile tile IR: a typed SSA IR with single-block regions (MLIR-like), produced by the tracing
// front end and consumed by the backends. The CPU interpreter (backend/cpu) defines its semantics;
// docs/ir.md describes every op. The printer's text is stable and used by golden tests.
//
// Conventions
// - A Value is an index into Kernel::values; every value is defined exactly once, either as a region
//   argument or as an op result, and may be used in the region that defines it and in regions nested
//   inside it, after its definition (dominance).
// - Scalars are rank-0 tiles. Tensor indices, extents and block ids are i64 scalars.
// - Shapes of tiles are static (trace-time) and every extent is a power of two; tensor extents are
//   run-time values.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ctile/core/dtype.hpp"
#include "ctile/core/error.hpp"
#include "ctile/core/options.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/ir/layout.hpp"

namespace ctile::ir {

using ValueId = std::int32_t;
inline constexpr ValueId kNoValue = -1;

// How a kernel may touch a global tensor. Only Piece is writable through the safe API; Atomic and
// Unchecked are the explicit, visibly marked ways to write memory shared by several tile blocks.
enum class Access : std::uint8_t {
  Read,       // shared, read-only input (ctile::Ref)
  Piece,      // this tile block's exclusive piece of a partitioned output (ctile::Mut)
  Atomic,     // whole tensor, every block may update it, only through atomics (ctile::Atomic)
  Unchecked,  // whole tensor, every block may store anywhere (ctile::UncheckedMut; race-checked on CPU)
};

enum class TypeKind : std::uint8_t {
  Tile,       // a value of `shape` (rank 0 = scalar) with elements of `dtype`
  Tensor,     // a view of global memory: base, run-time extents and strides; `rank`, `access`
  Partition,  // a tensor (Read) cut into tiles of `shape`; a tile is addressed by `rank` indices
  Piece,      // the block's own tile of shape `shape` of a partitioned output (Access::Piece)
};

struct Type {
  TypeKind kind = TypeKind::Tile;
  DType dtype = DType::f32;
  Shape shape;      // Tile: tile shape. Partition, Piece: tile shape. Tensor: empty.
  int rank = 0;     // Tile: shape.size(). Others: rank of the underlying tensor.
  Access access = Access::Read;  // Tensor, Partition, Piece

  static Type tile(DType d, Shape s) { Type t; t.kind = TypeKind::Tile; t.dtype = d; t.rank = static_cast<int>(s.size()); t.shape = std::move(s); return t; }
  static Type scalar(DType d) { return tile(d, {}); }
  static Type tensor(DType d, int rank, Access a) { Type t; t.kind = TypeKind::Tensor; t.dtype = d; t.rank = rank; t.access = a; return t; }
  static Type partition(DType d, int rank, Shape tile_shape) { Type t; t.kind = TypeKind::Partition; t.dtype = d; t.rank = rank; t.shape = std::move(tile_shape); return t; }
  static Type piece(DType d, Shape tile_shape) { Type t; t.kind = TypeKind::Piece; t.dtype = d; t.rank = static_cast<int>(tile_shape.size()); t.shape = std::move(tile_shape); t.access = Access::Piece; return t; }

  bool is_tile() const { return kind == TypeKind::Tile; }
  bool is_scalar() const { return kind == TypeKind::Tile && shape.empty(); }
  friend bool operator==(const Type&, const Type&) = default;
};

std::string type_str(const Type& t);

// A constant of some element type. Integers (and bool) live in `i` (u64 as its bit pattern),
// floats in `f`; a float constant of a type narrower than f64 holds the value already rounded to
// that type.
struct Scalar {
  bool is_float = false;
  double f = 0.0;
  std::int64_t i = 0;
  static Scalar of_int(std::int64_t v) { Scalar s; s.i = v; return s; }
  static Scalar of_float(double v) { Scalar s; s.is_float = true; s.f = v; return s; }
  friend bool operator==(const Scalar&, const Scalar&) = default;
};

// Rounds a constant to what `d` can hold (float rounding to f32 and the narrow floats, saturating
// for fp8; integer wrap-around).
Scalar scalar_cast(Scalar v, DType d);
std::string scalar_str(const Scalar& v, DType d);

enum class OpKind : std::uint8_t {
  // grid
  BlockId,         // () -> i64 scalar                         attrs: axis
  NumBlocks,       // () -> i64 scalar                         attrs: axis
  // tensors and partitions
  Dim,             // (tensor|partition|piece) -> i64 scalar   attrs: axis. Extent of the tensor.
  MakePartition,   // (tensor[Read]) -> partition              attrs: shape (tile shape)
  PartitionCount,  // (partition|piece) -> i64 scalar          attrs: axis. ceil(extent / tile).
  Load,            // (partition, idx_0..idx_{r-1}) -> tile    attrs: pad. Elements past the tensor read `pad`.
  LoadPiece,       // (piece) -> tile                          attrs: pad
  LoadWindow,      // (tensor[Read], off_0..off_{r-1}) -> tile attrs: pad, result type. Element e reads tensor[off + e]
                   //                                           (any offsets, not only tile multiples); outside: `pad`.
  StorePiece,      // (piece, tile) -> ()                      elements past the tensor are not written
  StoreWindow,     // (piece, off_0..off_{r-1}, tile) -> ()    element e goes to piece-relative off + e; elements outside
                   //                                           the piece or the tensor are not written
  Gather,          // (tensor[Read|Atomic|Unchecked], idx_0..idx_{r-1}) -> tile   attrs: pad. Index tiles share one shape.
  ScatterPiece,    // (piece, idx_0..idx_{r-1}, value) -> ()   indices relative to the piece; outside piece or tensor: dropped
  ScatterUnchecked,// (tensor[Unchecked], idx..., value) -> () outside the tensor: dropped. Not race-free: checked by the CPU race checker.
  AtomicRMW,       // (tensor[Atomic], idx..., value) -> old   attrs: atomic. Outside the tensor: no-op, old = 0.
  AtomicCAS,       // (tensor[Atomic], idx..., expected, desired) -> old
  // tile construction and shape manipulation
  Constant,        // () -> tile                                attrs: value, result type
  Iota,            // () -> 1-D tile [0, n)                     attrs: result type; value: floor g (element i is
                   //                                           i - i % g; 0 or 1: none; narrow-index sets it)
  Broadcast,       // (tile) -> tile                            same rank; extents 1 grow to the result shape
  Reshape,         // (tile) -> tile                            same element count, row-major order
  Permute,         // (tile) -> tile                            attrs: perm; result dim i = operand dim perm[i]
  Cat,             // (a, b) -> tile                            attrs: axis
  Extract,         // (tile) -> tile                            attrs: offsets (static), result shape
  // element-wise
  Unary,           // (x) -> same type                          attrs: unary
  Binary,          // (a, b) -> same type, same shapes          attrs: binary
  Fma,             // (a, b, c) -> a*b+c, one rounding for floats
  Cmp,             // (a, b) -> bool tile                       attrs: cmp
  Select,          // (cond: bool tile, a, b) -> tile
  Convert,         // (x) -> tile of result dtype (float->int truncates toward zero and saturates; NaN -> 0)
  Bitcast,         // (x) -> tile of result dtype of the same width: the same bits read as the other type
  Random,          // (seed: i64 tile, offset: i64 tile) -> tile  attrs: random. Philox-4x32-10 per element (docs/ir.md)
  // reductions, scans, matrix multiply
  Reduce,          // (x) -> tile without `axis`                attrs: reduce, axis. argmax/argmin give i64, first index wins ties.
  Scan,            // (x) -> same type                          attrs: reduce (sum|prod|max|min), axis, exclusive, reverse
  // Over a combine function (region 0): k tiles of one shape combined element by element along
  // `axis`. Region 0 takes 2k scalars (the left operand's k values, then the right's), holds only
  // element-wise ops on values of its own (isolated: it uses nothing from outside) and yields k
  // scalars of the inputs' element types. The function is assumed associative (and, for
  // reductions, commutative): the order of combination is the backend's (docs/ir.md).
  ReduceWith,      // (x_0..x_{k-1}) -> k tiles without `axis`    attrs: axis
  ScanWith,        // (x_0..x_{k-1}[, id_0..id_{k-1}]) -> k tiles attrs: axis, exclusive (then k identity
                   //                                             scalars follow: the first outputs), reverse
  Mma,             // (a[M,K], b[K,N], acc[M,N]) -> acc type    products and sums in acc's type
  // GPU-level IR (after layout assignment; docs/compiler.md)
  ConvertLayout,   // (x) -> same type                          the value in another layout (Kernel::layouts)
  // structured control flow
  For,             // (lb, ub, step, init...) -> carried...     region 0 args: (iv, carried...); yields carried
  If,              // (cond) -> results...                      region 0: then, region 1: else; each yields results
  While,           // (init...) -> carried...                   region 0 (cond) args carried, yields one bool scalar;
                   //                                           region 1 (body) args carried, yields carried
  Yield,           // (values...) -> ()                         terminator of every region
};

// Erf .. Expm1 are float-only; Popcount and Clz integer-only (of the bit pattern, in the element's width).
enum class UnaryFn : std::uint8_t {
  Neg, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Sin, Cos, Abs, Floor, Ceil, Not,
  Erf, Erfc, Sigmoid, Log1p, Expm1, Popcount, Clz,
};
inline constexpr int kUnaryFns = static_cast<int>(UnaryFn::Clz) + 1;
enum class BinaryFn : std::uint8_t { Add, Sub, Mul, Div, Rem, Min, Max, Pow, And, Or, Xor, Shl, Shr, Atan2 };
inline constexpr int kBinaryFns = static_cast<int>(BinaryFn::Atan2) + 1;
enum class CmpPred : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class ReduceKind : std::uint8_t { Sum, Max, Min, Prod, ArgMax, ArgMin };
enum class AtomicKind : std::uint8_t { Add, Max, Min, Exch };
// What ct.random makes of the Philox words of an element: the first word (u32), a uniform f32 in
// [0, 1) from it, or a standard normal f32 (Box-Muller of the first two).
enum class RandomDist : std::uint8_t { Bits, Uniform, Normal };
// Precision of a float op (docs/ir.md, "Numerics"): Rn is correctly rounded, Full within a few ulp
// (CUDA's accurate functions), Approx the hardware's fast approximations. Default is the op's own
// default, resolved by the precision pass from the kernel's options (fast_math makes it Approx).
enum class Rounding : std::uint8_t { Default, Rn, Full, Approx };

const char* op_name(OpKind k);  // "ct.load", ...
const char* unary_name(UnaryFn f);
const char* binary_name(BinaryFn f);
const char* cmp_name(CmpPred p);
const char* reduce_name(ReduceKind k);
const char* atomic_name(AtomicKind k);
const char* random_name(RandomDist d);
const char* rounding_name(Rounding r);

struct Op;

// A single-block region: arguments, then ops; the last op is a Yield.
struct Region {
  std::vector<ValueId> args;
  std::vector<std::unique_ptr<Op>> ops;
};

struct Op {
  OpKind kind;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<Region> regions;
  SourceLoc loc;  // the user's code that created it

  // Attributes (which ones an op uses is listed beside OpKind).
  int axis = 0;
  Shape shape;                 // MakePartition: tile shape
  Shape offsets;               // Extract
  std::vector<int> perm;       // Permute
  Scalar value;                // Constant: the value; Load/LoadPiece/Gather: padding; Iota: floor (an integer)
  UnaryFn unary = UnaryFn::Neg;
  BinaryFn binary = BinaryFn::Add;
  CmpPred cmp = CmpPred::Eq;
  ReduceKind reduce = ReduceKind::Sum;  // Reduce; Scan: its combine (sum, prod, max, min)
  bool exclusive = false;      // Scan: element i combines the elements before i (the first gets the identity)
  bool reverse = false;        // Scan: runs from the last element of the axis to the first
  AtomicKind atomic = AtomicKind::Add;
  RandomDist random = RandomDist::Uniform;  // Random
  // Numerics (exp, exp2, log, log2, sqrt, rsqrt, div; min/max): see op_info.hpp for who takes them.
  Rounding rounding = Rounding::Default;
  bool ftz = false;            // flush subnormal f32 inputs and results to zero
  bool propagate_nan = false;  // min/max: a NaN operand gives NaN (default: the other operand)

  // GPU-level attributes, set by the passes after layout assignment (docs/compiler.md).
  std::int64_t smem_offset = -1;  // byte offset of this op's shared-memory scratch (-1: none)
  std::int64_t smem_bytes = 0;
  bool in_bounds = false;         // load/store: every element of every tile block is inside the tensor
  bool sync_after = false;        // the tile block synchronises after this op (a region's yield: at its end)
  bool grid_indices = false;      // load: every tile index is a block id (in [0, 2^31): no overflow, none negative)
  bool tensor_core = false;       // mma: on the matrix units (mma.sync m16n8k16), the accumulator in ir::mma_accumulator
  // A load whose result has a shared layout copies its tile asynchronously (cp.async) into one slot
  // of a ring of `ring_slots` buffers of smem_bytes / ring_slots bytes at smem_offset: slot
  // `ring_slot`, or (ring_slot = -1, a load inside a loop body) slot (iteration + ring_ahead) %
  // ring_slots, the iteration counted from 0 by the enclosing loop (docs/compiler.md, smem-alloc).
  int ring_slots = 0;
  int ring_slot = -1;
  int ring_ahead = 0;
  // Such a load on sm_90 may copy its tile with TMA instead (smem-alloc, option tma): one thread
  // copies the tile through tensor map `tma_map` of the kernel (ir::tensor_maps) and the slot's
  // mbarrier, one of ring_slots 8-byte barriers at byte `tma_bar` of the tile block's shared
  // memory, counts its bytes; the mma that reads the tile waits on that barrier (-1: cp.async).
  int tma_map = -1;
  std::int64_t tma_bar = -1;
  // mma reading shared-layout operands, a loop after which no copy may be in flight: the op first
  // waits until at most `async_wait` of this thread's asynchronous copies are pending, then the
  // tile block synchronises (-1: no wait).
  int async_wait = -1;
  // mma on wgmma in a loop that carries its accumulator: the op leaves its products in flight (the
  // accumulator is the loop's own register state) and waits only for the previous iteration's, so
  // the tensor cores run across the loop's barrier; the loop waits for the last at its end.
  // smem-alloc sets it and gives the loop's rings one slot more (docs/compiler.md, smem-alloc).
  bool in_flight = false;
  // A load of a straight-line kernel on a resident grid that reads the CTA's next tile block while
  // this one computes (block-prefetch; the code generator keeps a second set of registers).
  bool prefetch_next = false;
  // A ct.for whose in-flight wgmma accumulates into a carried f32 tile: with 2 the iterations
  // alternate between that tile and a second accumulator (zero at the start), added at the loop's
  // end, so consecutive iterations' products do not wait for each other on the tensor cores
  // (acc-split; 0: one accumulator).
  int acc_split = 0;
  // A copy made by the remat pass (a conversion of a packed 16-bit tile, an iota): the CUDA emitter
  // hides its input from the CUDA compiler's common-subexpression elimination, so the copy is not
  // merged back into the original.
  bool remat = false;
  // Set by the fuse-elementwise pass on an element-wise op whose only user reads it element by
  // element: the CUDA emitter computes it inside that user's expression, one element at a time,
  // instead of into registers of its own.
  bool fused = false;
};

// Facts about a tensor parameter that hold for every launch of one specialisation. The launcher
// computes them from each tensor argument (base address, extents, strides) and makes them part of
// the specialisation key, like Triton, so a kernel traced with a fact set only ever runs on
// tensors for which it holds. A backend may rely on a fact to drop a run-time check (a vector
// access that needs 16-byte alignment, a bounds check per element of a group of 16); a fact that
// is not set promises nothing, so the checks stay. Meanings (docs/ir.md, "Tensor facts"):
//   aligned16        the address of element 0 is a multiple of 16 bytes.
//   contiguous_last  the last axis has stride 1 or extent 1 (elements along it are adjacent).
//   extent_div16     bit d: extent_d % 16 == 0 (an extent of 0 counts as divisible).
//   extent_div8      bit d: extent_d % 8 == 0 (set wherever extent_div16 is: a bf16 / f16 row of
//                    whole 16-byte vectors, such as 1000 columns).
//   stride_div16     bit d, for every axis but the last: stride_d % 16 == 0 in elements (a stride
//                    of 0, a broadcast axis, counts), or extent_d == 1 (the stride is never used).
//                    The last axis's bit is never set (contiguous_last describes it).
//   stride_div8      the same for stride_d % 8 == 0 (set wherever stride_div16 is: rows of 1000
//                    bf16 elements start on 16-byte boundaries, rows of 300 do not).
//   small            every element's offset from element 0 (sum of (extent_d - 1) * |stride_d|) is
//                    below 2^31, so offsets may be computed in 32 bits.
// Only tensor-like params (Piece and Tensor types) carry facts; a scalar param's are all clear.
struct TensorFacts {
  bool aligned16 = false;
  bool contiguous_last = false;
  std::uint32_t extent_div16 = 0;
  std::uint32_t stride_div16 = 0;
  bool small = false;
  std::uint8_t extent_div8 = 0;
  std::uint8_t stride_div8 = 0;

  bool any() const {
    return aligned16 || contiguous_last || extent_div16 != 0 || stride_div16 != 0 || small || extent_div8 != 0 ||
           stride_div8 != 0;
  }
  friend bool operator==(const TensorFacts&, const TensorFacts&) = default;
  friend auto operator<=>(const TensorFacts&, const TensorFacts&) = default;
};

// The printed form: "" when no fact holds, else e.g.
// "{align16, contig, div16=[0,1], div8=[2], stride16=[0], stride8=[1], small}" (only the facts that
// hold, in this order; axis lists ascending; div8 and stride8 list the axes divisible by 8 and not
// by 16, since the 16 facts imply them).
std::string facts_str(const TensorFacts& f);

// One kernel parameter as the IR sees it. Trace-time constants are folded away during tracing and
// do not appear here. A Piece parameter's rank equals the kernel's grid_rank, and tile block b owns
// the tile at tile index b (its grid coordinates): that is what keeps pieces disjoint.
struct Param {
  std::string name;    // "arg0", ... or a name given by the user
  int arg_index = 0;   // position in the C++ kernel signature
  ValueId value = kNoValue;
  Type type;           // Piece, Tensor (with access) or scalar Tile
  TensorFacts facts;   // Piece and Tensor params: what holds for every launch of this kernel
};

// How a GPU-level kernel maps onto the hardware; set by the layout-assignment pass (sm != 0 marks
// the GPU-level IR, whose tile values all have a layout).
struct KernelTarget {
  int sm = 0;                    // compute capability * 10 of the target; 0: tile-level IR
  int warps = 0;                 // warps per tile block
  int blocks_per_cta = 1;        // tile blocks a CTA runs side by side, each on its own `warps` warps
  std::int64_t smem_bytes = 0;   // dynamic shared memory per tile block (set by the smem-allocation pass)
  bool persistent = false;       // a resident grid: each CTA loops over tile blocks
  // Grid rank 2: consecutive tile blocks walk `group_rows` rows of the grid column by column (the
  // L2-friendly order of a matrix product: a group's A rows and B columns stay in L2); 0: row-major.
  int group_rows = 0;
  // The occupancy target the occupancy pass chose (CTAs per SM: the __launch_bounds__ minimum, so
  // ptxas fits the registers to it); 0: none. KernelOptions::min_ctas_per_sm, when set, wins.
  int min_ctas = 0;
  // Warp specialisation (the warp-specialize pass): a producer warpgroup of `producer_warps` (4)
  // warps beside the tile block's `warps` issues the TMA copies (ir::producer_ops); 0: none. Its
  // mbarriers start at `producer_bar` in shared memory: one per TMA ring slot, at the offsets of
  // the slots' own barriers (relative to the first), where the consumers hand the slot back, then
  // one where they say the tile block's shared memory is free for the next tile block's copies.
  int producer_warps = 0;
  std::int64_t producer_bar = 0;
  // Ping-pong (the warp-specialize pass, option pingpong): the two consumer warpgroups take turns
  // on the tensor cores in the loops' products, through named barriers kPingPongBarrier and the
  // next (warpgroup g waits on kPingPongBarrier + g before a product and hands the turn over on the
  // other's after it).
  bool pingpong = false;
  // With a producer warpgroup: the epilogue's scratch lies over the rings (smem-alloc puts it there
  // when every op with scratch follows the K loop), so the producer waits for each tile block's
  // end before the next one's copies. False: they lie apart and the producer copies the next tile
  // block's operands while the consumers run this one's epilogue (the warp-specialize pass moves
  // the rings above the scratch where the CTA's shared memory holds both).
  bool scratch_over_rings = false;
  // K split over consumer warpgroups (acc-split with option acc_split = 2): 2 when a second
  // warpgroup of `warps` (4) warps runs beside the tile block's own and takes the odd iterations
  // of the loop marked acc_split = 2 into an accumulator of its own, which it leaves at
  // `k_split_scratch` in shared memory (a 64-row f32 accumulator: 128 threads x its registers) for
  // the tile block's warpgroup to add before the epilogue; 1: none.
  int k_split = 1;
  std::int64_t k_split_scratch = 0;
  friend bool operator==(const KernelTarget&, const KernelTarget&) = default;
};

// The first of ping-pong's two named barriers (1 is the consumers' own barrier: device/regs.h).
inline constexpr int kPingPongBarrier = 2;
// The K split's named barriers (KernelTarget::k_split): the second warpgroup's accumulator is in
// shared memory (kKSplitBarrier), the tile block's warpgroup has added it (kKSplitBarrier + 1).
inline constexpr int kKSplitBarrier = 4;

// A TMA tensor map a GPU-level kernel copies tiles through (ops with tma_map >= 0): boxes of
// box_rows x box_cols elements of param `param`'s tensor of rank `rank` (2 to 5; a box has extent
// 1 along the leading axes: a [1, 1, S, D] block of a [B, H, S, D] tensor) with a swizzle of
// `swizzle` bytes.
struct TensorMapUse {
  int param = 0;  // index into Kernel::params
  DType dtype = DType::bf16;
  int rank = 2;
  std::int64_t box_rows = 0, box_cols = 0;
  int swizzle = 128;
  friend bool operator==(const TensorMapUse&, const TensorMapUse&) = default;
};

struct Kernel {
  std::string name;
  int grid_rank = 1;            // tile-block ids have this many axes
  std::vector<Param> params;
  Region body;                  // args are the params' values in order; ends with an empty Yield
  std::vector<Type> values;     // type of each ValueId
  // GPU-level IR only: the layout of each value (tile values have a distributed or shared layout;
  // other values None). Empty in the tile-level IR.
  std::vector<Layout> layouts;
  KernelTarget target;
  // GPU-level IR only: what the compiler chose that a user may want to know, one line each (a
  // product left off the tensor cores or off wgmma, and why). Printed as "// note: ..." comments
  // before the kernel, in the generated source's header, and by CTILE_TIMINGS once per compile.
  std::vector<std::string> notes;
  // The options the kernel is compiled with (a launch's .options(), compile_only's, warm_up's):
  // part of the specialisation, printed in the IR.
  KernelOptions options;

  const Type& type(ValueId v) const { return values.at(static_cast<std::size_t>(v)); }
  bool gpu_level() const { return target.sm != 0; }
  const Layout& layout(ValueId v) const { return layouts.at(static_cast<std::size_t>(v)); }
};

// A deep copy (regions own their ops), for passes that must not change the traced kernel.
Kernel clone(const Kernel& k);

// Every attribute of `from` (all of Op's fields but kind, operands, results, regions and loc) into
// `to`: what an op cloned for another operand or layout must carry (a unary's function, a
// comparison's predicate, numerics, the GPU-level placement).
void copy_attributes(const Op& from, Op& to);

// The index in k.params of the tensor that value `v` (a tensor parameter or a partition of one)
// refers to; -1 when it is neither.
int tensor_param_of(const Kernel& k, ValueId v);

// The tensor map that `load` (a Load of a read-only rank-2 parameter into a swizzled tile) copies
// through: its parameter, element type, box and swizzle.
TensorMapUse tensor_map_use(const Kernel& k, const Op& load);
// The tensor maps of a GPU-level kernel, indexed by the ops' tma_map (empty when no op copies with
// TMA). Throws InternalError when two ops of one map disagree or a map index is unused.
std::vector<TensorMapUse> tensor_maps(const Kernel& k);

// Where a GPU-level kernel's shared memory goes (smem-alloc's offsets): the rings (loads into
// shared memory) and the scratch (every other op with an offset).
struct SharedMemoryUse {
  std::int64_t ring_lo = -1;    // the first ring's offset; -1: no ring
  std::int64_t scratch_end = 0;  // the end of the scratch (0: none)
  bool rings_over_scratch = false;  // a ring's bytes meet a scratch op's
};
SharedMemoryUse shared_memory_use(const Kernel& k);

// What the producer warpgroup of a warp-specialised kernel runs (KernelTarget::producer_warps):
// every TMA copy (tma_map >= 0), the ct.for loops around them, and the pure scalar ops that their
// coordinates and those loops' bounds need. False when that is not a program of its own: a copy
// under a branch or a while loop, or a coordinate or bound that needs a tile, a loop-carried value,
// a branch's or loop's result or a memory read. `ops` gets the set (for the code generator).
bool producer_ops(const Kernel& k, std::vector<const Op*>* ops = nullptr);

// True when every tile block does the same work: the bounds of every ct.for and the condition of
// every ct.if come from parameters, constants, induction variables of such loops and pure scalar
// ops of them (no block id, no memory read, no loop-carried value or branch result), and there is
// no ct.while. A resident grid hands
// tile blocks to CTAs in a fixed order, which balances only such kernels (a causal attention's key
// loop, bounded by its block id, is not one).
bool uniform_tile_blocks(const Kernel& k);

struct PrintOptions {
  bool locations = false;  // each op's source location as `loc("file":line)`
};
std::string print(const Kernel& k, const PrintOptions& o = {});  // stable text (docs/ir.md, docs/compiler.md)
// Parses the printed form back (parse(print(k)) prints the same text). Throws UserError naming the
// line and column of the first problem; the result is verified.
Kernel parse(const std::string& text);
void verify(const Kernel& k);                // throws InternalError naming the op and its location

// Calls f(op) for every op in region r and, recursively, in the regions nested in it (pre-order).
template <class F>
void walk(const Region& r, F&& f) {
  for (const auto& op : r.ops) {
    f(*op);
    for (const auto& sub : op->regions) walk(sub, f);
  }
}
template <class F>
void walk_mut(Region& r, F&& f) {
  for (auto& op : r.ops) {
    f(*op);
    for (auto& sub : op->regions) walk_mut(sub, f);
  }
}

}  // namespace ctile::ir
