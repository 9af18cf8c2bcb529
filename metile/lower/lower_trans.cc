// reshape keeps every element's row-major logical index, hence every owner: nothing moves.
//
// trans moves element (j, i) of [M, N] to element (i, j) of [N, M]. The owner map is
// enumerated at compile time: when every thread holds the source of each destination slot in
// one slot shared by all threads, the SSA values are forwarded; when every source lies in the
// calling thread's SIMD group, simd_shuffle brings it (one shuffle per source slot that some
// thread reads, then a select); otherwise all threads exchange through threadgroup scratch
// (store, barrier, load, barrier), every thread taking part unconditionally.
#include <algorithm>
#include <map>

#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

class Transpose {
 public:
  Transpose(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        source_type_(l.tile_type(op.operands[0])),
        dest_type_(l.tile_type(op.results[0])),
        source_(l.layout_of(op.operands[0])),
        dest_(l.layout(dest_type_)),
        row_bits_(log2_exact(source_type_.shape[0])),
        column_bits_(log2_exact(source_type_.shape[1])),
        threads_(std::min<int64_t>(l.threads, dest_.thread_count())) {}

  void lower() {
    LoweredValue result;
    result.layout = dest_;
    result.slots = forwarded();
    if (result.slots.empty()) result.slots = shuffled();
    if (result.slots.empty()) result.slots = exchanged();
    l_.bind(op_.results[0], std::move(result));
  }

 private:
  // Destination d = i * M + j (i < N, j < M) reads source j * N + i.
  int64_t source_of(int64_t d) const {
    const int64_t i = d >> row_bits_, j = d & (source_type_.shape[0] - 1);
    return (j << column_bits_) | i;
  }

  ir::ValueId emit_source_of(ir::ValueId d) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::ValueId i = l_.emit(ir::OpKind::Shr, {d, l_.const_int(row_bits_)}, i32);
    const ir::ValueId j =
        l_.emit(ir::OpKind::And, {d, l_.const_int(source_type_.shape[0] - 1)}, i32);
    return l_.emit(ir::OpKind::Or,
                   {l_.emit(ir::OpKind::Shl, {j, l_.const_int(column_bits_)}, i32), i}, i32);
  }

  const std::vector<ir::ValueId>& values() const { return l_.get(op_.operands[0]).slots; }

  std::vector<ir::ValueId> forwarded() {
    std::vector<ir::ValueId> slots;
    for (int64_t r = 0; r < dest_.elements_per_thread(); ++r) {
      int64_t slot = -1;
      for (int64_t t = 0; t < threads_; ++t) {
        const int64_t s = source_of(dest_.logical_index(t, r));
        if (source_.owner(s) != t || (slot != -1 && slot != source_.register_of(s))) return {};
        slot = source_.register_of(s);
      }
      slots.push_back(values()[slot]);
    }
    return slots;
  }

