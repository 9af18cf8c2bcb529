// A reference executor of Metal IR for the lowering tests: runs a kernel threadgroup by
// threadgroup, all threads of a threadgroup in lock-step over the structured IR (an `if`
// with a per-thread condition runs each branch for its threads only). It turns the kernel's
// undefined behaviour into errors: out-of-bounds or misaligned device and threadgroup
// accesses, reads of threadgroup memory nobody wrote, threadgroup-memory races between
// barriers (a read of another thread's write, or a write over another thread's read or
// write, with no barrier in between), barriers not reached by every thread, and loops whose
// bounds differ between threads. Scalar ops compute through the core's scalar evaluator
// (metile/ir/scalar_eval.h), whose undefined cases (integer division by zero, out-of-range
// shifts and conversions) are errors too.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::lower_test {

// A device buffer of f32, i32, u32, i64 or i1 elements.
struct Buffer {
  ir::DType dtype = ir::DType::f32;
  std::vector<uint8_t> bytes;

  static Buffer f32(const std::vector<float>& values);
  static Buffer i32(const std::vector<int32_t>& values);
  static Buffer zeros(ir::DType dtype, int64_t elements);
  int64_t elements() const { return static_cast<int64_t>(bytes.size()) / ir::dtype_bytes(dtype); }
  std::vector<float> floats() const;
  std::vector<int64_t> ints() const;
};

// One kernel argument, in parameter order: a buffer (by index into the buffer list) or a
// scalar.
struct Arg {
  int buffer = -1;
  double number = 0;

  static Arg buf(int index) { return {index, 0}; }
  static Arg scalar(double value) { return {-1, value}; }
};

class InterpreterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunStats {
  int64_t barriers = 0;  // threadgroup barriers executed, summed over threadgroups
  int64_t threadgroup_reads = 0;
};

// Runs `metal` over a grid of threadgroups; throws InterpreterError on undefined behaviour.
RunStats run_metal(const ir::Kernel& metal, std::vector<Buffer>& buffers,
                   const std::vector<Arg>& args, std::array<int, 3> grid, int simd_width = 32);

}  // namespace metile::lower_test
