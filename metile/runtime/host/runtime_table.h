// The table of emulator entry points handed to every kernel module at load time.
#pragma once

#include <array>

#include "metile/runtime/host/msl/host_runtime_abi.h"

namespace metile::runtime::host {

// The first call applies METILE_HOST_MATRIX_LANE_MAP (apple, the default, or permuted: a
// fixed permutation of the lanes); UserError for another value.
const MetileHostRuntime& host_runtime_table();

// Test hook: lane l of a simdgroup_matrix holds the elements Apple's mapping gives lane
// lane_map[l]. `lane_map` must be a permutation of 0..31; takes effect at once for every
// loaded module. Pass the identity to restore the default.
void set_simdgroup_matrix_lane_map(const std::array<unsigned char, 32>& lane_map);

}  // namespace metile::runtime::host
