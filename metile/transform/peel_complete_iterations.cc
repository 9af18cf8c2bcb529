#include "metile/transform/peel_complete_iterations.h"

#include <algorithm>
#include <map>
#include <optional>

#include "metile/ir/printer.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

constexpr int64_t kTile = 8;

bool is_device_tile(const Op& op) {
  return op.kind == OpKind::DeviceTileLoad || op.kind == OpKind::DeviceTileStore;
}

class Peeler {
 public:
  // Peeling moves ops, so the facts it reads are copied out first.
  explicit Peeler(ir::Kernel& k) : k_(k), names_(ir::printed_value_names(k)) {
    ir::walk(k_.body, [&](const Op& op) {
      if (op.kind == OpKind::Constant && ir::is_integer(k_.type(op.results[0]).dtype))
        constants_[op.results[0]] = op.int_attr("value");
      if (op.kind == OpKind::Add) sums_[op.results[0]] = {op.operands[0], op.operands[1]};
    });
  }

  bool run() { return block(k_.body); }

  std::vector<PeeledLoop> peeled;

 private:
  // Peels the eligible loops of a block outside every loop (and of its ifs' regions).
  bool block(ir::Block& b) {
    bool changed = false;
    std::vector<Op> ops;
    for (Op& op : b.ops) {
      if (op.kind == OpKind::If)
        for (ir::Block& region : op.regions) changed |= block(region);
      if (op.kind == OpKind::For) {
        if (const std::optional<int64_t> offset = complete_offset(op)) {
          record(op, *offset);
          peel(op, *offset, ops);
          changed = true;
          continue;
        }
      }
      ops.push_back(std::move(op));
    }
    b.ops = std::move(ops);
    return changed;
  }

  std::optional<int64_t> constant(ValueId v) const {
    const auto found = constants_.find(v);
    return found == constants_.end() ? std::nullopt : std::optional<int64_t>(found->second);
  }

  // c when `origin` is the index plus the constant c >= 0.
  std::optional<int64_t> index_offset(ValueId origin, ValueId index) const {
    if (origin == index) return 0;
    const auto found = sums_.find(origin);
    if (found == sums_.end()) return std::nullopt;
    const auto [a, b] = found->second;
    const std::optional<int64_t> c = a == index   ? constant(b)
                                     : b == index ? constant(a)
                                                  : std::nullopt;
    return c && *c >= 0 ? c : std::nullopt;
  }

  // Whether one dimension of a device tile is complete in the iterations that peel keeps:
  // origin index + c with the loop's end as the extent (raising `largest` to c), or a constant
  // tile inside a constant extent.
  bool complete_along(ValueId origin, ValueId extent, const Op& loop, int64_t& largest) const {
    const ValueId index = loop.regions[0].args[0];
    if (const std::optional<int64_t> c = index_offset(origin, index);
        c && extent == loop.operands[1]) {
      largest = std::max(largest, *c);
      return true;
    }
    const std::optional<int64_t> o = constant(origin), x = constant(extent);
    return o && x && *o >= 0 && *o + kTile <= *x;
  }

  // The largest constant offset C of the loop's device tiles from its index when the loop is
  // eligible (the header comment); none otherwise.
  std::optional<int64_t> complete_offset(const Op& loop) const {
    const std::optional<int64_t> start = constant(loop.operands[0]);
    const std::optional<int64_t> step = constant(loop.operands[2]);
    if (!start || *start != 0 || !step || *step <= 0 ||
        k_.type(loop.regions[0].args[0]) != Type::scalar(ir::DType::i32))
      return std::nullopt;
    int tiles = 0, nested = 0;
    ir::walk(loop.regions[0], [&](const Op& op) { nested += is_device_tile(op); });
    int64_t largest = -1;
    for (const Op& op : loop.regions[0].ops) {
      if (!is_device_tile(op)) continue;
      ++tiles;
      const size_t first = op.kind == OpKind::DeviceTileStore ? 1 : 0;
      const std::vector<ValueId>& a = op.operands;
      int64_t offset = 0;
      if (!complete_along(a[first + 1], a[first + 3], loop, offset) ||
          !complete_along(a[first + 2], a[first + 4], loop, offset))
        return std::nullopt;
      largest = std::max(largest, offset);
    }
    if (tiles == 0 || tiles != nested) return std::nullopt;
    return largest;
  }

