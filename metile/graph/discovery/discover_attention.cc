#include "metile/graph/discovery/discover_attention.h"

#include <optional>

#include "metile/discovery/symbolic.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/graph_builder.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {

struct Chain {
  int qk = -1, scale = -1, mask = -1, softmax = -1, pv = -1;

  // In dataflow order, which is also op id order.
  std::vector<int> ops() const {
    std::vector<int> r{qk, scale};
    if (mask >= 0) r.push_back(mask);
    r.push_back(softmax);
    r.push_back(pv);
    return r;
  }
};

int producer_of(const Graph& g, int value, OpKind kind) {
  int p = g.value(value).producer;
  return p >= 0 && g.op(p).kind == kind ? p : -1;
}

// The chain through softmax `sm`, or nullopt when it is not an attention chain.
std::optional<Chain> match_chain(const Graph& g, int sm) {
  Chain c;
  c.softmax = sm;
  int p = g.op(sm).output;
  for (int user : g.value(p).users) {
    const Op& u = g.op(user);
    if (u.kind == OpKind::Matmul && u.inputs[0] == p && u.inputs[1] != p) {
      c.pv = user;
      break;
    }
  }
  if (c.pv < 0) return std::nullopt;
  int scores = g.op(sm).inputs[0];
  c.mask = producer_of(g, scores, OpKind::CausalMask);
  if (c.mask >= 0) scores = g.op(c.mask).inputs[0];
  c.scale = producer_of(g, scores, OpKind::Scale);
  if (c.scale < 0) return std::nullopt;
  c.qk = producer_of(g, g.op(c.scale).inputs[0], OpKind::Matmul);
  if (c.qk < 0) return std::nullopt;
  return c;
}

std::optional<std::string> escape(const Graph& g, const Chain& c) {
  std::vector<int> ops = c.ops();
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    const ValueInfo& v = g.value(g.op(ops[i]).output);
    if (g.is_output(v.id))
      return "escaping intermediate: " + op_label(g, ops[i]) + " is a graph output";
    for (int user : v.users)
      if (user != ops[i + 1])
        return "escaping intermediate: " + op_label(g, ops[i]) + " is also read by " +
               op_label(g, user);
  }
  return std::nullopt;
}

std::optional<std::string> shape_mismatch(const Graph& g, const Chain& c) {
  const TensorSpec& q = g.spec(g.op(c.qk).inputs[0]);
  const TensorSpec& kt = g.spec(g.op(c.qk).inputs[1]);
  const TensorSpec& v = g.spec(g.op(c.pv).inputs[1]);
  if (attention_batch_fits(q, kt, v)) return std::nullopt;
  return "incompatible shapes: q " + shape_str(q.shape) + ", kt " + shape_str(kt.shape) + ", v " +
         shape_str(v.shape) +
         " must have one rank, and kt and v one batch shape whose every dimension is q's or 1 "
         "(grouped-query heads)";
}

// The law must say what the chain computes: the softmax-weighted sum of the values.
std::optional<std::string> law_mismatch(const discovery::ReductionLaw& law, bool causal) {
  using namespace discovery;
  if (law.element.size() != 2 || law.reference.size() != 1)
    return "law '" + law.name + "' does not describe softmax(scores) @ values: it needs two " +
           "element components (score, value) and one result";
  Expr s = Expr::var(law.element[0].name), v = Expr::var(law.element[1].name);
  Expr weight = exp(s - list_max(s));
  Expr expected = list_sum(weight * v) / list_sum(weight);
  if (normal_form(law.reference[0]) != normal_form(expected))
    return "law '" + law.name + "' does not describe softmax(scores) @ values: its reference " +
           law.reference[0].str() + " is not " + expected.str();
  if (causal && law.element[0].domain == Domain::Finite)
    return "law '" + law.name + "' admits finite scores only; the causal mask makes -inf ones";
  return std::nullopt;
}

std::vector<std::string> labels(const Graph& g, const std::vector<int>& ops) {
  std::vector<std::string> r;
  for (int o : ops) r.push_back(op_label(g, o));
  return r;
}

}  // namespace

