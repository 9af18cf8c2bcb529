#include "metile/check_offset_ranges.h"

#include <algorithm>
#include <vector>

#include "metile/ir/printer.h"
#include "metile/support/errors.h"

namespace metile {

namespace {

using ir::OpKind;

using Interval = OffsetRangeCheck::Interval;

Interval combine(OpKind kind, const Interval& a, const Interval& b) {
  if (a.wrapped || b.wrapped) return Interval{0, 0, true};
  int64_t corners[4];
  bool overflow = false;
  const int64_t as[2] = {a.lo, a.hi}, bs[2] = {b.lo, b.hi};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      int64_t& r = corners[2 * i + j];
      if (kind == OpKind::Add) overflow |= __builtin_add_overflow(as[i], bs[j], &r);
      if (kind == OpKind::Sub) overflow |= __builtin_sub_overflow(as[i], bs[1 - j], &r);
      if (kind == OpKind::Mul) overflow |= __builtin_mul_overflow(as[i], bs[j], &r);
    }
  if (overflow) return Interval{0, 0, true};
  return Interval{*std::min_element(corners, corners + 4), *std::max_element(corners, corners + 4)};
}

std::string grid_str(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
         ")";
}

}  // namespace

OffsetRangeCheck::OffsetRangeCheck(const ir::Kernel& tile) : k_(tile) {
  def_.assign(k_.types.size(), nullptr);
  ir::walk(k_.body, [&](const ir::Op& op) {
    for (ir::ValueId v : op.results) def_[v] = &op;
  });
  // Whether a value reaches a ptr_add offset, through integer ops and casts.
  std::vector<bool> feeds_address(k_.types.size(), false);
  std::vector<ir::ValueId> work;
  ir::walk(k_.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::PtrAdd) work.push_back(op.operands[1]);
  });
  while (!work.empty()) {
    const ir::ValueId v = work.back();
    work.pop_back();
    if (feeds_address[v]) continue;
    feeds_address[v] = true;
    const ir::Op* op = def_[v];
    if (!op || op->kind == OpKind::Load || op->kind == OpKind::For || op->kind == OpKind::If ||
        op->kind == OpKind::While)
      continue;
    for (ir::ValueId operand : op->operands)
      if (!k_.type(operand).pointer) work.push_back(operand);
  }
  // Only they can wrap an address, and they read only values that feed one too.
  ir::walk(k_.body, [&](const ir::Op& op) {
    if (op.results.size() == 1 && feeds_address[op.results[0]]) address_ops_.push_back(&op);
  });
}

void OffsetRangeCheck::check(std::array<int64_t, 3> grid, int threads_per_threadgroup,
                             const std::map<ir::ValueId, int64_t>& scalars) const {
  std::vector<std::optional<Interval>> known(k_.types.size());
  for (const auto& [v, x] : scalars) known[v] = Interval{x, x};
  for (const ir::Op* op : address_ops_)
    if (const std::optional<Interval> wrapped = visit(*op, grid, threads_per_threadgroup, known)) {
      const ir::ValueId value = op->results[0];
      const ir::IntegerRange r = ir::integer_range(k_.type(value).dtype);
      throw UserError(
          "launch of " + k_.name + " with grid " + grid_str(grid) + ": the offset `" +
          expression(value, 3) + "`" + (op->loc.known() ? " (" + op->loc.str() + ")" : "") +
          (wrapped->wrapped
               ? " leaves int64"
               : " reaches " + std::to_string(wrapped->lo) + ".." + std::to_string(wrapped->hi)) +
          ", beyond " + std::string(ir::dtype_name(k_.type(value).dtype)) + " (" +
          std::to_string(r.min) + ".." + std::to_string(r.max) +
          "), so the address would wrap; launch a smaller grid or compute the offset in i64");
    }
}

