#include "metile/check_offset_ranges.h"

#include <algorithm>
#include <set>
#include <vector>

#include "metile/ir/printer.h"
#include "metile/support/errors.h"

namespace metile {

namespace {

using ir::OpKind;

// [lo, hi] of every value a lane may hold; `wrapped`: an exact result left int64_t.
struct Interval {
  int64_t lo = 0, hi = 0;
  bool wrapped = false;
};

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

class RangeCheck {
 public:
  RangeCheck(const ir::Kernel& k, std::array<int64_t, 3> grid, int threads,
             const std::map<ir::ValueId, int64_t>& scalars)
      : k_(k), grid_(grid), threads_(threads) {
    for (const auto& [v, x] : scalars) known_[v] = {x, x};
  }

  void run(const std::string& launch) {
    ir::walk(k_.body, [&](const ir::Op& op) { visit(op); });
    for (const Finding& f : findings_)
      if (feeds_address(f.value)) {
        const ir::Type& t = k_.type(f.value);
        const ir::IntegerRange r = ir::integer_range(t.dtype);
        throw UserError(
            launch + ": the offset `" + f.text + "`" +
            (f.loc.known() ? " (" + f.loc.str() + ")" : "") +
            (f.range.wrapped
                 ? " leaves int64"
                 : " reaches " + std::to_string(f.range.lo) + ".." + std::to_string(f.range.hi)) +
            ", beyond " + std::string(ir::dtype_name(t.dtype)) + " (" + std::to_string(r.min) +
            ".." + std::to_string(r.max) +
            "), so the address would wrap; launch a smaller grid or compute the offset in i64");
      }
  }

 private:
  struct Finding {
    ir::ValueId value;
    std::string text;
    SourceLocation loc;
    Interval range;
  };

  const Interval* get(ir::ValueId v) const {
    auto it = known_.find(v);
    return it == known_.end() ? nullptr : &it->second;
  }

  void set(const ir::Op& op, Interval i) { known_[op.results[0]] = i; }

  void arithmetic(const ir::Op& op) {
    const Interval *a = get(op.operands[0]), *b = get(op.operands[1]);
    if (!a || !b || !ir::is_integer(k_.type(op.results[0]).dtype)) return;
    const Interval r = combine(op.kind, *a, *b);
    const ir::IntegerRange dtype = ir::integer_range(k_.type(op.results[0]).dtype);
    if (r.wrapped || !dtype.contains(r.lo) || !dtype.contains(r.hi)) {
      findings_.push_back({op.results[0], expression(op.results[0], 3), op.loc, r});
      return;  // what follows a wrapped value is not claimed
    }
    set(op, r);
  }

  void visit(const ir::Op& op) {
    for (ir::ValueId v : op.results) def_[v] = &op;
    switch (op.kind) {
      case OpKind::Constant:
        if (const int64_t* i = std::get_if<int64_t>(&op.attrs.at("value"))) set(op, {*i, *i});
        return;
      case OpKind::ProgramId:
        set(op, {0, grid_[op.int_attr("axis")] - 1});
        return;
      case OpKind::NumPrograms:
        set(op, {grid_[op.int_attr("axis")], grid_[op.int_attr("axis")]});
        return;
      case OpKind::ThreadId:
        set(op, {0, threads_ - 1});
        return;
      case OpKind::Arange:
        set(op, {op.int_attr("start"), op.int_attr("end") - 1});
        return;
      // They move or copy values without changing any: the same interval.
      case OpKind::Splat:
      case OpKind::ExpandDims:
      case OpKind::Broadcast:
      case OpKind::Reshape:
      case OpKind::Trans:
      case OpKind::ConvertLayout:
        if (const Interval* i = get(op.operands[0])) set(op, *i);
        return;
      case OpKind::Cast:
        if (const Interval* i = get(op.operands[0]);
            i && ir::is_integer(k_.type(op.results[0]).dtype) &&
            ir::integer_range(k_.type(op.results[0]).dtype).contains(i->lo) &&
            ir::integer_range(k_.type(op.results[0]).dtype).contains(i->hi))
          set(op, *i);
        return;
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
        return arithmetic(op);
      // The rest are not followed: their results are not claimed (loaded data, loop-carried
      // values, bit tricks, reductions), and a wrap found before them is still reported
      // where it feeds an address.
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
      case OpKind::ReduceAxis:
      case OpKind::Scan:
      case OpKind::PackedLoad:
      case OpKind::PackedStore:
      case OpKind::Extract:
      case OpKind::IsAligned:
      case OpKind::Rsqrt:
      case OpKind::Tanh:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::PtrAdd:
      case OpKind::Load:
      case OpKind::Store:
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
      case OpKind::Yield:
        return;
    }
  }

