// The containers shared by Tile IR and Metal IR: SSA values, ops with attributes and
// nested regions, and kernels. The op list is ops.def.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "metile/ir/thread_layout.h"
#include "metile/ir/types.h"
#include "metile/support/errors.h"

namespace metile::ir {

enum class Dialect : uint8_t { Tile, Metal };
std::string_view dialect_name(Dialect d);  // "tile" | "metal"

enum class OpKind : uint16_t {
#define METILE_OP(name, ...) name,
#include "metile/ir/ops.def"
#undef METILE_OP
};

// The facts an op declares in ops.def; passes ask these instead of listing ops.
enum class Trait : uint16_t {
  Pure = 1 << 0,           // the result depends only on the operands and attributes
  ReadsMemory = 1 << 1,    // reads memory
  WritesMemory = 1 << 2,   // writes or orders memory: never removed
  Convergent = 1 << 3,     // every thread of its group must execute it together
  Varying = 1 << 4,        // the result may differ between threads for equal operands
  UniformResult = 1 << 5,  // every thread gets the same result, whatever the operands
  Elementwise = 1 << 6,    // each result element depends on the same operand elements
  SameType = 1 << 7,       // operands and result have one type
  Commutative = 1 << 8,    // the two operands may be swapped
  Bitwise = 1 << 9,        // operates on the bits of integers (and i1)
  Terminator = 1 << 10,    // ends a region
};

class Traits {
 public:
  constexpr Traits() = default;
  // Implicit, so that one trait reads as a set of traits.
  constexpr Traits(Trait t) : bits_(static_cast<uint16_t>(t)) {}
  constexpr bool has(Trait t) const { return (bits_ & static_cast<uint16_t>(t)) != 0; }
  friend constexpr Traits operator|(Traits a, Traits b) {
    Traits r;
    r.bits_ = static_cast<uint16_t>(a.bits_ | b.bits_);
    return r;
  }

 private:
  uint16_t bits_ = 0;
};
constexpr Traits operator|(Trait a, Trait b) {
  return Traits(a) | Traits(b);
}

// The type rule the verifiers apply to an op (ops.def explains each). Ops of one rule share
// it; the verifiers switch over the rules, so a new op of an existing rule changes neither.
enum class TypeRule : uint8_t {
  Constant,
  GridGeometry,
  ThreadGeometry,
  SimdGeometry,
  Arithmetic,
  UnaryMath,
  Compare,
  Select,
  Cast,
  PtrAdd,
  Load,
  Store,
  Atomic,
  SimdCollective,
  For,
  If,
  While,
  Yield,
  // One op's own rule each.
  Arange,
  InlineAsm,
  Splat,
  ExpandDims,
  Broadcast,
  MakeTensor,
  TensorLoad,
  TensorStore,
  SharedAlloc,
  ThreadgroupBuffer,
  Reduce,
  ReduceAxis,
  ReduceCombine,
  Scan,
  XorPermute,
  DeviceAssert,
  DevicePrint,
  AssertTrue,
  Print,
  Dot,
  Reshape,
  Trans,
  ConvertLayout,
  Barrier,
  PackedLoad,
  PackedStore,
  Extract,
  Pack,
  IsAligned,
  MatrixFill,
  MatrixLoad,
  MatrixStore,
  MatrixMma,
  DeviceTile,
  DescriptorMatmul,
  MppMatmul2d,
  AsyncPipeline,
};

// How many operands, results or regions an op takes; kMany: no upper bound.
constexpr int kMany = std::numeric_limits<int>::max();
struct Count {
  int min;
  int max;
  constexpr bool contains(size_t n) const {
    return n >= static_cast<size_t>(min) && (max == kMany || n <= static_cast<size_t>(max));
  }
};

// Int: an integer; Bool: an integer 0 or 1; Number: an integer or a float; String: a string,
// one of `choices` ("a|b|c") unless choices is empty; Layout: a ThreadLayout.
enum class AttrKind : uint8_t { Int, Bool, Number, String, Layout };
struct AttrSpec {
  std::string_view name;
  AttrKind kind = AttrKind::Int;
  bool required = false;
  std::string_view choices;

