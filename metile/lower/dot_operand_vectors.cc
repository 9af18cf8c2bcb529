#include "metile/lower/dot_operand_vectors.h"

#include <algorithm>
#include <set>

#include "metile/lower/lowering_steps.h"
#include "metile/lower/rematerialise.h"

#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

const char* kWhy =
    "Schedule(vector_width=4) requires vectorized aligned operand interiors (4 consecutive "
    "elements per thread); arbitrary ragged shapes may reject it: ";

// Thread t owns logical [run t, run (t + 1)) (+ r * run T): the low log2(run) logical bits
// are register bits, the next ones the thread's, the rest the remaining register bits.
ir::ThreadLayout contiguous(int64_t size, int64_t threads, int64_t run) {
  const int n = log2_exact(size), thread_bits = log2_exact(threads), run_bits = log2_exact(run);
  std::vector<int> order(static_cast<size_t>(n));
  for (int b = 0; b < run_bits; ++b) order[static_cast<size_t>(b)] = thread_bits + b;
  for (int b = 0; b < thread_bits; ++b) order[static_cast<size_t>(b + run_bits)] = b;
  for (int b = thread_bits + run_bits; b < n; ++b) order[static_cast<size_t>(b)] = b;
  return ir::ThreadLayout(order, 0, size / threads);
}

}  // namespace

int64_t operand_run(const ir::Type& tile, int64_t threads, int64_t run) {
  return std::min({run, tile.num_elements() / threads, tile.shape[1]});
}

void plan_dot_operand_vectors(const ir::Kernel& tile, ThreadPlan& plan, int64_t run,
                              bool required) {
  const int64_t threads = plan.threads_per_threadgroup;
  std::vector<ir::ThreadLayout> chosen;
  ir::walk(tile.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Dot || !tile.type(op.operands[0]).is_tile()) return;
    for (int operand : {0, 1}) {
      const ir::Type& t = tile.type(op.operands[operand]);
      const int64_t size = t.num_elements();
      const std::string what = std::string(operand ? "b" : "a") + " tile " + t.str();
      std::string why;
      if (required && t.dtype != ir::DType::f16 && t.dtype != ir::DType::f32)
        why = ": grouped vector accesses move f16 or f32 elements";
      else if (plan.explicit_layouts)
        why = " has the layout the kernel gives it";
      else if (!is_power_of_two(size) || !is_power_of_two(threads) ||
               operand_run(t, threads, run) < (required ? run : 2))
        why = " cannot give each of " + std::to_string(threads) + " threads runs of " +
              std::to_string(run) + " consecutive row elements";
      else if (!required &&
               std::any_of(chosen.begin(), chosen.end(),
                           [&](const ir::ThreadLayout& l) { return l.size() == size; }))
        continue;  // the other operand's tile has this size: its layout serves both
      if (!why.empty()) {
        if (required) throw NotSupported(kWhy + what + why, op.loc);
        continue;
      }
      const auto same_size = [&](const ir::ThreadLayout& l) { return l.size() == size; };
      plan.layouts.erase(std::remove_if(plan.layouts.begin(), plan.layouts.end(), same_size),
                         plan.layouts.end());
      chosen.push_back(contiguous(size, threads, operand_run(t, threads, run)));
      plan.layouts.insert(plan.layouts.begin(), chosen.back());
    }
  });
  if (!chosen.empty()) plan.operand_vector_run = run;
}

