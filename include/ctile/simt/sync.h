// Block barriers. sync_threads() waits until every thread of the block has reached it, and makes
// the shared-memory writes before it visible to every thread of the block after it.
//
// Every thread of the block must reach the same barrier (the same call): a barrier in code that only some threads
// run (an early return, a condition that differs between threads) hangs or misbehaves on a GPU.
// The CPU backend reports it as an error naming the barrier and the thread that did not arrive.
#pragma once

#include "ctile/simt/config.h"

namespace ctile::simt {

CTILE_SIMT_SYNC_FN void sync_threads(CTILE_SIMT_LOC_ONLY) {
#if CTILE_SIMT_DEVICE
  __syncthreads();
#else
  detail::barrier(detail::current("sync_threads()"), CTILE_SIMT_LOC_ARG);
#endif
}

}  // namespace ctile::simt
