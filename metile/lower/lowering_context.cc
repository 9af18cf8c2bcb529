#include "metile/lower/lowering_context.h"

#include <algorithm>
#include <map>

#include "metile/ir/printer.h"
#include "metile/lower/rematerialise.h"
#include "metile/lower/uniformity.h"

namespace metile::lower {

Lowering::Lowering(const ir::Kernel& tile_kernel, const ThreadPlan& plan,
                   const schedule::SchedulePlan& schedule, const target::Target& target_desc,
                   int64_t user_shared_bytes, int64_t private_scratch_bytes)
    : tile(tile_kernel),
      target(target_desc),
      plan(plan),
      schedule_plan(schedule),
      threads(plan.threads_per_threadgroup),
      builder(metal),
      allocator(user_shared_bytes, private_scratch_bytes),
      definers(definers_of(tile_kernel)),
      names_(ir::printed_value_names(tile_kernel)),
      uniform_(analyze_uniformity(tile_kernel)),
      values_(tile_kernel.types.size()),
      bound_(tile_kernel.types.size(), false) {
  metal.dialect = ir::Dialect::Metal;
  metal.name = tile.name;
  for (const ir::Param& p : tile.params) {
    const ir::Type& t = tile.type(p.value);
    if (t.is_tile() || t.is_desc())
      throw UserError("lower_to_metal: parameter '" + p.name + "' has type " + t.str() +
                      "; kernel parameters are buffers or scalars");
    ir::ValueId v = builder.add_param(p.name, t, p.access, p.divisibility);
    bind(p.value, {{v}, false, true});
  }
  thread_index_ =
      emit(ir::OpKind::ThreadIndex, {}, ir::Type::scalar(ir::DType::i32), {{"axis", int64_t{0}}});
}

const LoweredValue& Lowering::get(ir::ValueId v) const {
  METILE_ASSERT(v >= 0 && static_cast<size_t>(v) < values_.size() && bound_[v],
                "Tile IR value %" + std::to_string(v) + " was used before it was lowered");
  return values_[v];
}

void Lowering::bind(ir::ValueId v, LoweredValue lowered) {
  METILE_ASSERT(v >= 0 && static_cast<size_t>(v) < values_.size(), "no such Tile IR value");
  const ir::Type& t = tile.type(v);
  if (t.is_tile() && lowered.fragments) {
    lowered.tile = true;
    value_layouts.push_back(name(v) + ": SIMD-group matrix fragments (the lane map is opaque)");
  } else if (t.is_tile()) {
    METILE_ASSERT(static_cast<int64_t>(lowered.slots.size()) == slot_count(t),
                  "tile " + name(v) + " lowered to the wrong number of slots");
    lowered.tile = true;
    if (!lowered.layout) lowered.layout = layout(t);
    value_layouts.push_back(
        name(v) + ": " + lowered.layout->str() +
        (has_idle_threads(t) ? ", threads >= " + std::to_string(t.num_elements()) + " own nothing"
                             : ""));
  }
  if (!t.is_tile()) lowered.uniform = uniform_[v];
  values_[v] = std::move(lowered);
  bound_[v] = true;
}

void Lowering::restore(ir::ValueId v, LoweredValue lowered) {
  values_[static_cast<size_t>(v)] = std::move(lowered);
  bound_[static_cast<size_t>(v)] = true;
}

ir::ValueId Lowering::scalar(ir::ValueId v) const {
  const LoweredValue& lv = get(v);
  METILE_ASSERT(!lv.tile && lv.slots.size() == 1, name(v) + " is not a scalar");
  return lv.slots[0];
}

ir::ValueId Lowering::uniform_scalar(const ir::Op& op, ir::ValueId v,
                                     const std::string& role) const {
  if (!get(v).uniform)
    user_error(op, role + " " + name(v) +
                       " differs between threads (it derives from thread_id); it must be "
                       "uniform here");
  return scalar(v);
}

ir::ThreadLayout Lowering::layout(const ir::Type& t) const {
  for (const ir::ThreadLayout& planned : plan.layouts)
    if (planned.size() == t.num_elements()) return planned;
  return ir::ThreadLayout::identity(t.num_elements(),
                                    std::max<int64_t>(1, t.num_elements() / threads));
}

const ir::ThreadLayout& Lowering::layout_of(ir::ValueId v) const {
  const LoweredValue& lv = get(v);
  METILE_ASSERT(lv.tile && lv.layout, name(v) + " is not a lowered tile");
  return *lv.layout;
}

std::optional<ir::ThreadLayout> Lowering::operand_layout(const ir::Op& op) const {
  for (ir::ValueId v : op.operands) {
    const LoweredValue& lv = get(v);
    if (lv.tile && !lv.uniform) return lv.layout;
  }
  return std::nullopt;
}

int64_t Lowering::slot_count(const ir::Type& t) const {
  return layout(t).elements_per_thread();
}

bool Lowering::has_idle_threads(const ir::Type& t) const {
  return layout(t).thread_count() < threads;
}

ir::ValueId Lowering::writes_elements(const ir::ThreadLayout& layout) {
  if (layout.thread_count() < threads) return owns_element(layout.thread_count());
  if (!layout.is_replicated()) return ir::kNoValue;
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  return emit(
      ir::OpKind::Cmp,
      {emit(ir::OpKind::And, {thread_index_, const_int(layout.replica_bits())}, i32), const_int(0)},
      ir::Type::scalar(ir::DType::i1), {{"pred", std::string("eq")}});
}

ir::ValueId Lowering::thread_part(const ir::ThreadLayout& layout) {
  // The automatic striped identity keeps the plain thread index: threads past a small tile own
  // nothing, and masking would alias them onto owned elements. Explicit layouts always cover
  // the plan's threads.
  if (layout.is_identity() && !plan.explicit_layouts) return thread_index_;
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const int64_t count = layout.thread_count();
  int thread_bits = 0;
  while ((int64_t{1} << thread_bits) < count) ++thread_bits;
  const ir::ValueId masked = emit(ir::OpKind::And, {thread_index_, const_int(count - 1)}, i32);
  // Thread bits that move by the same distance move together: one mask and one shift.
  std::map<int, int64_t> bits_by_shift;
  int64_t xor_bits = 0;
  const std::vector<int>& order = layout.bit_order();
  for (size_t logical = 0; logical < order.size(); ++logical) {
    if (order[logical] >= thread_bits) continue;
    bits_by_shift[static_cast<int>(logical) - order[logical]] |= int64_t{1} << order[logical];
    xor_bits |= layout.xor_mask() & (int64_t{1} << logical);
  }
  ir::ValueId part = ir::kNoValue;
  for (const auto& [shift, bits] : bits_by_shift) {
    ir::ValueId piece =
        bits == count - 1 ? masked : emit(ir::OpKind::And, {masked, const_int(bits)}, i32);
    if (shift > 0) piece = emit(ir::OpKind::Shl, {piece, const_int(shift)}, i32);
    if (shift < 0) piece = emit(ir::OpKind::Shr, {piece, const_int(-shift)}, i32);
    part = part == ir::kNoValue ? piece : emit(ir::OpKind::Or, {part, piece}, i32);
  }
  if (part == ir::kNoValue) part = const_int(0);
  if (xor_bits) part = emit(ir::OpKind::Xor, {part, const_int(xor_bits)}, i32);
  return part;
}

int64_t Lowering::slot_offset(const ir::ThreadLayout& layout, int64_t slot) {
  // Thread 0's logical index with the thread part's xor bits taken out again.
  const int64_t index = layout.logical_index(0, slot);
  int64_t thread_xor = 0;
  const std::vector<int>& order = layout.bit_order();
  const int64_t count = layout.thread_count();
  for (size_t logical = 0; logical < order.size(); ++logical)
    if ((int64_t{1} << order[logical]) < count)
      thread_xor |= layout.xor_mask() & (int64_t{1} << logical);
  return index ^ thread_xor;
}

ir::ValueId Lowering::logical_index(const ir::ThreadLayout& layout, int64_t slot) {
  const ir::ValueId part = thread_part(layout);
  const int64_t offset = slot_offset(layout, slot);
  if (offset == 0) return part;
  return emit(ir::OpKind::Add, {part, const_int(offset)}, ir::Type::scalar(ir::DType::i32));
}

ir::ValueId Lowering::owner_of(const ir::ThreadLayout& layout, ir::ValueId index) {
  return physical_part(layout, index, true);
}

ir::ValueId Lowering::register_of(const ir::ThreadLayout& layout, ir::ValueId index) {
  return physical_part(layout, index, false);
}

ir::ValueId Lowering::physical_part(const ir::ThreadLayout& layout, ir::ValueId index,
                                    bool thread) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  int thread_bits = 0;
  while ((int64_t{1} << thread_bits) < layout.thread_count()) ++thread_bits;
  ir::ValueId x = index;
  if (layout.xor_mask()) x = emit(ir::OpKind::Xor, {x, const_int(layout.xor_mask())}, i32);
  std::map<int, int64_t> bits_by_shift;  // logical bits moving by one distance, by distance
  const std::vector<int>& order = layout.bit_order();
  for (size_t logical = 0; logical < order.size(); ++logical)
    if ((order[logical] < thread_bits) == thread) {
      const int position = thread ? order[logical] : order[logical] - thread_bits;
      bits_by_shift[position - static_cast<int>(logical)] |= int64_t{1} << logical;
    }
  ir::ValueId part = ir::kNoValue;
  for (const auto& [shift, bits] : bits_by_shift) {
    ir::ValueId piece = emit(ir::OpKind::And, {x, const_int(bits)}, i32);
    if (shift > 0) piece = emit(ir::OpKind::Shl, {piece, const_int(shift)}, i32);
    if (shift < 0) piece = emit(ir::OpKind::Shr, {piece, const_int(-shift)}, i32);
    part = part == ir::kNoValue ? piece : emit(ir::OpKind::Or, {part, piece}, i32);
  }
  return part == ir::kNoValue ? const_int(0) : part;
}

