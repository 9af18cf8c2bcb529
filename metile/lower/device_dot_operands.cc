#include "metile/lower/device_dot_operands.h"

#include <algorithm>
#include <optional>

#include "metile/lower/affine_tile.h"
#include "metile/lower/rematerialise.h"
#include "metile/lower/threadgroup_allocator.h"

namespace metile::lower {

namespace {

using ir::OpKind;
using ir::ValueId;

constexpr int64_t kTile = 8;
constexpr int64_t kTileElements = kTile * kTile;

const ir::Type kI1 = ir::Type::scalar(ir::DType::i1);
const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

bool ordering(const std::string& pred) {
  return pred == "lt" || pred == "le" || pred == "gt" || pred == "ge";
}

std::string why_unfit(const Affine& affine, const ir::Kernel& k, const ir::Op& dot, int operand) {
  const ValueId v = dot.operands[static_cast<size_t>(operand)];
  const std::string name = std::string(operand ? "b" : "a") + " (" + k.type(v).str() + ")";
  const ir::Type& t = k.type(v);
  if (t.dtype != ir::DType::f16 && t.dtype != ir::DType::bf16 && t.dtype != ir::DType::f32)
    return "operand " + name + " is not f16, bf16 or f32";
  const ir::Op* load = affine.definer(v);
  if (!load || load->kind != OpKind::Load)
    return "operand " + name + " is not a tile load (it is defined by " +
           (load ? std::string(ir::op_name(load->kind)) : std::string("no op")) + ")";
  const ir::Type& pointer = k.type(load->operands[0]);
  if (!pointer.is_tile() || pointer.space != ir::AddressSpace::Device)
    return "operand " + name + " is not loaded from device memory";
  const std::optional<Coefficients> address = affine.of(load->operands[0]);
  if (!address)
    return "the address of operand " + name +
           " is not affine in the tile's coordinates (uniform bases, arange, splat, "
           "broadcast, add, sub and mul by uniform factors)";
  if ((*address)[1] != 1 && (*address)[0] != 1)
    return "the address of operand " + name +
           " does not step by one element along its rows or its columns";
  if (load->operands.size() > 1) {
    std::vector<ValueId> atoms;
    if (!affine.conjuncts(load->operands[1], atoms))
      return "the mask of operand " + name +
             " is not a conjunction of comparisons of affine values with constant steps";
    for (ValueId atom : atoms) {
      const ir::Op* cmp = affine.comparison(atom);
      if (cmp && !ordering(cmp->str_attr("pred")))
        return "the mask of operand " + name + " compares with '" + cmp->str_attr("pred") +
               "' (only lt, le, gt and ge bound a block by its corners)";
    }
  }
  if (load->operands.size() > 2) {
    const std::optional<Coefficients> other = affine.of(load->operands[2]);
    if (!other || !all_zero(*other))
      return "the fill value of operand " + name + " is not one uniform scalar";
  }
  return "";
}

bool has_mask(const std::map<ValueId, const ir::Op*>& definers, const ir::Op& dot) {
  for (int operand : {0, 1})
    if (definers.at(dot.operands[static_cast<size_t>(operand)])->operands.size() > 1) return true;
  return false;
}

ValueId add(Lowering& l, ValueId a, ValueId b) {
  return l.emit(OpKind::Add, {a, b}, kI32);
}

ValueId add(Lowering& l, ValueId a, int64_t b) {
  return b == 0 ? a : add(l, a, l.const_int(b));
}

void simdgroup_barrier(Lowering& l) {
  l.emit_void(OpKind::Barrier, {},
              {{"scope", std::string("simdgroup")}, {"mem", std::string("threadgroup")}});
}

}  // namespace

std::string device_operand_unfit(const ir::Kernel& tile, const ir::Op& dot, int operand) {
  const std::map<ValueId, const ir::Op*> definers = definers_of(tile);
  return why_unfit(Affine(definers, tile), tile, dot, operand);
}

int64_t device_operand_tail_bytes(const ir::Kernel& tile, const schedule::SchedulePlan& plan,
                                  int64_t simdgroups) {
  if (plan.staging != schedule::Staging::Device || plan.backend != schedule::Backend::Simdgroup)
    return 0;
  const std::map<ValueId, const ir::Op*> definers = definers_of(tile);
  int64_t bytes = 0;
  ir::walk(tile.body, [&](const ir::Op& op) {
    if (op.kind != OpKind::Dot || !tile.type(op.operands[0]).is_tile()) return;
    const Affine affine(definers, tile);
    if (!why_unfit(affine, tile, op, 0).empty() || !why_unfit(affine, tile, op, 1).empty() ||
        !has_mask(definers, op))
      return;
    bytes += ThreadgroupAllocator::round_up(simdgroups * kTileElements *
                                            ir::dtype_bytes(tile.type(op.operands[0]).dtype));
  });
  return bytes;
}

std::set<const ir::Op*> device_operand_only_ops(const ir::Kernel& tile,
                                                const schedule::SchedulePlan& plan) {
  std::set<const ir::Op*> only;
  if (plan.staging != schedule::Staging::Device || plan.backend != schedule::Backend::Simdgroup)
    return only;
  const std::map<ValueId, const ir::Op*> definers = definers_of(tile);
  const Affine affine(definers, tile);
  std::map<ValueId, std::vector<const ir::Op*>> users;
  std::vector<const ir::Op*> dots;
  ir::walk(tile.body, [&](const ir::Op& op) {
    for (ValueId v : op.operands) users[v].push_back(&op);
    if (op.kind == OpKind::Dot && tile.type(op.operands[0]).is_tile() &&
        why_unfit(affine, tile, op, 0).empty() && why_unfit(affine, tile, op, 1).empty())
      dots.push_back(&op);
  });
  // Candidates: the operand loads and the tile ops of their definitions.
  const auto add_definition = [&](const auto& self, ValueId v) -> void {
    if (!tile.type(v).is_tile()) return;
    const ir::Op* op = definers.at(v);
    if (!only.insert(op).second) return;
    for (ValueId o : op->operands) self(self, o);
  };
  for (const ir::Op* dot : dots)
    for (size_t operand : {0, 1}) add_definition(add_definition, dot->operands[operand]);
  // Keep only those whose every user is a candidate or reads them as a device-staged operand.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = only.begin(); it != only.end();) {
      bool kept = true;
      for (ValueId r : (*it)->results)
        for (const ir::Op* user : users[r]) {
          const bool operand =
              std::find(dots.begin(), dots.end(), user) != dots.end() && user->operands[2] != r;
          kept = kept && (only.count(user) || operand);
        }
      if (kept) {
        ++it;
      } else {
        it = only.erase(it);
        changed = true;
      }
    }
  }
  return only;
}

