// The constructors of every pass (the registry in pass_manager.cpp lists them by name).
#pragma once

#include <cstdint>

#include "ctile/ir/ir.hpp"
#include "ctile/passes/pass.hpp"

namespace ctile::passes {

// sm_90's shared memory per CTA (227 KiB, the opt-in limit), less what the code generator adds to
// align swizzled tiles: what warp-specialize and acc-split may place.
inline constexpr std::int64_t kSharedPerCtaSm90 = 227 * 1024 - (ir::kSwizzleAlign - 16);

// The matrix products (ct.mma) in a region, its nested regions included.
inline int count_products(const ir::Region& r) {
  int n = 0;
  ir::walk(r, [&](const ir::Op& op) { n += op.kind == ir::OpKind::Mma ? 1 : 0; });
  return n;
}

std::unique_ptr<Pass> make_canonicalize();
std::unique_ptr<Pass> make_constant_fold();
std::unique_ptr<Pass> make_cse();
std::unique_ptr<Pass> make_dead_code();
std::unique_ptr<Pass> make_precision();
std::unique_ptr<Pass> make_layout_assignment();
std::unique_ptr<Pass> make_loop_prefetch();
std::unique_ptr<Pass> make_narrow_index();
std::unique_ptr<Pass> make_bounds();
std::unique_ptr<Pass> make_smem_alloc();
std::unique_ptr<Pass> make_schedule();
std::unique_ptr<Pass> make_remat();
std::unique_ptr<Pass> make_fuse_elementwise();
std::unique_ptr<Pass> make_occupancy();
std::unique_ptr<Pass> make_block_prefetch();
std::unique_ptr<Pass> make_batch_mma();
std::unique_ptr<Pass> make_warp_specialize();
std::unique_ptr<Pass> make_acc_split();

// In a kernel warp-specialize gave a producer: each rotating ring grows to `want` slots where it
// has fewer, or as many as the CTA's shared memory holds with `reserve` bytes left after the
// producer's barriers (which move after the rings). Nothing changes without a producer.
void grow_producer_rings(ir::Kernel& k, int want, std::int64_t reserve);

}  // namespace ctile::passes
