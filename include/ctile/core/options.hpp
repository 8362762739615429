// Per-kernel options: the compilation knobs a user may set on a launch (`.options({...})`),
// `compile_only` and `warm_up`. They are part of both kernel caches' keys (memory and disk), so two
// launches with different options never share a compiled kernel. Zero means "the compiler
// chooses". The environment variables CTILE_WARPS, CTILE_STAGES and CTILE_FAST_MATH override them
// for experiments (docs/compiler.md).
#pragma once

#include <compare>
#include <string>

namespace ctile {

struct KernelOptions {
  // Warps that run one tile block (a power of two, 1..32); 0: the layout pass chooses.
  int warps = 0;
  // Loads issued ahead over tile blocks on a persistent grid: 1 = none (one tile block at a time),
  // 2 = the next tile block's loads in flight while this one computes (a TMA producer warpgroup's
  // rings, or in a straight-line kernel such as a row kernel the block-prefetch pass's second set
  // of registers); 0: the compiler chooses (a persistent grid for kernels with a TMA producer
  // warpgroup on sm_90, else 1).
  int stages = 0;
  // Tile blocks one CTA runs side by side (a power of two, 1..32), each on its own warps; 0: chooses.
  int blocks_per_cta = 0;
  // Every float op left at its default precision (exp, exp2, log, log2, tanh, sqrt, rsqrt, div)
  // uses the hardware's approximations with subnormals flushed to zero (docs/ir.md, "Numerics").
  bool fast_math = false;
  // Every ct.mma on the CUDA cores (the portable path) even where the tensor cores apply: for
  // comparisons and for results that must not depend on the matrix units' summation order.
  bool simt_mma = false;
  // Tensor-core products with mma.sync (sm_80's instructions) even on sm_90, where they otherwise
  // run on Hopper's warpgroup mma (wgmma) when their shapes allow: for comparisons.
  bool sync_mma = false;
  // How many iterations ahead the loop-prefetch pass issues the loads of a K loop (1..3, each
  // level holds one more set of tiles in registers); 0: the compiler chooses (1).
  int loop_prefetch = 0;
  // Occupancy target: at least this many CTAs resident per SM (1..8), passed to ptxas as
  // __launch_bounds__'s minimum, which then limits the registers per thread to fit (spilling if it
  // must); 0: no target (ptxas uses the registers it wants).
  int min_ctas_per_sm = 0;
  // On sm_90, how the wgmma operand tiles of a K loop reach shared memory: 1 = TMA (one thread
  // copies each tile through a tensor map encoded at launch, an mbarrier per ring slot counts its
  // bytes), -1 = cp.async (every thread copies its vectors); 0: the compiler chooses (TMA for the
  // operands of products of at least 128 rows and 128 x 64 elements with 128-byte rows, cp.async
  // otherwise).
  // TMA applies to tiles of read-only rank-2 tensors whose facts prove 16-byte aligned rows and
  // whose padding is zero; other tiles keep cp.async.
  int tma = 0;
  // On sm_90, a K loop whose operand tiles all come by TMA run by warp specialisation: 1 = a
  // producer warpgroup (registers given back with setmaxnreg) issues the copies, each as soon as
  // the consumers have handed its ring slot back through an mbarrier, and the tile block's warps
  // only wait for copies and multiply (no barrier of the tile block per iteration); -1 = off;
  // 0: the compiler chooses: on wherever it applies (docs/compiler.md, "Warp specialisation").
  int warp_specialize = 0;
  // On sm_90, a warp-specialised kernel with two consumer warpgroups whose loop runs each
  // warpgroup's own products (attention): 1 = ping-pong, the two take turns on the tensor cores
  // (a pair of named barriers around each product of the loop), so one's softmax runs while the
  // other multiplies; -1 or 0 (the compiler's choice, off until measured): they run free
  // (docs/compiler.md, "Warp specialisation").
  int pingpong = 0;
  // On sm_90, a warp-specialised kernel whose epilogue's scratch smem-alloc laid over the K loop's
  // rings (a GEMM's relayout of C): 1 = the rings move above the scratch, each rotating ring a slot
  // fewer where both do not fit otherwise, so the producer copies the next tile block's operands
  // during this one's epilogue; -1 = the rings stay over the scratch (the producer waits for each
  // tile block's end); 0: the compiler chooses (apart wherever both fit with the rings' slots as
  // they are; docs/compiler.md, "Warp specialisation").
  int epilogue_overlap = 0;
  // On sm_90, the slots of each rotating ring (a K loop's operand tiles) of a warp-specialised
  // kernel: how many copies the producer may run ahead of the products. 2..32: that many where the
  // CTA's shared memory holds them, else as many as it holds, and never fewer than smem-alloc gave
  // the ring (its loop's prefetch depth + 2); 0: the compiler's choice, smem-alloc's slots (deeper
  // rings measured no faster: docs/compiler.md, "Warp specialisation"). Without a producer the
  // slots follow the loop's prefetch depth.
  int ring_slots = 0;
  // On sm_90, a K loop whose wgmma products accumulate into one f32 tile: 1 = consecutive
  // iterations alternate between two accumulators (summed at the end; the products' summation
  // order changes), so the tensor cores overlap one iteration's products with the next's instead of
  // waiting for each to finish; 2 = a second consumer warpgroup takes the odd iterations into its
  // own accumulator (the K split: a warp-specialised kernel with one consumer warpgroup, a 64-row
  // tile), added to the tile block's before the epilogue, so each warpgroup waits for half the K
  // steps; -1 or 0 (the compiler's choice) = one accumulator (docs/compiler.md, "Accumulator
  // split").
  int acc_split = 0;

  friend bool operator==(const KernelOptions&, const KernelOptions&) = default;
  friend auto operator<=>(const KernelOptions&, const KernelOptions&) = default;

  // "" for the defaults, else e.g. "warps=4,stages=2,fast_math": stable, for keys and messages.
  std::string str() const;
  // Throws UserError naming `kernel` and the option when an option is out of range.
  void validate(const std::string& kernel) const;
  // These options with the environment's overrides applied (CTILE_WARPS, CTILE_STAGES,
  // CTILE_BLOCKS_PER_CTA, CTILE_FAST_MATH, CTILE_SIMT_MMA, CTILE_SYNC_MMA, CTILE_LOOP_PREFETCH, CTILE_MIN_CTAS, CTILE_TMA, CTILE_WARP_SPECIALIZE, CTILE_PINGPONG, CTILE_EPILOGUE_OVERLAP, CTILE_RING_SLOTS, CTILE_ACC_SPLIT; a malformed
  // value is a UserError).
  KernelOptions with_env_overrides() const;
};

}  // namespace ctile