DeviceDotOperands::DeviceDotOperands(Lowering& l, const ir::Op& dot)
    : l_(l), dot_(dot), definers_(l.definers) {
  const Affine affine(definers_, l.tile);
  const Rematerialise remat(l, definers_);
  for (int operand : {0, 1}) {
    if (const std::string why = why_unfit(affine, l.tile, dot, operand); !why.empty())
      l.not_supported(dot,
                      "Schedule(staging='device') reads each operand fragment straight "
                      "from device memory, but " +
                          why);
    const ir::Op& load = *definers_.at(dot.operands[static_cast<size_t>(operand)]);
    Operand o;
    o.pointer = load.operands[0];
    if (load.operands.size() > 1) affine.conjuncts(load.operands[1], o.atoms);
    if (load.operands.size() > 2) o.other = load.operands[2];
    for (size_t i = 0; i < load.operands.size(); ++i)
      if (!remat.possible(load.operands[i]))
        l.not_supported(dot,
                        "Schedule(staging='device') reads each operand fragment straight "
                        "from device memory, but the address, mask or fill value of " +
                            std::string(operand ? "b" : "a") +
                            " reads a scalar that is not uniform in the SIMD group");
    const Coefficients address = *affine.of(o.pointer);
    o.transpose = address[1] != 1;
    o.dtype = l.tile_type(dot.operands[static_cast<size_t>(operand)]).dtype;
    o.stride = coefficient(o.pointer, o.transpose ? 1 : 0);
    operands_.push_back(std::move(o));
  }
}

