// scan {kind, axis, reverse}: the inclusive scan of a tile along one axis, in its own layout.
// The scanned axis is a range of logical index bits (the low bits for the last axis, the high
// bits for axis 0 of a 2-D tile). Each element carries two values: its prefix within its
// aligned block of 2^k elements along the axis, and the block's total. Bit by bit, from the
// lowest, each element fetches the total of the partner block (its index with bit k flipped)
// and combines it into its total, and into its prefix when the partner block comes earlier in
// scan order. The owner map is known at compile time, so each bit is, in the layout, a
// register slot bit (the partner is in the same thread), a SIMD lane bit (simd_shuffle_xor,
// no threadgroup memory) or a SIMD group bit (through threadgroup scratch: every thread
// publishes its totals at their logical indices, a barrier, each loads its partner's, a
// barrier releases). sum and prod are commutative, so only which values combine matters.
#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

class Scan {
 public:
  Scan(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        type_(l.tile_type(op.operands[0])),
        scalar_(ir::Type::scalar(type_.dtype)),
        layout_(l.layout_of(op.operands[0])),
        combine_(op.str_attr("kind") == "sum" ? ir::OpKind::Add : ir::OpKind::Mul),
        reverse_(op.int_attr("reverse") != 0) {}

  void lower() {
    const int64_t axis = op_.int_attr("axis");
    const int last_bits = type_.shape.size() == 2 ? log2_exact(type_.shape[1]) : 0;
    const int first = axis == 0 ? last_bits : 0;
    const int count = log2_exact(type_.shape[axis]);
    prefix_ = l_.get(op_.operands[0]).slots;
    total_ = prefix_;
    for (int64_t r = 0; r < static_cast<int64_t>(prefix_.size()); ++r)
      index_.push_back(l_.logical_index(layout_, r));
    for (int b = first; b < first + count; ++b) step(b);
    LoweredValue result;
    result.layout = layout_;
    result.slots = prefix_;
    l_.bind(op_.results[0], std::move(result));
  }

 private:
  // Combines the blocks that differ in logical bit b.
  void step(int b) {
    const std::vector<ir::ValueId> partner = partner_totals(b);
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::Type i1 = ir::Type::scalar(ir::DType::i1);
    for (size_t r = 0; r < prefix_.size(); ++r) {
      // Forward, the partner block comes first when bit b is 1; in reverse when it is 0.
      const ir::ValueId bit = l_.emit(ir::OpKind::And, {index_[r], l_.const_int(1 << b)}, i32);
      const ir::ValueId earlier = l_.emit(ir::OpKind::Cmp, {bit, l_.const_int(0)}, i1,
                                          {{"pred", std::string(reverse_ ? "eq" : "ne")}});
      const ir::ValueId with = l_.emit(combine_, {partner[r], prefix_[r]}, scalar_);
      prefix_[r] = l_.emit(ir::OpKind::Select, {earlier, with, prefix_[r]}, scalar_);
      total_[r] = l_.emit(combine_, {partner[r], total_[r]}, scalar_);
    }
  }

  // Each slot's partner block total: the total held where logical bit b is flipped.
  std::vector<ir::ValueId> partner_totals(int b) {
    const int p = layout_.bit_order()[b];
    const int thread_bits = log2_exact(layout_.thread_count());
    std::vector<ir::ValueId> partner(total_.size());
    if (p >= thread_bits) {
      for (size_t r = 0; r < total_.size(); ++r)
        partner[r] = total_[r ^ (size_t{1} << (p - thread_bits))];
    } else if (p < log2_exact(l_.target.simd_width)) {
      for (size_t r = 0; r < total_.size(); ++r)
        partner[r] = l_.emit(ir::OpKind::SimdShuffleXor, {total_[r], l_.const_int(int64_t{1} << p)},
                             scalar_);
    } else {
      partner = through_scratch(b);
    }
    return partner;
  }

  std::vector<ir::ValueId> through_scratch(int b) {
    const ir::ValueId buffer =
        l_.scratch("scan." + op_.str_attr("kind") + " bit " + std::to_string(b) + " scratch (" +
                       l_.name(op_.results[0]) + ")",
                   "exchange", type_.dtype, type_.num_elements());
    return l_.xor_exchange(buffer, layout_, type_.dtype, index_, total_, int64_t{1} << b);
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& type_;
  const ir::Type scalar_;
  const ir::ThreadLayout layout_;
  const ir::OpKind combine_;
  const bool reverse_;
  std::vector<ir::ValueId> index_;   // each slot's logical index
  std::vector<ir::ValueId> prefix_;  // each slot's inclusive prefix within its block
  std::vector<ir::ValueId> total_;   // each slot's block total
};

}  // namespace

void lower_scan(Lowering& l, const ir::Op& op) {
  Scan(l, op).lower();
}

}  // namespace metile::lower
