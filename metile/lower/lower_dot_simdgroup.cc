// dot (a, b, acc) on SIMD-group matrix fragments (docs/fragments.md): 8x8, or on targets with
// mma.sync its native m16n8k16 for 16-bit operands (a 16x16 a, a 16x8 b and a 16x8 f32
// accumulator: one instruction per product, operands loaded by ldmatrix), staged through
// threadgroup memory; under staging='device' the operand fragments come straight from device
// memory instead (device_dot_operands.h) and exchange 2 has no barrier. The SIMD groups form a
// WM x WN grid over the [M, N] output; group (gm, gn) owns the (M/WM) x (N/WN) block at
// (gm * M/WM, gn * N/WN), as (M/WM/FM) x (N/WN/FN) f32 accumulator fragments of FM x FN. Three
// exchanges,
// each closed by a release barrier:
//   1. the accumulator: a splat fills every fragment; any other acc is published at its logical
//      indices (f32 scratch), a barrier, and each group loads its fragments;
//   2. the operands: a and b are published as in the generic lowering (a's M*K elements, then
//      b's K*N; for mma.sync's fragments each row padded by 16 bytes, so the eight row
//      addresses of an ldmatrix fall in distinct banks), a barrier, and for each of the K/FK
//      steps each group loads the a fragments of its rows and the b fragments of its columns
//      and multiply-accumulates every pair;
//   3. the result: each group stores its fragments (f32 scratch), a barrier, and every thread
//      loads the accumulator elements it owns in the acc's layout, for the ops that follow.
// The lane map of a fragment is never used: values enter and leave fragments only through
// matrix_load and matrix_store.
#include <cstdlib>
#include <map>

#include "metile/lower/device_dot_operands.h"
#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

class SimdgroupDot {
 public:
  SimdgroupDot(Lowering& l, const ir::Op& op, DotGeometry geometry)
      : l_(l),
        op_(op),
        a_type_(l.tile_type(op.operands[0])),
        m_(a_type_.shape[0]),
        k_(a_type_.shape[1]),
        n_(l.tile_type(op.operands[2]).shape[1]),
        geometry_(geometry),
        rows_(m_ / geometry.simdgroups_m / geometry.fragment_m),
        columns_(n_ / geometry.simdgroups_n / geometry.fragment_n),
        native_(geometry.fragment_k != 8),
        a_stride_(k_ + (native_ ? kNativeRowPad : 0)),
        b_stride_(n_ + (native_ ? kNativeRowPad : 0)) {}

  void lower() {
    const bool carried = l_.get(op_.operands[2]).fragments;
    std::vector<ir::ValueId> acc = fragments_of(op_.operands[2]);
    multiply(acc);
    if (carried) {  // a loop keeps its accumulator in fragments (fragment_carries)
      l_.bind(op_.results[0], fragment_value(std::move(acc)));
      return;
    }
    LoweredValue result;
    result.layout = l_.layout_of(op_.operands[2]);
    result.slots = slots_of(acc, *result.layout);
    l_.bind(op_.results[0], std::move(result));
  }

  // Exchange 1: the accumulator fragments of a tile value (f32 [M, N]): the fragments of a
  // value already held as fragments, a fill of a splat, else through threadgroup scratch.
  std::vector<ir::ValueId> fragments_of(ir::ValueId value) {
    origin();
    const LoweredValue& acc = l_.get(value);
    if (acc.fragments) return acc.slots;
    if (acc.uniform) {
      const ir::ValueId fill = l_.emit(ir::OpKind::MatrixFill, {acc.slots[0]}, acc_matrix());
      return std::vector<ir::ValueId>(rows_ * columns_, fill);
    }
    const ir::ValueId buffer = l_.scratch("dot accumulator (" + l_.name(op_.results[0]) + ")",
                                          "exchange", ir::DType::f32, m_ * n_);
    publish_tile(l_, value, buffer, 0);
    l_.threadgroup_barrier();
    std::vector<ir::ValueId> fragments;
    for (int64_t i = 0; i < rows_; ++i)
      for (int64_t j = 0; j < columns_; ++j)
        fragments.push_back(
            l_.emit(ir::OpKind::MatrixLoad,
                    {buffer, fragment_offset(row0_, i, column0_, j, n_, 0), l_.const_int(n_)},
                    acc_matrix()));
    l_.threadgroup_barrier();
    return fragments;
  }

