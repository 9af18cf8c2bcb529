// Buffer access inference, the one rule both frontends (metile::dsl and the Python tracer)
// follow. A pointer derives from the buffer parameters it is computed from: through
// ptr_add, broadcasts, select and any other op with a pointer or descriptor result, and
// through loop-carried values and if results. A buffer is read when a load goes through a
// pointer derived from it, a tensor_load through a descriptor over it, or a descriptor over
// it declares read access; written likewise by store, tensor_store and write access.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::trace {

// What the body does with one parameter; the locations are of the first such op.
struct BufferUse {
  bool reads = false;
  bool writes = false;
  SourceLocation first_read, first_write;
};

struct BufferUses {
  std::vector<BufferUse> params;  // by parameter index; scalars are never used
  // Every make_tensor result -> the parameter indices its base derives from.
  std::map<ir::ValueId, std::set<int>> descriptor_buffers;
};

// The uses in `kernel`; the descriptors in `inferred_descriptors` were made without an
// access of their own, so only their loads and stores count.
BufferUses find_buffer_uses(const ir::Kernel& kernel,
                            const std::set<ir::ValueId>& inferred_descriptors);

// The access a use implies: read_write, write, or read (also for an unused buffer).
std::string implied_access(const BufferUse& use);

}  // namespace metile::trace
