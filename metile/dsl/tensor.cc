#include "metile/dsl/tensor.h"

#include "metile/dsl/trace_state.h"

namespace metile::dsl {

namespace {
std::vector<ir::ValueId> integers(const std::vector<Operand>& xs, const std::string& op,
                                  const Here& here) {
  std::vector<ir::ValueId> r;
  for (const Operand& x : xs) r.push_back(detail::materialize(x, DType::i32, op, here));
  return r;
}

// Row-major strides of `dims`: the last is 1, each other the product of the dims after it.
std::vector<ir::ValueId> contiguous_strides(ir::TileBuilder& b,
                                            const std::vector<ir::ValueId>& dims) {
  std::vector<ir::ValueId> strides(dims.size());
  strides.back() = b.constant_int(1);
  for (size_t i = dims.size() - 1; i-- > 0;)
    strides[i] = b.binary(ir::OpKind::Mul, strides[i + 1], b.cast(dims[i + 1], DType::i32));
  return strides;
}
}  // namespace

Tensor tensor(const Value& base, const std::vector<Operand>& shape,
              const std::vector<Operand>& strides, const std::string& access, Here here) {
  ir::ValueId b = detail::use(base, "tensor", here);
  std::vector<ir::ValueId> dims = integers(shape, "tensor", here);
  ir::TileBuilder& bld = detail::builder_at(here);
  std::vector<ir::ValueId> steps = strides.empty() && !dims.empty()
                                       ? contiguous_strides(bld, dims)
                                       : integers(strides, "tensor", here);
  return Tensor(detail::wrap(detail::core_at(here).make_tensor(b, dims, steps, access)));
}

Value Tensor::load(const std::vector<Operand>& coords, Here here) const {
  ir::ValueId d = detail::use(descriptor_, "tensor.load", here);
  std::vector<ir::ValueId> cs = integers(coords, "tensor.load", here);
  return detail::wrap(detail::core_at(here).tensor_load(d, cs));
}

void Tensor::store(const std::vector<Operand>& coords, const Operand& value, Here here) const {
  ir::ValueId d = detail::use(descriptor_, "tensor.store", here);
  std::vector<ir::ValueId> cs = integers(coords, "tensor.store", here);
  ir::TileBuilder& b = detail::builder_at(here);
  ir::ValueId v = detail::materialize(value, b.type(d).dtype, "tensor.store", here);
  detail::core_at(here).tensor_store(d, cs, v);
}

}  // namespace metile::dsl