  // Exchange 3: the accumulator's elements in `layout`, from its fragments.
  std::vector<ir::ValueId> slots_of(const std::vector<ir::ValueId>& acc,
                                    const ir::ThreadLayout& layout) {
    origin();
    const ir::ValueId buffer = l_.scratch("dot result (" + l_.name(op_.results[0]) + ")",
                                          "exchange", ir::DType::f32, m_ * n_);
    for (int64_t i = 0; i < rows_; ++i)
      for (int64_t j = 0; j < columns_; ++j)
        l_.emit_void(ir::OpKind::MatrixStore,
                     {acc[i * columns_ + j], buffer, fragment_offset(row0_, i, column0_, j, n_, 0),
                      l_.const_int(n_)});
    l_.threadgroup_barrier();
    std::vector<ir::ValueId> slots = read_tile(l_, l_.tile_type(op_.operands[2]), layout, buffer);
    l_.threadgroup_barrier();
    return slots;
  }

  // The pipeline's consume step (lower_pipelined_loop.cc): acc += a @ b from the current
  // slots (rows staged_row_stride apart), no barrier.
  std::vector<ir::ValueId> consume(std::vector<ir::ValueId> acc, ir::ValueId a_slot,
                                   ir::ValueId b_slot) {
    multiply_from(acc, a_slot, b_slot, 0, a_stride_, b_stride_);
    return acc;
  }

  // Elements of padding after each staged operand row for mma.sync's fragments: 16 bytes.
  static constexpr int64_t kNativeRowPad = 8;

  static LoweredValue fragment_value(std::vector<ir::ValueId> fragments) {
    LoweredValue v(std::move(fragments), true, false);
    v.fragments = true;
    return v;
  }

 private:
  // This SIMD group's first output row and column (i32, uniform in the group).
  void origin() {
    if (row0_ != ir::kNoValue) return;
    const ir::ValueId group = l_.emit(ir::OpKind::SimdGroup, {}, i32());
    const int column_bits = log2_exact(geometry_.simdgroups_n);
    const ir::ValueId gm = l_.emit(ir::OpKind::Shr, {group, l_.const_int(column_bits)}, i32());
    const ir::ValueId gn =
        l_.emit(ir::OpKind::And, {group, l_.const_int(geometry_.simdgroups_n - 1)}, i32());
    row0_ = l_.emit(ir::OpKind::Mul, {gm, l_.const_int(rows_ * geometry_.fragment_m)}, i32());
    column0_ = l_.emit(ir::OpKind::Mul, {gn, l_.const_int(columns_ * geometry_.fragment_n)}, i32());
  }

  // Element offset of the fragment at block (i, j) of an [rows x stride] row-major matrix
  // whose block rows start at row0 + height * i and columns at column0 + width * j (heights
  // and widths: the accumulator's fragment shape unless given).
  ir::ValueId fragment_offset(ir::ValueId row0, int64_t i, ir::ValueId column0, int64_t j,
                              int64_t stride, int64_t base, int64_t height = 0, int64_t width = 0) {
    height = height ? height : geometry_.fragment_m;
    width = width ? width : geometry_.fragment_n;
    const ir::ValueId row = l_.emit(ir::OpKind::Add, {row0, l_.const_int(height * i)}, i32());
    const ir::ValueId start = l_.emit(ir::OpKind::Mul, {row, l_.const_int(stride)}, i32());
    const ir::ValueId column =
        column0 == ir::kNoValue
            ? l_.const_int(base + width * j)
            : l_.emit(ir::OpKind::Add, {column0, l_.const_int(base + width * j)}, i32());
    return l_.emit(ir::OpKind::Add, {start, column}, i32());
  }

  void multiply(std::vector<ir::ValueId>& acc) {
    if (l_.schedule_plan.staging == schedule::Staging::Device) return multiply_from_device(acc);
    const int64_t a_elements = m_ * a_stride_;
    const ir::ValueId buffer = l_.scratch("dot operands (" + l_.name(op_.results[0]) + ")",
                                          "exchange", a_type_.dtype, a_elements + k_ * b_stride_);
    publish_tile(l_, op_.operands[0], buffer, 0, a_stride_);
    publish_tile(l_, op_.operands[1], buffer, a_elements, b_stride_);
    l_.threadgroup_barrier();
    multiply_from(acc, buffer, buffer, a_elements, a_stride_, b_stride_);
    l_.threadgroup_barrier();
  }

