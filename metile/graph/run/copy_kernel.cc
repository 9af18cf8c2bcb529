#include "metile/graph/run/copy_kernel.h"

#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/run/op_emitters.h"

namespace metile::graph {

using namespace metile::dsl;

RegionKernel copy_kernel(const Graph& graph, const ViewPlan& views, int op_id, const View& source,
                         const Shape& shape, int target_value, const View& target) {
  constexpr int64_t kBlock = 1024;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    auto in = buffers.read_base(k, source.base);
    auto out = buffers.write(k, target_value);
    auto lanes = arange(0, kBlock);
    auto flat = program_id(0) * kBlock + lanes;
    auto valid = flat < n;
    std::vector<Value> index(shape.size());
    int64_t inner = 1;
    for (size_t a = shape.size(); a-- > 0;) {
      if (shape[a] != 1) {
        Value q = inner == 1 ? flat : flat / inner;
        index[a] = a == 0 ? q : q % shape[a];
      }
      inner *= shape[a];
    }
    auto from = view_offset(source, index);
    auto to = view_offset(target, index);
    auto values = load(in + from, valid);
    store(out + to, values, valid);
  };
  RegionKernel rk;
  rk.form = "copy";
  rk.kernel = trace("graph_copy", body);
  rk.grid = {cdiv(n, kBlock), 1, 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision = std::to_string(n) + " elements of " + shape_str(shape) + " from " +
                source.str(graph) + " to " + target.str(graph) + ", blocks of " +
                std::to_string(kBlock);
  return rk;
}

std::vector<RegionKernel> copy_kernels(const Graph& graph, const ViewPlan& views, int op_id) {
  const Op& op = graph.op(op_id);
  const Shape& out_shape = graph.spec(op.output).shape;
  View out = View::contiguous(op.output, out_shape);
  if (op.kind != OpKind::Concat) {
    const Shape& shape = op.kind == OpKind::Reshape ? graph.spec(op.inputs[0]).shape : out_shape;
    View target = out;
    if (op.kind == OpKind::Reshape) target = View::contiguous(op.output, shape);
    return {copy_kernel(graph, views, op_id, source_view(graph, views, op_id), shape, op.output,
                        target)};
  }
  std::vector<RegionKernel> kernels;
  int64_t axis = op.int_attr("axis"), start = 0;
  for (int part : op.inputs) {
    const Shape& shape = graph.spec(part).shape;
    View target = out;
    target.offset = start * out.strides[axis];
    kernels.push_back(
        copy_kernel(graph, views, op_id, views.of(graph, part), shape, op.output, target));
    kernels.back().decision = "operand " + graph.value(part).ref() + ": " + kernels.back().decision;
    start += shape[axis];
  }
  return kernels;
}

}  // namespace metile::graph
