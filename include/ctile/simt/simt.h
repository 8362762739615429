// Everything a SIMT kernel body can use, in namespace ctile::simt (the kernel's code sees it
// unqualified). This is also the order in which the headers are embedded for NVRTC
// (src/simt/sources.cmake).
#pragma once

#include "ctile/simt/config.h"
#include "ctile/simt/index.h"
#include "ctile/simt/maybe.h"
#include "ctile/simt/span.h"
#include "ctile/simt/elem_ref.h"
#include "ctile/simt/disjoint.h"
#include "ctile/simt/atomic.h"
#include "ctile/simt/sync.h"
#include "ctile/simt/warp.h"
#include "ctile/simt/shared.h"
#include "ctile/simt/entry.h"
