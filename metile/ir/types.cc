#include "metile/ir/types.h"

#include <charconv>
#include <cstdint>
#include <iterator>

#include "metile/support/errors.h"

namespace metile::ir {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  int bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::f16, "f16", 2},       {DType::bf16, "bf16", 2},     {DType::f32, "f32", 4},
    {DType::i32, "i32", 4},       {DType::u32, "u32", 4},       {DType::i64, "i64", 8},
    {DType::i1, "i1", 1},         {DType::i8, "i8", 1},         {DType::u8, "u8", 1},
    {DType::i16, "i16", 2},       {DType::u16, "u16", 2},       {DType::f64, "f64", 8},
    {DType::f8e4m3, "f8e4m3", 1}, {DType::f8e5m2, "f8e5m2", 1},
};
static_assert(std::size(kDTypes) == kDTypeCount);
}  // namespace

std::string_view dtype_name(DType t) {
  return kDTypes[static_cast<int>(t)].name;
}
int dtype_bytes(DType t) {
  return kDTypes[static_cast<int>(t)].bytes;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 || is_fp8(t);
}
bool is_fp8(DType t) {
  return t == DType::f8e4m3 || t == DType::f8e5m2;
}
bool is_integer(DType t) {
  return t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16 ||
         t == DType::i32 || t == DType::u32 || t == DType::i64;
}
bool is_signed(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}

IntegerRange integer_range(DType t) {
  switch (t) {
    case DType::i1:
      return {0, 1};
    case DType::i8:
      return {INT8_MIN, INT8_MAX};
    case DType::u8:
      return {0, UINT8_MAX};
    case DType::i16:
      return {INT16_MIN, INT16_MAX};
    case DType::u16:
      return {0, UINT16_MAX};
    case DType::i32:
      return {INT32_MIN, INT32_MAX};
    case DType::u32:
      return {0, UINT32_MAX};
    case DType::i64:
      return {INT64_MIN, INT64_MAX};
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
    case DType::f8e4m3:
    case DType::f8e5m2:
      break;
  }
  METILE_ASSERT(false, "integer_range of " + std::string(dtype_name(t)));
  return {0, 0};
}

int64_t Type::num_elements() const {
  if (kind != TypeKind::Tile && kind != TypeKind::Vector && kind != TypeKind::Matrix) return 1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Type Type::with_dtype(DType t) const {
  Type r = *this;
  r.dtype = t;
  r.pointer = false;
  r.space = AddressSpace::Device;
  return r;
}

Type Type::element() const {
  return pointer ? Type::ptr(dtype, space) : Type::scalar(dtype);
}

namespace {
std::string element_str(DType t, bool pointer, AddressSpace s) {
  if (!pointer) return std::string(dtype_name(t));
  std::string r = "ptr<" + std::string(dtype_name(t));
  if (s == AddressSpace::Threadgroup) r += ", threadgroup";
  return r + ">";
}

std::string dims_str(const std::vector<int64_t>& shape) {
  std::string r;
  for (int64_t d : shape) r += std::to_string(d) + "x";
  return r;
}
}  // namespace

std::string Type::str() const {
  switch (kind) {
    case TypeKind::Scalar:
      return element_str(dtype, pointer, space);
    case TypeKind::Tile:
      return "tile<" + dims_str(shape) + element_str(dtype, pointer, space) + ">";
    case TypeKind::Vector:
      return "vec<" + dims_str(shape) + std::string(dtype_name(dtype)) + ">";
    case TypeKind::TensorDesc:
      return "desc<" + dims_str(shape) + std::string(dtype_name(dtype)) + ">";
    case TypeKind::Matrix:
      return "matrix<" + dims_str(shape) + std::string(dtype_name(dtype)) + ">";
  }
  return "?";
}

namespace {
bool consume(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// element := dtype | ptr<dtype> | ptr<dtype, threadgroup>
std::optional<Type> parse_element(std::string_view s) {
  if (consume(s, "ptr<")) {
    if (s.empty() || s.back() != '>') return std::nullopt;
    s.remove_suffix(1);
    AddressSpace space = AddressSpace::Device;
    if (auto comma = s.find(','); comma != std::string_view::npos) {
      std::string_view rest = s.substr(comma + 1);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      if (rest == "threadgroup")
        space = AddressSpace::Threadgroup;
      else if (rest != "device")
        return std::nullopt;
      s = s.substr(0, comma);
    }
    auto d = parse_dtype(s);
    if (!d) return std::nullopt;
    return Type::ptr(*d, space);
  }
  auto d = parse_dtype(s);
  if (!d) return std::nullopt;
  return Type::scalar(*d);
}

// dims := (int 'x')+ ; returns the dims and leaves the element text in s
std::optional<std::vector<int64_t>> parse_dims(std::string_view& s) {
  std::vector<int64_t> dims;
  while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data() + s.size() || *p != 'x' || v <= 0) return std::nullopt;
    dims.push_back(v);
    s.remove_prefix(static_cast<size_t>(p - s.data()) + 1);
  }
  if (dims.empty()) return std::nullopt;
  return dims;
}
}  // namespace

std::optional<Type> parse_type(std::string_view s) {
  for (auto [prefix, kind] : {std::pair{std::string_view("tile<"), TypeKind::Tile},
                              std::pair{std::string_view("vec<"), TypeKind::Vector},
                              std::pair{std::string_view("desc<"), TypeKind::TensorDesc},
                              std::pair{std::string_view("matrix<"), TypeKind::Matrix}}) {
    if (!consume(s, prefix)) continue;
    if (s.empty() || s.back() != '>') return std::nullopt;
    s.remove_suffix(1);
    auto dims = parse_dims(s);
    if (!dims) return std::nullopt;
    auto elem = parse_element(s);
    if (!elem) return std::nullopt;
    if (kind != TypeKind::Tile && elem->pointer) return std::nullopt;
    Type t = *elem;
    t.kind = kind;
    t.shape = *dims;
    return t;
  }
  return parse_element(s);
}

}  // namespace metile::ir