std::optional<Interval> OffsetRangeCheck::visit(const ir::Op& op, std::array<int64_t, 3> grid,
                                                int threads, Intervals& known) const {
  auto get = [&](ir::ValueId v) { return known[v] ? &*known[v] : nullptr; };
  auto set = [&](Interval i) { known[op.results[0]] = i; };
  switch (op.kind) {
    case OpKind::Constant:
      if (const int64_t* i = std::get_if<int64_t>(&op.attrs.at("value"))) set({*i, *i});
      return std::nullopt;
    case OpKind::ProgramId:
      set({0, grid[op.int_attr("axis")] - 1});
      return std::nullopt;
    case OpKind::NumPrograms:
      set({grid[op.int_attr("axis")], grid[op.int_attr("axis")]});
      return std::nullopt;
    case OpKind::ThreadId:
      set({0, threads - 1});
      return std::nullopt;
    case OpKind::Arange:
      set({op.int_attr("start"), op.int_attr("end") - 1});
      return std::nullopt;
    // They move or copy values without changing any: the same interval.
    case OpKind::Splat:
    case OpKind::ExpandDims:
    case OpKind::Broadcast:
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::XorPermute:
    case OpKind::ConvertLayout:
      if (const Interval* i = get(op.operands[0])) set(*i);
      return std::nullopt;
    case OpKind::Cast:
      if (const Interval* i = get(op.operands[0]);
          i && !k_.type(op.results[0]).pointer && ir::is_integer(k_.type(op.results[0]).dtype) &&
          ir::integer_range(k_.type(op.results[0]).dtype).contains(i->lo) &&
          ir::integer_range(k_.type(op.results[0]).dtype).contains(i->hi))
        set(*i);
      return std::nullopt;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul: {
      const Interval *a = get(op.operands[0]), *b = get(op.operands[1]);
      if (!a || !b || !ir::is_integer(k_.type(op.results[0]).dtype)) return std::nullopt;
      const Interval r = combine(op.kind, *a, *b);
      const ir::IntegerRange dtype = ir::integer_range(k_.type(op.results[0]).dtype);
      if (r.wrapped || !dtype.contains(r.lo) || !dtype.contains(r.hi)) return r;
      set(r);
      return std::nullopt;
    }
    // The rest are not followed: their results are not claimed (loaded data, loop-carried
    // values, bit tricks, reductions).
    case OpKind::ThreadIndex:
    case OpKind::ThreadgroupIndex:
    case OpKind::ThreadgroupCount:
    case OpKind::SimdLane:
    case OpKind::SimdGroup:
    case OpKind::Div:
    case OpKind::Rem:
    case OpKind::FloorDiv:
    case OpKind::Min:
    case OpKind::Max:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::Cmp:
    case OpKind::Select:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::InlineAsm:
    case OpKind::ReduceAxis:
    case OpKind::ReduceCombine:
    case OpKind::Scan:
    case OpKind::DeviceAssert:
    case OpKind::DevicePrint:
    case OpKind::AssertTrue:
    case OpKind::Print:
    case OpKind::Dot:
    case OpKind::PackedLoad:
    case OpKind::PackedStore:
    case OpKind::Extract:
    case OpKind::Pack:
    case OpKind::IsAligned:
    case OpKind::MatrixFill:
    case OpKind::MatrixLoad:
    case OpKind::MatrixStore:
    case OpKind::MatrixMma:
    case OpKind::DeviceTileLoad:
    case OpKind::DeviceTileStore:
    case OpKind::DescriptorMatmul:
    case OpKind::MppMatmul2d:
    case OpKind::MbarrierInit:
    case OpKind::MbarrierFence:
    case OpKind::MbarrierArrive:
    case OpKind::MbarrierArriveExpectTx:
    case OpKind::MbarrierWait:
    case OpKind::TmaLoad:
    case OpKind::WgmmaFence:
    case OpKind::WgmmaMma:
    case OpKind::WgmmaCommit:
    case OpKind::WgmmaWait:
    case OpKind::SetMaxNReg:
    case OpKind::AsyncCopy:
    case OpKind::AsyncCopyCommit:
    case OpKind::AsyncCopyWait:
    case OpKind::AsyncProxyFence:
    case OpKind::Rsqrt:
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::PtrAdd:
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas:
    case OpKind::MakeTensor:
    case OpKind::TensorLoad:
    case OpKind::TensorStore:
    case OpKind::SharedAlloc:
    case OpKind::ThreadgroupBuffer:
    case OpKind::Reduce:
    case OpKind::SimdShuffle:
    case OpKind::SimdShuffleXor:
    case OpKind::SimdShuffleDown:
    case OpKind::SimdBroadcast:
    case OpKind::SimdSum:
    case OpKind::SimdMax:
    case OpKind::SimdMin:
    case OpKind::Barrier:
    case OpKind::For:
    case OpKind::If:
    case OpKind::While:
    case OpKind::Yield:
      return std::nullopt;
  }
  return std::nullopt;
}

// v as the user wrote it, as far as `depth` ops back: "program_id(0) * 256".
std::string OffsetRangeCheck::expression(ir::ValueId v, int depth) const {
  for (const ir::Param& p : k_.params)
    if (p.value == v) return p.name;
  const ir::Op* def = def_[v];
  if (!def || depth == 0) return "...";
  const ir::Op& op = *def;
  const OpKind k = op.kind;
  if (k == OpKind::Constant) return ir::print_attr(op.attrs.at("value"));
  if (k == OpKind::ProgramId || k == OpKind::NumPrograms || k == OpKind::ThreadId)
    return std::string(ir::op_name(k)) + "(" + std::to_string(op.int_attr("axis")) + ")";
  if (k == OpKind::Arange)
    return "arange(" + std::to_string(op.int_attr("start")) + ", " +
           std::to_string(op.int_attr("end")) + ")";
  if (k == OpKind::Splat || k == OpKind::ExpandDims || k == OpKind::Broadcast || k == OpKind::Cast)
    return expression(op.operands[0], depth);
  if (k != OpKind::Add && k != OpKind::Sub && k != OpKind::Mul)
    return std::string(ir::op_name(k)) + "(...)";  // not followed by the range check either
  auto operand = [&](int i) {
    std::string e = expression(op.operands[i], depth - 1);
    return k == OpKind::Mul && e.find(' ') != std::string::npos ? "(" + e + ")" : e;
  };
  return operand(0) + (k == OpKind::Add ? " + " : k == OpKind::Sub ? " - " : " * ") + operand(1);
}

}  // namespace metile
