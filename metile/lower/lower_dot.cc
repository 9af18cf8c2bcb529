// dot (a, b, acc): acc + a @ b, the generic lowering, correct for any shape and layout and
// the oracle of the matrix-fragment paths. Every thread publishes the elements of a [M, K]
// and b [K, N] it owns at their logical indices in one threadgroup exchange (a first, then
// b), a barrier, and each thread computes the accumulator elements it owns (the acc's
// layout): for its element (i, j), K multiply-adds in f32 of a[i, p] and b[p, j], read back
// and converted to f32; a barrier releases the exchange. The K loop is unrolled so every
// scratch address is a compile-time function of the thread (verify_scratch). Slots whose row
// (or column) differs from slot 0's by one constant in every thread share slot 0's index
// arithmetic, so their reads are one SSA value that cse merges. lower_dot takes the SIMD-group
// path (lower_dot_simdgroup.cc) instead where the target has matrix fragments, the plan allows
// them and the SIMD groups tile the output.
#include <algorithm>
#include <optional>

#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

class GenericDot {
 public:
  GenericDot(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        a_type_(l.tile_type(op.operands[0])),
        acc_type_(l.tile_type(op.operands[2])),
        m_(a_type_.shape[0]),
        k_(a_type_.shape[1]),
        n_(acc_type_.shape[1]),
        acc_layout_(l.layout_of(op.operands[2])) {}

  void lower() {
    buffer_ = l_.scratch("dot operands (" + l_.name(op_.results[0]) + ")", "exchange",
                         a_type_.dtype, m_ * k_ + k_ * n_);
    publish_tile(l_, op_.operands[0], buffer_, 0);
    publish_tile(l_, op_.operands[1], buffer_, m_ * k_);
    l_.threadgroup_barrier();
    const ir::ValueId owns =
        l_.has_idle_threads(acc_type_) ? l_.owns_element(m_ * n_) : ir::kNoValue;
    const std::vector<ir::ValueId>& acc = l_.get(op_.operands[2]).slots;
    std::vector<ir::ValueId> sums;
    for (int64_t r = 0; r < static_cast<int64_t>(acc.size()); ++r) {
      const ir::ValueId a_row = at(row_base(r, 0, k_), 0);          // a[i, 0]
      const ir::ValueId b_column = at(row_base(r, 1, 1), m_ * k_);  // b[0, j]
      ir::ValueId sum = acc[r];
      for (int64_t p = 0; p < k_; ++p) {
        const ir::ValueId x = read(a_row, p, owns);
        sum = multiply_add(x, read(b_column, p * n_, owns), sum);
      }
      sums.push_back(sum);
    }
    l_.threadgroup_barrier();
    LoweredValue result;
    result.layout = acc_layout_;
    result.slots = std::move(sums);
    l_.bind(op_.results[0], std::move(result));
  }

 private:
  // Of accumulator slot r: the row (dim 0) times `scale`, or the column (dim 1), as an i32.
  ir::ValueId row_base(int64_t r, int dim, int64_t scale) {
    if (r == 0) {
      if (slot0_[dim] == ir::kNoValue) slot0_[dim] = coordinate_of_slot(0, dim, scale);
      return slot0_[dim];
    }
    const std::optional<int64_t> shift = shift_from_slot0(r, dim);
    if (!shift) return coordinate_of_slot(r, dim, scale);
    const ir::ValueId base = row_base(0, dim, scale);
    return *shift == 0 ? base
                       : l_.emit(ir::OpKind::Add, {base, l_.const_int(*shift * scale)}, i32());
  }

  ir::ValueId coordinate_of_slot(int64_t r, int dim, int64_t scale) {
    const ir::ValueId index = l_.logical_index(acc_layout_, r);
    const ir::ValueId part =
        dim == 0 ? l_.emit(ir::OpKind::Shr, {index, l_.const_int(log2_exact(n_))}, i32())
                 : l_.emit(ir::OpKind::And, {index, l_.const_int(n_ - 1)}, i32());
    return scale == 1 ? part : l_.emit(ir::OpKind::Mul, {part, l_.const_int(scale)}, i32());
  }

  // The constant by which slot r's row (dim 0) or column (dim 1) exceeds slot 0's in every
  // thread that owns an element, if there is one.
  std::optional<int64_t> shift_from_slot0(int64_t r, int dim) const {
    const int64_t owners =
        std::min<int64_t>(std::min(l_.threads, acc_layout_.thread_count()), m_ * n_);
    std::optional<int64_t> shift;
    for (int64_t t = 0; t < owners; ++t) {
      const int64_t here = coordinate(acc_layout_.logical_index(t, r), dim);
      const int64_t first = coordinate(acc_layout_.logical_index(t, 0), dim);
      if (shift && *shift != here - first) return std::nullopt;
      shift = here - first;
    }
    return shift;
  }

  int64_t coordinate(int64_t index, int dim) const {
    return dim == 0 ? index >> log2_exact(n_) : index & (n_ - 1);
  }

  ir::ValueId at(ir::ValueId index, int64_t offset) {
    const ir::Type ptr = l_.metal.type(buffer_);
    const ir::ValueId base = l_.emit(ir::OpKind::PtrAdd, {buffer_, index}, ptr);
    return offset == 0 ? base : l_.emit(ir::OpKind::PtrAdd, {base, l_.const_int(offset)}, ptr);
  }

  // The operand element at `base` + offset, as f32; 0 in threads that own no accumulator
  // element (their indices lie past the tile).
  ir::ValueId read(ir::ValueId base, int64_t offset, ir::ValueId owns) {
    const ir::Type element = ir::Type::scalar(a_type_.dtype);
    const ir::Type ptr = l_.metal.type(buffer_);
    const ir::ValueId address =
        offset == 0 ? base : l_.emit(ir::OpKind::PtrAdd, {base, l_.const_int(offset)}, ptr);
    const ir::ValueId value =
        owns == ir::kNoValue
            ? l_.emit(ir::OpKind::Load, {address}, element)
            : l_.emit(ir::OpKind::Load, {address, owns, l_.const_float(0.0, a_type_.dtype)},
                      element);
    return a_type_.dtype == ir::DType::f32 ? value : l_.emit(ir::OpKind::Cast, {value}, f32());
  }

  ir::ValueId multiply_add(ir::ValueId x, ir::ValueId y, ir::ValueId sum) {
    return l_.emit(ir::OpKind::Add, {l_.emit(ir::OpKind::Mul, {x, y}, f32()), sum}, f32());
  }

  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  static ir::Type f32() { return ir::Type::scalar(ir::DType::f32); }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& a_type_;
  const ir::Type& acc_type_;
  const int64_t m_, k_, n_;
  const ir::ThreadLayout acc_layout_;
  ir::ValueId buffer_ = ir::kNoValue;
  ir::ValueId slot0_[2] = {ir::kNoValue, ir::kNoValue};  // row_base(0, dim)
};

}  // namespace