DiscoveryResult discover_attention(const Graph& graph, const CostModel& cost,
                                   const DiscoveryOptions& options) {
  DiscoveryResult result{graph, {}, {}};
  if (!options.attention) return result;
  std::vector<Chain> accepted;
  std::vector<char> taken(graph.ops().size(), 0);  // ops of accepted chains
  for (const Op& op : graph.ops()) {
    if (op.kind != OpKind::Softmax) continue;
    std::optional<Chain> chain = match_chain(graph, op.id);
    if (!chain) continue;
    bool causal = chain->mask >= 0;
    const TensorSpec& q = graph.spec(graph.op(chain->qk).inputs[0]);
    const TensorSpec& kt = graph.spec(graph.op(chain->qk).inputs[1]);
    const TensorSpec& v = graph.spec(graph.op(chain->pv).inputs[1]);
    std::optional<std::string> why;
    if (taken[chain->qk])
      why = "its score matmul " + op_label(graph, chain->qk) +
            " is the value matmul of an earlier flash_attention rewrite";
    if (!why) why = escape(graph, *chain);
    int64_t last_axis = graph.spec(op.inputs[0]).rank() - 1;
    if (!why && op.int_attr("axis") != last_axis)
      why = "unsupported reduction axis: softmax over axis " + std::to_string(op.int_attr("axis")) +
            " of " + shape_str(graph.spec(op.inputs[0]).shape) +
            "; flash attention reduces the key axis (" + std::to_string(last_axis) + ")";
    if (!why) why = shape_mismatch(graph, *chain);
    if (!why) why = law_mismatch(options.attention_law, causal);
    discovery::Verification proof;
    if (!why) {
      proof = discovery::verify(options.attention_law);
      if (!proof.verified()) why = "failed obligation: " + proof.refutation->str();
    }
    if (!why)
      if (auto over = cost.resource_violation(cost.flash_attention_resources(q, kt, v)))
        why = "resource limit: the flash_attention kernel " + *over;
    if (why) {
      result.rejected.push_back({"flash_attention", labels(graph, chain->ops()), *why});
      continue;
    }
    AttentionRewrite rw;
    rw.replaced = chain->ops();
    rw.replaced_labels = labels(graph, rw.replaced);
    rw.scale = graph.op(chain->scale).float_attr("factor");
    rw.causal = causal;
    for (size_t i = 0; i + 1 < rw.replaced.size(); ++i)
      rw.bytes_saved += 2 * graph.spec(graph.op(rw.replaced[i]).output).bytes();
    rw.launches_saved = static_cast<int>(rw.replaced.size()) - 1;
    rw.certificate = *proof.certificate;
    result.rewrites.push_back(std::move(rw));
    for (int o : chain->ops()) taken[o] = 1;
    accepted.push_back(*chain);
  }
  if (accepted.empty()) return result;

  // Replay the graph, replacing each accepted chain by its node where its last op was.
  std::vector<int> rewrite_at(graph.ops().size(), -1);  // pv op -> rewrite index
  std::vector<char> dropped(graph.ops().size(), 0);
  for (size_t k = 0; k < accepted.size(); ++k) {
    for (int o : accepted[k].ops()) dropped[o] = 1;
    rewrite_at[accepted[k].pv] = static_cast<int>(k);
  }
  GraphBuilder b;
  std::vector<Value> now(graph.values().size());
  for (int in : graph.inputs()) now[in] = b.input(graph.value(in).name, graph.spec(in));
  std::vector<Value> nodes(accepted.size());
  for (const Op& op : graph.ops()) {
    if (int k = rewrite_at[op.id]; k >= 0) {
      const Chain& c = accepted[k];
      const AttentionRewrite& rw = result.rewrites[k];
      nodes[k] = b.flash_attention(now[graph.op(c.qk).inputs[0]], now[graph.op(c.qk).inputs[1]],
                                   now[op.inputs[1]], rw.scale, rw.causal, rw.certificate);
      now[op.output] = nodes[k];
      continue;
    }
    if (dropped[op.id]) continue;
    std::vector<Value> in;
    for (int v : op.inputs) in.push_back(now[v]);
    now[op.output] = b.copy_op(graph, op, in);
  }
  std::vector<Value> outputs;
  for (int v : graph.outputs()) outputs.push_back(now[v]);
  result.graph = b.build(outputs);
  for (size_t k = 0; k < accepted.size(); ++k)
    result.rewrites[k].node = result.graph.value(nodes[k].id).producer;
  return result;
}

}  // namespace metile::graph