bool for_each_run(Lowering& l, const ir::Op& op, const RunStart& start_run) {
  const schedule::SchedulePlan& s = l.schedule_plan;
  const ir::Type& t = l.tile_type(op.results[0]);
  if (l.plan.operand_vector_run == 0 || s.backend != schedule::Backend::Simdgroup || !t.is_tile() ||
      t.shape.size() != 2)
    return false;
  const int64_t run = operand_run(t, l.threads, l.plan.operand_vector_run);
  if (run < 2 || t.shape[1] % run) return false;
  // A dot operand, or a value a loop carries into one (prefetch_dot_operands.h).
  std::set<ir::ValueId> operands;
  ir::walk(l.tile.body, [&](const ir::Op& o) {
    if (o.kind == ir::OpKind::Dot) operands.insert({o.operands[0], o.operands[1]});
  });
  ir::walk(l.tile.body, [&](const ir::Op& o) {
    if (o.kind != ir::OpKind::For || o.regions[0].ops.empty()) return;
    const ir::Block& body = o.regions[0];
    for (size_t j = 1; j < body.args.size(); ++j)
      if (operands.count(body.args[j])) {
        operands.insert(body.ops.back().operands[j - 1]);
        operands.insert(o.operands[2 + j]);
      }
  });
  const bool operand = operands.count(op.results[0]) != 0;
  const ir::ThreadLayout layout = l.layout(t);
  if (!operand || layout.elements_per_thread() < run) return false;
  // Slot r holds logical index part + offset(r), where part has its low log2(run) bits clear
  // (the run-contiguous layout) and offset(r) = offset(r - r % run) + r % run: the slots of a
  // run share the row and take consecutive columns.
  const int column_bits = log2_exact(t.shape[1]);
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  for (int64_t r = 0; r < l.slot_count(t); r += run)
    for (int64_t d = 1; d < run; ++d)
      if (Lowering::slot_offset(layout, r + d) != Lowering::slot_offset(layout, r) + d)
        return false;
  const ir::ValueId part = l.thread_part(layout);
  for (int64_t r = 0; r < l.slot_count(t); r += run) {
    const int64_t base = Lowering::slot_offset(layout, r);
    const ir::ValueId start = l.emit(ir::OpKind::Add, {part, l.const_int(base)}, i32);
    const ir::ValueId row = l.emit(ir::OpKind::Shr, {start, l.const_int(column_bits)}, i32);
    const ir::ValueId column0 = l.emit(ir::OpKind::And, {start, l.const_int(t.shape[1] - 1)}, i32);
    start_run(row, column0, run);
  }
  return true;
}

bool for_each_run_element(Lowering& l, const ir::Op& op, const RunElement& element) {
  Rematerialise remat(l, l.definers);
  for (ir::ValueId v : op.operands)
    if (!remat.possible(v)) return false;
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  return for_each_run(l, op, [&](ir::ValueId row, ir::ValueId column0, int64_t run) {
    for (int64_t d = 0; d < run; ++d) {
      const ir::ValueId column =
          d == 0 ? column0 : l.emit(ir::OpKind::Add, {column0, l.const_int(d)}, i32);
      std::vector<ir::ValueId> operands;
      for (ir::ValueId v : op.operands) operands.push_back(remat.at(v, {row, column}));
      element(row, column0, d, operands);
    }
  });
}

bool lower_vectorized_operand_load(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  LoweredValue result;
  const bool done = for_each_run_element(
      l, op, [&](ir::ValueId, ir::ValueId, int64_t, std::vector<ir::ValueId> ops) {
        result.slots.push_back(
            l.emit(ir::OpKind::Load, std::move(ops), t.element(), op.only_attr("eviction")));
      });
  if (!done) return false;
  result.layout = l.layout(t);
  l.bind(op.results[0], std::move(result));
  return true;
}

void require_grouped_loads(const ir::Kernel& metal) {
  // `tail`: inside the else region of an if whose then region holds a packed_load.
  const auto check = [&](const auto& self, const ir::Block& block, bool tail) -> void {
    for (const ir::Op& op : block.ops) {
      if (op.kind == ir::OpKind::Load && !tail &&
          metal.type(op.operands[0]).space == ir::AddressSpace::Device)
        throw NotSupported(std::string(kWhy) + "the device load %" + std::to_string(op.results[0]) +
                               " could not be grouped (its four addresses are not proven "
                               "consecutive and aligned)",
                           op.loc);
      bool packed = false;
      if (op.kind == ir::OpKind::If)
        ir::walk(op.regions[0], [&](const ir::Op& inner) {
          packed = packed || inner.kind == ir::OpKind::PackedLoad;
        });
      for (size_t r = 0; r < op.regions.size(); ++r)
        self(self, op.regions[r], tail || (packed && r == 1));
    }
  };
  check(check, metal.body, false);
}

}  // namespace metile::lower