std::vector<ValueId> DeviceDotOperands::fragments(int operand, ValueId row, ValueId column,
                                                  int64_t rows, int64_t columns) {
  const Operand& o = operands_[static_cast<size_t>(operand)];
  const auto each = [&](auto&& load) {
    std::vector<ValueId> result;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j)
        result.push_back(load(add(l_, row, kTile * i), add(l_, column, kTile * j)));
    return result;
  };
  const auto direct_all = [&] {
    return each([&](ValueId r, ValueId c) { return direct(o, r, c); });
  };
  if (o.atoms.empty()) return direct_all();
  tail_scratch(o.dtype);  // before the if: both operands' tails use it
  l_.builder.begin_if(complete(o, row, column, rows * kTile, columns * kTile));
  l_.builder.begin_else(direct_all());
  return l_.builder.end_if(each([&](ValueId r, ValueId c) { return through_tail(o, r, c); }));
}

// i1, uniform in the SIMD group: the mask holds on the whole box [row, row + rows) x
// [column, column + columns). Each conjunct compares affine values, so it holds on the box
// where it holds at the corner that moves x - y furthest against it.
ValueId DeviceDotOperands::complete(const Operand& o, ValueId row, ValueId column, int64_t rows,
                                    int64_t columns) {
  const Affine affine(definers_, l_.tile);
  Rematerialise remat(l_, definers_);
  ValueId all = ir::kNoValue;
  for (ValueId atom : o.atoms) {
    const ir::Op* cmp = affine.comparison(atom);
    const Coefficients d = *affine.difference(atom);
    const bool upper = cmp && (cmp->str_attr("pred") == "lt" || cmp->str_attr("pred") == "le");
    const auto corner = [&](ValueId origin, std::optional<int64_t> step, int64_t extent) {
      const bool far = upper ? *step > 0 : *step < 0;
      return far ? add(l_, origin, extent - 1) : origin;
    };
    const ValueId holds = remat.at(atom, {corner(row, d[0], rows), corner(column, d[1], columns)});
    all = all == ir::kNoValue ? holds : l_.emit(OpKind::And, {all, holds}, kI1);
  }
  return all;
}

// The complete fragment at (row, column): one matrix_load of device memory.
ValueId DeviceDotOperands::direct(const Operand& o, ValueId row, ValueId column) {
  Rematerialise remat(l_, definers_);
  ir::Attrs attrs;
  if (o.transpose) attrs["transpose"] = int64_t{1};
  return l_.emit(OpKind::MatrixLoad,
                 {remat.at(o.pointer, {row, column}), l_.const_int(0), o.stride},
                 ir::Type::matrix(o.dtype), attrs);
}

// Any other fragment: each lane loads its 64 / simd_width elements with the load's mask (the
// fill value where it fails) into the SIMD group's tail scratch; SIMD-group barriers publish
// the copies to the matrix_load and finish it before the next fragment's copies.
ValueId DeviceDotOperands::through_tail(const Operand& o, ValueId row, ValueId column) {
  Rematerialise remat(l_, definers_);
  const ValueId own = tail_scratch(o.dtype);
  const ValueId lane = l_.emit(OpKind::SimdLane, {}, kI32);
  const ValueId lane_row = l_.emit(OpKind::Div, {lane, l_.const_int(kTile)}, kI32);
  const ValueId lane_column = l_.emit(OpKind::Rem, {lane, l_.const_int(kTile)}, kI32);
  const ValueId element_column = add(l_, column, lane_column);
  const ir::Type element = ir::Type::scalar(o.dtype);
  for (int64_t first = 0; first < kTileElements; first += l_.target.simd_width) {
    const ValueId tile_row = add(l_, lane_row, first / kTile);
    const std::vector<ValueId> at = {add(l_, row, tile_row), element_column};
    ValueId valid = ir::kNoValue;
    for (ValueId atom : o.atoms) {
      const ValueId holds = remat.at(atom, at);
      valid = valid == ir::kNoValue ? holds : l_.emit(OpKind::And, {valid, holds}, kI1);
    }
    const ValueId other =
        o.other == ir::kNoValue ? l_.const_float(0.0, o.dtype) : remat.at(o.other, at);
    const ValueId value = l_.emit(OpKind::Load, {remat.at(o.pointer, at), valid, other}, element);
    const ValueId place =
        add(l_, l_.emit(OpKind::Mul, {tile_row, l_.const_int(kTile)}, kI32), lane_column);
    l_.emit_void(OpKind::Store, {l_.emit(OpKind::PtrAdd, {own, place}, l_.metal.type(own)), value});
  }
  simdgroup_barrier(l_);
  const ValueId fragment = l_.emit(OpKind::MatrixLoad, {own, l_.const_int(0), l_.const_int(kTile)},
                                   ir::Type::matrix(o.dtype));
  simdgroup_barrier(l_);
  return fragment;
}

