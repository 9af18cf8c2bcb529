// A CPU implementation of the subset of the Metal standard library that meTile's
// emitter uses, so that emitted MSL compiles unchanged as C++20 (see
// docs/host_emulator.md for the supported constructs). Included through
// include/metal_stdlib: `#include <metal_stdlib>` then `using namespace metal;`.
#pragma once

#include <cfloat>
#include <climits>
#include <cstddef>

#include "msl/atomic.h"
#include "msl/bounds.h"
#include "msl/device_debug.h"
#include "msl/host_runtime_abi.h"
#include "msl/math_functions.h"
#include "msl/mpp_tensor_ops.h"
#include "msl/scalar_types.h"
#include "msl/simd.h"
#include "msl/simdgroup_matrix.h"
#include "msl/sync.h"
#include "msl/vector_types.h"
#include "msl/workgroup.h"

// Address spaces carry no meaning on the CPU; `constant` data is read-only. These are
// macros, so nothing may be included after this point.
#define device
#define threadgroup
#define thread
#define constant const
#define kernel
