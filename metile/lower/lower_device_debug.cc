// device_assert and device_print: Metal IR assert and print ops, one per element a thread
// owns (a tile) or one per thread (a scalar), so each element is checked or printed once, by
// its owner, and each thread's lines come in program order. print's printf format is built
// here, as Triton's device_print writes it: "pid (x, y, z) thread t idx (i, j) prefix value".
#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

// The printf conversion of a value of dtype t (the emitter casts the value to match).
std::string conversion(ir::DType t, bool hex) {
  switch (t) {
    case ir::DType::f16:
    case ir::DType::bf16:
    case ir::DType::f32:
    case ir::DType::f64:
    case ir::DType::f8e4m3:  // printed as the value (the emitter converts it to float)
    case ir::DType::f8e5m2:
      return "%f";
    case ir::DType::i64:
      return hex ? "0x%016llx" : "%lli";
    case ir::DType::u32:
      return hex ? "0x%08x" : "%u";
    case ir::DType::u8:
      return hex ? "0x%02x" : "%u";
    case ir::DType::u16:
      return hex ? "0x%04x" : "%u";
    case ir::DType::i16:
      return hex ? "0x%04hx" : "%i";
    case ir::DType::i8:
      return hex ? "0x%02hhx" : "%i";
    case ir::DType::i1:
    case ir::DType::i32:
      return hex ? "0x%08x" : "%i";
  }
  return "%i";
}

std::string escape_percent(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// Whether the calling thread holds slot 0 of a tile of type t: threads past its elements
// hold copies that must not be checked or printed twice.
ir::ValueId active_for(Lowering& l, const ir::Type& t) {
  if (t.is_tile() && l.has_idle_threads(t)) return l.owns_element(t.num_elements());
  return l.const_int(1, ir::DType::i1);
}

}  // namespace

void lower_device_assert(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.operands[0]);
  const ir::ValueId active = active_for(l, t);
  for (ir::ValueId slot : l.get(op.operands[0]).slots)
    l.emit_void(ir::OpKind::AssertTrue, {active, slot, l.thread_index()},
                {{"message", op.str_attr("message")}});
}

void lower_device_print(Lowering& l, const ir::Op& op) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  std::vector<ir::ValueId> where;
  for (int64_t axis = 0; axis < 3; ++axis)
    where.push_back(l.emit(ir::OpKind::ThreadgroupIndex, {}, i32, {{"axis", axis}}));
  where.push_back(l.thread_index());
  const std::string pid = "pid (%i, %i, %i) thread %i ";
  std::string prefix = escape_percent(op.str_attr("prefix"));
  if (!op.operands.empty() && !prefix.empty() && prefix.back() != ' ') prefix += ' ';
  const bool hex = op.int_attr_or("hex", 0) != 0;
  if (op.operands.empty()) {
    std::vector<ir::ValueId> operands = {l.const_int(1, ir::DType::i1)};
    operands.insert(operands.end(), where.begin(), where.end());
    l.emit_void(ir::OpKind::Print, operands, {{"format", pid + prefix + "\n"}});
    return;
  }
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Type& t = l.tile_type(op.operands[k]);
    const std::string operand =
        op.operands.size() > 1 ? "(operand " + std::to_string(k) + ") " : std::string();
    const ir::ValueId active = active_for(l, t);
    const std::vector<ir::ValueId>& slots = l.get(op.operands[k]).slots;
    for (size_t r = 0; r < slots.size(); ++r) {
      std::vector<ir::ValueId> operands = {active};
      operands.insert(operands.end(), where.begin(), where.end());
      std::string index;
      if (t.is_tile()) {
        const ir::ValueId i = l.logical_index(l.layout_of(op.operands[k]), static_cast<int64_t>(r));
        if (t.shape.size() == 2) {
          const int column_bits = log2_exact(t.shape[1]);
          operands.push_back(l.emit(ir::OpKind::Shr, {i, l.const_int(column_bits)}, i32));
          operands.push_back(l.emit(ir::OpKind::And, {i, l.const_int(t.shape[1] - 1)}, i32));
          index = "idx (%i, %i) ";
        } else {
          operands.push_back(i);
          index = "idx (%i) ";
        }
      }
      operands.push_back(slots[r]);
      l.emit_void(ir::OpKind::Print, operands,
                  {{"format", pid + index + prefix + operand + conversion(t.dtype, hex) + "\n"}});
    }
  }
}

}  // namespace metile::lower
