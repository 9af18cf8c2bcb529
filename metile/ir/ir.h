// The containers shared by Tile IR and Metal IR: SSA values, ops with attributes and
// nested regions, and kernels. The op list is ops.def.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "metile/ir/types.h"
#include "metile/support/errors.h"

namespace metile::ir {

enum class Dialect : uint8_t { Tile, Metal };
std::string_view dialect_name(Dialect d);  // "tile" | "metal"

enum class OpKind : uint16_t {
#define METILE_OP(name, text, dialects, doc) name,
#include "metile/ir/ops.def"
#undef METILE_OP
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  bool in_tile;
  bool in_metal;
  std::string_view doc;
};
const OpInfo& op_info(OpKind k);
std::string_view op_name(OpKind k);
std::optional<OpKind> parse_op_name(std::string_view name);

// Op categories shared by builders, verifiers and passes.
bool is_binary_arithmetic(OpKind k);  // add ... shr: two operands of one type, one result
bool is_bitwise(OpKind k);            // and, or, xor, shl, shr
bool is_unary_math(OpKind k);         // neg, abs and the transcendental functions
// Each result element depends only on the same element of the operands (binary
// arithmetic, cmp, select, cast, unary math): values keep their owners when lowered.
bool is_elementwise(OpKind k);

// Attribute values: integers (also booleans), floats, strings, dtypes, integer lists.
using Attr = std::variant<int64_t, double, std::string, DType, std::vector<int64_t>>;
using Attrs = std::map<std::string, Attr>;  // ordered, so printing is deterministic

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;

struct Op;

// A region's single block: arguments, then ops; non-empty regions end with `yield`.
struct Block {
  std::vector<ValueId> args;
  std::vector<Op> ops;
};

struct Op {
  OpKind kind;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  Attrs attrs;
  std::vector<Block> regions;
  SourceLocation loc;

  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  int64_t int_attr(const std::string& k) const;  // InternalError when missing
  int64_t int_attr_or(const std::string& k, int64_t dflt) const;
  double float_attr(const std::string& k) const;  // accepts an integer too
  const std::string& str_attr(const std::string& k) const;
};

// A kernel parameter: a buffer (pointer) or a scalar, with its access for buffers.
struct Param {
  std::string name;
  ValueId value = kNoValue;
  std::string access;  // buffers: "read" | "write" | "read_write"; scalars: ""
};

struct Kernel {
  Dialect dialect = Dialect::Tile;
  std::string name;
  std::vector<Param> params;
  Block body;                            // args are the params' values, in order
  std::vector<Type> types;               // the type of every value, indexed by ValueId
  std::vector<std::string> value_names;  // optional hints for printing, "" when none
  // Kernel-level facts: constexpr values (Tile IR); threads_per_threadgroup,
  // threadgroup_bytes (Metal IR).
  Attrs attrs;

  ValueId new_value(Type t, std::string name_hint = "");
  const Type& type(ValueId v) const;
};

// Calls f(op) for every op in the block and its nested regions, outer op first.
template <typename F>
void walk(Block& b, F&& f) {
  for (Op& op : b.ops) {
    f(op);
    for (Block& r : op.regions) walk(r, f);
  }
}
template <typename F>
void walk(const Block& b, F&& f) {
  for (const Op& op : b.ops) {
    f(op);
    for (const Block& r : op.regions) walk(r, f);
  }
}

}  // namespace metile::ir