  // acc += a @ b from a row-major [M, K] at a_buffer[0] (rows a_stride apart) and [K, N] at
  // b_buffer[b_base] (rows b_stride apart): the K/FK steps of fragment loads and
  // multiply-accumulates, no barrier.
  void multiply_from(std::vector<ir::ValueId>& acc, ir::ValueId a_buffer, ir::ValueId b_buffer,
                     int64_t b_base, int64_t a_stride, int64_t b_stride) {
    origin();
    const int64_t fm = geometry_.fragment_m, fn = geometry_.fragment_n, fk = geometry_.fragment_k;
    const ir::Type a_operand = ir::Type::matrix(a_type_.dtype, fm, fk);
    const ir::Type b_operand = ir::Type::matrix(a_type_.dtype, fk, fn);
    ir::Attrs attrs;
    if (op_.has_attr("precision")) attrs["precision"] = op_.str_attr("precision");
    for (int64_t step = 0; step < k_ / fk; ++step) {
      std::vector<ir::ValueId> a, b;
      for (int64_t i = 0; i < rows_; ++i)
        a.push_back(
            l_.emit(ir::OpKind::MatrixLoad,
                    {a_buffer, fragment_offset(row0_, i, ir::kNoValue, step, a_stride, 0, fm, fk),
                     l_.const_int(a_stride)},
                    a_operand));
      const ir::ValueId k_row = l_.const_int(fk * step);
      for (int64_t j = 0; j < columns_; ++j)
        b.push_back(l_.emit(ir::OpKind::MatrixLoad,
                            {b_buffer, fragment_offset(k_row, 0, column0_, j, b_stride, b_base),
                             l_.const_int(b_stride)},
                            b_operand));
      for (int64_t i = 0; i < rows_; ++i)
        for (int64_t j = 0; j < columns_; ++j)
          acc[i * columns_ + j] = l_.emit(ir::OpKind::MatrixMma,
                                          {a[i], b[j], acc[i * columns_ + j]}, acc_matrix(), attrs);
    }
  }

  // staging='device': acc += a @ b with each SIMD group's operand fragments read straight
  // from device memory (device_dot_operands.h), the whole of its a rows and b columns first.
  void multiply_from_device(std::vector<ir::ValueId>& acc) {
    if (native_)
      throw InternalError(
          "lower dot: staging='device' with mma.sync's native fragments "
          "(simdgroup_dot_geometry keeps 8x8 fragments for it)");
    origin();
    DeviceDotOperands operands(l_, op_);
    const ir::ValueId zero = l_.const_int(0);
    const std::vector<ir::ValueId> a = operands.fragments(0, row0_, zero, rows_, k_ / 8);
    const std::vector<ir::ValueId> b = operands.fragments(1, zero, column0_, k_ / 8, columns_);
    ir::Attrs attrs;
    if (op_.has_attr("precision")) attrs["precision"] = op_.str_attr("precision");
    for (int64_t step = 0; step < k_ / 8; ++step)
      for (int64_t i = 0; i < rows_; ++i)
        for (int64_t j = 0; j < columns_; ++j)
          acc[i * columns_ + j] =
              l_.emit(ir::OpKind::MatrixMma,
                      {a[i * (k_ / 8) + step], b[step * columns_ + j], acc[i * columns_ + j]},
                      acc_matrix(), attrs);
  }

  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  ir::Type acc_matrix() const {
    return ir::Type::matrix(ir::DType::f32, geometry_.fragment_m, geometry_.fragment_n);
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& a_type_;
  const int64_t m_, k_, n_;
  const DotGeometry geometry_;
  const int64_t rows_, columns_;       // fragments per SIMD group along M and N
  const bool native_;                  // mma.sync's m16n8k16 fragments
  const int64_t a_stride_, b_stride_;  // staged operand rows, in elements
  ir::ValueId row0_ = ir::kNoValue, column0_ = ir::kNoValue;
};

}  // namespace

namespace {

// The grid of `groups` SIMD groups over the output's fragment_m x fragment_n blocks with the
// squarest per-group block (fewest fragment loads per product); none when none divides.
std::optional<DotGeometry> grid(int64_t groups, int64_t m, int64_t n, DotGeometry shape) {
  if (m % shape.fragment_m != 0 || n % shape.fragment_n != 0) return std::nullopt;
  const int64_t m_blocks = m / shape.fragment_m, n_blocks = n / shape.fragment_n;
  std::optional<DotGeometry> best;
  int best_skew = 0;
  for (int64_t wm = 1; wm <= groups; wm *= 2) {
    const int64_t wn = groups / wm;
    if (m_blocks % wm != 0 || n_blocks % wn != 0) continue;
    const int skew = std::abs(log2_exact(m / wm) - log2_exact(n / wn));
    if (!best || skew < best_skew) {
      best = shape;
      best->simdgroups_m = static_cast<int>(wm);
      best->simdgroups_n = static_cast<int>(wn);
      best_skew = skew;
    }
  }
  return best;
}

}  // namespace

