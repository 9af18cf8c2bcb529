// reduce_axis {kind, axis}: a 2-D tile [M, N] combined along one axis into the 1-D tile of the
// other dimension. The owner map is known at compile time, so each logical index bit the
// reduction removes is a register slot bit, a SIMD lane bit or a SIMD group bit of the source
// layout:
//   1. each thread combines the slots that hold the same output element (its partials);
//   2. simd_shuffle_xor butterflies combine the lanes that differ only in reduced lane bits,
//      so every such lane holds the SIMD group's partial, without threadgroup memory;
//   3. with reduced SIMD group bits, one lane per partial publishes it to threadgroup scratch;
//      after a barrier each thread combines the partials of the output elements it owns, and
//      a second barrier releases the scratch.
// Without reduced group bits, when every thread already holds the output elements that the
// result's layout gives it, each result slot is selected from the thread's own partials (no
// memory traffic); otherwise the result goes through scratch as in step 3.
#include <algorithm>
#include <map>

#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

// Where the reduced logical bits live in the source layout.
struct ReducedBits {
  int64_t slots = 0;            // register slot bits
  int64_t lanes = 0;            // thread bits below the SIMD width
  std::vector<int> group_bits;  // thread bits at or above it, in increasing order
};

class AxisReduction {
 public:
  AxisReduction(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        source_type_(l.tile_type(op.operands[0])),
        out_type_(l.tile_type(op.results[0])),
        axis_(op.int_attr("axis")),
        column_bits_(log2_exact(source_type_.shape[1])),
        scalar_(ir::Type::scalar(source_type_.dtype)),
        kind_(reduce_kind(l, op)),
        source_(l.layout_of(op.operands[0])),
        dest_(l.layout(out_type_)) {
    const std::vector<int>& order = source_.bit_order();
    const int thread_bits = log2_exact(source_.thread_count());
    const int simd_bits = log2_exact(l.target.simd_width);
    const int row_bits = log2_exact(source_type_.shape[0]);
    const int first = axis_ == 0 ? column_bits_ : 0;
    const int count = axis_ == 0 ? row_bits : column_bits_;
    for (int b = first; b < first + count; ++b) {
      const int p = order[b];
      if (p >= thread_bits)
        reduced_.slots |= int64_t{1} << (p - thread_bits);
      else if (p < simd_bits)
        reduced_.lanes |= int64_t{1} << p;
      else
        reduced_.group_bits.push_back(p);
    }
    std::sort(reduced_.group_bits.begin(), reduced_.group_bits.end());
  }

  void lower() {
    combine_slots();
    combine_lanes();
    LoweredValue result;
    result.layout = dest_;
    result.slots = reduced_.group_bits.empty() ? select_in_thread() : std::vector<ir::ValueId>{};
    if (result.slots.empty()) result.slots = through_scratch();
    l_.bind(op_.results[0], std::move(result));
  }

 private:
  int64_t output_of(int64_t index) const {
    return axis_ == 0 ? index & (source_type_.shape[1] - 1) : index >> column_bits_;
  }

  ir::ValueId emit_output_of(ir::ValueId index) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    if (axis_ == 0)
      return l_.emit(ir::OpKind::And, {index, l_.const_int(source_type_.shape[1] - 1)}, i32);
    return l_.emit(ir::OpKind::Shr, {index, l_.const_int(column_bits_)}, i32);
  }

  // Step 1: one partial per set of slots that differ only in reduced slot bits; its key is
  // the lowest slot of the set.
  void combine_slots() {
    neutral_ = reduce_identity(l_, op_, kind_.combine, source_type_.dtype);
    std::vector<ir::ValueId> slots = l_.get(op_.operands[0]).slots;
    if (l_.has_idle_threads(source_type_))
      slots[0] =
          l_.emit(ir::OpKind::Select,
                  {l_.owns_element(source_type_.num_elements()), slots[0], neutral_}, scalar_);
    std::map<int64_t, std::vector<ir::ValueId>> sets;
    for (size_t r = 0; r < slots.size(); ++r)
      sets[static_cast<int64_t>(r) & ~reduced_.slots].push_back(slots[r]);
    for (auto& [key, values] : sets) {
      keys_.push_back(key);
      partials_.push_back(combine_tree(l_, kind_.combine, scalar_, std::move(values)));
    }
  }

  // Step 2: a butterfly over each reduced lane bit.
  void combine_lanes() {
    for (int p = 0; (int64_t{1} << p) <= reduced_.lanes; ++p) {
      if (!(reduced_.lanes >> p & 1)) continue;
      for (ir::ValueId& partial : partials_) {
        const ir::ValueId other =
            l_.emit(ir::OpKind::SimdShuffleXor, {partial, l_.const_int(int64_t{1} << p)}, scalar_);
        partial = l_.emit(kind_.combine, {partial, other}, scalar_);
      }
    }
  }

