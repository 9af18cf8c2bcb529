#include "metile/lower/lowering_context.h"

#include <algorithm>

#include "metile/ir/printer.h"
#include "metile/lower/uniformity.h"

namespace metile::lower {

Lowering::Lowering(const ir::Kernel& tile_kernel, const ThreadPlan& plan,
                   const target::Target& target_desc, int64_t user_shared_bytes)
    : tile(tile_kernel),
      target(target_desc),
      threads(plan.threads_per_threadgroup),
      builder(metal),
      allocator(user_shared_bytes),
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
    ir::ValueId v = builder.add_param(p.name, t, p.access);
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
  if (t.is_tile()) {
    METILE_ASSERT(static_cast<int64_t>(lowered.slots.size()) == slot_count(t),
                  "tile " + name(v) + " lowered to the wrong number of slots");
    lowered.tile = true;
    value_layouts.push_back(
        name(v) + ": " + layout(t).str() +
        (has_idle_threads(t) ? ", threads >= " + std::to_string(t.num_elements()) + " own nothing"
                             : ""));
  }
  if (!t.is_tile()) lowered.uniform = uniform_[v];
  values_[v] = std::move(lowered);
  bound_[v] = true;
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
  return ir::ThreadLayout::identity(t.num_elements(), slot_count(t));
}

int64_t Lowering::slot_count(const ir::Type& t) const {
  return std::max<int64_t>(1, t.num_elements() / threads);
}

bool Lowering::has_idle_threads(const ir::Type& t) const {
  return t.num_elements() < threads;
}

ir::ValueId Lowering::logical_index(int64_t slot) {
  if (slot == 0) return thread_index_;
  return emit(ir::OpKind::Add, {thread_index_, const_int(slot * threads)},
              ir::Type::scalar(ir::DType::i32));
}

ir::ValueId Lowering::owns_element(int64_t elements) {
  return emit(ir::OpKind::Cmp, {thread_index_, const_int(elements)},
              ir::Type::scalar(ir::DType::i1), {{"pred", std::string("lt")}});
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

ir::ValueId Lowering::scratch(const std::string& purpose, ir::DType dtype, int64_t elements) {
  const int64_t offset = allocator.allocate_scratch(purpose, dtype, elements);
  return emit(ir::OpKind::ThreadgroupBuffer, {},
              ir::Type::ptr(dtype, ir::AddressSpace::Threadgroup),
              {{"offset", offset}, {"size", elements}});
}

void Lowering::not_supported(const ir::Op& op, const std::string& why) const {
  throw NotSupported(std::string(ir::op_name(op.kind)) + ": " + why, op.loc);
}

void Lowering::user_error(const ir::Op& op, const std::string& rule) const {
  throw UserError(std::string(ir::op_name(op.kind)) + ": " + rule, op.loc);
}

}  // namespace metile::lower