std::optional<DotGeometry> simdgroup_dot_geometry(const Lowering& l, const ir::Op& op) {
  const target::MatrixFacilities& facilities = l.target.matrix_facilities;
  const bool mma_sync = facilities.has(target::MatrixFacility::MmaSync);
  if (!facilities.has(target::MatrixFacility::SimdgroupMatrix8x8) && !mma_sync) return std::nullopt;
  const int64_t simd = l.target.simd_width;
  if (l.threads % simd != 0) return std::nullopt;
  const int64_t groups = l.threads / simd;
  const ir::Type& a = l.tile_type(op.operands[0]);
  const int64_t m = a.shape[0], k = a.shape[1], n = l.tile_type(op.operands[1]).shape[1];
  // mma.sync's own m16n8k16 for 16-bit operands, where K and the grid allow it; operands read
  // from device memory (staging='device') keep the 8x8 fragments their loads are built for.
  const bool sixteen_bit = a.dtype == ir::DType::f16 || a.dtype == ir::DType::bf16;
  if (mma_sync && sixteen_bit && k % 16 == 0 &&
      l.schedule_plan.staging != schedule::Staging::Device)
    if (std::optional<DotGeometry> native = grid(groups, m, n, DotGeometry{1, 1, 16, 8, 16}))
      return native;
  return grid(groups, m, n, DotGeometry{});
}

void lower_dot_simdgroup(Lowering& l, const ir::Op& op, DotGeometry geometry) {
  SimdgroupDot(l, op, geometry).lower();
}

std::vector<std::optional<FragmentCarry>> fragment_carries(const Lowering& l, const ir::Op& loop) {
  const ir::Block& body = loop.regions[0];
  std::vector<std::optional<FragmentCarry>> carries(loop.operands.size() - 3);
  if (!l.plan.dot_matrix_fragments || body.ops.empty()) return carries;
  std::map<ir::ValueId, int> uses;
  ir::walk(body, [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) ++uses[v];
  });
  const ir::Op& yield = body.ops.back();
  for (size_t i = 0; i < carries.size(); ++i) {
    const ir::ValueId carried = body.args[1 + i], next = yield.operands[i];
    if (uses[carried] != 1 || uses[next] != 1) continue;
    for (const ir::Op& op : body.ops)
      if (op.kind == ir::OpKind::Dot && op.results[0] == next && op.operands[2] == carried)
        if (const std::optional<DotGeometry> geometry = simdgroup_dot_geometry(l, op))
          carries[i] = FragmentCarry{&op, *geometry};
  }
  return carries;
}

int64_t fragment_count(const Lowering& l, const FragmentCarry& carry) {
  const ir::Type& acc = l.tile_type(carry.dot->operands[2]);
  return (acc.shape[0] / carry.geometry.simdgroups_m / carry.geometry.fragment_m) *
         (acc.shape[1] / carry.geometry.simdgroups_n / carry.geometry.fragment_n);
}

std::vector<ir::ValueId> carried_fragments(Lowering& l, const FragmentCarry& carry,
                                           ir::ValueId value) {
  return SimdgroupDot(l, *carry.dot, carry.geometry).fragments_of(value);
}

int64_t staged_row_stride(const FragmentCarry& carry, int64_t columns) {
  return columns + (carry.geometry.fragment_k != 8 ? SimdgroupDot::kNativeRowPad : 0);
}

std::vector<ir::ValueId> consume_pipeline_slots(Lowering& l, const FragmentCarry& carry,
                                                std::vector<ir::ValueId> acc, ir::ValueId a_slot,
                                                ir::ValueId b_slot) {
  return SimdgroupDot(l, *carry.dot, carry.geometry).consume(std::move(acc), a_slot, b_slot);
}

LoweredValue carried_fragment_value(std::vector<ir::ValueId> fragments) {
  return SimdgroupDot::fragment_value(std::move(fragments));
}

std::vector<ir::ValueId> carried_slots(Lowering& l, const FragmentCarry& carry,
                                       const std::vector<ir::ValueId>& fragments,
                                       const ir::Type& type) {
  return SimdgroupDot(l, *carry.dot, carry.geometry).slots_of(fragments, l.layout(type));
}

}  // namespace metile::lower
