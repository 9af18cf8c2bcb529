#include "metile/lower/rematerialise.h"

#include <set>

namespace metile::lower {

std::map<ir::ValueId, const ir::Op*> definers_of(const ir::Kernel& k) {
  std::map<ir::ValueId, const ir::Op*> definers;
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) definers[r] = &op;
  });
  return definers;
}

std::vector<const ir::Op*> block_slice(const ir::Block& block,
                                       const std::vector<ir::ValueId>& values) {
  std::set<ir::ValueId> needed(values.begin(), values.end());
  std::vector<const ir::Op*> slice;
  for (auto it = block.ops.rbegin(); it != block.ops.rend(); ++it) {
    bool produces = false;
    for (ir::ValueId r : it->results) produces = produces || needed.count(r);
    if (!produces) continue;
    slice.insert(slice.begin(), &*it);
    needed.insert(it->operands.begin(), it->operands.end());
  }
  return slice;
}

bool Rematerialise::possible(ir::ValueId v) const {
  const ir::Type& t = l_.tile_type(v);
  if (!t.is_tile()) return l_.get(v).uniform;
  const auto it = definers_.find(v);
  if (it == definers_.end()) return false;
  const ir::Op& op = *it->second;
  using K = ir::OpKind;
  const K kind = op.kind;
  if (kind == K::Arange) return !op.has_attr("layout");
  const bool recomputable = kind == K::Splat || kind == K::ExpandDims || kind == K::Broadcast ||
                            kind == K::Add || kind == K::Sub || kind == K::Mul || kind == K::And ||
                            kind == K::Or || kind == K::Cmp || kind == K::PtrAdd ||
                            kind == K::Rem || kind == K::FloorDiv || kind == K::Div ||
                            kind == K::Min || kind == K::Max || kind == K::Shl || kind == K::Shr ||
                            kind == K::Xor || kind == K::Cast;
  if (!recomputable) return false;
  for (ir::ValueId o : op.operands)
    if (!possible(o)) return false;
  return true;
}

ir::ValueId Rematerialise::at(ir::ValueId v, const std::vector<ir::ValueId>& coords) {
  const ir::Type& t = l_.tile_type(v);
  if (!t.is_tile()) return l_.scalar(v);
  const ir::Op& op = *definers_.at(v);
  if (op.kind == ir::OpKind::Arange) {
    const int64_t start = op.int_attr("start");
    return start == 0 ? coords[0]
                      : l_.emit(ir::OpKind::Add, {coords[0], l_.const_int(start)},
                                ir::Type::scalar(ir::DType::i32));
  }
  if (op.kind == ir::OpKind::Splat) return l_.scalar(op.operands[0]);
  if (op.kind == ir::OpKind::ExpandDims) {
    std::vector<ir::ValueId> inner = coords;
    inner.erase(inner.begin() + op.int_attr("axis"));
    return at(op.operands[0], inner);
  }
  if (op.kind == ir::OpKind::Broadcast) {
    const ir::Type& source = l_.tile_type(op.operands[0]);
    std::vector<ir::ValueId> inner = coords;
    for (size_t d = 0; d < inner.size(); ++d)
      if (source.shape[d] == 1) inner[d] = l_.const_int(0);
    return at(op.operands[0], inner);
  }
  if (op.kind == ir::OpKind::PtrAdd) {
    const auto [base, index] = pointer_parts_at(v, coords);
    return l_.emit(ir::OpKind::PtrAdd, {base, index}, t.element());
  }
  std::vector<ir::ValueId> operands;  // an elementwise op, element by element
  for (ir::ValueId o : op.operands) operands.push_back(at(o, coords));
  return l_.emit(op.kind, operands, t.element(), op.attrs);
}

std::pair<ir::ValueId, ir::ValueId> Rematerialise::pointer_parts_at(
    ir::ValueId v, const std::vector<ir::ValueId>& coords) {
  const ir::Op& op = *definers_.at(v);
  const ir::ValueId offset = at(op.operands[1], coords);
  const ir::Type& pointer = l_.tile_type(op.operands[0]);
  const auto inner = definers_.find(op.operands[0]);
  if (pointer.is_tile() && inner != definers_.end() && inner->second->kind == ir::OpKind::PtrAdd &&
      l_.tile_type(inner->second->operands[1]).dtype == l_.tile_type(op.operands[1]).dtype) {
    const auto [base, index] = pointer_parts_at(op.operands[0], coords);
    const ir::DType dtype = l_.tile_type(op.operands[1]).dtype;
    return {base, l_.emit(ir::OpKind::Add, {index, offset}, ir::Type::scalar(dtype))};
  }
  return {at(op.operands[0], coords), offset};
}

}  // namespace metile::lower
