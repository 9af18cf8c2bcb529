#include "metile/graph/run/rotary_kernel.h"

#include "metile/graph/run/op_emitters.h"

namespace metile::graph {

using namespace metile::dsl;

RegionKernel rotary_kernel(const Graph& graph, const ViewPlan& views, int op_id) {
  constexpr int64_t kRows = 16;
  const Op& op = graph.op(op_id);
  const TensorSpec& x = graph.spec(op.inputs[0]);
  const size_t rank = x.shape.size();
  const int64_t t_size = x.shape[rank - 2], half = x.shape[rank - 1] / 2;
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < rank; ++a) rows *= x.shape[a];
  const int64_t block = next_power_of_2(half);
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    View xv = buffers.view(op.inputs[0]), cv = buffers.view(op.inputs[1]),
         sv = buffers.view(op.inputs[2]);
    View ov = View::contiguous(op.output, x.shape);
    auto x_ptr = buffers.read(k, op.inputs[0]);
    auto cos_ptr = buffers.read(k, op.inputs[1]);
    auto sin_ptr = buffers.read(k, op.inputs[2]);
    auto out_ptr = buffers.write(k, op.output);
    auto row_lanes = arange(0, kRows);
    auto row = program_id(0) * kRows + row_lanes;
    Value r = row.col();
    auto c = arange(0, block).row();
    auto row_in = r < rows;
    auto column_in = c < half;
    auto valid = row_in & column_in;
    // The row's index along every axis but the last; the last is the column.
    std::vector<Value> index(rank);
    int64_t inner = 1;
    for (size_t a = rank - 1; a-- > 0;) {
      Value q = inner == 1 ? r : r / inner;
      index[a] = a == 0 ? q : q % x.shape[a];
      inner *= x.shape[a];
    }
    auto x_at = [&](const View& view, const Value& column) {
      std::vector<Value> at = index;
      at[rank - 1] = column;
      return view_offset(view, at);
    };
    auto upper = c + half;
    dsl::DType compute = compute_dtype(x.dtype), stored = storage_dtype(x.dtype);
    auto x1 = load(x_ptr + x_at(xv, c), valid).to(compute);
    auto x2 = load(x_ptr + x_at(xv, upper), valid).to(compute);
    auto cos_at = view_offset(cv, {index[rank - 2], c});
    auto sin_at = view_offset(sv, {index[rank - 2], c});
    auto cosine = load(cos_ptr + cos_at, valid).to(compute);
    auto sine = load(sin_ptr + sin_at, valid).to(compute);
    auto low = x1 * cosine - x2 * sine;
    auto high = x2 * cosine + x1 * sine;
    store(out_ptr + x_at(ov, c), low.to(stored), valid);
    store(out_ptr + x_at(ov, upper), high.to(stored), valid);
  };
  RegionKernel rk;
  rk.form = "rotary";
  rk.kernel = trace("graph_rotary", body);
  rk.grid = {cdiv(rows, kRows), 1, 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision = std::to_string(kRows) + " rows of " + std::to_string(2 * half) + " per program (" +
                std::to_string(t_size) + " positions), x read as " +
                buffers.view(op.inputs[0]).str(graph);
  return rk;
}

}  // namespace metile::graph