ir::ValueId Lowering::shuffle_from_owner(ir::ValueId value, ir::DType dtype,
                                         const ir::ThreadLayout& layout, ir::ValueId index) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const ir::ValueId lane =
      emit(ir::OpKind::And, {owner_of(layout, index), const_int(target.simd_width - 1)}, i32);
  if (dtype != ir::DType::i1)
    return emit(ir::OpKind::SimdShuffle, {value, lane}, ir::Type::scalar(dtype));
  const ir::ValueId wide = emit(ir::OpKind::Select, {value, const_int(1), const_int(0)}, i32);
  return emit(ir::OpKind::Cmp, {emit(ir::OpKind::SimdShuffle, {wide, lane}, i32), const_int(0)},
              ir::Type::scalar(ir::DType::i1), {{"pred", std::string("ne")}});
}

ir::ValueId Lowering::owns_element(int64_t elements) {
  return emit(ir::OpKind::Cmp, {thread_index_, const_int(elements)},
              ir::Type::scalar(ir::DType::i1), {{"pred", std::string("lt")}});
}

std::vector<ir::ValueId> Lowering::xor_exchange(ir::ValueId buffer, const ir::ThreadLayout& layout,
                                                ir::DType dtype,
                                                const std::vector<ir::ValueId>& indices,
                                                const std::vector<ir::ValueId>& slots,
                                                int64_t mask) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const ir::Type scalar = ir::Type::scalar(dtype);
  const ir::Type ptr = metal.type(buffer);
  const ir::ValueId writer =
      layout.thread_count() < threads ? owns_element(layout.thread_count()) : ir::kNoValue;
  for (size_t r = 0; r < slots.size(); ++r) {
    std::vector<ir::ValueId> operands = {emit(ir::OpKind::PtrAdd, {buffer, indices[r]}, ptr),
                                         slots[r]};
    if (writer != ir::kNoValue) operands.push_back(writer);
    emit_void(ir::OpKind::Store, operands);
  }
  threadgroup_barrier();
  const ir::ValueId nothing = writer == ir::kNoValue ? ir::kNoValue
                              : ir::is_float(dtype)  ? const_float(0, dtype)
                                                     : const_int(0, dtype);
  std::vector<ir::ValueId> partner;
  for (size_t r = 0; r < slots.size(); ++r) {
    const ir::ValueId at = emit(ir::OpKind::Xor, {indices[r], const_int(mask)}, i32);
    std::vector<ir::ValueId> operands = {emit(ir::OpKind::PtrAdd, {buffer, at}, ptr)};
    if (writer != ir::kNoValue) operands.insert(operands.end(), {writer, nothing});
    partner.push_back(emit(ir::OpKind::Load, operands, scalar));
  }
  threadgroup_barrier();
  return partner;
}

