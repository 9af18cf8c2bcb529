#include "metile/runtime/host/fiber_stack_pool.h"

#include <cstdlib>
#include <string>

namespace metile::runtime::host {

namespace {
std::size_t configured_stack_bytes() {
  std::size_t kib = 64;
  if (const char* env = std::getenv("METILE_HOST_STACK_KB")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 16) kib = static_cast<std::size_t>(v);
  }
  return kib * 1024;
}
}  // namespace

FiberStackPool::FiberStackPool() : stack_bytes_(configured_stack_bytes()) {}

unsigned char* FiberStackPool::acquire() {
  if (free_tops_.empty()) {
    stacks_.emplace_back(stack_bytes_, RegionKind::FiberStack);
    return stacks_.back().data() + stack_bytes_;
  }
  unsigned char* top = free_tops_.back();
  free_tops_.pop_back();
  return top;
}

void FiberStackPool::release(unsigned char* top) {
  free_tops_.push_back(top);
}

}  // namespace metile::runtime::host
