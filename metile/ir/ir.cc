#include "metile/ir/ir.h"

namespace metile::ir {

std::string_view dialect_name(Dialect d) {
  return d == Dialect::Tile ? "tile" : "metal";
}

namespace {
constexpr bool kTile[] = {
#define TILE true
#define METAL false
#define BOTH true
#define METILE_OP(name, text, dialects, doc) dialects,
#include "metile/ir/ops.def"
#undef METILE_OP
#undef TILE
#undef METAL
#undef BOTH
};
constexpr bool kMetal[] = {
#define TILE false
#define METAL true
#define BOTH true
#define METILE_OP(name, text, dialects, doc) dialects,
#include "metile/ir/ops.def"
#undef METILE_OP
#undef TILE
#undef METAL
#undef BOTH
};
const OpInfo kInfos[] = {
#define METILE_OP(name, text, dialects, doc) \
  {OpKind::name, text, kTile[int(OpKind::name)], kMetal[int(OpKind::name)], doc},
#include "metile/ir/ops.def"
#undef METILE_OP
};
}  // namespace

const OpInfo& op_info(OpKind k) {
  return kInfos[static_cast<int>(k)];
}
std::string_view op_name(OpKind k) {
  return op_info(k).name;
}

std::optional<OpKind> parse_op_name(std::string_view name) {
  for (const OpInfo& info : kInfos)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

bool is_bitwise(OpKind k) {
  return k == OpKind::And || k == OpKind::Or || k == OpKind::Xor || k == OpKind::Shl ||
         k == OpKind::Shr;
}

bool is_binary_arithmetic(OpKind k) {
  return k == OpKind::Add || k == OpKind::Sub || k == OpKind::Mul || k == OpKind::Div ||
         k == OpKind::Rem || k == OpKind::FloorDiv || k == OpKind::Min || k == OpKind::Max ||
         is_bitwise(k);
}

bool is_unary_math(OpKind k) {
  return k == OpKind::Neg || k == OpKind::Abs || k == OpKind::Exp || k == OpKind::Exp2 ||
         k == OpKind::Log || k == OpKind::Sqrt || k == OpKind::Rsqrt || k == OpKind::Tanh ||
         k == OpKind::Sin || k == OpKind::Cos;
}

bool is_elementwise(OpKind k) {
  return is_binary_arithmetic(k) || is_unary_math(k) || k == OpKind::Cmp || k == OpKind::Select ||
         k == OpKind::Cast;
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