ir::ValueId Lowering::emit(ir::OpKind kind, std::vector<ir::ValueId> operands, ir::Type type,
                           ir::Attrs attrs) {
  return builder.create1(kind, std::move(operands), std::move(type), std::move(attrs));
}

void Lowering::emit_void(ir::OpKind kind, std::vector<ir::ValueId> operands, ir::Attrs attrs) {
  builder.create(kind, std::move(operands), {}, std::move(attrs));
}

ir::ValueId Lowering::const_int(int64_t value, ir::DType dtype) {
  return emit(ir::OpKind::Constant, {}, ir::Type::scalar(dtype), {{"value", value}});
}

ir::ValueId Lowering::const_float(double value, ir::DType dtype) {
  return emit(ir::OpKind::Constant, {}, ir::Type::scalar(dtype), {{"value", value}});
}

void Lowering::threadgroup_barrier() {
  emit_void(ir::OpKind::Barrier, {},
            {{"scope", std::string("threadgroup")}, {"mem", std::string("threadgroup")}});
}

ir::ValueId Lowering::scratch(const std::string& purpose, const std::string& kind, ir::DType dtype,
                              int64_t elements, int64_t alignment) {
  const int64_t offset = kind == "private_reduction"
                             ? allocator.allocate_reduction_slot(purpose, dtype, elements)
                             : allocator.allocate_scratch(purpose, dtype, elements, alignment);
  return emit(ir::OpKind::ThreadgroupBuffer, {},
              ir::Type::ptr(dtype, ir::AddressSpace::Threadgroup),
              {{"offset", offset}, {"size", elements}, {"scratch", kind}});
}

void Lowering::not_supported(const ir::Op& op, const std::string& why) const {
  throw NotSupported(std::string(ir::op_name(op.kind)) + ": " + why, op.loc);
}

void Lowering::user_error(const ir::Op& op, const std::string& rule) const {
  throw UserError(std::string(ir::op_name(op.kind)) + ": " + rule, op.loc);
}

}  // namespace metile::lower