  // Each result slot from the calling thread's own partials, or {} when some thread does not
  // hold an output element the result's layout gives it.
  std::vector<ir::ValueId> select_in_thread() {
    const int64_t threads = std::min<int64_t>(l_.threads, dest_.thread_count());
    std::vector<std::vector<size_t>> candidates;
    for (int64_t r = 0; r < dest_.elements_per_thread(); ++r) {
      std::vector<size_t> used;
      for (int64_t t = 0; t < threads; ++t) {
        if (t >= source_.thread_count()) return {};
        const int64_t wanted = dest_.logical_index(t, r);
        size_t found = partials_.size();
        for (size_t c = 0; c < keys_.size() && found == partials_.size(); ++c)
          if (output_of(source_.logical_index(t, keys_[c])) == wanted) found = c;
        if (found == partials_.size()) return {};
        if (std::find(used.begin(), used.end(), found) == used.end()) used.push_back(found);
      }
      candidates.push_back(std::move(used));
    }
    std::vector<ir::ValueId> slots;
    for (int64_t r = 0; r < dest_.elements_per_thread(); ++r) {
      const std::vector<size_t>& used = candidates[r];
      ir::ValueId value = partials_[used[0]];
      if (used.size() > 1) {
        const ir::ValueId wanted = l_.logical_index(dest_, r);
        for (size_t i = 1; i < used.size(); ++i) {
          const ir::ValueId held = emit_output_of(l_.logical_index(source_, keys_[used[i]]));
          const ir::ValueId same =
              l_.emit(ir::OpKind::Cmp, {wanted, held}, ir::Type::scalar(ir::DType::i1),
                      {{"pred", std::string("eq")}});
          value = l_.emit(ir::OpKind::Select, {same, partials_[used[i]], value}, scalar_);
        }
      }
      slots.push_back(value);
    }
    return slots;
  }

  // Step 3: scratch[output * G + g] holds SIMD group g's partial of an output element, where g
  // numbers the combinations of reduced group bits.
  std::vector<ir::ValueId> through_scratch() {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::Type i1 = ir::Type::scalar(ir::DType::i1);
    const int group_bits = static_cast<int>(reduced_.group_bits.size());
    const int64_t groups = int64_t{1} << group_bits;
    // An exchange to verify_scratch: each element is published by one thread and read after the
    // barrier (a whole-tile reduction's scratch holds one partial per SIMD group instead).
    const ir::ValueId buffer = l_.scratch(
        "reduce_axis." + op_.str_attr("kind") + " scratch (" + l_.name(op_.results[0]) + ")",
        "exchange", source_type_.dtype, out_type_.num_elements() * groups);
    const ir::Type ptr = l_.metal.type(buffer);
    const ir::ValueId thread = l_.thread_index();

    // One writer per partial: lane bits that were reduced are 0, and the thread owns elements.
    ir::ValueId writer = ir::kNoValue;
    const auto both = [&](ir::ValueId a, ir::ValueId b) {
      return a == ir::kNoValue ? b : l_.emit(ir::OpKind::And, {a, b}, i1);
    };
    if (reduced_.lanes)
      writer = l_.emit(
          ir::OpKind::Cmp,
          {l_.emit(ir::OpKind::And, {thread, l_.const_int(reduced_.lanes)}, i32), l_.const_int(0)},
          i1, {{"pred", std::string("eq")}});
    if (source_.thread_count() < l_.threads)
      writer = both(writer, l_.owns_element(source_.thread_count()));

    ir::ValueId g = l_.const_int(0);
    for (int j = 0; j < group_bits; ++j) {
      const int p = reduced_.group_bits[j];
      const ir::ValueId bit = l_.emit(
          ir::OpKind::And,
          {l_.emit(ir::OpKind::Shr, {thread, l_.const_int(p - j)}, i32), l_.const_int(1 << j)},
          i32);
      g = j == 0 ? bit : l_.emit(ir::OpKind::Or, {g, bit}, i32);
    }
    for (size_t c = 0; c < partials_.size(); ++c) {
      const ir::ValueId output = emit_output_of(l_.logical_index(source_, keys_[c]));
      const ir::ValueId at =
          l_.emit(ir::OpKind::Or,
                  {l_.emit(ir::OpKind::Shl, {output, l_.const_int(group_bits)}, i32), g}, i32);
      std::vector<ir::ValueId> operands = {l_.emit(ir::OpKind::PtrAdd, {buffer, at}, ptr),
                                           partials_[c]};
      if (writer != ir::kNoValue) operands.push_back(writer);
      l_.emit_void(ir::OpKind::Store, operands);
    }
    l_.threadgroup_barrier();

    const ir::ValueId owns =
        l_.has_idle_threads(out_type_) ? l_.owns_element(out_type_.num_elements()) : ir::kNoValue;
    std::vector<ir::ValueId> slots;
    for (int64_t r = 0; r < l_.slot_count(out_type_); ++r) {
      const ir::ValueId base =
          l_.emit(ir::OpKind::Shl, {l_.logical_index(dest_, r), l_.const_int(group_bits)}, i32);
      std::vector<ir::ValueId> values;
      for (int64_t k = 0; k < groups; ++k) {
        const ir::ValueId at =
            k == 0 ? base : l_.emit(ir::OpKind::Or, {base, l_.const_int(k)}, i32);
        const ir::ValueId address = l_.emit(ir::OpKind::PtrAdd, {buffer, at}, ptr);
        values.push_back(owns == ir::kNoValue
                             ? l_.emit(ir::OpKind::Load, {address}, scalar_)
                             : l_.emit(ir::OpKind::Load, {address, owns, neutral_}, scalar_));
      }
      slots.push_back(combine_tree(l_, kind_.combine, scalar_, std::move(values)));
    }
    l_.threadgroup_barrier();
    return slots;
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Type& source_type_;
  const ir::Type& out_type_;
  const int64_t axis_;
  const int column_bits_;
  const ir::Type scalar_;
  const ReduceKind kind_;
  const ir::ThreadLayout source_;
  const ir::ThreadLayout dest_;
  ReducedBits reduced_;
  ir::ValueId neutral_ = ir::kNoValue;
  std::vector<int64_t> keys_;
  std::vector<ir::ValueId> partials_;
};

}  // namespace

void lower_reduce_axis(Lowering& l, const ir::Op& op) {
  AxisReduction(l, op).lower();
}

}  // namespace metile::lower
