// reduce_combine {axis}: k tiles combined along one axis with the op's combine region, inlined
// as scalar code at every application. The combine need only be associative, so every level
// combines neighbouring runs of the axis, the earlier run first: the reduced logical index bits
// are taken in increasing order, and each one is, in the source layout (known at compile time),
//   * a register slot bit: the thread combines the two slots;
//   * a SIMD lane bit: simd_shuffle_down fetches the partials of the lane that comes next along
//     the axis, without threadgroup memory; every lane takes part, and the lanes whose combined
//     lane bits are 0 hold the combined partials;
//   * a SIMD group bit: from here on, threadgroup partials. One lane per partial stores it at
//     scratch[output * P + position], position being the partial's place in index order among
//     the P partials of its output; after a barrier each thread combines in order the partials
//     of the output elements it owns (a whole-tile reduction: every thread, all of them, so the
//     result is uniform), and a second barrier releases the scratch; in rounds of outputs when
//     their partials would fill more than half the target's threadgroup memory.
// Threads that own no element (a tile smaller than the threadgroup) never publish, so no
// padding meets a real element and no identity is needed. A layout whose register slots are
// not neighbours along the axis (the striped layout: thread t owns t + r * T) keeps index order
// because the slot bits wait for the lower lane and group bits; while a thread holds several
// partials and no slot level follows, the lane levels reduce-scatter them (scatter_slots).
#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

using Partial = std::vector<ir::ValueId>;  // one scalar per input tile

class CombineReduction {
 public:
  CombineReduction(Lowering& l, const ir::Op& op)
      : l_(l),
        op_(op),
        combine_(op.regions[0]),
        type_(l.tile_type(op.operands[0])),
        axis_(op.int_attr("axis")),
        column_bits_(type_.shape.size() == 2 ? log2_exact(type_.shape[1]) : 0),
        layout_(l.layout_of(op.operands[0])) {
    const int first = type_.shape.size() == 2 && axis_ == 0 ? column_bits_ : 0;
    const int count = log2_exact(type_.shape[axis_]);
    for (int b = first; b < first + count; ++b) reduced_.push_back(b);
    for (ir::ValueId t : op.operands) scalars_.push_back(ir::Type::scalar(l.tile_type(t).dtype));
  }

  void lower() {
    // The automatic layouts have none; an explicit layout's could put a later element first.
    if (layout_.xor_mask() != 0)
      l_.not_supported(op_, "a reduction with a combine_fn of a tile whose layout " +
                                layout_.str() + " has an xor mask");
    const int64_t slots = l_.slot_count(type_);
    for (int64_t r = 0; r < slots; ++r) {
      Partial p;
      for (ir::ValueId t : op_.operands) p.push_back(l_.get(t).slots[r]);
      partials_.push_back(std::move(p));
      alive_.push_back(true);
      offsets_.push_back(ir::kNoValue);
    }
    const int thread_bits = log2_exact(layout_.thread_count());
    const int simd_bits = log2_exact(l_.target.simd_width);
    // Lanes may trade slots (scatter_slots) only when no slot level follows a lane level.
    bool lanes_seen = false;
    scatter_ = true;
    for (int b : reduced_) {
      const int p = layout_.bit_order()[b];
      if (p >= simd_bits && p < thread_bits) break;  // a group bit: the rest is scratch
      if (p < simd_bits)
        lanes_seen = true;
      else if (lanes_seen)
        scatter_ = false;
    }
    size_t next = 0;
    for (; next < reduced_.size(); ++next) {
      const int b = reduced_[next];
      const int p = layout_.bit_order()[b];
      if (p >= thread_bits)
        combine_slots(p - thread_bits);
      else if (p < simd_bits)
        combine_lanes(p);
      else
        break;
    }
    const bool whole_tile = type_.shape.size() == 1;
    // A whole-tile result is uniform only when every thread of the threadgroup holds it.
    if (whole_tile && next == reduced_.size() && layout_.thread_count() == l_.threads) {
      Partial totals = partials_[0];
      if (lane_mask_)  // held by lane 0
        for (size_t i = 0; i < totals.size(); ++i)
          totals[i] = l_.emit(ir::OpKind::SimdBroadcast, {totals[i], l_.const_int(0)}, scalars_[i]);
      bind_results(totals, true);
      return;
    }
    through_scratch(next);
  }

 private:
  // combine_fn(a, b) for the partials a (earlier along the axis) and b.
  Partial apply(const Partial& a, const Partial& b) {
    const size_t k = a.size();
    for (size_t i = 0; i < k; ++i) {
      l_.bind(combine_.args[i], {{a[i]}, false, false});
      l_.bind(combine_.args[k + i], {{b[i]}, false, false});
    }
    lower_block(l_, combine_);
    Partial out;
    for (ir::ValueId y : combine_.ops.back().operands) out.push_back(l_.scalar(y));
    return out;
  }

