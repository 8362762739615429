// ctile device library: the header every generated kernel includes (see docs/cuda_backend.md).
#pragma once

#include "ctile/device/config.h"
#include "ctile/device/arch.h"
#include "ctile/device/types.h"
#include "ctile/device/numeric.h"
#include "ctile/device/philox.h"
#include "ctile/device/layout.h"
#include "ctile/device/memory.h"
#include "ctile/device/atomic16.h"
#include "ctile/device/block.h"
#include "ctile/device/regs.h"
#include "ctile/device/dist.h"
#include "ctile/device/combine.h"
#include "ctile/device/mma.h"
#include "ctile/device/async.h"
#include "ctile/device/tma.h"