  // v as the user wrote it, as far as `depth` ops back: "program_id(0) * 256".
  std::string expression(ir::ValueId v, int depth) const {
    for (const ir::Param& p : k_.params)
      if (p.value == v) return p.name;
    auto it = def_.find(v);
    if (it == def_.end() || depth == 0) return "...";
    const ir::Op& op = *it->second;
    const OpKind k = op.kind;
    if (k == OpKind::Constant) return ir::print_attr(op.attrs.at("value"));
    if (k == OpKind::ProgramId || k == OpKind::NumPrograms || k == OpKind::ThreadId)
      return std::string(ir::op_name(k)) + "(" + std::to_string(op.int_attr("axis")) + ")";
    if (k == OpKind::Arange)
      return "arange(" + std::to_string(op.int_attr("start")) + ", " +
             std::to_string(op.int_attr("end")) + ")";
    if (k == OpKind::Splat || k == OpKind::ExpandDims || k == OpKind::Broadcast ||
        k == OpKind::Cast)
      return expression(op.operands[0], depth);
    if (k != OpKind::Add && k != OpKind::Sub && k != OpKind::Mul)
      return std::string(ir::op_name(k)) + "(...)";  // not followed by the range check either
    auto operand = [&](int i) {
      std::string e = expression(op.operands[i], depth - 1);
      return k == OpKind::Mul && e.find(' ') != std::string::npos ? "(" + e + ")" : e;
    };
    return operand(0) + (k == OpKind::Add ? " + " : k == OpKind::Sub ? " - " : " * ") + operand(1);
  }

  // Whether v reaches a ptr_add offset, through integer ops and casts.
  bool feeds_address(ir::ValueId v) {
    if (address_operands_.empty()) collect_address_operands();
    return address_operands_.count(v) != 0;
  }

  void collect_address_operands() {
    std::vector<ir::ValueId> work;
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::PtrAdd) work.push_back(op.operands[1]);
    });
    while (!work.empty()) {
      const ir::ValueId v = work.back();
      work.pop_back();
      if (!address_operands_.insert(v).second) continue;
      auto it = def_.find(v);
      if (it == def_.end()) continue;
      const ir::Op& op = *it->second;
      if (op.kind == OpKind::Load || op.kind == OpKind::For || op.kind == OpKind::If) continue;
      for (ir::ValueId operand : op.operands)
        if (!k_.type(operand).pointer) work.push_back(operand);
    }
    address_operands_.insert(ir::kNoValue);  // collected, even when there is no address
  }

  const ir::Kernel& k_;
  std::array<int64_t, 3> grid_;
  int threads_;
  std::map<ir::ValueId, Interval> known_;
  std::map<ir::ValueId, const ir::Op*> def_;
  std::vector<Finding> findings_;
  std::set<ir::ValueId> address_operands_;
};

std::string grid_str(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
         ")";
}

}  // namespace

void check_offset_ranges(const ir::Kernel& tile, std::array<int64_t, 3> grid,
                         int threads_per_threadgroup,
                         const std::map<ir::ValueId, int64_t>& scalars) {
  RangeCheck(tile, grid, threads_per_threadgroup, scalars)
      .run("launch of " + tile.name + " with grid " + grid_str(grid));
}

}  // namespace metile