  // Partials in index order, combined pairwise: depth log2(n).
  Partial ordered_tree(std::vector<Partial> values) {
    while (values.size() > 1) {
      std::vector<Partial> next;
      for (size_t i = 0; i + 1 < values.size(); i += 2)
        next.push_back(apply(values[i], values[i + 1]));
      if (values.size() % 2) next.push_back(values.back());
      values = std::move(next);
    }
    return values[0];
  }

  // Slot bit q: slot r (bit q clear) meets slot r | 2^q, which comes later along the axis.
  void combine_slots(int q) {
    const size_t step = size_t{1} << q;
    for (size_t r = 0; r < partials_.size(); ++r) {
      if (!alive_[r] || (r & step)) continue;
      partials_[r] = apply(partials_[r], partials_[r | step]);
      alive_[r | step] = false;
    }
  }

  // Lane bit p: lane l combines its partials with those of lane l + 2^p, which come later along
  // the axis: valid in the lanes whose combined lane bits are 0 (the others' results are never
  // read).
  void combine_lanes(int p) {
    if (scatter_ && alive_slots().size() > 1) return scatter_slots(p);
    const ir::ValueId distance = l_.const_int(int64_t{1} << p);
    lane_mask_ |= int64_t{1} << p;
    for (size_t r = 0; r < partials_.size(); ++r) {
      if (!alive_[r]) continue;
      Partial next;
      for (size_t i = 0; i < scalars_.size(); ++i)
        next.push_back(
            l_.emit(ir::OpKind::SimdShuffleDown, {partials_[r][i], distance}, scalars_[i]));
      partials_[r] = apply(partials_[r], next);
    }
  }

  std::vector<size_t> alive_slots() const {
    std::vector<size_t> alive;
    for (size_t r = 0; r < alive_.size(); ++r)
      if (alive_[r]) alive.push_back(r);
    return alive;
  }

  // Lane bit p while a thread holds several partials (reduce-scatter): pairs of slots (s, t)
  // trade halves with the xor partner lane, the lane whose bit is 0 keeping s, the other t.
  // Each lane combines what it kept with what it received in index order (the lane whose bit
  // is 0 comes first), so one shuffle combines two slots, and both lanes hold partials.
  void scatter_slots(int p) {
    const ir::ValueId distance = l_.const_int(int64_t{1} << p);
    const ir::ValueId upper = l_.emit(
        ir::OpKind::Cmp,
        {l_.emit(ir::OpKind::And, {l_.thread_index(), distance}, ir::Type::scalar(ir::DType::i32)),
         l_.const_int(0)},
        ir::Type::scalar(ir::DType::i1), {{"pred", std::string("ne")}});
    const std::vector<size_t> alive = alive_slots();
    for (size_t j = 0; j + 1 < alive.size(); j += 2) {
      const size_t s = alive[j], t = alive[j + 1];
      Partial first, second;
      for (size_t i = 0; i < scalars_.size(); ++i) {
        const ir::Type& type = scalars_[i];
        const ir::ValueId send =
            l_.emit(ir::OpKind::Select, {upper, partials_[s][i], partials_[t][i]}, type);
        const ir::ValueId received = l_.emit(ir::OpKind::SimdShuffleXor, {send, distance}, type);
        const ir::ValueId kept =
            l_.emit(ir::OpKind::Select, {upper, partials_[t][i], partials_[s][i]}, type);
        first.push_back(l_.emit(ir::OpKind::Select, {upper, received, kept}, type));
        second.push_back(l_.emit(ir::OpKind::Select, {upper, kept, received}, type));
      }
      const ir::ValueId s_offset = slot_offset(s), t_offset = slot_offset(t);
      partials_[s] = apply(first, second);
      offsets_[s] = l_.emit(ir::OpKind::Select, {upper, t_offset, s_offset},
                            ir::Type::scalar(ir::DType::i32));
      alive_[t] = false;
    }
  }

  // What slot r's partial adds to the thread part of its logical index (after a scatter, it
  // depends on the lane).
  ir::ValueId slot_offset(size_t r) {
    if (offsets_[r] == ir::kNoValue)
      offsets_[r] = l_.const_int(Lowering::slot_offset(layout_, static_cast<int64_t>(r)));
    return offsets_[r];
  }

