#include "metile/ir/ir.h"

#include <algorithm>

namespace metile::ir {

std::string_view dialect_name(Dialect d) {
  return d == Dialect::Tile ? "tile" : "metal";
}

namespace {

// The vocabulary of ops.def's entries.
enum Dialects : uint8_t { TILE = 1, METAL = 2, BOTH = TILE | METAL };
using enum AttrKind;
using enum Trait;
using enum TypeRule;
constexpr Traits None{};
constexpr bool SCALAR = true;
constexpr bool NO_SCALAR = false;

constexpr Count operands(int min, int max) {
  return {min, max};
}
constexpr Count operands(int n) {
  return {n, n};
}
constexpr Count results(int min, int max) {
  return {min, max};
}
constexpr Count results(int n) {
  return {n, n};
}
constexpr Count regions(int min, int max) {
  return {min, max};
}
constexpr Count regions(int n) {
  return {n, n};
}
constexpr AttrSpec required(std::string_view name, AttrKind kind) {
  return {name, kind, true, ""};
}
constexpr AttrSpec required(std::string_view name, const char* choices) {
  return {name, String, true, choices};
}
constexpr AttrSpec optional(std::string_view name, AttrKind kind) {
  return {name, kind, false, ""};
}
constexpr AttrSpec optional(std::string_view name, const char* choices) {
  return {name, String, false, choices};
}
template <typename... Specs>
constexpr AttrSchema attrs(Specs... specs) {
  static_assert(sizeof...(specs) <= AttrSchema::kCapacity, "raise AttrSchema::kCapacity");
  return {{specs...}, sizeof...(specs)};
}

// clang-format off
constexpr OpInfo kInfos[] = {
#define METILE_OP(name, text, dialects, operand_count, result_count, region_count, schema, \
                  traits, rule, scalar, doc)                                               \
  {OpKind::name, text, (dialects & TILE) != 0, (dialects & METAL) != 0, operand_count,     \
   result_count, region_count, schema, traits, rule, scalar, doc},
#include "metile/ir/ops.def"
#undef METILE_OP
};
// clang-format on

}  // namespace

bool AttrSpec::allows(std::string_view value) const {
  if (choices.empty()) return true;
  for (size_t begin = 0; begin <= choices.size();) {
    const size_t end = std::min(choices.find('|', begin), choices.size());
    if (choices.substr(begin, end - begin) == value) return true;
    begin = end + 1;
  }
  return false;
}

const AttrSpec* AttrSchema::find(std::string_view name) const {
  for (const AttrSpec& spec : *this)
    if (spec.name == name) return &spec;
  return nullptr;
}

const OpInfo& op_info(OpKind k) {
  return kInfos[static_cast<int>(k)];
}
std::string_view op_name(OpKind k) {
  return op_info(k).name;
}
std::span<const OpInfo> all_ops() {
  return kInfos;
}

std::optional<OpKind> parse_op_name(std::string_view name) {
  for (const OpInfo& info : kInfos)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

bool is_bitwise(OpKind k) {
  return op_info(k).has(Bitwise);
}

bool is_binary_arithmetic(OpKind k) {
  const OpInfo& info = op_info(k);
  return info.has(Elementwise) && info.has(SameType) && info.operands.min == 2;
}

bool is_unary_math(OpKind k) {
  const OpInfo& info = op_info(k);
  return info.has(Elementwise) && info.has(SameType) && info.operands.min == 1;
}

bool is_elementwise(OpKind k) {
  return op_info(k).has(Elementwise);
}

int64_t Op::int_attr(const std::string& k) const {
  auto it = attrs.find(k);
  METILE_ASSERT(it != attrs.end() && std::holds_alternative<int64_t>(it->second),
                std::string(op_name(kind)) + " needs integer attribute " + k);
  return std::get<int64_t>(it->second);
}

int64_t Op::int_attr_or(const std::string& k, int64_t dflt) const {
  return has_attr(k) ? int_attr(k) : dflt;
}

Attrs Op::only_attr(const std::string& k) const {
  const auto it = attrs.find(k);
  if (it == attrs.end()) return {};
  return {{it->first, it->second}};
}

double Op::float_attr(const std::string& k) const {
  auto it = attrs.find(k);
  METILE_ASSERT(it != attrs.end(), std::string(op_name(kind)) + " needs attribute " + k);
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  METILE_ASSERT(std::holds_alternative<double>(it->second),
                std::string(op_name(kind)) + " attribute " + k + " is not a number");
  return std::get<double>(it->second);
}

const std::string& Op::str_attr(const std::string& k) const {
  auto it = attrs.find(k);
  METILE_ASSERT(it != attrs.end() && std::holds_alternative<std::string>(it->second),
                std::string(op_name(kind)) + " needs string attribute " + k);
  return std::get<std::string>(it->second);
}

const ThreadLayout* Op::layout_attr(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return nullptr;
  METILE_ASSERT(std::holds_alternative<ThreadLayout>(it->second),
                std::string(op_name(kind)) + " attribute " + k + " is not a layout");
  return &std::get<ThreadLayout>(it->second);
}

ValueId Kernel::new_value(Type t, std::string name_hint) {
  types.push_back(std::move(t));
  value_names.push_back(std::move(name_hint));
  return static_cast<ValueId>(types.size() - 1);
}

const Type& Kernel::type(ValueId v) const {
  METILE_ASSERT(v >= 0 && static_cast<size_t>(v) < types.size(),
                "value %" + std::to_string(v) + " does not exist");
  return types[static_cast<size_t>(v)];
}

}  // namespace metile::ir
