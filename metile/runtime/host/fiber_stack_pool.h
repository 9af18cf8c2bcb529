// Stacks for the fibers that emulate GPU threads: small (64 KiB by default, env
// METILE_HOST_STACK_KB), guard-paged so an overflow faults, and reused across
// threadgroups because a launch runs millions of threads.
#pragma once

#include <cstddef>
#include <vector>

#include "metile/runtime/host/guarded_memory.h"

namespace metile::runtime::host {

class FiberStackPool {
 public:
  FiberStackPool();
  std::size_t stack_bytes() const { return stack_bytes_; }
  // The top (highest address) of a free stack; stacks grow down.
  unsigned char* acquire();
  void release(unsigned char* top);

 private:
  std::size_t stack_bytes_;
  std::vector<GuardedRegion> stacks_;
  std::vector<unsigned char*> free_tops_;
};

}  // namespace metile::runtime::host