  // Whether a String attribute may hold `value`: one of the choices, any when there are none.
  bool allows(std::string_view value) const;
};

// An op's attribute schema, in declaration order.
struct AttrSchema {
  static constexpr size_t kCapacity = 4;
  std::array<AttrSpec, kCapacity> specs{};
  size_t size = 0;
  constexpr const AttrSpec* begin() const { return specs.data(); }
  constexpr const AttrSpec* end() const { return specs.data() + size; }
  const AttrSpec* find(std::string_view name) const;  // nullptr when undeclared
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  bool in_tile;
  bool in_metal;
  Count operands;
  Count results;
  Count regions;
  AttrSchema attrs;
  Traits traits;
  TypeRule rule;
  bool scalar;  // the scalar evaluator computes it (scalar_eval.h)
  std::string_view doc;

  bool has(Trait t) const { return traits.has(t); }
};
const OpInfo& op_info(OpKind k);
std::string_view op_name(OpKind k);
std::optional<OpKind> parse_op_name(std::string_view name);
// Every op of ops.def, in declaration order.
std::span<const OpInfo> all_ops();

// Op categories shared by builders, verifiers and passes, derived from the traits.
bool is_binary_arithmetic(OpKind k);  // add ... shr: two operands of one type, one result
bool is_bitwise(OpKind k);            // and, or, xor, shl, shr
bool is_unary_math(OpKind k);         // neg, abs and the transcendental functions
// Each result element depends only on the same element of the operands (binary
// arithmetic, cmp, select, cast, unary math): values keep their owners when lowered.
bool is_elementwise(OpKind k);

// Attribute values: integers (also booleans), floats, strings, dtypes, integer lists, thread
// layouts.
using Attr = std::variant<int64_t, double, std::string, DType, std::vector<int64_t>, ThreadLayout>;
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
  const ThreadLayout* layout_attr(const std::string& k) const;  // nullptr when missing
  // Attribute k alone (empty when missing), for an op that passes it on to the ops it becomes.
  Attrs only_attr(const std::string& k) const;
};

// A kernel parameter: a buffer (pointer) or a scalar, with its access for buffers.
struct Param {
  std::string name;
  ValueId value = kNoValue;
  std::string access;  // buffers: "read" | "write" | "read_write"; scalars: ""
  // A power of two the argument is known to be a multiple of (Triton's divisibility
  // specialisation): an integer scalar's value; a buffer's address, in bytes. 1: nothing known.
  int64_t divisibility = 1;
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

// The values a while's carried value i passes through, which always hold the same thing: its
// init, the before region's argument and passed value, the after region's argument and yield,
// and the result.
inline std::array<ValueId, 6> while_carried(const Op& op, size_t i) {
  const Block &before = op.regions.at(0), &after = op.regions.at(1);
  return {op.operands[i],
          before.args[i],
          before.ops.back().operands[1 + i],
          after.args[i],
          after.ops.back().operands[i],
          op.results[i]};
}

// wgmma_mma's operand that is b's shared-memory pointer: a is one pointer before it, or, with
// the attribute a_registers, wgmma's eight 16-bit register elements; the accumulator follows.
inline size_t wgmma_b_operand(const Op& op) {
  return op.int_attr_or("a_registers", 0) ? 8 : 1;
}

// Whether v is a constant zero (+0.0 for floats), or a splat or broadcast of one: a load's
// fill that an asynchronous copy's zero fill reproduces. `definer` gives the op defining a
// value (nullptr for arguments and parameters).
template <typename Definer>
bool is_zero_fill(ValueId v, const Definer& definer) {
  const Op* def = definer(v);
  if (!def) return false;
  if (def->kind == OpKind::Splat || def->kind == OpKind::Broadcast)
    return is_zero_fill(def->operands[0], definer);
  if (def->kind != OpKind::Constant) return false;
  const Attr& value = def->attrs.at("value");
  if (const int64_t* i = std::get_if<int64_t>(&value)) return *i == 0;
  const double* f = std::get_if<double>(&value);
  return f && *f == 0.0 && !std::signbit(*f);
}

}  // namespace metile::ir