void publish_tile(Lowering& l, ir::ValueId tile, ir::ValueId buffer, int64_t offset,
                  int64_t row_stride) {
  const ir::Type& type = l.tile_type(tile);
  const ir::ThreadLayout layout = l.layout_of(tile);
  const ir::Type ptr = l.metal.type(buffer);
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const int64_t columns = type.shape.back();
  const int64_t padding = row_stride == 0 ? 0 : row_stride - columns;
  const ir::ValueId owns = l.writes_elements(layout);
  const std::vector<ir::ValueId>& slots = l.get(tile).slots;
  for (int64_t r = 0; r < static_cast<int64_t>(slots.size()); ++r) {
    ir::ValueId index = l.logical_index(layout, r);
    if (padding != 0) {  // index + row * padding
      const ir::ValueId row =
          l.emit(ir::OpKind::Shr, {index, l.const_int(log2_exact(columns))}, i32);
      index = l.emit(ir::OpKind::Add,
                     {index, l.emit(ir::OpKind::Mul, {row, l.const_int(padding)}, i32)}, i32);
    }
    index = l.emit(ir::OpKind::Add, {index, l.const_int(offset)}, i32);
    std::vector<ir::ValueId> operands = {l.emit(ir::OpKind::PtrAdd, {buffer, index}, ptr),
                                         slots[r]};
    if (owns != ir::kNoValue) operands.push_back(owns);
    l.emit_void(ir::OpKind::Store, operands);
  }
}

std::vector<ir::ValueId> read_tile(Lowering& l, const ir::Type& type,
                                   const ir::ThreadLayout& layout, ir::ValueId buffer) {
  const ir::Type ptr = l.metal.type(buffer);
  const ir::Type element = ir::Type::scalar(type.dtype);
  const ir::ValueId owns =
      l.has_idle_threads(type) ? l.owns_element(type.num_elements()) : ir::kNoValue;
  std::vector<ir::ValueId> slots;
  for (int64_t r = 0; r < l.slot_count(type); ++r) {
    const ir::ValueId address =
        l.emit(ir::OpKind::PtrAdd, {buffer, l.logical_index(layout, r)}, ptr);
    slots.push_back(
        owns == ir::kNoValue
            ? l.emit(ir::OpKind::Load, {address}, element)
            : l.emit(ir::OpKind::Load, {address, owns, l.const_float(0.0, type.dtype)}, element));
  }
  return slots;
}

void lower_dot(Lowering& l, const ir::Op& op) {
  if (l.tile_type(op.operands[0]).is_matrix()) return lower_fragment_dot(l, op);
  // What the plan asks for and no lowering builds yet is rejected, never lowered otherwise.
  const schedule::SchedulePlan& s = l.schedule_plan;
  const auto not_built = [&](const std::string& what) {
    l.not_supported(op, "the " + std::string(schedule::backend_name(s.backend)) +
                            " backend's lowering of dot (" +
                            std::string(schedule::matrix_strategy_name(s.strategy)) + ") with " +
                            what + " is not built yet");
  };
  if (s.backend == schedule::Backend::TensorOps || s.backend == schedule::Backend::SimdgroupInline)
    not_built("a tensor_ops or simdgroup_inline plan");
  if (s.strategy == schedule::MatrixStrategy::WgmmaStaged) return lower_dot_wgmma_staged(l, op);
  if (s.double_buffer == true)
    l.not_supported(op,
                    "Schedule(double_buffer=True) pipelines the accumulation of a K loop (acc = "
                    "dot(a, b, acc) carried by a tile_range, the accumulator used by nothing "
                    "else); " +
                        l.name(op.results[0]) +
                        " is not one, so there is nothing to double-buffer");
  if (l.plan.dot_matrix_fragments) {
    if (const std::optional<DotGeometry> geometry = simdgroup_dot_geometry(l, op))
      return lower_dot_simdgroup(l, op, *geometry);
  }
  if (s.staging == schedule::Staging::Device && s.backend == schedule::Backend::Simdgroup)
    not_built("staging='device' on a dot whose output the SIMD groups do not tile");
  GenericDot(l, op).lower();
}

}  // namespace metile::lower