  ir::ValueId output_of(ir::ValueId index) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    if (type_.shape.size() == 1) return l_.const_int(0);
    if (axis_ == 0) return l_.emit(ir::OpKind::And, {index, l_.const_int(type_.shape[1] - 1)}, i32);
    return l_.emit(ir::OpKind::Shr, {index, l_.const_int(column_bits_)}, i32);
  }

  // The reduced bits from reduced_[next] on, through scratch[output * P + position]: in rounds
  // of as many outputs as fit half the target's threadgroup memory.
  void through_scratch(size_t next) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    const ir::Type i1 = ir::Type::scalar(ir::DType::i1);
    const int position_bits = static_cast<int>(reduced_.size() - next);
    const int low = next < reduced_.size() ? reduced_[next] : 0;
    const int64_t count = int64_t{1} << position_bits;
    const bool whole_tile = type_.shape.size() == 1;
    const int64_t outputs = whole_tile ? 1 : type_.shape[1 - axis_];
    int64_t output_bytes = 0;
    for (const ir::Type& t : scalars_) output_bytes += count * ir::dtype_bytes(t.dtype);
    int64_t batch = outputs;
    while (batch > 1 && batch * output_bytes > l_.target.threadgroup_memory_bytes / 2) batch /= 2;
    const std::vector<ir::ValueId> buffers = scratch(batch * count);
    // In round `round`: whether `output` is one of its outputs (none: all are), and its place.
    const auto in_round = [&](ir::ValueId output, int64_t round) {
      if (batch == outputs) return std::pair{ir::kNoValue, output};
      const ir::ValueId first =
          l_.emit(ir::OpKind::Shr, {output, l_.const_int(log2_exact(batch))}, i32);
      return std::pair{
          l_.emit(ir::OpKind::Cmp, {first, l_.const_int(round)}, i1, {{"pred", std::string("eq")}}),
          l_.emit(ir::OpKind::And, {output, l_.const_int(batch - 1)}, i32)};
    };
    const auto both = [&](ir::ValueId a, ir::ValueId b) {
      return a == ir::kNoValue ? b : b == ir::kNoValue ? a : l_.emit(ir::OpKind::And, {a, b}, i1);
    };

    // One writer per partial: the lanes whose combined lane bits are 0, among the owners.
    ir::ValueId writer = ir::kNoValue;
    if (lane_mask_)
      writer =
          l_.emit(ir::OpKind::Cmp,
                  {l_.emit(ir::OpKind::And, {l_.thread_index(), l_.const_int(lane_mask_)}, i32),
                   l_.const_int(0)},
                  i1, {{"pred", std::string("eq")}});
    if (layout_.thread_count() < l_.threads)
      writer = both(writer, l_.owns_element(layout_.thread_count()));
    std::vector<std::pair<ir::ValueId, ir::ValueId>> published;  // (output, position) per partial
    for (size_t r = 0; r < partials_.size(); ++r) {
      if (!alive_[r]) continue;
      const ir::ValueId index =
          l_.emit(ir::OpKind::Add, {l_.thread_part(layout_), slot_offset(r)}, i32);
      published.push_back(
          {output_of(index), l_.emit(ir::OpKind::And,
                                     {l_.emit(ir::OpKind::Shr, {index, l_.const_int(low)}, i32),
                                      l_.const_int(count - 1)},
                                     i32)});
    }
    const auto publish = [&](int64_t round) {
      size_t p = 0;
      for (size_t r = 0; r < partials_.size(); ++r) {
        if (!alive_[r]) continue;
        const auto [here, place] = in_round(published[p].first, round);
        const ir::ValueId at =
            l_.emit(ir::OpKind::Or,
                    {l_.emit(ir::OpKind::Shl, {place, l_.const_int(position_bits)}, i32),
                     published[p].second},
                    i32);
        const ir::ValueId mask = both(writer, here);
        for (size_t i = 0; i < scalars_.size(); ++i) {
          std::vector<ir::ValueId> operands = {
              l_.emit(ir::OpKind::PtrAdd, {buffers[i], at}, l_.metal.type(buffers[i])),
              partials_[r][i]};
          if (mask != ir::kNoValue) operands.push_back(mask);
          l_.emit_void(ir::OpKind::Store, operands);
        }
        ++p;
      }
      l_.threadgroup_barrier();
    };

    if (whole_tile) {
      publish(0);
      bind_results(read_partials(buffers, l_.const_int(0), count, ir::kNoValue), true);
      l_.threadgroup_barrier();
      return;
    }
    const ir::Type out_type = l_.tile_type(op_.results[0]);
    const ir::ThreadLayout dest = l_.layout(out_type);
    const ir::ValueId owns =
        l_.has_idle_threads(out_type) ? l_.owns_element(out_type.num_elements()) : ir::kNoValue;
    std::vector<Partial> slots(static_cast<size_t>(l_.slot_count(out_type)));
    for (int64_t round = 0; round * batch < outputs; ++round) {
      publish(round);
      for (size_t r = 0; r < slots.size(); ++r) {
        const auto [here, place] = in_round(l_.logical_index(dest, static_cast<int64_t>(r)), round);
        const ir::ValueId base =
            l_.emit(ir::OpKind::Shl, {place, l_.const_int(position_bits)}, i32);
        const Partial combined = read_partials(buffers, base, count, owns);
        if (round == 0) {
          slots[r] = combined;
          continue;
        }
        for (size_t i = 0; i < scalars_.size(); ++i)
          slots[r][i] = l_.emit(ir::OpKind::Select, {here, combined[i], slots[r][i]}, scalars_[i]);
      }
      l_.threadgroup_barrier();
    }
    for (size_t i = 0; i < scalars_.size(); ++i) {
      LoweredValue result;
      result.layout = dest;
      for (const Partial& p : slots) result.slots.push_back(p[i]);
      l_.bind(op_.results[i], std::move(result));
    }
  }

  // One exchange buffer of `elements` per input, side by side in one scratch region (each
  // scratch request would share one region).
  std::vector<ir::ValueId> scratch(int64_t elements) {
    std::vector<int64_t> offsets;
    int64_t bytes = 0;
    for (const ir::Type& t : scalars_) {
      offsets.push_back(bytes);
      bytes += ThreadgroupAllocator::round_up(elements * ir::dtype_bytes(t.dtype));
    }
    const int64_t base =
        l_.allocator.allocate_scratch("reduce_combine scratch (" + l_.name(op_.results[0]) + ")",
                                      ir::DType::i64, bytes / ir::dtype_bytes(ir::DType::i64));
    std::vector<ir::ValueId> buffers;
    for (size_t i = 0; i < scalars_.size(); ++i)
      buffers.push_back(l_.emit(ir::OpKind::ThreadgroupBuffer, {},
                                ir::Type::ptr(scalars_[i].dtype, ir::AddressSpace::Threadgroup),
                                {{"offset", base + offsets[i]},
                                 {"size", elements},
                                 {"scratch", std::string("exchange")}}));
    return buffers;
  }

  // The `count` partials at buffers[base + j], combined in order; a thread that owns no output
  // element (owns false) reads zeros it never uses.
  Partial read_partials(const std::vector<ir::ValueId>& buffers, ir::ValueId base, int64_t count,
                        ir::ValueId owns) {
    const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
    std::vector<Partial> values;
    for (int64_t j = 0; j < count; ++j) {
      const ir::ValueId at = j == 0 ? base : l_.emit(ir::OpKind::Or, {base, l_.const_int(j)}, i32);
      Partial p;
      for (size_t i = 0; i < scalars_.size(); ++i) {
        const ir::ValueId address =
            l_.emit(ir::OpKind::PtrAdd, {buffers[i], at}, l_.metal.type(buffers[i]));
        const ir::DType dtype = scalars_[i].dtype;
        const ir::ValueId zero =
            ir::is_float(dtype) ? l_.const_float(0.0, dtype) : l_.const_int(0, dtype);
        p.push_back(owns == ir::kNoValue
                        ? l_.emit(ir::OpKind::Load, {address}, scalars_[i])
                        : l_.emit(ir::OpKind::Load, {address, owns, zero}, scalars_[i]));
      }
      values.push_back(std::move(p));
    }
    return ordered_tree(std::move(values));
  }

  void bind_results(const Partial& totals, bool uniform) {
    for (size_t i = 0; i < totals.size(); ++i)
      l_.bind(op_.results[i], {{totals[i]}, false, uniform});
  }

  Lowering& l_;
  const ir::Op& op_;
  const ir::Block& combine_;
  const ir::Type& type_;
  const int64_t axis_;
  const int column_bits_;
  const ir::ThreadLayout layout_;
  std::vector<int> reduced_;  // the logical index bits of the axis, lowest first
  std::vector<ir::Type> scalars_;
  std::vector<Partial> partials_;     // per register slot
  std::vector<bool> alive_;           // slots whose partial is still to be combined
  std::vector<ir::ValueId> offsets_;  // per slot: slot_offset() once known
  int64_t lane_mask_ = 0;             // the lane bits combined by simd_shuffle_down so far
  bool scatter_ = false;              // lane levels may trade slots (no slot level follows)
};

}  // namespace

void lower_reduce_combine(Lowering& l, const ir::Op& op) {
  CombineReduction(l, op).lower();
}

}  // namespace metile::lower
