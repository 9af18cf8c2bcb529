// xor_permute {mask}: the tile whose element i is element i ^ mask, in the operand's layout.
// The owner map is known at compile time, so each set bit of the mask is, in the layout, a
// register slot bit, a SIMD lane bit or a SIMD group bit (the layout's XOR mask flips the same
// bits of the partner as of the element, so the partner's position differs in exactly the
// mapped bits). Slot bits only rename registers; lane bits are one simd_shuffle_xor per slot
// (no threadgroup memory); a SIMD group bit sends the whole tile through threadgroup scratch:
// every owner publishes its elements at their logical indices, a barrier, each thread loads
// its partners, a barrier releases the scratch.
#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

class XorPermutation {
 public:
  XorPermutation(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        type_(l.tile_type(op.operands[0])),
        scalar_(ir::Type::scalar(type_.dtype)),
        layout_(l.layout_of(op.operands[0])),
        mask_(op.int_attr("mask")) {
    const int thread_bits = log2_exact(layout_.thread_count());
    const int simd_bits = log2_exact(l.target.simd_width);
    for (int b = 0; (int64_t{1} << b) <= mask_; ++b) {
      if (!(mask_ >> b & 1)) continue;
      const int p = layout_.bit_order()[b];
      if (p >= thread_bits)
        slot_mask_ |= size_t{1} << (p - thread_bits);
      else if (p < simd_bits)
        lane_mask_ |= int64_t{1} << p;
      else
        across_groups_ = true;
    }
  }

  void lower() {
    const std::vector<ir::ValueId>& slots = l_.get(op_.operands[0]).slots;
    LoweredValue result;
    result.layout = layout_;
    if (across_groups_) {
      result.slots = through_scratch(slots);
    } else {
      for (size_t r = 0; r < slots.size(); ++r) {
        const ir::ValueId held = slots[r ^ slot_mask_];
        result.slots.push_back(
            lane_mask_ == 0
                ? held
                : l_.emit(ir::OpKind::SimdShuffleXor, {held, l_.const_int(lane_mask_)}, scalar_));
      }
    }
    l_.bind(op_.results[0], std::move(result));
  }

 private:
  std::vector<ir::ValueId> through_scratch(const std::vector<ir::ValueId>& slots) {
    const ir::ValueId buffer = l_.scratch("xor_permute scratch (" + l_.name(op_.results[0]) + ")",
                                          "exchange", type_.dtype, type_.num_elements());
    std::vector<ir::ValueId> index;
    for (size_t r = 0; r < slots.size(); ++r)
      index.push_back(l_.logical_index(layout_, static_cast<int64_t>(r)));
    return l_.xor_exchange(buffer, layout_, type_.dtype, index, slots, mask_);
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& type_;
  const ir::Type scalar_;
  const ir::ThreadLayout layout_;
  const int64_t mask_;
  size_t slot_mask_ = 0;
  int64_t lane_mask_ = 0;
  bool across_groups_ = false;
};

}  // namespace

void lower_xor_permute(Lowering& l, const ir::Op& op) {
  XorPermutation(l, op).lower();
}

}  // namespace metile::lower
