#include "metile/graph/fusion/parallel_epilogue_rule.h"

#include <algorithm>

#include "metile/graph/fusion/fusion_rules.h"

namespace metile::graph {

namespace {

int producer_of(const Graph& g, int value, OpKind kind) {
  int p = g.value(value).producer;
  return p >= 0 && g.op(p).kind == kind ? p : -1;
}

struct Match {
  int gate = -1, up = -1, silu = -1, multiply = -1, down = -1;
  int residual = -1;  // add(down, r) or add(r, down), r of down's shape and dtype: the epilogue
  std::string form;
};

// The residual epilogue (seed 000: one-row decode adds the transformer residual to the down
// projection in the same kernel): the only reader of y, an add of y and a tensor of y's type.
int residual_add(const Graph& g, int down) {
  const ValueInfo& y = g.value(g.op(down).output);
  if (g.is_output(y.id) || y.users.size() != 1) return -1;
  const Op& add = g.op(y.users[0]);
  if (add.kind != OpKind::Add || add.inputs[0] == add.inputs[1]) return -1;
  int other = add.inputs[0] == y.id ? add.inputs[1] : add.inputs[0];
  return g.spec(other) == y.spec ? add.id : -1;
}

std::optional<Match> match_at(const Graph& g, int multiply) {
  const Op& h = g.op(multiply);
  for (int order = 0; order < 2; ++order) {
    Match m;
    m.multiply = multiply;
    m.silu = producer_of(g, h.inputs[order], OpKind::Silu);
    m.up = producer_of(g, h.inputs[1 - order], OpKind::Matmul);
    if (m.silu < 0 || m.up < 0) continue;
    m.gate = producer_of(g, g.op(m.silu).inputs[0], OpKind::Matmul);
    if (m.gate < 0 || m.gate == m.up || g.op(m.gate).inputs[0] != g.op(m.up).inputs[0]) continue;
    for (int user : g.value(h.output).users) {
      const Op& d = g.op(user);
      if (d.kind == OpKind::Matmul && d.inputs[0] == h.output && d.inputs[1] != h.output) {
        m.down = user;
        break;
      }
    }
    if (m.down < 0) return std::nullopt;
    m.residual = residual_add(g, m.down);
    m.form = order == 0 ? "silu(gate) * up" : "up * silu(gate)";
    return m;
  }
  return std::nullopt;
}

std::optional<std::string> escape(const Graph& g, const Match& m) {
  const std::pair<const char*, std::pair<int, int>> links[] = {{"gate", {m.gate, m.silu}},
                                                               {"up", {m.up, m.multiply}},
                                                               {"silu", {m.silu, m.multiply}},
                                                               {"multiply", {m.multiply, m.down}}};
  for (const auto& [role, link] : links) {
    auto [op, next] = link;
    const ValueInfo& v = g.value(g.op(op).output);
    std::string who = op_label(g, op) + " (" + role + ")";
    if (g.is_output(v.id)) return "escaping intermediate: " + who + " is a graph output";
    for (int user : v.users)
      if (user != next)
        return "escaping intermediate: " + who + " is also read by " + op_label(g, user);
  }
  return std::nullopt;
}

// Rows of the activation one kernel tile covers, and that tile's f32 accumulator registers.
struct Tile {
  int64_t rows;
  int accumulators;
  int element_bytes;
};

Tile tile_of(const Graph& g, int gate) {
  const TensorSpec& x = g.spec(g.op(gate).inputs[0]);
  int64_t rows = std::min<int64_t>(CostModel::kMatmulTileM, x.shape[x.rank() - 2]);
  int accumulators = static_cast<int>(
      (rows * CostModel::kMatmulTileN + CostModel::kMatmulThreads - 1) / CostModel::kMatmulThreads);
  return {rows, accumulators, dtype_bytes(x.dtype)};
}

}  // namespace

OpResources ParallelEpilogueRule::register_fused(const Graph& graph, int gate) {
  Tile t = tile_of(graph, gate);
  using C = CostModel;
  // Gate and up accumulators together; the down projection reuses the gate's once h is staged.
  int registers = C::kBaseRegisters + 2 * t.accumulators + C::kMatmulOperandRegisters +
                  2 * C::kElementwiseRegisters;
  int64_t staging = 2 * (t.rows + 2 * C::kMatmulTileN) * C::kMatmulTileK * t.element_bytes;
  int64_t hidden = t.rows * C::kMatmulTileN * t.element_bytes;
  return {registers, staging + hidden};
}

OpResources ParallelEpilogueRule::scratch_spilled(const Graph& graph, int gate) {
  Tile t = tile_of(graph, gate);
  using C = CostModel;
  // One accumulator, reused for gate, up and down; the gate result waits in f32 scratch, which
  // h then overwrites.
  int registers = C::kBaseRegisters + t.accumulators + C::kMatmulOperandRegisters +
                  2 * C::kElementwiseRegisters;
  int64_t staging = 2 * (t.rows + C::kMatmulTileN) * C::kMatmulTileK * t.element_bytes;
  int64_t scratch = t.rows * C::kMatmulTileN * 4;
  return {registers, staging + scratch};
}

RuleMatches ParallelEpilogueRule::match(const Graph& graph, const CostModel& cost) const {
  RuleMatches result;
  for (const Op& op : graph.ops()) {
    if (op.kind != OpKind::Multiply) continue;
    std::optional<Match> m = match_at(graph, op.id);
    if (!m) continue;
    std::vector<int> ops{m->gate, m->up, m->silu, m->multiply, m->down};
    if (m->residual >= 0) ops.push_back(m->residual);
    std::sort(ops.begin(), ops.end());
    auto reject = [&](const std::string& why) {
      result.rejected.push_back({m->down, ops, std::string(kName) + ": " + why});
    };
    if (auto why = escape(graph, *m)) {
      reject(*why);
      continue;
    }
    const Shape& gs = graph.spec(graph.op(m->gate).output).shape;
    const Shape& us = graph.spec(graph.op(m->up).output).shape;
    if (gs != us) {
      reject("gate " + shape_str(gs) + " and up " + shape_str(us) +
             " differ; the epilogue multiplies them elementwise, without broadcasting");
      continue;
    }
    RuleRegion r;
    OpResources fused = register_fused(graph, m->gate);
    OpResources spilled = scratch_spilled(graph, m->gate);
    auto fused_over = cost.resource_violation(fused);
    auto spilled_over = cost.resource_violation(spilled);
    if (fused_over && spilled_over) {
      reject("resource limit: register-fused " + *fused_over + "; scratch-spilled " +
             *spilled_over);
      continue;
    }
    r.schedule = fused_over ? "scratch-spilled" : "register-fused";
    r.resources = fused_over ? spilled : fused;
    r.rule = std::string(kName);
    r.anchor = m->down;
    r.ops = ops;
    r.roles = {{"gate", m->gate},
               {"up", m->up},
               {"silu", m->silu},
               {"multiply", m->multiply},
               {"down", m->down}};
    if (m->residual >= 0) r.roles.push_back({"residual", m->residual});
    r.form = m->form;
    for (int o : {m->gate, m->up, m->silu, m->multiply})
      r.bytes_saved += 2 * graph.spec(graph.op(o).output).bytes();
    if (m->residual >= 0) r.bytes_saved += 2 * graph.spec(graph.op(m->down).output).bytes();
    r.launches_saved = static_cast<int>(ops.size()) - 1;
    r.benefit_ns = r.launches_saved * cost.launch_ns() + cost.transfer_ns(r.bytes_saved) -
                   cost.pressure_ns(r.resources);
    if (r.benefit_ns <= 0) {
      reject("no benefit: pressure outweighs the savings");
      continue;
    }
    result.regions.push_back(std::move(r));
  }
  return result;
}

}  // namespace metile::graph
