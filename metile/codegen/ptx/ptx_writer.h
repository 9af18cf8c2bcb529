// The PTX renderer's writer (ptx_renderer.cc): one kernel's PTX text, built op by op. Its
// members are defined by kind of op: ptx_writer.cc (registers, parameters, the op dispatch,
// constants and geometry), ptx_arithmetic.cc, ptx_memory.cc and ptx_control.cc (loops and ifs).
// Internal to metile/codegen/ptx.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "metile/codegen/kernel_abi.h"
#include "metile/ir/ir.h"

namespace metile::codegen::ptx {

// The shared-memory block a kernel's threadgroup buffers are windows of.
inline constexpr std::string_view kSharedBlock = "metile_smem";

class PtxWriter {
 public:
  explicit PtxWriter(const ir::Kernel& kernel) : kernel_(kernel) {}
  std::string kernel_text(const KernelABI& abi);

 private:
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) const;
  std::string param_type(const ir::Type& t) const;
  std::string param_name(size_t i) const { return kernel_.name + "_param_" + std::to_string(i); }
  void line(const std::string& text) { body_ += "  " + text + "\n"; }
  // The register of scalar value v (element `e` of a vector), declared on first use.
  std::string reg(ir::ValueId v, int e = -1);
  std::string temp(const std::string& type);
  std::string label(const std::string& what) { return "$L_" + what + std::to_string(labels_++); }
  void load_param(size_t i);
  void emit_block(const ir::Block& block);
  // A scalar of dtype t in t's arithmetic suffix, or NotSupported.
  std::string suffix(const ir::Op& op, ir::DType t) const;
  const ir::Type& type(ir::ValueId v) const { return kernel_.type(v); }
  bool is_float(ir::ValueId v) const { return type(v).dtype == ir::DType::f32; }
  std::string out(const ir::Op& op) { return reg(op.results[0]); }
  std::string in(const ir::Op& op, size_t i) { return reg(op.operands[i]); }
  bool fast(const ir::Op& op) const { return op.int_attr_or("fast", 0) != 0; }
  void require_scalars(const ir::Op& op);
  void emit_op(const ir::Op& op);
  void constant(const ir::Op& op);
  void geometry(const ir::Op& op, const std::string& special);
  void binary(const ir::Op& op);
  void compare(const ir::Op& op);
  void select(const ir::Op& op);
  void cast(const ir::Op& op);
  void unary(const ir::Op& op);
  // Memory: a pointer's state space (global after cvta, or the shared block's window).
  // A global access carries the op's eviction priority (Triton's eviction_policy) as its L1
  // policy, as the CUDA dialect's hinted accesses do.
  std::string space(ir::ValueId ptr, const ir::Op& op) const;
  void ptr_add(const ir::Op& op);
  std::string memory_suffix(const ir::Op& op, ir::DType t) const;
  void load(const ir::Op& op);
  void store(const ir::Op& op);
  // A vector access of `width` 32-bit elements: .v2/.v4 of f32, s32 or u32 (16 bytes at most).
  std::string vector_suffix(const ir::Op& op, ir::DType t, int64_t width) const;
  void packed_load(const ir::Op& op);
  void packed_store(const ir::Op& op);
  void shuffle(const ir::Op& op, std::string_view mode);
  // A butterfly over offsets 16..1, after which every lane holds the warp's result (as the
  // CUDA dialect's metile_simd_sum and MSL's simd_sum give every lane).
  void warp_reduction(const ir::Op& op);
  void move(ir::ValueId to, ir::ValueId from);
  // The region's yield operands into `targets`, through temporaries: a yield may name a value
  // that another target holds (a swap). A vector moves component by component.
  void assign_yield(const ir::Block& region, const std::vector<ir::ValueId>& targets);
  void emit_for(const ir::Op& op);
  void emit_if(const ir::Op& op);

  const ir::Kernel& kernel_;
  std::string body_;
  std::map<std::string, std::string> declared_;  // register -> .type
  int temps_ = 0, labels_ = 0;
};

}  // namespace metile::codegen::ptx
