#include <algorithm>
#include <cmath>

#include "metile/ir/builder.h"
#include "metile/ir/verifier.h"
#include "metile/support/bits.h"

namespace metile::ir {

namespace {
std::string shape_str(const std::vector<int64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

std::vector<int64_t> shape_of(const Type& t) {
  return t.is_tile() ? t.shape : std::vector<int64_t>{};
}
}  // namespace

TileBuilder::TileBuilder(Kernel& kernel) : Builder(kernel) {
  METILE_ASSERT(kernel.dialect == Dialect::Tile, "TileBuilder builds Tile IR");
}

std::string TileBuilder::describe(ValueId v) const {
  return "%" + std::to_string(v) + ": " + type(v).str();
}

ValueId TileBuilder::constant(double value, DType dtype) {
  if (is_float(dtype))
    return create1(OpKind::Constant, {}, Type::scalar(dtype), {{"value", value}});
  if (value != std::floor(value))
    fail("constant", "value " + std::to_string(value) + " is not an integer but dtype is " +
                         std::string(dtype_name(dtype)));
  return constant_int(static_cast<int64_t>(value), dtype);
}

ValueId TileBuilder::constant_int(int64_t value, DType dtype) {
  if (is_float(dtype)) return constant(static_cast<double>(value), dtype);
  if (dtype == DType::i1 && value != 0 && value != 1)
    fail("constant", "an i1 constant must be 0 or 1, got " + std::to_string(value));
  if (!integer_range(dtype).contains(value))
    fail("constant",
         "value " + std::to_string(value) + " does not fit " + std::string(dtype_name(dtype)));
  return create1(OpKind::Constant, {}, Type::scalar(dtype), {{"value", value}});
}

ValueId TileBuilder::program_id(int axis) {
  if (axis < 0 || axis > 2)
    fail("program_id", "axis must be 0, 1 or 2, got " + std::to_string(axis));
  return create1(OpKind::ProgramId, {}, Type::scalar(DType::i32), {{"axis", int64_t{axis}}});
}

ValueId TileBuilder::num_programs(int axis) {
  if (axis < 0 || axis > 2)
    fail("num_programs", "axis must be 0, 1 or 2, got " + std::to_string(axis));
  return create1(OpKind::NumPrograms, {}, Type::scalar(DType::i32), {{"axis", int64_t{axis}}});
}

ValueId TileBuilder::thread_id(int axis) {
  if (axis != 0)
    fail("thread_id", "only axis 0 exists (threadgroups are 1-D), got " + std::to_string(axis));
  return create1(OpKind::ThreadId, {}, Type::scalar(DType::i32), {{"axis", int64_t{axis}}});
}

ValueId TileBuilder::arange(int64_t start, int64_t end, const std::optional<ThreadLayout>& layout) {
  if (!is_power_of_two(end - start))
    fail("arange", "the tile size end - start = " + std::to_string(end - start) +
                       " must be a positive power of two");
  Attrs attrs{{"start", start}, {"end", end}};
  if (layout) {
    if (layout->size() != end - start)
      fail("arange", "the layout " + layout->str() + " owns " + std::to_string(layout->size()) +
                         " elements but the tile has end - start = " + std::to_string(end - start));
    attrs["layout"] = *layout;
  }
  return create1(OpKind::Arange, {}, Type::tile(DType::i32, {end - start}), std::move(attrs));
}

ValueId TileBuilder::reshape(ValueId tile, std::vector<int64_t> shape) {
  const Type& t = type(tile);
  if (!t.is_tile()) fail("reshape", "the operand must be a tile, got " + describe(tile));
  Type result = t;
  result.shape = std::move(shape);
  if (result.num_elements() != t.num_elements())
    fail("reshape", describe(tile) + " has " + std::to_string(t.num_elements()) +
                        " elements, the shape " + result.str() + " has " +
                        std::to_string(result.num_elements()));
  if (result == t) return tile;
  return create1(OpKind::Reshape, {tile}, result);
}

ValueId TileBuilder::trans(ValueId tile) {
  const Type& t = type(tile);
  if (!t.is_tile() || t.shape.size() != 2)
    fail("trans", "transposes a 2-D tile, got " + describe(tile));
  Type result = t;
  result.shape = {t.shape[1], t.shape[0]};
  return create1(OpKind::Trans, {tile}, result);
}

ValueId TileBuilder::convert_layout(ValueId tile, const ThreadLayout& layout) {
  const Type& t = type(tile);
  if (!t.is_tile()) fail("convert_layout", "the operand must be a tile, got " + describe(tile));
  if (layout.size() != t.num_elements())
    fail("convert_layout", "the layout " + layout.str() + " owns " + std::to_string(layout.size()) +
                               " elements but " + describe(tile) + " has " +
                               std::to_string(t.num_elements()));
  return create1(OpKind::ConvertLayout, {tile}, t, {{"layout", layout}});
}

ValueId TileBuilder::full(std::vector<int64_t> shape, double value, DType dtype) {
  return splat(constant(value, dtype), std::move(shape));
}

ValueId TileBuilder::zeros(std::vector<int64_t> shape, DType dtype) {
  return full(std::move(shape), 0.0, dtype);
}

ValueId TileBuilder::splat(ValueId scalar, std::vector<int64_t> shape) {
  const Type t = type(scalar);
  if (t.kind != TypeKind::Scalar)
    fail("splat", "operand must be a scalar, got " + describe(scalar));
  if (shape.empty() || shape.size() > 2)
    fail("splat", "tiles are 1-D or 2-D, got shape " + shape_str(shape));
  for (int64_t d : shape)
    if (!is_power_of_two(d))
      fail("splat", "tile dimensions must be powers of two, got " + shape_str(shape));
  Type r = t;
  r.kind = TypeKind::Tile;
  r.shape = std::move(shape);
  return create1(OpKind::Splat, {scalar}, r);
}

ValueId TileBuilder::expand_dims(ValueId tile, int axis) {
  const Type t = type(tile);
  if (!t.is_tile() || t.shape.size() != 1)
    fail("expand_dims", "operand must be a 1-D tile, got " + describe(tile));
  if (axis != 0 && axis != 1)
    fail("expand_dims", "axis must be 0 or 1, got " + std::to_string(axis));
  Type r = t;
  r.shape = axis == 0 ? std::vector<int64_t>{1, t.shape[0]} : std::vector<int64_t>{t.shape[0], 1};
  return create1(OpKind::ExpandDims, {tile}, r, {{"axis", int64_t{axis}}});
}

std::vector<int64_t> TileBuilder::broadcast_shape(const std::string& op, const Type& a,
                                                  const Type& b) const {
  std::vector<int64_t> sa = shape_of(a), sb = shape_of(b);
  if (sa.empty()) return sb;
  if (sb.empty()) return sa;
  std::vector<int64_t> r(std::max(sa.size(), sb.size()));
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t da = i < r.size() - sa.size() ? 1 : sa[i - (r.size() - sa.size())];
    int64_t db = i < r.size() - sb.size() ? 1 : sb[i - (r.size() - sb.size())];
    if (da != db && da != 1 && db != 1)
      fail(op, "shapes " + shape_str(sa) + " and " + shape_str(sb) + " do not broadcast");
    r[i] = std::max(da, db);
  }
  return r;
}

ValueId TileBuilder::broadcast_to(ValueId value, std::vector<int64_t> shape) {
  return to_shape("broadcast", value, shape);
}

ValueId TileBuilder::to_shape(const std::string& op, ValueId v, const std::vector<int64_t>& shape) {
  const Type t = type(v);
  if (shape.empty()) {
    if (t.is_tile()) fail(op, "cannot use tile " + describe(v) + " where a scalar is required");
    return v;
  }
  if (t.kind == TypeKind::Scalar) return splat(v, shape);
  if (!t.is_tile()) fail(op, "operand " + describe(v) + " is neither a scalar nor a tile");
  if (t.shape == shape) return v;
  if (t.shape.size() == 1 && shape.size() == 2) {
    if (t.shape[0] != shape[1] && t.shape[0] != 1)
      fail(op, "cannot broadcast shape " + shape_str(t.shape) + " to " + shape_str(shape));
    v = expand_dims(v, 0);
  } else if (t.shape.size() != shape.size()) {
    fail(op, "cannot broadcast shape " + shape_str(t.shape) + " to " + shape_str(shape));
  }
  const Type e = type(v);
  for (size_t i = 0; i < shape.size(); ++i)
    if (e.shape[i] != shape[i] && e.shape[i] != 1)
      fail(op, "cannot broadcast shape " + shape_str(t.shape) + " to " + shape_str(shape));
  if (e.shape == shape) return v;
  Type r = e;
  r.shape = shape;
  return create1(OpKind::Broadcast, {v}, r);
}

ValueId TileBuilder::binary(OpKind kind, ValueId a, ValueId b) {
  METILE_ASSERT(is_binary_arithmetic(kind), "binary() takes an arithmetic or bitwise op");
  const std::string op(op_name(kind));
  const Type ta = type(a), tb = type(b);
  if (ta.pointer || tb.pointer || ta.is_desc() || tb.is_desc())
    fail(op, "operands must be numbers, got " + describe(a) + " and " + describe(b) +
                 (ta.pointer ? " (use ptr_add to offset a pointer)" : ""));
  if (ta.dtype != tb.dtype)
    fail(op, "operand dtypes differ: " + describe(a) + " and " + describe(b) +
                 "; cast one of them first");
  if (is_bitwise(kind) && is_float(ta.dtype))
    fail(op, "bitwise operations need integer or i1 operands, got " + describe(a));
  if ((kind == OpKind::Shl || kind == OpKind::Shr) && ta.dtype == DType::i1)
    fail(op, "shifts need integer operands, got " + describe(a));
  if (!is_bitwise(kind) && kind != OpKind::Min && kind != OpKind::Max && ta.dtype == DType::i1)
    fail(op, "arithmetic on i1 values is not defined; cast to an integer first");
  std::vector<ValueId> operands{a, b};
  if (as_fragments(op, operands)) return create1(kind, operands, Type::matrix(ta.dtype));
  std::vector<int64_t> shape = broadcast_shape(op, ta, tb);
  DType dtype = ta.dtype;
  a = to_shape(op, a, shape);
  b = to_shape(op, b, shape);
  Type r = shape.empty() ? Type::scalar(dtype) : Type::tile(dtype, shape);
  return create1(kind, {a, b}, r);
}

ValueId TileBuilder::cmp(const std::string& pred, ValueId a, ValueId b) {
  static const char* kPreds[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  if (std::none_of(std::begin(kPreds), std::end(kPreds), [&](const char* p) { return pred == p; }))
    fail("cmp", "unknown predicate '" + pred + "' (expected lt, le, gt, ge, eq or ne)");
  const Type ta = type(a), tb = type(b);
  if (ta.pointer || tb.pointer) fail("cmp", "cannot compare pointers");
  if (ta.dtype != tb.dtype)
    fail("cmp", "operand dtypes differ: " + describe(a) + " and " + describe(b));
  std::vector<ValueId> operands{a, b};
  if (as_fragments("cmp", operands))
    return create1(OpKind::Cmp, operands, Type::matrix(DType::i1), {{"pred", pred}});
  std::vector<int64_t> shape = broadcast_shape("cmp", ta, tb);
  a = to_shape("cmp", a, shape);
  b = to_shape("cmp", b, shape);
  Type r = shape.empty() ? Type::scalar(DType::i1) : Type::tile(DType::i1, shape);
  return create1(OpKind::Cmp, {a, b}, r, {{"pred", pred}});
}

ValueId TileBuilder::select(ValueId cond, ValueId a, ValueId b) {
  const Type tc = type(cond), ta = type(a), tb = type(b);
  if (tc.dtype != DType::i1 || tc.pointer)
    fail("select", "the condition must be i1, got " + describe(cond));
  if (ta.dtype != tb.dtype || ta.pointer != tb.pointer)
    fail("select", "the two choices differ in dtype: " + describe(a) + " and " + describe(b));
  std::vector<ValueId> operands{cond, a, b};
  if (as_fragments("select", operands))
    return create1(OpKind::Select, operands, Type::matrix(ta.dtype));
  std::vector<int64_t> shape = broadcast_shape("select", tc, ta);
  shape = broadcast_shape(
      "select", shape.empty() ? Type::scalar(DType::i1) : Type::tile(DType::i1, shape), tb);
  Type r = type(a);
  cond = to_shape("select", cond, shape);
  a = to_shape("select", a, shape);
  b = to_shape("select", b, shape);
  if (!shape.empty()) {
    r.kind = TypeKind::Tile;
    r.shape = shape;
  }
  return create1(OpKind::Select, {cond, a, b}, r);
}

ValueId TileBuilder::cast(ValueId a, DType to) {
  const Type t = type(a);
  if (t.pointer || t.is_desc()) fail("cast", "cannot cast " + describe(a));
  if (t.dtype == to) return a;
  return create1(OpKind::Cast, {a}, t.with_dtype(to));
}

ValueId TileBuilder::int_to_ptr(ValueId a, DType pointee) {
  const Type t = type(a);
  if (t.pointer || t.is_desc() || t.dtype != DType::i64)
    fail("int_to_ptr", "an address is an i64 scalar or tile, got " + describe(a));
  Type r = t;
  r.dtype = pointee;
  r.pointer = true;
  r.space = AddressSpace::Device;
  return create1(OpKind::Cast, {a}, r);
}

ValueId TileBuilder::ptr_to_int(ValueId a) {
  const Type t = type(a);
  if (!t.pointer || t.space != AddressSpace::Device)
    fail("ptr_to_int", "the operand must be a device pointer, got " + describe(a));
  return create1(OpKind::Cast, {a}, t.with_dtype(DType::i64));
}

ValueId TileBuilder::inline_asm(std::vector<ValueId> operands, DType to,
                                const std::string& assembly, const std::string& constraints,
                                bool pure) {
  if (operands.empty()) fail("inline_asm", "needs at least one operand");
  std::vector<int64_t> shape;
  for (ValueId v : operands) {
    const Type t = type(v);
    if (t.pointer || !(t.is_scalar() || t.is_tile()))
      fail("inline_asm", "operands must be numbers, got " + describe(v));
    shape = broadcast_shape("inline_asm", Type::tile(t.dtype, shape), t);
  }
  for (ValueId& v : operands) v = to_shape("inline_asm", v, shape);
  Attrs attrs;
  attrs["asm"] = assembly;
  attrs["constraints"] = constraints;
  attrs["pure"] = int64_t{pure ? 1 : 0};
  return create1(OpKind::InlineAsm, operands,
                 shape.empty() ? Type::scalar(to) : Type::tile(to, shape), attrs);
}

ValueId TileBuilder::unary(OpKind kind, ValueId a, bool fast) {
  METILE_ASSERT(is_unary_math(kind), "unary() takes a math op");
  const std::string op(op_name(kind));
  const Type t = type(a);
  if (t.pointer || t.is_desc()) fail(op, "operand must be a number, got " + describe(a));
  bool integer_ok = kind == OpKind::Neg || kind == OpKind::Abs;
  if (!is_float(t.dtype) && !(integer_ok && is_integer(t.dtype)))
    fail(op, "needs a floating-point operand, got " + describe(a) + "; cast it first");
  Attrs attrs;
  if (fast) attrs["fast"] = int64_t{1};
  return create1(kind, {a}, t, attrs);
}

ValueId TileBuilder::ptr_add(ValueId ptr, ValueId offsets) {
  const Type tp = type(ptr), to = type(offsets);
  if (!tp.pointer) fail("ptr_add", "the first operand must be a pointer, got " + describe(ptr));
  if (to.pointer || !is_integer(to.dtype))
    fail("ptr_add", "offsets must be integers, got " + describe(offsets));
  std::vector<int64_t> shape = broadcast_shape("ptr_add", tp, to);
  Type r = tp;
  if (!shape.empty()) {
    r.kind = TypeKind::Tile;
    r.shape = shape;
  }
  ptr = to_shape("ptr_add", ptr, shape);
  offsets = to_shape("ptr_add", offsets, shape);
  return create1(OpKind::PtrAdd, {ptr, offsets}, r);
}

Attrs TileBuilder::eviction_attrs(const std::string& op, ValueId ptrs,
                                  const std::string& eviction) const {
  if (eviction.empty()) return {};
  if (eviction != "evict_first" && eviction != "evict_last")
    fail(op, "eviction_policy must be '', 'evict_first' or 'evict_last', got '" + eviction + "'");
  if (type(ptrs).space != AddressSpace::Device)
    fail(op, "eviction_policy is a hint for device memory; " + describe(ptrs) +
                 " points into threadgroup memory");
  return {{"eviction", eviction}};
}

ValueId TileBuilder::load(ValueId ptrs, ValueId mask, ValueId other, const std::string& eviction) {
  const Type tp = type(ptrs);
  if (!tp.pointer)
    fail("load", "the address must be a pointer or a tile of pointers, got " + describe(ptrs));
  const Attrs attrs = eviction_attrs("load", ptrs, eviction);
  Type r = tp;
  r.pointer = false;
  r.space = AddressSpace::Device;
  if (mask == kNoValue) {
    if (other != kNoValue) fail("load", "'other' is only meaningful with a mask");
    return create1(OpKind::Load, {ptrs}, r, attrs);
  }
  const Type tm = type(mask);
  if (tm.dtype != DType::i1 || tm.pointer)
    fail("load", "the mask must be i1, got " + describe(mask));
  if (shape_of(tm) != shape_of(tp))
    fail("load", "mask shape " + shape_str(shape_of(tm)) + " does not match pointer shape " +
                     shape_str(shape_of(tp)));
  if (other == kNoValue) other = constant(0, tp.dtype);
  if (type(other).dtype != tp.dtype || type(other).pointer)
    fail("load", "'other' must have the loaded dtype " + std::string(dtype_name(tp.dtype)) +
                     ", got " + describe(other));
  other = to_shape("load", other, shape_of(tp));
  return create1(OpKind::Load, {ptrs, mask, other}, r, attrs);
}

void TileBuilder::store(ValueId ptrs, ValueId value, ValueId mask, const std::string& eviction) {
  const Type tp = type(ptrs);
  if (!tp.pointer)
    fail("store", "the address must be a pointer or a tile of pointers, got " + describe(ptrs));
  const Attrs attrs = eviction_attrs("store", ptrs, eviction);
  const Type tv = type(value);
  if (tv.pointer || tv.dtype != tp.dtype)
    fail("store", "the value " + describe(value) + " does not match the pointee dtype " +
                      std::string(dtype_name(tp.dtype)) + "; cast it first");
  if (tv.is_tile() && shape_of(tv) != shape_of(tp))
    fail("store", "value shape " + shape_str(shape_of(tv)) + " does not match pointer shape " +
                      shape_str(shape_of(tp)));
  value = to_shape("store", value, shape_of(tp));
  std::vector<ValueId> operands = {ptrs, value};
  if (mask != kNoValue) {
    const Type tm = type(mask);
    if (tm.dtype != DType::i1 || tm.pointer)
      fail("store", "the mask must be i1, got " + describe(mask));
    if (shape_of(tm) != shape_of(tp))
      fail("store", "mask shape " + shape_str(shape_of(tm)) + " does not match pointer shape " +
                        shape_str(shape_of(tp)));
    operands.push_back(mask);
  }
  create(OpKind::Store, operands, {}, attrs);
}

ValueId TileBuilder::atomic_rmw(const std::string& kind, ValueId ptrs, ValueId value, ValueId mask,
                                const std::string& sem, const std::string& scope) {
  const std::string op = "atomic_" + kind;
  const Type tp = type(ptrs);
  if (!tp.pointer || tp.space != AddressSpace::Device)
    fail(op, "the address must be a buffer pointer or a tile of them, got " + describe(ptrs));
  if (type(value).pointer || type(value).dtype != tp.dtype)
    fail(op, "the value " + describe(value) + " does not match the pointee dtype " +
                 std::string(dtype_name(tp.dtype)) + "; cast it first");
  std::vector<ValueId> operands = {ptrs, to_shape(op, value, shape_of(tp))};
  if (mask != kNoValue) {
    if (type(mask).dtype != DType::i1 || type(mask).pointer)
      fail(op, "the mask must be i1, got " + describe(mask));
    operands.push_back(to_shape(op, mask, shape_of(tp)));
  }
  Type r = tp;
  r.pointer = false;
  return create1(OpKind::AtomicRmw, operands, r, {{"kind", kind}, {"sem", sem}, {"scope", scope}});
}

ValueId TileBuilder::atomic_cas(ValueId ptrs, ValueId cmp, ValueId value, const std::string& sem,
                                const std::string& scope) {
  const Type tp = type(ptrs);
  if (!tp.pointer || tp.space != AddressSpace::Device)
    fail("atomic_cas",
         "the address must be a buffer pointer or a tile of them, got " + describe(ptrs));
  for (ValueId v : {cmp, value})
    if (type(v).pointer || type(v).dtype != tp.dtype)
      fail("atomic_cas", "the value " + describe(v) + " does not match the pointee dtype " +
                             std::string(dtype_name(tp.dtype)) + "; cast it first");
  Type r = tp;
  r.pointer = false;
  return create1(OpKind::AtomicCas,
                 {ptrs, to_shape("atomic_cas", cmp, shape_of(tp)),
                  to_shape("atomic_cas", value, shape_of(tp))},
                 r, {{"sem", sem}, {"scope", scope}});
}

ValueId TileBuilder::make_tensor(ValueId base, const std::vector<ValueId>& dims,
                                 const std::vector<ValueId>& strides, const std::string& access) {
  const Type tb = type(base);
  if (!tb.is_pointer() || tb.space != AddressSpace::Device)
    fail("tensor", "the base must be a device pointer (a buffer), got " + describe(base));
  if (dims.empty() || dims.size() > 3)
    fail("tensor", "rank must be 1, 2 or 3, got " + std::to_string(dims.size()));
  if (strides.size() != dims.size())
    fail("tensor", "shape has " + std::to_string(dims.size()) + " dimensions but strides has " +
                       std::to_string(strides.size()));
  if (access != "read" && access != "write" && access != "read_write")
    fail("tensor", "access must be read, write or read_write, got '" + access + "'");
  std::vector<ValueId> operands = {base};
  for (const auto* list : {&dims, &strides})
    for (ValueId v : *list) {
      if (!type(v).is_scalar() || !is_integer(type(v).dtype))
        fail("tensor", "shape and strides must be integer scalars, got " + describe(v));
      operands.push_back(cast(v, DType::i32));
    }
  return create1(OpKind::MakeTensor, operands,
                 Type::desc(tb.dtype, static_cast<int64_t>(dims.size())), {{"access", access}});
}

namespace {
std::vector<int64_t> coords_shape(TileBuilder& b, const std::string& op,
                                  const std::vector<ValueId>& coords) {
  std::vector<int64_t> shape;
  for (ValueId c : coords) {
    Type s = shape.empty() ? Type::scalar(DType::i32) : Type::tile(DType::i32, shape);
    shape = b.broadcast_shape(op, s, b.type(c));
  }
  return shape;
}
}  // namespace

ValueId TileBuilder::tensor_load(ValueId desc, const std::vector<ValueId>& coords) {
  const Type td = type(desc);
  if (!td.is_desc())
    fail("tensor.load", "the first operand must be a tensor descriptor, got " + describe(desc));
  if (static_cast<int64_t>(coords.size()) != td.shape[0])
    fail("tensor.load", "the tensor has rank " + std::to_string(td.shape[0]) + " but " +
                            std::to_string(coords.size()) + " coordinates were given");
  for (ValueId c : coords)
    if (type(c).pointer || type(c).is_desc() || !is_integer(type(c).dtype))
      fail("tensor.load", "coordinates must be integers, got " + describe(c));
  std::vector<int64_t> shape = coords_shape(*this, "tensor.load", coords);
  std::vector<ValueId> operands = {desc};
  for (ValueId c : coords) operands.push_back(to_shape("tensor.load", cast(c, DType::i32), shape));
  Type r = shape.empty() ? Type::scalar(td.dtype) : Type::tile(td.dtype, shape);
  return create1(OpKind::TensorLoad, operands, r);
}

void TileBuilder::tensor_store(ValueId desc, const std::vector<ValueId>& coords, ValueId value) {
  const Type td = type(desc);
  if (!td.is_desc())
    fail("tensor.store", "the first operand must be a tensor descriptor, got " + describe(desc));
  if (static_cast<int64_t>(coords.size()) != td.shape[0])
    fail("tensor.store", "the tensor has rank " + std::to_string(td.shape[0]) + " but " +
                             std::to_string(coords.size()) + " coordinates were given");
  for (ValueId c : coords)
    if (type(c).pointer || type(c).is_desc() || !is_integer(type(c).dtype))
      fail("tensor.store", "coordinates must be integers, got " + describe(c));
  if (type(value).pointer || type(value).dtype != td.dtype)
    fail("tensor.store", "the value " + describe(value) + " does not match the tensor dtype " +
                             std::string(dtype_name(td.dtype)));
  std::vector<int64_t> shape = coords_shape(*this, "tensor.store", coords);
  if (type(value).is_tile())
    shape = broadcast_shape(
        "tensor.store", shape.empty() ? Type::scalar(DType::i32) : Type::tile(DType::i32, shape),
        type(value));
  std::vector<ValueId> operands = {desc};
  for (ValueId c : coords) operands.push_back(to_shape("tensor.store", cast(c, DType::i32), shape));
  operands.push_back(to_shape("tensor.store", value, shape));
  create(OpKind::TensorStore, operands, {});
}

ValueId TileBuilder::shared_alloc(int64_t size, DType dtype) {
  if (size <= 0) fail("shared", "size must be positive, got " + std::to_string(size));
  return create1(OpKind::SharedAlloc, {}, Type::ptr(dtype, AddressSpace::Threadgroup),
                 {{"size", size}});
}

ValueId TileBuilder::reduce(const std::string& kind, ValueId tile) {
  if (kind != "sum" && kind != "max" && kind != "min")
    fail("reduce", "kind must be sum, max or min, got '" + kind + "'");
  const Type t = type(tile);
  if (!t.is_tile() || t.pointer)
    fail(kind, "operand must be a tile of numbers, got " + describe(tile));
  if (t.dtype == DType::i1) fail(kind, "cannot reduce i1 tiles; cast to an integer first");
  return create1(OpKind::Reduce, {tile}, Type::scalar(t.dtype), {{"kind", kind}});
}

ValueId TileBuilder::reduce_axis(const std::string& kind, ValueId tile, int64_t axis) {
  if (kind != "sum" && kind != "max" && kind != "min")
    fail("reduce", "kind must be sum, max or min, got '" + kind + "'");
  const Type& t = type(tile);
  if (!t.is_tile() || t.pointer)
    fail(kind, "operand must be a tile of numbers, got " + describe(tile));
  if (t.dtype == DType::i1) fail(kind, "cannot reduce i1 tiles; cast to an integer first");
  if (t.shape.size() != 2)
    fail(kind,
         "reduces one axis of a 2-D tile, got " + describe(tile) + "; reduce a 1-D tile whole");
  if (axis != 0 && axis != 1)
    fail(kind, "axis must be 0 or 1 for a 2-D tile, got " + std::to_string(axis));
  return create1(OpKind::ReduceAxis, {tile},
                 Type::tile(t.dtype, std::vector<int64_t>(1, t.shape[1 - axis])),
                 {{"kind", kind}, {"axis", axis}});
}

ValueId TileBuilder::scan(const std::string& kind, ValueId tile, int64_t axis, bool reverse) {
  if (kind != "sum" && kind != "prod") fail("scan", "kind must be sum or prod, got '" + kind + "'");
  const Type t = type(tile);
  if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || t.shape.size() > 2)
    fail("scan", "operand must be a 1-D or 2-D tile of numbers, got " + describe(tile));
  if (axis < 0 || axis >= static_cast<int64_t>(t.shape.size()))
    fail("scan", "axis " + std::to_string(axis) + " is out of range for " + describe(tile));
  return create1(OpKind::Scan, {tile}, t,
                 {{"kind", kind}, {"axis", axis}, {"reverse", int64_t{reverse ? 1 : 0}}});
}

ValueId TileBuilder::xor_permute(ValueId tile, int64_t mask) {
  const Type t = type(tile);
  if (!t.is_tile() || t.pointer || t.dtype == DType::i1 || t.shape.size() > 2)
    fail("xor_permute", "operand must be a 1-D or 2-D tile of numbers, got " + describe(tile));
  if (mask <= 0 || mask >= t.num_elements())
    fail("xor_permute", "mask " + std::to_string(mask) + " must lie in [1, " +
                            std::to_string(t.num_elements()) + ") for " + describe(tile));
  return create1(OpKind::XorPermute, {tile}, t, {{"mask", mask}});
}

void TileBuilder::device_assert(ValueId cond, const std::string& message) {
  const Type& t = type(cond);
  if (t.dtype != DType::i1 || t.pointer || t.is_matrix() || t.is_desc())
    fail("device_assert", "the condition must be an i1 scalar or tile, got " + describe(cond));
  create(OpKind::DeviceAssert, {cond}, {}, {{"message", message}});
}

void TileBuilder::device_print(const std::string& prefix, const std::vector<ValueId>& values,
                               bool hex) {
  for (ValueId v : values) {
    const Type& t = type(v);
    if (t.pointer || t.is_matrix() || t.is_desc())
      fail("device_print", "prints scalars and tiles of numbers, got " + describe(v));
    if (t.shape != type(values[0]).shape)
      fail("device_print",
           "the tiles must have one shape, got " + describe(values[0]) + " and " + describe(v));
  }
  Attrs attrs = {{"prefix", prefix}};
  if (hex) attrs["hex"] = int64_t{1};
  create(OpKind::DevicePrint, values, {}, std::move(attrs));
}

ValueId TileBuilder::simd(OpKind kind, ValueId value, ValueId lane_or_mask) {
  const std::string op(op_name(kind));
  const Type t = type(value);
  if (!t.is_scalar()) fail(op, "operates on per-thread scalars, got " + describe(value));
  const OpInfo& info = op_info(kind);
  METILE_ASSERT(info.rule == TypeRule::SimdCollective, "simd() takes a SIMD collective");
  const bool needs_lane = info.operands.min == 2;  // (v, lane) rather than (v)
  if (needs_lane != (lane_or_mask != kNoValue))
    fail(op, needs_lane ? "needs a lane (or mask) operand" : "takes no lane operand");
  std::vector<ValueId> operands = {value};
  if (needs_lane) {
    if (!type(lane_or_mask).is_scalar() || !is_integer(type(lane_or_mask).dtype))
      fail(op, "the lane must be an integer scalar, got " + describe(lane_or_mask));
    operands.push_back(cast(lane_or_mask, DType::i32));
  }
  return create1(kind, operands, t);
}

void TileBuilder::barrier() {
  create(OpKind::Barrier, {}, {},
         {{"scope", std::string("threadgroup")}, {"mem", std::string("all")}});
}

}  // namespace metile::ir
