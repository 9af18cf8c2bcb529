// Device tiles (docs/fragments.md, "Device tiles"): device_tile_load and device_tile_store of
// the 8x8 tile at (row, column) of a rows x columns device view. A complete tile is one
// matrix_load or matrix_store of device memory; any other passes through its SIMD group's 64
// elements of the scratch allocation: each lane copies its 64 / simd_width elements with
// bounds-masked scalar accesses, and SIMD-group barriers publish the copies to the matrix
// access and finish it before the scratch is used again. A tile not marked complete
// (peel_complete_iterations) chooses between the two with a uniform runtime check. Neither path
// names which lane holds which fragment element.
#include "metile/lower/lowering_steps.h"

namespace metile::lower {

namespace {

using ir::OpKind;
using ir::ValueId;

constexpr int64_t kTile = 8;
constexpr int64_t kTileElements = kTile * kTile;

struct DeviceTile {
  ValueId fragment = ir::kNoValue;  // the stored fragment; none for a load
  ValueId ptr, row, column, rows, columns, scratch;
  int64_t row_stride, column_stride;
  ir::DType dtype;
};

const ir::Type kI1 = ir::Type::scalar(ir::DType::i1);
const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

ValueId cmp(Lowering& l, const char* pred, ValueId a, ValueId b) {
  return l.emit(OpKind::Cmp, {a, b}, kI1, {{"pred", std::string(pred)}});
}

ValueId both(Lowering& l, ValueId a, ValueId b) {
  return l.emit(OpKind::And, {a, b}, kI1);
}

ValueId add(Lowering& l, ValueId a, ValueId b) {
  return l.emit(OpKind::Add, {a, b}, kI32);
}

ValueId mul(Lowering& l, ValueId a, int64_t b) {
  return b == 1 ? a : l.emit(OpKind::Mul, {a, l.const_int(b)}, kI32);
}

// 0 <= index < extent.
ValueId inside(Lowering& l, ValueId index, ValueId extent) {
  return both(l, cmp(l, "ge", index, l.const_int(0)), cmp(l, "lt", index, extent));
}

// The whole tile lies inside along one dimension: 0 <= origin < extent and extent - origin >= 8
// (no overflow: extent - origin lies in (0, extent] once origin is inside).
ValueId complete_along(Lowering& l, ValueId origin, ValueId extent) {
  const ValueId left = l.emit(OpKind::Sub, {extent, origin}, kI32);
  return both(l, inside(l, origin, extent), cmp(l, "ge", left, l.const_int(kTile)));
}

ValueId element_offset(Lowering& l, const DeviceTile& t, ValueId row, ValueId column) {
  return add(l, mul(l, row, t.row_stride), mul(l, column, t.column_stride));
}

// The matrix access of the tile in device memory: row-major views read rows of row_stride,
// column-major ones their transpose.
ValueId direct_access(Lowering& l, const DeviceTile& t) {
  const ValueId offset = element_offset(l, t, t.row, t.column);
  const bool transpose = t.column_stride != 1;
  const ValueId stride = l.const_int(transpose ? t.column_stride : t.row_stride);
  ir::Attrs attrs;
  if (transpose) attrs["transpose"] = int64_t{1};
  if (t.fragment == ir::kNoValue)
    return l.emit(OpKind::MatrixLoad, {t.ptr, offset, stride}, ir::Type::matrix(t.dtype), attrs);
  l.emit_void(OpKind::MatrixStore, {t.fragment, t.ptr, offset, stride}, attrs);
  return ir::kNoValue;
}

void simdgroup_barrier(Lowering& l) {
  l.emit_void(OpKind::Barrier, {},
              {{"scope", std::string("simdgroup")}, {"mem", std::string("threadgroup")}});
}

// One element a lane copies between the tile and its SIMD group's scratch.
struct Element {
  ValueId device;   // the element's device pointer
  ValueId valid;    // i1: it lies inside the view
  ValueId scratch;  // its place in the SIMD group's 64 scratch elements (row-major, stride 8)
};

// `own` is the SIMD group's 64 elements of scratch.
std::vector<Element> lane_elements(Lowering& l, const DeviceTile& t, ValueId own) {
  const int64_t width = l.target.simd_width;
  const ValueId lane = l.emit(OpKind::SimdLane, {}, kI32);
  const ir::Type threadgroup_ptr = ir::Type::ptr(t.dtype, ir::AddressSpace::Threadgroup);
  const ValueId lane_row = l.emit(OpKind::Div, {lane, l.const_int(kTile)}, kI32);
  const ValueId lane_column = l.emit(OpKind::Rem, {lane, l.const_int(kTile)}, kI32);
  const ValueId column = add(l, t.column, lane_column);
  const ValueId column_inside = inside(l, column, t.columns);
  std::vector<Element> elements;
  for (int64_t first = 0; first < kTileElements; first += width) {
    const ValueId tile_row = add(l, lane_row, l.const_int(first / kTile));
    const ValueId row = add(l, t.row, tile_row);
    const ValueId device =
        l.emit(OpKind::PtrAdd, {t.ptr, element_offset(l, t, row, column)}, ir::Type::ptr(t.dtype));
    const ValueId at = add(l, mul(l, tile_row, kTile), lane_column);
    elements.push_back({device, both(l, inside(l, row, t.rows), column_inside),
                        l.emit(OpKind::PtrAdd, {own, at}, threadgroup_ptr)});
  }
  return elements;
}

// The masked path: invalid elements load as zero and are never stored. The barrier before the
// matrix access publishes the lanes' copies to it; the one after finishes it before the next
// device tile access of the kernel overwrites the scratch.
ValueId scratch_access(Lowering& l, const DeviceTile& t) {
  const ValueId own = l.emit(
      OpKind::PtrAdd, {t.scratch, mul(l, l.emit(OpKind::SimdGroup, {}, kI32), kTileElements)},
      ir::Type::ptr(t.dtype, ir::AddressSpace::Threadgroup));
  const std::vector<Element> elements = lane_elements(l, t, own);
  const ValueId zero = l.const_int(0), stride = l.const_int(kTile);
  ValueId fragment = ir::kNoValue;
  if (t.fragment == ir::kNoValue) {
    const ValueId other = l.const_float(0.0, t.dtype);
    for (const Element& e : elements)
      l.emit_void(OpKind::Store, {e.scratch, l.emit(OpKind::Load, {e.device, e.valid, other},
                                                    ir::Type::scalar(t.dtype))});
    simdgroup_barrier(l);
    fragment = l.emit(OpKind::MatrixLoad, {own, zero, stride}, ir::Type::matrix(t.dtype));
  } else {
    l.emit_void(OpKind::MatrixStore, {t.fragment, own, zero, stride});
    simdgroup_barrier(l);
    for (const Element& e : elements)
      l.emit_void(
          OpKind::Store,
          {e.device, l.emit(OpKind::Load, {e.scratch}, ir::Type::scalar(t.dtype)), e.valid});
  }
  simdgroup_barrier(l);
  return fragment;
}

void check_scratch(const Lowering& l, const ir::Op& op, ValueId scratch) {
  const int64_t rows = op.int_attr("scratch_rows");
  const int64_t groups = l.threads / l.target.simd_width;
  const ir::Op* allocation = nullptr;
  for (const ir::Op& top : l.tile.body.ops)
    if (top.kind == OpKind::SharedAlloc && top.results[0] == scratch) allocation = &top;
  if (!allocation)
    l.user_error(op, "scratch= must reference a top-level metile.shared allocation directly");
  if (rows * kTile != groups * kTileElements)
    l.user_error(op, "scratch= must have shape (BLOCK // 4, 8) = (" +
                         std::to_string(groups * kTileElements / kTile) +
                         ", 8): 64 elements for each of the kernel's " + std::to_string(groups) +
                         " SIMD groups (" + std::to_string(l.threads) + " threads), got shape (" +
                         std::to_string(rows) + ", 8)");
  if (allocation->int_attr("size") < rows * kTile)
    l.user_error(op, "the scratch view of shape (" + std::to_string(rows) +
                         ", 8) does not fit its metile.shared allocation of " +
                         std::to_string(allocation->int_attr("size")) + " elements");
}

}  // namespace

void lower_device_tile(Lowering& l, const ir::Op& op) {
  require_fragment_backend(l, op);
  const bool store = op.kind == OpKind::DeviceTileStore;
  const size_t first = store ? 1 : 0;
  auto uniform = [&](size_t i, const char* role) {
    return l.uniform_scalar(op, op.operands[first + i], std::string("the device tile's ") + role);
  };
  check_scratch(l, op, op.operands[first + 5]);
  DeviceTile t;
  if (store) t.fragment = l.scalar(op.operands[0]);
  t.ptr = uniform(0, "base pointer");
  t.row = uniform(1, "row origin");
  t.column = uniform(2, "column origin");
  t.rows = uniform(3, "row extent");
  t.columns = uniform(4, "column extent");
  t.scratch = l.scalar(op.operands[first + 5]);
  t.row_stride = op.int_attr("row_stride");
  t.column_stride = op.int_attr("column_stride");
  t.dtype = l.tile_type(op.operands[first]).dtype;

  ValueId result = ir::kNoValue;
  if (op.int_attr_or("complete", 0) != 0) {
    result = direct_access(l, t);
  } else {
    l.builder.begin_if(
        both(l, complete_along(l, t.row, t.rows), complete_along(l, t.column, t.columns)));
    const ValueId direct = direct_access(l, t);
    l.builder.begin_else(store ? std::vector<ValueId>{} : std::vector<ValueId>{direct});
    const ValueId masked = scratch_access(l, t);
    const std::vector<ValueId> results =
        l.builder.end_if(store ? std::vector<ValueId>{} : std::vector<ValueId>{masked});
    if (!store) result = results[0];
  }
  if (!store) l.bind(op.results[0], {{result}, false, false});
}

}  // namespace metile::lower
