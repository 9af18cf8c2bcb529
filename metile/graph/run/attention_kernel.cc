#include "metile/graph/run/attention_kernel.h"

#include <algorithm>

#include "metile/graph/run/op_emitters.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
constexpr int64_t kBlockM = 64, kBlockN = 64, kMaxHeadDim = 256;
constexpr float kLowest = -1e38f;
}  // namespace

RegionKernel attention_kernel(const Graph& graph, int op_id) {
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
  const int64_t BD = next_power_of_2(D), BE = next_power_of_2(E);
  const bool causal = op.int_attr("causal") != 0;
  const float scale = static_cast<float>(op.float_attr("scale"));
  const dsl::DType dtype = storage_dtype(q.dtype);

  auto body = [&](KernelContext& k) {
    auto q_ptr = k.buffer(param_name(graph, op.inputs[0]), dtype, "read");
    auto kt_ptr = k.buffer(param_name(graph, op.inputs[1]), dtype, "read");
    auto v_ptr = k.buffer(param_name(graph, op.inputs[2]), dtype, "read");
    auto o_ptr = k.buffer(param_name(graph, op.output), dtype, "write");
    auto b = program_id(1);
    auto q_base = q_ptr + b * (L * D);
    auto kt_base = kt_ptr + b * (D * S);
    auto v_base = v_ptr + b * (S * E);
    auto o_base = o_ptr + b * (L * E);
    auto tq = tensor(q_base, {L, D}, {}, "read");
    auto tk = tensor(kt_base, {D, S}, {}, "read");
    auto tv = tensor(v_base, {S, E}, {}, "read");
    auto to = tensor(o_base, {L, E}, {}, "write");
    auto row_lanes = arange(0, kBlockM);
    auto rows = program_id(0) * kBlockM + row_lanes;
    auto d = arange(0, BD);
    auto e = arange(0, BE);
    auto q_tile = tq.load({rows.col(), d.row()});
    Value end = program_id(0) * 0 + S;
    if (causal) {
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
                                      auto below = columns.row() <= rows.col();
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
    to.store({rows.col(), e.row()}, out.to(dtype));
  };
  RegionKernel rk;
  rk.form = "flash_attention";
  rk.kernel = trace(causal ? "graph_flash_attention_causal" : "graph_flash_attention", body);
  rk.grid = {cdiv(L, kBlockM), batch, 1};
  rk.params = {op.inputs[0], op.inputs[1], op.inputs[2], op.output};
  rk.writes = {op.output};
  rk.op_ids = {op_id};
  rk.decision = "online softmax, " + std::to_string(kBlockM) + " query rows per program, K/V in " +
                "blocks of " + std::to_string(kBlockN) +
                (causal ? ", blocks above the diagonal skipped" : "");
  return rk;
}

}  // namespace metile::graph