  // The physical coordinate of a logical index of the source layout (the inverse of
  // Lowering::logical_index): thread bits when `thread`, else register slot bits.
  ir::ValueId emit_physical(ir::ValueId index, bool thread) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const int thread_bits = log2_exact(source_.thread_count());
    const std::vector<int>& order = source_.bit_order();
    ir::ValueId x = source_.xor_mask()
                        ? l_.emit(ir::OpKind::Xor, {index, l_.const_int(source_.xor_mask())}, i32)
                        : index;
    std::map<int, int64_t> bits_by_shift;  // logical bits that move by one distance
    for (size_t b = 0; b < order.size(); ++b) {
      if ((order[b] < thread_bits) != thread) continue;
      const int target = thread ? order[b] : order[b] - thread_bits;
      bits_by_shift[target - static_cast<int>(b)] |= int64_t{1} << b;
    }
    ir::ValueId result = l_.const_int(0);
    bool first = true;
    for (const auto& [shift, bits] : bits_by_shift) {
      ir::ValueId piece = l_.emit(ir::OpKind::And, {x, l_.const_int(bits)}, i32);
      if (shift > 0) piece = l_.emit(ir::OpKind::Shl, {piece, l_.const_int(shift)}, i32);
      if (shift < 0) piece = l_.emit(ir::OpKind::Shr, {piece, l_.const_int(-shift)}, i32);
      result = first ? piece : l_.emit(ir::OpKind::Or, {result, piece}, i32);
      first = false;
    }
    return result;
  }

  // simd_shuffle of `value` from `lane`; i1 values cross as i32 (MSL's SIMD-group functions
  // take no bool).
  ir::ValueId shuffle(ir::ValueId value, ir::ValueId lane) {
    const ir::Type element = source_type_.element();
    if (element.dtype != ir::DType::i1)
      return l_.emit(ir::OpKind::SimdShuffle, {value, lane}, element);
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::ValueId wide =
        l_.emit(ir::OpKind::Select, {value, l_.const_int(1), l_.const_int(0)}, i32);
    return l_.emit(ir::OpKind::Cmp,
                   {l_.emit(ir::OpKind::SimdShuffle, {wide, lane}, i32), l_.const_int(0)}, element,
                   {{"pred", std::string("ne")}});
  }

  std::vector<ir::ValueId> shuffled() {
    if (source_type_.pointer) return {};  // SIMD collectives move numbers
    const int64_t simd = l_.target.simd_width;
    std::vector<std::vector<int64_t>> used_slots;
    for (int64_t r = 0; r < dest_.elements_per_thread(); ++r) {
      std::vector<int64_t> used;
      for (int64_t t = 0; t < threads_; ++t) {
        const int64_t s = source_of(dest_.logical_index(t, r));
        if (source_.owner(s) / simd != t / simd) return {};
        if (std::find(used.begin(), used.end(), source_.register_of(s)) == used.end())
          used.push_back(source_.register_of(s));
      }
      used_slots.push_back(std::move(used));
    }
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::Type element = source_type_.element();
    std::vector<ir::ValueId> slots;
    for (int64_t r = 0; r < dest_.elements_per_thread(); ++r) {
      const ir::ValueId s = emit_source_of(l_.logical_index(dest_, r));
      const ir::ValueId lane =
          l_.emit(ir::OpKind::And, {emit_physical(s, true), l_.const_int(simd - 1)}, i32);
      const std::vector<int64_t>& used = used_slots[r];
      ir::ValueId value = shuffle(values()[used[0]], lane);
      if (used.size() > 1) {
        const ir::ValueId slot = emit_physical(s, false);
        for (size_t k = 1; k < used.size(); ++k) {
          const ir::ValueId same =
              l_.emit(ir::OpKind::Cmp, {slot, l_.const_int(used[k])},
                      ir::Type::scalar(ir::DType::i1), {{"pred", std::string("eq")}});
          const ir::ValueId other = shuffle(values()[used[k]], lane);
          value = l_.emit(ir::OpKind::Select, {same, other, value}, element);
        }
      }
      slots.push_back(value);
    }
    return slots;
  }

  std::vector<ir::ValueId> exchanged() {
    if (source_type_.pointer)
      l_.not_supported(op_,
                       "moving a tile of pointers between threads; transpose the offsets and add "
                       "them to a scalar pointer instead");
    const ir::ValueId buffer =
        l_.scratch("trans exchange (" + l_.name(op_.results[0]) + ")", "exchange",
                   source_type_.dtype, source_type_.num_elements());
    const ir::Type ptr = l_.metal.type(buffer);
    const ir::Type element = source_type_.element();
    const ir::ValueId owns = l_.has_idle_threads(source_type_)
                                 ? l_.owns_element(source_type_.num_elements())
                                 : ir::kNoValue;
    for (size_t r = 0; r < values().size(); ++r) {
      std::vector<ir::ValueId> operands = {
          l_.emit(ir::OpKind::PtrAdd, {buffer, l_.logical_index(source_, static_cast<int64_t>(r))},
                  ptr),
          values()[r]};
      if (owns != ir::kNoValue) operands.push_back(owns);
      l_.emit_void(ir::OpKind::Store, operands);
    }
    l_.threadgroup_barrier();
    std::vector<ir::ValueId> slots;
    for (int64_t r = 0; r < l_.slot_count(dest_type_); ++r) {
      const ir::ValueId address =
          l_.emit(ir::OpKind::PtrAdd, {buffer, emit_source_of(l_.logical_index(dest_, r))}, ptr);
      if (owns == ir::kNoValue) {
        slots.push_back(l_.emit(ir::OpKind::Load, {address}, element));
        continue;
      }
      const ir::ValueId fill = ir::is_float(source_type_.dtype)
                                   ? l_.const_float(0.0, source_type_.dtype)
                                   : l_.const_int(0, source_type_.dtype);
      slots.push_back(l_.emit(ir::OpKind::Load, {address, owns, fill}, element));
    }
    l_.threadgroup_barrier();
    return slots;
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& source_type_;
  const ir::Type& dest_type_;
  const ir::ThreadLayout source_;
  const ir::ThreadLayout dest_;
  const int row_bits_;
  const int column_bits_;
  const int64_t threads_;
};

}  // namespace

void lower_reshape(Lowering& l, const ir::Op& op) {
  l.bind(op.results[0], l.get(op.operands[0]));
}

void lower_trans(Lowering& l, const ir::Op& op) {
  if (l.get(op.operands[0]).uniform) {
    const LoweredValue& splat = l.get(op.operands[0]);
    l.bind(op.results[0],
           {std::vector<ir::ValueId>(l.slot_count(l.tile_type(op.results[0])), splat.slots[0]),
            true, true});
    return;
  }
  Transpose(l, op).lower();
}

}  // namespace metile::lower
