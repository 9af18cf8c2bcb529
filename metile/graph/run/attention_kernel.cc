#include "metile/graph/run/attention_kernel.h"

#include <algorithm>
#include <optional>

#include "metile/graph/attention_tiles.h"
#include "metile/graph/run/op_emitters.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
constexpr int64_t kMaxHeadDim = 256;
constexpr float kLowest = -1e38f;
}  // namespace

namespace {
// The element offset of batch entry `b` (a flattened index over q's batch axes, a scalar or a
// tile) in `value`, through its view: an axis of size 1 stays at 0 (grouped-query heads).
Value batch_offset(const Graph& graph, const View& view, int value, const Shape& q_shape,
                   const Value& b) {
  const Shape& shape = graph.spec(value).shape;
  Value offset = b * 0;
  int64_t inner = 1;
  for (size_t a = shape.size() - 2; a-- > 0;) {
    if (shape[a] != 1) {
      auto q = b / inner;
      auto coordinate = q % q_shape[a];
      offset = offset + coordinate * view.strides[a];
    }
    inner *= q_shape[a];
  }
  return view.offset == 0 ? offset : offset + view.offset;
}

// A q, kt, v or output operand's batch entry `b` as a 2-D tensor descriptor over its last two
// axes, through its view.
Tensor batch_tensor(const Graph& graph, KernelBuffers& buffers, KernelContext& k, int value,
                    const Shape& q_shape, const Value& b, const std::string& access = "read") {
  const Shape& shape = graph.spec(value).shape;
  const size_t r = shape.size();
  View view = buffers.view(value);
  Value pointer = access == "read" ? buffers.read(k, value) : buffers.write(k, value);
  Value base = pointer + batch_offset(graph, view, value, q_shape, b);
  std::vector<Operand> strides;
  if (view.strides[r - 1] != 1 || view.strides[r - 2] != shape[r - 1])
    strides = {view.strides[r - 2], view.strides[r - 1]};
  return tensor(base, {shape[r - 2], shape[r - 1]}, strides, access);
}

// Offsets of a packed tile's rows (query head `b` of each row, position `position`) and
// columns `lanes` in `value` (q or the output), through its view.
Value packed_offsets(const Graph& graph, const View& view, int value, const Shape& q_shape,
                     const Value& b, const Value& position, const Value& lanes) {
  const size_t r = q_shape.size();
  auto row = batch_offset(graph, view, value, q_shape, b) + position * view.strides[r - 2];
  auto column = lanes * view.strides[r - 1];
  return row.col() + column.row();
}
}  // namespace