  void record(const Op& loop, int64_t offset) {
    int tiles = 0;
    for (const Op& op : loop.regions[0].ops) tiles += is_device_tile(op);
    const std::string index = names_[static_cast<size_t>(loop.regions[0].args[0])];
    peeled.push_back({"for " + index + (loop.loc.known() ? " at " + loop.loc.str() : ""), tiles,
                      index + " + " + std::to_string(offset + kTile) +
                          " <= " + names_[static_cast<size_t>(loop.operands[1])]});
  }

  ValueId emit(std::vector<Op>& ops, OpKind kind, std::vector<ValueId> operands, Type type,
               ir::Attrs attrs, const SourceLocation& loc) {
    const ValueId r = k_.new_value(type);
    ops.push_back(Op{kind, std::move(operands), {r}, std::move(attrs), {}, loc});
    return r;
  }

  ValueId constant_i32(std::vector<Op>& ops, int64_t value, const SourceLocation& loc) {
    return emit(ops, OpKind::Constant, {}, Type::scalar(ir::DType::i32), {{"value", value}}, loc);
  }

  // The loop body with fresh values, its device tiles marked complete.
  ir::Block clone(const ir::Block& b, std::map<ValueId, ValueId>& fresh) {
    ir::Block copy;
    for (ValueId a : b.args) copy.args.push_back(renamed(a, fresh));
    for (const Op& op : b.ops) {
      Op c{op.kind, {}, {}, op.attrs, {}, op.loc};
      for (ValueId v : op.operands) {
        const auto found = fresh.find(v);
        c.operands.push_back(found == fresh.end() ? v : found->second);
      }
      for (ValueId r : op.results) c.results.push_back(renamed(r, fresh));
      for (const ir::Block& region : op.regions) c.regions.push_back(clone(region, fresh));
      if (is_device_tile(c)) c.attrs["complete"] = int64_t{1};
      copy.ops.push_back(std::move(c));
    }
    return copy;
  }

  ValueId renamed(ValueId v, std::map<ValueId, ValueId>& fresh) {
    const Type type = k_.type(v);
    const std::string hint =
        k_.value_names.size() > static_cast<size_t>(v) ? k_.value_names[v] : "";
    return fresh[v] = k_.new_value(type, hint);
  }

  // Appends the complete portion and then `loop`, made the remainder, to `ops`.
  void peel(Op& loop, int64_t offset, std::vector<Op>& ops) {
    const SourceLocation loc = loop.loc;
    const Type i32 = Type::scalar(ir::DType::i32);
    const ValueId end = loop.operands[1], step = loop.operands[2];
    // n = end >= C + 8 ? (end - C - 8) // S + 1 : 0, never overflowing: end - C - 8 >= 0.
    const ValueId reach = constant_i32(ops, offset + kTile, loc);
    const ValueId enough = emit(ops, OpKind::Cmp, {end, reach}, Type::scalar(ir::DType::i1),
                                {{"pred", std::string("ge")}}, loc);
    const ValueId room = emit(ops, OpKind::Sub, {end, reach}, i32, {}, loc);
    const ValueId steps = emit(ops, OpKind::FloorDiv, {room, step}, i32, {}, loc);
    const ValueId count = emit(ops, OpKind::Add, {steps, constant_i32(ops, 1, loc)}, i32, {}, loc);
    const ValueId complete =
        emit(ops, OpKind::Select, {enough, count, constant_i32(ops, 0, loc)}, i32, {}, loc);
    const ValueId split = emit(ops, OpKind::Mul, {complete, step}, i32, {}, loc);

    std::map<ValueId, ValueId> fresh;
    Op first{OpKind::For, loop.operands, {}, loop.attrs, {}, loc};
    first.operands[1] = split;
    for (ValueId r : loop.results) first.results.push_back(renamed(r, fresh));
    first.regions.push_back(clone(loop.regions[0], fresh));
    loop.operands[0] = split;
    for (size_t i = 0; i < first.results.size(); ++i) loop.operands[3 + i] = first.results[i];
    ops.push_back(std::move(first));
    ops.push_back(std::move(loop));
  }

  ir::Kernel& k_;
  const std::vector<std::string> names_;  // the input's, as its dump prints them
  std::map<ValueId, int64_t> constants_;
  std::map<ValueId, std::pair<ValueId, ValueId>> sums_;
};

}  // namespace

Peeling peel_complete_iterations(ir::Kernel k) {
  Peeler peeler(k);
  const bool changed = peeler.run();
  std::vector<PeeledLoop> loops = std::move(peeler.peeled);
  return {{std::move(k), changed}, std::move(loops)};
}

}  // namespace metile::transform
