// The constructors of every pass (the registry in pass_manager.cpp lists them by name).
#pragma once

#include "ctile/passes/pass.hpp"

namespace ctile::passes {

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
std::unique_ptr<Pass> make_batch_mma();
std::unique_ptr<Pass> make_warp_specialize();
std::unique_ptr<Pass> make_acc_split();

}  // namespace ctile::passes
