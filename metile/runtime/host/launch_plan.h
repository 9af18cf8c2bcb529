// Everything the workers need to run one launch of a host kernel module.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/host/msl/host_runtime_abi.h"

namespace metile::runtime::host {

using Dim3 = std::array<unsigned, 3>;

struct LaunchPlan {
  std::string kernel_name;
  const codegen::KernelABI* abi = nullptr;  // its line table names a fault's source line
  MetileHostRunThreadFn run_thread = nullptr;
  // Set when the launch runs the work-group function instead of one fiber per thread.
  MetileHostRunThreadgroupFn run_threadgroup = nullptr;
  void* const* args = nullptr;  // per parameter: the buffer's data, or the scalar's address
  Dim3 grid{1, 1, 1};
  Dim3 threadgroup_size{1, 1, 1};
  unsigned thread_count = 1;
  std::size_t threadgroup_bytes = 0;
};

// "(x,y,z)"
inline std::string format_dim3(const Dim3& d) {
  return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
}

}  // namespace metile::runtime::host
