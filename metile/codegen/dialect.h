// What distinguishes one C-like target language from another: a data table of spellings
// plus a few hooks (DESIGN.md, Practices 4). The C-style emitter (c_emitter.h) walks the op
// list and asks the dialect only for words; MSL is msl/msl_dialect.h, and CUDA becomes a
// second table with its own hooks.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "metile/ir/types.h"
#include "metile/target/target.h"

namespace metile::codegen {

// One coordinate argument of the body function; names and order come from kernel_abi.h.
struct GeometryArg {
  std::string_view name;  // the body parameter, e.g. "thread_position_in_threadgroup"
  std::string_view type;  // "uint3"
  // MSL: the entry receives the argument as a parameter with this attribute. Empty when the
  // language computes it instead (see `entry_value`).
  std::string_view entry_attribute;
  // Languages without attributes (CUDA): the expression the entry initialises it with.
  std::string_view entry_value;
};

struct DialectTable {
  std::string_view language;                     // "MSL", used in messages
  std::string_view header;                       // the first lines of every source
  std::array<std::string_view, 7> scalar_types;  // indexed by ir::DType
  // Dtypes whose math functions are computed in float and converted back.
  std::array<bool, 7> math_in_float;
  std::string_view device_space;       // pointer qualifier, with a trailing space: "device "
  std::string_view threadgroup_space;  // "threadgroup "
  std::string_view body_qualifier;     // "static inline"
  std::string_view entry_qualifier;    // "kernel void"
  // How the entry receives a scalar parameter: "<scalar_entry_prefix>T<scalar_entry_suffix> n".
  std::string_view scalar_entry_prefix;  // "constant "
  std::string_view scalar_entry_suffix;  // "&"
  // Binding of entry parameter i: prefix + i + suffix, e.g. " [[buffer(" 0 ")]]".
  std::string_view binding_prefix;
  std::string_view binding_suffix;
  // The entry's threadgroup block: prefix + bytes + suffix.
  std::string_view block_prefix;         // "threadgroup uchar tg_mem["
  std::string_view block_suffix;         // "] alignas(16)" or the like
  std::string_view block_type;           // the body's parameter type: "threadgroup uchar*"
  std::array<GeometryArg, 6> geometry;   // kernel_abi.h order
  std::string_view fast_math_prefix;     // "fast::"
  std::string_view precise_math_prefix;  // "precise::"
  // SIMD-group collectives; a lane or mask argument is converted to `lane_type`.
  std::string_view simd_sum, simd_max, simd_min, simd_shuffle, simd_shuffle_xor, simd_broadcast;
  std::string_view lane_type;
  std::string_view threadgroup_barrier;         // "threadgroup_barrier"
  std::string_view simdgroup_barrier;           // "simdgroup_barrier"
  std::array<std::string_view, 4> barrier_mem;  // mem = none, threadgroup, device, all
  std::string_view vector_select;               // per-element select(false_value, true_value, cond)
  std::string_view helper_prefix;               // prefix of prelude helper names: "metile_"
};

class CDialect {
 public:
  explicit CDialect(const DialectTable& table) : table_(table) {}
  virtual ~CDialect() = default;

  const DialectTable& table() const { return table_; }

  // Throws UserError when the target cannot hold values of dtype t.
  virtual void require_dtype(ir::DType t, const target::Target& target) const = 0;
  // "float4" for a vector of 4 f32.
  virtual std::string vector_type(ir::DType t, int64_t width) const;
  // An expression of type `to` made from `expr` (a float or a narrower float type).
  virtual std::string convert(const std::string& to, const std::string& expr) const;

  std::string_view scalar_type(ir::DType t) const {
    return table_.scalar_types[static_cast<int>(t)];
  }

 private:
  const DialectTable& table_;
};

}  // namespace metile::codegen
