// What a compiled kernel expects from whoever launches it (see DESIGN.md, "Kernel shape
// and ABI"). Produced by the emitter; consumed by every runtime.
//
// The emitted source holds a body function and an entry wrapper. The body's parameters
// are, in order:
//   1. the kernel parameters, in `params` order: buffers as `device T*` (`device const T*`
//      when read-only; T is half, bfloat, float, int, uint, long or bool), scalars by value;
//   2. `threadgroup uchar* tg_mem`          the kernel's threadgroup block
//      (threadgroup_bytes long, 16-byte aligned);
//   3. `uint3 threadgroup_position_in_grid, uint3 threadgroups_per_grid,
//       uint3 thread_position_in_threadgroup, uint3 threads_per_threadgroup,
//       uint simd_lane, uint simd_group`.
// The entry (`kernel void <name>`) binds buffers and scalars to [[buffer(i)]] in params
// order, declares the threadgroup block and calls the body.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metile/ir/types.h"
#include "metile/support/errors.h"

namespace metile::codegen {

struct AbiParam {
  enum class Kind { Buffer, Scalar };
  std::string name;
  Kind kind = Kind::Buffer;
  ir::DType dtype = ir::DType::f32;  // buffers: element dtype
  std::string access;                // buffers: read | write | read_write
};

// An extent a launch knows: the value of i32 scalar parameter `param`, or `value` when param
// is -1 (a constant the compiler specialised).
struct AbiExtent {
  int param = -1;
  int64_t value = 0;
};

// A TMA tensor map the runtime builds for each launch (sm90, docs/hopper.md) and passes after
// the parameters: the 2-D row-major tensor at buffer parameter `buffer`, `outer` x `inner`
// elements (rows `inner` elements apart), copied in boxes of box_outer x box_inner elements
// with 128-byte swizzling; elements past the tensor read 0.
struct TensorMapParam {
  int buffer = 0;
  AbiExtent outer, inner;
  int64_t box_outer = 0, box_inner = 0;
};

// A persistent kernel (sm90's wgmma_tma): the runtime launches min(tiles, SMs) workers
// along x, which visit the rows x columns output's block_m x block_n tiles (scalar parameters)
// themselves; the caller's grid must cover the tiles.
struct PersistentTiles {
  AbiExtent rows, columns;
  int64_t block_m = 0, block_n = 0;
};

// A line of the emitted source and the user's source line of the op it was emitted from.
struct SourceLine {
  int line = 0;  // 1-based, in the emitted source
  SourceLocation where;
};

struct KernelABI {
  std::string kernel_name;  // the entry function
  std::string body_name;    // the body function: <kernel_name>_body
  // The source is PTX (the PTX route, codegen/ptx/): the CUDA runtime hands it to the driver
  // (cuModuleLoadData) instead of compiling it with NVRTC.
  bool source_is_ptx = false;
  std::vector<AbiParam> params;
  std::vector<TensorMapParam> tensor_maps;  // hidden: built by the runtime, passed after params
  // Recorded bounds checks (METILE_DEBUG=bounds on CUDA, codegen/cuda/cuda_bounds.h): hidden
  // parameters after the tensor maps, each buffer parameter's extent in bytes (an unsigned
  // 64-bit integer, in params order) and then a pointer to the launch's fault record.
  bool bounds_checks = false;
  std::optional<PersistentTiles> persistent;
  std::array<int, 3> threads_per_threadgroup{1, 1, 1};
  int64_t threadgroup_bytes = 0;
  // How the launch grid maps to threadgroups: one threadgroup per program, so
  // threadgroups_per_grid = grid. Stated in words for reports.
  std::string grid_rule = "one threadgroup per program; threadgroups_per_grid = grid";
  // The line table: every emitted line whose op has a known location, in line order. A
  // runtime maps a fault at an emitted line back to the kernel's source line through it.
  std::vector<SourceLine> source_lines;

  int threads_total() const {
    return threads_per_threadgroup[0] * threads_per_threadgroup[1] * threads_per_threadgroup[2];
  }
  // The source location of emitted line `line`, or an unknown one.
  SourceLocation source_of_line(int line) const {
    const auto it = std::lower_bound(source_lines.begin(), source_lines.end(), line,
                                     [](const SourceLine& l, int n) { return l.line < n; });
    return it != source_lines.end() && it->line == line ? it->where : SourceLocation{};
  }
};

}  // namespace metile::codegen
