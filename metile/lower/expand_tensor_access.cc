#include "metile/lower/expand_tensor_access.h"

#include <map>

#include "metile/support/errors.h"

namespace metile::lower {

namespace {

struct Descriptor {
  ir::ValueId base;
  std::vector<ir::ValueId> dims;     // i32 scalars
  std::vector<ir::ValueId> strides;  // i32 scalars
};

class Expander {
 public:
  explicit Expander(ir::Kernel& k) : k_(k) {}

  void block(ir::Block& b) {
    std::vector<ir::Op> ops;
    ops.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      out_ = &ops;
      for (ir::Block& region : op.regions) block(region);
      out_ = &ops;
      loc_ = op.loc;
      if (op.kind == ir::OpKind::MakeTensor) {
        make_tensor(op);
      } else if (op.kind == ir::OpKind::TensorLoad) {
        tensor_load(op);
      } else if (op.kind == ir::OpKind::TensorStore) {
        tensor_store(op);
      } else {
        // Every other op stays; whatever op it is, a descriptor operand cannot be expanded.
        for (ir::ValueId v : op.operands)
          if (k_.type(v).is_desc())
            throw NotSupported(std::string(ir::op_name(op.kind)) +
                                   ": tensor descriptors may only be used by tensor loads and "
                                   "stores, not passed through control flow",
                               op.loc);
        ops.push_back(std::move(op));
      }
    }
    b.ops = std::move(ops);
  }

 private:
  ir::ValueId emit(ir::OpKind kind, std::vector<ir::ValueId> operands, ir::Type type,
                   ir::Attrs attrs = {}) {
    ir::Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.results = {k_.new_value(std::move(type))};
    op.attrs = std::move(attrs);
    op.loc = loc_;
    out_->push_back(std::move(op));
    return out_->back().results[0];
  }

  // The scalar s as a value of `like`'s shape (a splat when `like` is a tile).
  ir::ValueId shaped(ir::ValueId s, const ir::Type& like) {
    if (!like.is_tile() || k_.type(s).is_tile()) return s;
    ir::Type t = k_.type(s);
    t.kind = ir::TypeKind::Tile;
    t.shape = like.shape;
    return emit(ir::OpKind::Splat, {s}, t);
  }

  ir::Type i32_like(const ir::Type& shape, ir::DType dtype = ir::DType::i32) {
    return shape.is_tile() ? ir::Type::tile(dtype, shape.shape) : ir::Type::scalar(dtype);
  }

  void make_tensor(const ir::Op& op) {
    const size_t rank = (op.operands.size() - 1) / 2;
    Descriptor d{op.operands[0], {}, {}};
    for (size_t i = 0; i < rank; ++i) {
      d.dims.push_back(op.operands[1 + i]);
      d.strides.push_back(op.operands[1 + rank + i]);
    }
    descriptors_[op.results[0]] = std::move(d);
  }

  const Descriptor& descriptor(const ir::Op& op) {
    auto it = descriptors_.find(op.operands[0]);
    if (it == descriptors_.end())
      throw InternalError(std::string(ir::op_name(op.kind)) +
                          ": the descriptor was not made by make_tensor in this kernel");
    return it->second;
  }

  // The element pointers and the in-bounds mask of coordinates `coords` (one per axis, all
  // of the access shape).
  std::pair<ir::ValueId, ir::ValueId> address(const Descriptor& d,
                                              const std::vector<ir::ValueId>& coords,
                                              const ir::Type& shape) {
    const ir::Type i32 = i32_like(shape), i1 = i32_like(shape, ir::DType::i1);
    const ir::ValueId zero = shaped(
        emit(ir::OpKind::Constant, {}, ir::Type::scalar(ir::DType::i32), {{"value", int64_t{0}}}),
        shape);
    ir::ValueId offset = ir::kNoValue, mask = ir::kNoValue;
    for (size_t axis = 0; axis < coords.size(); ++axis) {
      const ir::ValueId c = shaped(coords[axis], shape);
      const ir::ValueId term = emit(ir::OpKind::Mul, {c, shaped(d.strides[axis], shape)}, i32);
      offset = offset == ir::kNoValue ? term : emit(ir::OpKind::Add, {offset, term}, i32);
      const ir::ValueId above = emit(ir::OpKind::Cmp, {c, zero}, i1, {{"pred", std::string("ge")}});
      const ir::ValueId below = emit(ir::OpKind::Cmp, {c, shaped(d.dims[axis], shape)}, i1,
                                     {{"pred", std::string("lt")}});
      const ir::ValueId inside = emit(ir::OpKind::And, {above, below}, i1);
      mask = mask == ir::kNoValue ? inside : emit(ir::OpKind::And, {mask, inside}, i1);
    }
    ir::Type ptr = k_.type(d.base);
    if (shape.is_tile()) {
      ptr.kind = ir::TypeKind::Tile;
      ptr.shape = shape.shape;
    }
    return {emit(ir::OpKind::PtrAdd, {shaped(d.base, shape), offset}, ptr), mask};
  }

  void tensor_load(ir::Op& op) {
    const Descriptor& d = descriptor(op);
    const ir::Type result = k_.type(op.results[0]);
    const std::vector<ir::ValueId> coords(op.operands.begin() + 1, op.operands.end());
    auto [ptr, mask] = address(d, coords, result);
    const ir::ValueId fill =
        emit(ir::OpKind::Constant, {}, ir::Type::scalar(result.dtype),
             {{"value", ir::is_float(result.dtype) ? ir::Attr{0.0} : ir::Attr{int64_t{0}}}});
    ir::Op load;
    load.kind = ir::OpKind::Load;
    load.operands = {ptr, mask, shaped(fill, result)};
    load.results = op.results;
    load.loc = op.loc;
    out_->push_back(std::move(load));
  }

  void tensor_store(ir::Op& op) {
    const Descriptor& d = descriptor(op);
    const ir::ValueId value = op.operands.back();
    const ir::Type shape = k_.type(value);
    const std::vector<ir::ValueId> coords(op.operands.begin() + 1, op.operands.end() - 1);
    auto [ptr, mask] = address(d, coords, shape);
    ir::Op store;
    store.kind = ir::OpKind::Store;
    store.operands = {ptr, value, mask};
    store.loc = op.loc;
    out_->push_back(std::move(store));
  }

  ir::Kernel& k_;
  std::vector<ir::Op>* out_ = nullptr;
  SourceLocation loc_;
  std::map<ir::ValueId, Descriptor> descriptors_;
};

bool has_descriptors(const ir::Kernel& k) {
  bool found = false;
  ir::walk(k.body, [&](const ir::Op& op) { found = found || op.kind == ir::OpKind::MakeTensor; });
  return found;
}

}  // namespace

ir::PassResult expand_tensor_access(ir::Kernel tile) {
  if (!has_descriptors(tile)) return {std::move(tile), false};
  Expander(tile).block(tile.body);
  return {std::move(tile), true};
}

}  // namespace metile::lower
