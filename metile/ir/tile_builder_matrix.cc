// TileBuilder's matrix ops: 8x8 fragments (fill, load, store, device tiles) and dot, with the
// rules that decide between fragment and tile operands.
#include <algorithm>

#include "metile/ir/builder.h"
#include "metile/ir/verifier.h"

namespace metile::ir {

bool TileBuilder::as_fragments(const std::string& op, std::vector<ValueId>& operands) {
  if (std::none_of(operands.begin(), operands.end(),
                   [&](ValueId v) { return type(v).is_matrix(); }))
    return false;
  for (ValueId& v : operands) {
    if (type(v).is_matrix()) continue;
    if (!type(v).is_scalar())
      fail(op, "a matrix fragment combines with fragments and scalars only, got " + describe(v));
    v = matrix_fill(v);
  }
  return true;
}

ValueId TileBuilder::matrix_fill(ValueId scalar) {
  if (!type(scalar).is_scalar() || !is_float(type(scalar).dtype))
    fail("matrix_fill", "the value must be a float scalar, got " + describe(scalar));
  return create1(OpKind::MatrixFill, {scalar}, Type::matrix(type(scalar).dtype));
}

ValueId TileBuilder::fragment_of(ValueId value, const std::string& op) {
  if (type(value).is_matrix()) return value;
  const Op* splat = type(value).is_tile() ? definer(value) : nullptr;
  if (!splat || splat->kind != OpKind::Splat || type(value).shape != std::vector<int64_t>{8, 8} ||
      !is_float(type(value).dtype))
    fail(op,
         "a matrix fragment, or a uniform float 8x8 tile such as metile.zeros((8, 8)) to "
         "start one, got " +
             describe(value));
  return matrix_fill(splat->operands[0]);
}

ValueId TileBuilder::matrix_load(ValueId ptr, ValueId offset, ValueId stride, bool transpose) {
  if (!type(ptr).is_pointer())
    fail("matrix_load", "the address must be a pointer, got " + describe(ptr));
  Attrs attrs;
  if (transpose) attrs["transpose"] = int64_t{1};
  return create1(OpKind::MatrixLoad, {ptr, offset, stride}, Type::matrix(type(ptr).dtype),
                 std::move(attrs));
}

void TileBuilder::matrix_store(ValueId fragment, ValueId ptr, ValueId offset, ValueId stride,
                               bool transpose) {
  if (!type(fragment).is_matrix())
    fail("matrix_store", "the value must be a matrix fragment, got " + describe(fragment));
  if (!type(ptr).is_pointer() || type(ptr).dtype != type(fragment).dtype)
    fail("matrix_store", "the address must point to the fragment's dtype, got " + describe(ptr) +
                             " for " + describe(fragment) + "; cast the fragment first");
  Attrs attrs;
  if (transpose) attrs["transpose"] = int64_t{1};
  create(OpKind::MatrixStore, {fragment, ptr, offset, stride}, {}, std::move(attrs));
}

namespace {
Attrs device_tile_attrs(const TileBuilder::DeviceTile& tile) {
  return {{"row_stride", tile.row_stride},
          {"column_stride", tile.column_stride},
          {"scratch_rows", tile.scratch_rows}};
}

std::vector<ValueId> device_tile_operands(const TileBuilder::DeviceTile& tile) {
  return {tile.ptr, tile.row, tile.column, tile.rows, tile.columns, tile.scratch};
}
}  // namespace

ValueId TileBuilder::device_tile_load(const DeviceTile& tile) {
  if (!type(tile.ptr).is_pointer())
    fail("device_tile_load", "the address must be a pointer, got " + describe(tile.ptr));
  return create1(OpKind::DeviceTileLoad, device_tile_operands(tile),
                 Type::matrix(type(tile.ptr).dtype), device_tile_attrs(tile));
}

void TileBuilder::device_tile_store(ValueId fragment, const DeviceTile& tile) {
  if (!type(fragment).is_matrix())
    fail("device_tile_store", "the value must be a matrix fragment, got " + describe(fragment));
  std::vector<ValueId> operands = device_tile_operands(tile);
  operands.insert(operands.begin(), fragment);
  create(OpKind::DeviceTileStore, std::move(operands), {}, device_tile_attrs(tile));
}

ValueId TileBuilder::dot(ValueId a, ValueId b, ValueId acc, const std::string& precision) {
  if (!precision.empty() && precision != "ieee" && precision != "tf32")
    fail("dot", "precision must be ieee or tf32, got '" + precision + "'");
  // metile.zeros((8, 8)) as a fragment product's accumulator: the fragment of its value.
  if (type(a).is_matrix() && type(acc).is_tile()) {
    if (type(acc).dtype != DType::f32)
      fail("dot",
           "the accumulator of a fragment product is an f32 fragment or a uniform f32 "
           "8x8 tile such as metile.zeros((8, 8)), got " +
               describe(acc));
    acc = fragment_of(acc, "dot");
  }
  const std::string rule =
      dot_rule_violation(type(a), type(b), type(acc), precision.empty() ? "ieee" : precision);
  if (!rule.empty()) fail("dot", rule);
  Attrs attrs;
  if (!precision.empty()) attrs["precision"] = precision;
  return create1(OpKind::Dot, {a, b, acc}, type(acc), std::move(attrs));
}

}  // namespace metile::ir