RegionKernel attention_kernel(const Graph& graph, const ViewPlan& views, int op_id,
                              const target::Target& target) {
  const Op& op = graph.op(op_id);
  const TensorSpec &q = graph.spec(op.inputs[0]), &kt = graph.spec(op.inputs[1]),
                   &v = graph.spec(op.inputs[2]);
  const size_t r = q.shape.size();
  const int64_t L = q.shape[r - 2], D = q.shape[r - 1], S = kt.shape[r - 1], E = v.shape[r - 1];
  if (D > kMaxHeadDim || E > kMaxHeadDim)
    throw UserError("graph executor: " + op_label(graph, op_id) + " has head dimensions " +
                    std::to_string(D) + " and " + std::to_string(E) + "; above " +
                    std::to_string(kMaxHeadDim) + " is not supported");
  int64_t batch = 1;
  for (size_t k = 0; k + 2 < r; ++k) batch *= q.shape[k];
  // The tiles the planner's cost model estimated (attention_tiles.h).
  const AttentionTiles tiles = attention_tiles(q, kt, v, target);
  const int64_t BD = tiles.head_block, BE = tiles.value_block;
  const int64_t kBlockM = tiles.block_m, kBlockN = tiles.block_n, pack = tiles.pack;
  const bool causal = op.int_attr("causal") != 0;
  const float scale = static_cast<float>(op.float_attr("scale"));
  const dsl::DType dtype = storage_dtype(q.dtype);

  const int64_t rows_per_batch = pack * L;

  KernelBuffers buffers(graph, views);
  auto body = [&](KernelContext& k) {
    k.set_num_threads(tiles.threads);
    Value b = program_id(1);
    if (pack > 1) b = b * pack;  // the group's first head
    auto tk = batch_tensor(graph, buffers, k, op.inputs[1], q.shape, b);
    auto tv = batch_tensor(graph, buffers, k, op.inputs[2], q.shape, b);
    auto row_lanes = arange(0, kBlockM);
    auto rows = program_id(0) * kBlockM + row_lanes;
    auto d = arange(0, BD);
    auto e = arange(0, BE);
    // Per row: its query head and position; the tile of q.
    Value head = b, position = rows, q_tile, in_rows;
    std::optional<Tensor> tq;
    if (pack > 1) {
      head = b + rows / L;
      position = rows % L;
      in_rows = rows < rows_per_batch;
      auto q_ptr = buffers.read(k, op.inputs[0]);
      View qv = buffers.view(op.inputs[0]);
      auto at = packed_offsets(graph, qv, op.inputs[0], q.shape, head, position, d);
      auto d_in = d < D;
      auto mask = in_rows.col() & d_in.row();
      q_tile = load(q_ptr + at, mask);
    } else {
      tq = batch_tensor(graph, buffers, k, op.inputs[0], q.shape, b);
      q_tile = tq->load({rows.col(), d.row()});
    }
    Value end = program_id(0) * 0 + S;
    if (causal && pack > 1) {
      end = program_id(0) * 0 + std::min(L, S);
    } else if (causal) {
      auto next = program_id(0) + 1;
      end = minimum(next * kBlockM, S);
    }
    auto m0 = full({kBlockM}, kLowest, f32);
    auto l0 = zeros({kBlockM}, f32);
    auto acc0 = zeros({kBlockM, BE}, f32);
    auto [m, l, acc] = tile_range(0, end, kBlockN, {m0, l0, acc0},
                                  [&](Value start, Value& m_run, Value& l_run, Value& a_run) {
                                    auto columns = start + arange(0, kBlockN);
                                    auto k_tile = tk.load({d.col(), columns.row()});
                                    auto raw = dot(q_tile, k_tile, zeros({kBlockM, kBlockN}, f32));
                                    auto scores = raw * scale;
                                    Value valid = columns.row() < S;
                                    if (causal) {
                                      auto below = columns.row() <= position.col();
                                      valid = valid & below;
                                    }
                                    auto s = where(valid, scores, kLowest);
                                    auto m_new = maximum(m_run, max_axis(s, 1));
                                    auto alpha = exp(m_run - m_new);
                                    auto shifted = exp(s - m_new.col());
                                    auto p = where(valid, shifted, 0.0f);
                                    l_run = l_run * alpha + sum_axis(p, 1);
                                    auto v_tile = tv.load({columns.col(), e.row()});
                                    auto rescaled = a_run * alpha.col();
                                    a_run = dot(p.to(dtype), v_tile, rescaled);
                                    m_run = m_new;
                                  });
    auto out = acc / l.col();
    if (pack > 1) {
      auto o_ptr = buffers.write(k, op.output);
      View ov = buffers.view(op.output);
      auto at = packed_offsets(graph, ov, op.output, q.shape, head, position, e);
      auto e_in = e < E;
      auto mask = in_rows.col() & e_in.row();
      store(o_ptr + at, out.to(dtype), mask);
    } else {
      auto to = batch_tensor(graph, buffers, k, op.output, q.shape, b, "write");
      to.store({rows.col(), e.row()}, out.to(dtype));
    }
  };
  RegionKernel rk;
  rk.form = "flash_attention";
  rk.kernel = trace(causal ? "graph_flash_attention_causal" : "graph_flash_attention", body);
  rk.grid = {cdiv(rows_per_batch, kBlockM), batch / pack, 1};
  rk.params = buffers.params();
  rk.writes = buffers.writes();
  rk.op_ids = {op_id};
  rk.decision =
      "online softmax, " + tiles.str() + (causal ? ", blocks above the diagonal skipped" : "");
  if (pack > 1)
    rk.decision += "; the " + std::to_string(pack) + " query heads of a K/V head packed along M (" +
                   std::to_string(rows_per_batch) + " rows), K/V loaded once per group";
  if (views.is_view(op.output))
    rk.decision += "; written in place as " + views.of(graph, op.output).str(graph);
  if (views.is_view(op.inputs[1]))
    rk.decision += "; kt read in place as " + views.of(graph, op.inputs[1]).str(graph);
  if (Shape(kt.shape.begin(), kt.shape.end() - 2) != Shape(q.shape.begin(), q.shape.end() - 2))
    rk.decision += "; K/V batch " + shape_str(Shape(kt.shape.begin(), kt.shape.end() - 2)) +
                   " shared across q's " + shape_str(Shape(q.shape.begin(), q.shape.end() - 2)) +
                   " (grouped-query heads)";
  return rk;
}

}  // namespace metile::graph