// The Metal IR value of v's coefficient along `dim` (Affine proved v affine).
ValueId DeviceDotOperands::coefficient(ValueId v, size_t dim) {
  const Affine affine(definers_, l_.tile);
  const std::optional<Coefficients> c = affine.of(v);
  if (c->empty()) return l_.const_int(0);
  if ((*c)[dim]) return l_.const_int(*(*c)[dim]);
  const ir::Op& op = *definers_.at(v);
  if (op.kind == OpKind::ExpandDims) {
    const size_t axis = static_cast<size_t>(op.int_attr("axis"));
    return coefficient(op.operands[0], dim > axis ? dim - 1 : dim);
  }
  if (op.kind == OpKind::Broadcast) return coefficient(op.operands[0], dim);
  if (op.kind == OpKind::Add || op.kind == OpKind::Sub || op.kind == OpKind::PtrAdd)
    return l_.emit(op.kind == OpKind::Sub ? OpKind::Sub : OpKind::Add,
                   {coefficient(op.operands[0], dim), coefficient(op.operands[1], dim)}, kI32);
  if (op.kind != OpKind::Mul)
    throw InternalError("device_dot_operands: no runtime coefficient for " +
                        std::string(ir::op_name(op.kind)));
  // One factor is uniform over the tile: its value at any element scales the other's step.
  const std::optional<Coefficients> a = affine.of(op.operands[0]);
  const size_t uniform = a->empty() || all_zero(*a) ? 0 : 1;
  const ValueId factor = op.operands[uniform];
  Rematerialise remat(l_, definers_);
  const ir::Type& t = l_.tile_type(factor);
  const std::vector<ValueId> origin(t.is_tile() ? t.shape.size() : 0, l_.const_int(0));
  return l_.emit(OpKind::Mul,
                 {coefficient(op.operands[1 - uniform], dim), remat.at(factor, origin)}, kI32);
}

// This SIMD group's 64 elements of the dot's tail scratch (device_operand_tail_bytes counted
// it up front), allocated before the first operand's if.
ValueId DeviceDotOperands::tail_scratch(ir::DType dtype) {
  if (tail_ != ir::kNoValue) return tail_;
  const int64_t elements = l_.threads / l_.target.simd_width * kTileElements;
  const std::string purpose =
      "dot operand tails (" + l_.name(dot_.results[0]) + ", 64 elements per SIMD group)";
  const int64_t offset = l_.allocator.allocate_private(purpose, dtype, elements);
  const ir::Type pointer = ir::Type::ptr(dtype, ir::AddressSpace::Threadgroup);
  const ValueId buffer =
      l_.emit(OpKind::ThreadgroupBuffer, {}, pointer,
              {{"offset", offset}, {"size", elements}, {"scratch", std::string("simdgroup")}});
  const ValueId group = l_.emit(OpKind::SimdGroup, {}, kI32);
  tail_ =
      l_.emit(OpKind::PtrAdd,
              {buffer, l_.emit(OpKind::Mul, {group, l_.const_int(kTileElements)}, kI32)}, pointer);
  return tail_;
}

}  // namespace metile::lower
