#include "metile/graph/run/transpose_kernel.h"

#include "metile/graph/run/op_emitters.h"

namespace metile::graph {

using namespace metile::dsl;

RegionKernel transpose_kernel(const Graph& graph, int op_id) {
  constexpr int64_t kBlock = 32;
  const Op& op = graph.op(op_id);
  const TensorSpec& x = graph.spec(op.inputs[0]);
  const size_t r = x.shape.size();
  const int64_t R = x.shape[r - 2], C = x.shape[r - 1];
  int64_t batch = 1;
  for (size_t k = 0; k + 2 < r; ++k) batch *= x.shape[k];
  const dsl::DType dtype = storage_dtype(x.dtype);
  auto body = [&](KernelContext& k) {
    auto in = k.buffer(param_name(graph, op.inputs[0]), dtype, "read");
    auto out = k.buffer(param_name(graph, op.output), dtype, "write");
    auto b = program_id(2);
    auto in_base = in + b * (R * C);
    auto out_base = out + b * (R * C);
    auto source = tensor(in_base, {R, C}, {}, "read");
    auto target = tensor(out_base, {C, R}, {}, "write");
    auto i_lanes = arange(0, kBlock);
    auto i = program_id(0) * kBlock + i_lanes;  // output rows: input columns
    auto j_lanes = arange(0, kBlock);
    auto j = program_id(1) * kBlock + j_lanes;  // output columns: input rows
    auto tile = source.load({j.row(), i.col()});
    target.store({i.col(), j.row()}, tile);
  };
  RegionKernel rk;
  rk.form = "transpose";
  rk.kernel = trace("graph_transpose", body);
  rk.grid = {cdiv(C, kBlock), cdiv(R, kBlock), batch};
  rk.params = {op.inputs[0], op.output};
  rk.writes = {op.output};
  rk.op_ids = {op_id};
  rk.decision = "32 x 32 tiles";
  return rk;
}

}  // namespace metile::graph
